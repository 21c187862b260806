"""The one registry of microaggregation methods.

Every place that needs "the list of methods" reads :data:`METHODS`:
:func:`microagg.microaggregate` (``method=``), the command line (``--method``
choices and which options apply), GOMM (the partitioner of each attribute group),
the reproductions of the papers' tables and the tests. Adding a method here adds it
everywhere.

Book: :ref:`chap-mdav`.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import reference
from ._defaults import ENGINE, GA, HYBRID, IVMDAV, VMDAV, option_defaults, option_names
from ._hybrid import hybrid, hybrid_settings
from ._mdav import ivmdav, mdav, mdav_single, vmdav
from ._mdav.dispatch import check_engine, ivmdav_options, vmdav_options

__all__ = ["Method", "METHODS", "MDAV_FAMILY", "get_method", "method_function", "list_methods",
           "seeded", "check_option_values", "resolved_options"]


@dataclass(frozen=True)
class Method:
    """A registered method: its name, display label, function, family, options and summary.

    ``settings``: the method's settings in ``microagg/_defaults.py``, the one home of
    its options' default values; its ``options`` are their field names (the keyword
    arguments the function accepts besides the data and ``k``), its ``defaults`` their
    values; ``family`` is ``"mdav"`` for the four MDAV-family
    heuristics (which GOMM and the reproductions iterate over) and ``"genetic"`` for the
    hybrid;
    ``oracle`` is the slow, readable implementation in :mod:`microagg.reference`
    that the tests hold the fast one to; ``reports_progress``: the function takes
    ``progress=True`` to show a bar (:func:`microagg.microaggregate` passes it on);
    ``check``: ``check(k, **options)`` raises as the function would on those option
    values, without the data (the command line asks it before reading its input);
    ``chosen``: ``chosen(k, options)``, the values the method gives the options whose
    default ``None`` means "chosen from k" (:func:`resolved_options`).
    """

    name: str
    label: str
    function: Callable[..., np.ndarray]
    family: str
    settings: tuple[Any, ...]
    summary: str
    oracle: Callable[..., np.ndarray] | None = None
    reports_progress: bool = False
    check: Callable[..., Any] | None = None
    chosen: Callable[[int, dict[str, Any]], dict[str, Any]] | None = None

    @property
    def options(self) -> tuple[str, ...]:
        """The method's options: the field names of its settings, in order."""
        return option_names(*self.settings)

    @property
    def defaults(self) -> dict[str, Any]:
        """Each option's default value, as its settings hold it."""
        return option_defaults(*self.settings)


def _check_mdav(k: int, engine: Any = ENGINE.engine) -> None:
    check_engine(engine)


def _check_vmdav(k: int, engine: Any = ENGINE.engine, gamma: Any = VMDAV.gamma,
                 leftover: Any = VMDAV.leftover) -> None:
    check_engine(engine)
    vmdav_options(gamma, leftover)


def _check_ivmdav(k: int, engine: Any = ENGINE.engine, gamma: Any = IVMDAV.gamma,
                  candidates: Any = IVMDAV.candidates,
                  self_neighbour: Any = IVMDAV.self_neighbour) -> None:
    check_engine(engine)
    ivmdav_options(k, gamma, candidates, self_neighbour)


def _chosen_candidates(k: int, options: dict[str, Any]) -> dict[str, Any]:
    """IV-MDAV's ``candidates``, ``2k`` when not given."""
    return {"candidates": ivmdav_options(k, options["gamma"], options["candidates"],
                                         options["self_neighbour"])[1]}


def _chosen_K(k: int, options: dict[str, Any]) -> dict[str, Any]:
    """The hybrid's macrogroup size ``K``, chosen from ``k`` when not given."""
    return {"K": hybrid_settings(k, K=options["K"], partitioning=options["partitioning"])[0]}


#: Every method, by the name used in ``data/published``, the API and the CLI.
METHODS: dict[str, Method] = {m.name: m for m in (
    Method("mdav", "MDAV", mdav, "mdav", (ENGINE,),
           "MDAV: groups of k around the two most distant records, round after round",
           reference.mdav_reference, check=_check_mdav),
    Method("mdav_single", "MDAV-single", mdav_single, "mdav", (ENGINE,),
           "MDAV-single-group: one group of k per round, centroid recomputed each time",
           reference.mdav_single_reference, check=_check_mdav),
    Method("vmdav", "V-MDAV", vmdav, "mdav", (ENGINE, VMDAV),
           "V-MDAV: variable-size groups (k..2k-1, leftovers aside) grown while the gain factor "
           "allows",
           reference.vmdav_reference, check=_check_vmdav),
    Method("ivmdav", "IV-MDAV", ivmdav, "mdav", (ENGINE, IVMDAV),
           "IV-MDAV: MDAV-single-group with a variable-size extension step",
           reference.ivmdav_reference, check=_check_ivmdav, chosen=_chosen_candidates),
    Method("hybrid", "MDAV+GA", hybrid, "genetic", (HYBRID, GA),
           "MDAV+GA hybrid: MDAV macrogroups, each re-partitioned by a genetic algorithm",
           reports_progress=True, check=hybrid_settings, chosen=_chosen_K),
)}

#: The MDAV-family heuristics, in registry order.
MDAV_FAMILY: tuple[str, ...] = tuple(n for n, m in METHODS.items() if m.family == "mdav")


def get_method(name: Any) -> Method:
    """The registered method called ``name``; a clear error for anything else."""
    if not isinstance(name, str):
        kind = type(name).__name__
        hint = " (pass one name, not a list)" if isinstance(name, list | tuple | set) else ""
        raise TypeError(f"method must be a string naming a method, got {kind} {name!r}{hint}; "
                        f"choose one of {list(METHODS)}")
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; choose one of {list(METHODS)}")
    return METHODS[name]


def method_function(method: str | Callable[..., Any]) -> tuple[str, Callable[..., Any]]:
    """``(name, function)`` of an MDAV-family method, or of a callable ``f(X, k) -> labels``.

    Used where each call must be a plain deterministic partition (GOMM's attribute
    groups): the genetic hybrid is refused.
    """
    if callable(method):
        name = f"{getattr(method, '__module__', '')}.{getattr(method, '__qualname__', method)}"
        return name, method
    if isinstance(method, Hashable) and method in METHODS and METHODS[method].family != "mdav":
        raise ValueError(f"method {method!r} is not an MDAV-family heuristic; use one of "
                         f"{list(MDAV_FAMILY)} or a callable")
    return method, get_method(method).function


def check_options(method: str, options: Any) -> None:
    """Raise if any of ``options`` (names) is not an option of registered ``method``."""
    spec = get_method(method)
    unknown = sorted(set(options) - set(spec.options))
    if not unknown:
        return
    accepts = f"it accepts {list(spec.options) or 'no options'}"
    anywhere = {o for m in METHODS.values() for o in m.options}
    nowhere = [o for o in unknown if o not in anywhere]
    if nowhere:  # a misspelling (or an argument of another function): no method takes it
        import difflib

        close = {o: difflib.get_close_matches(str(o), sorted(anywhere), n=1) for o in nowhere}
        meant = "; ".join(f"{o!r}: did you mean {c[0]!r}?" for o, c in close.items() if c)
        raise ValueError(f"unknown option(s) {nowhere}: no method takes them"
                         f"{' (' + meant + ')' if meant else ''}; method {method!r}: {accepts}")
    raise ValueError(f"option(s) {unknown} do not apply to method {method!r}; {accepts}")


def check_option_values(method: str, k: int, options: dict[str, Any]) -> None:
    """Raise as registered ``method`` would on the values of ``options`` with the (checked)
    ``k``, before any data is read."""
    spec = get_method(method)
    check_options(method, options)
    if spec.check is not None:
        spec.check(k, **options)


def resolved_options(method: str, k: int, options: dict[str, Any]) -> dict[str, Any]:
    """Every option registered ``method`` runs with on ``k``: ``options`` (checked), the
    others at their defaults (:attr:`Method.defaults`), and those whose default ``None``
    means "chosen from k" as the method chooses them (:attr:`Method.chosen`); a seed
    left ``None`` stays so (fresh entropy: :func:`seeded` draws one for a release).

    Examples
    --------
    >>> resolved_options("vmdav", 3, {"gamma": 1.1})
    {'engine': 'auto', 'gamma': 1.1, 'leftover': 'centroid'}
    >>> resolved_options("ivmdav", 3, {})["candidates"]
    6
    >>> resolved_options("hybrid", 3, {"seed": 5})["K"]
    21
    """
    check_option_values(method, k, options)
    spec = get_method(method)
    resolved = {**spec.defaults, **options}
    if spec.chosen is not None:
        resolved.update(spec.chosen(k, resolved))
    return resolved


def seeded(method: Any, params: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``params`` with a seed drawn for a registered method that takes one and got none,
    and the note that says so (``None`` when nothing was drawn).

    A release must be one that can be made again: without a seed the hybrid's GA would
    draw another release on every run, and nothing would say which. Every path of a
    release (:func:`microagg.microaggregate`, :func:`microagg.dask.microaggregate`,
    ``microagg protect``) draws it here and reports it.

    Examples
    --------
    >>> params, note = seeded("hybrid", {"iterations": 50})
    >>> sorted(params), note.startswith("hybrid takes a random seed")
    (['iterations', 'seed'], True)
    >>> seeded("mdav", {})
    ({}, None)
    """
    if (not isinstance(method, str) or method not in METHODS
            or "seed" not in METHODS[method].options or params.get("seed") is not None):
        return params, None
    seed = secrets.randbelow(2**31)
    return {**params, "seed": seed}, (
        f"{method} takes a random seed and none was given: it ran with seed={seed}; "
        f"give seed={seed} (--seed {seed}) to make this release again")


def list_methods() -> Any:
    """The registered methods as a table: name, family, options and a one-line summary.

    Book: :ref:`chap-mdav`.

    Examples
    --------
    >>> list_methods()["name"].tolist()
    ['mdav', 'mdav_single', 'vmdav', 'ivmdav', 'hybrid']
    """
    import pandas as pd

    return pd.DataFrame([{"name": m.name, "label": m.label, "family": m.family,
                          "options": ", ".join(m.options),
                          "summary": m.summary} for m in METHODS.values()])
