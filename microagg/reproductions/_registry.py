"""The one registry of the papers' results tables, and how each is recomputed.

Every entry names a table (or the data behind a figure) of one of the five papers, the
function that computes our numbers as a tidy frame keyed like ``data/published``
(``dataset, method, k, parameters, metric`` and ``ours``), the paper's settings, and the
book section that discusses it. The entries themselves are listed once, in
``_entries.py``; the chapters, the ledger page, the command line (``microagg reproduce
NAME|all``) and the tests all read that list.

Settings: every entry runs at the paper's settings. Only the chapters' quick check under
nbval may reduce the heaviest ones, and only through one switch, the environment variable
``MICROAGG_QUICK=1`` (:func:`quick_mode`); whatever ran is recorded in the result's
``settings`` attribute and printed by the pages.

Book: :ref:`page-ledger`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .._env import flag
from .._jit import numba_enabled, numba_status
from .._validate import check_flag

__all__ = ["Entry", "KEYS", "QUICK_ENV", "CACHE_ENV", "quick_mode", "run_entry", "warn_if_slow"]

#: The one switch that lets nbval run the heaviest reproductions at reduced settings.
QUICK_ENV = "MICROAGG_QUICK"
#: Folder where a book build shares computed tables between pages (set by tools/book_ext.py).
CACHE_ENV = "MICROAGG_REPRODUCTION_CACHE"

#: The key columns of a tidy results frame, as in ``data/published``.
KEYS = ["dataset", "method", "k", "parameters", "metric"]


def quick_mode() -> bool:
    """Whether ``MICROAGG_QUICK=1`` asks for reduced settings (nbval's quick check only).

    Book: :ref:`page-ledger`.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"MICROAGG_QUICK": "1"}):
    ...     print(quick_mode())
    True
    """
    return flag(QUICK_ENV)


@dataclass(frozen=True)
class Entry:
    """A results table of a paper (or the data behind a figure) and how to recompute it.

    ``compute(**settings)`` returns our numbers as a tidy frame (``KEYS`` + ``ours``,
    optionally ``ours_sd`` and ``runs`` for seeded tables); ``paper_settings`` are the
    paper's settings and ``quick_settings`` the reduced ones nbval may use. ``tables``
    are the table keys of ``data/published`` it answers (empty for figure data),
    ``section`` the label of the book section that discusses it, ``inputs`` the metrics
    that are settings rather than results, ``restated(row)`` whether a cell restates
    another part of the paper rather than a result (the size of a grouping the paper
    lists), and ``reasons(row)`` a one-line reason for a
    cell that differs. ``recreated`` names the data sets the paper never published (our
    numbers come from re-draws), and ``evidence`` the label of the chapter's figure of our
    runs against the published values (for entries with repeated runs).

    The number of seeds and re-draws is a setting like any other (``seeds``, ``draws``):
    it lives in ``paper_settings`` here, in one place per entry, and every table, figure,
    status and test reads it from there.

    Book: :ref:`page-ledger`.
    """

    name: str
    paper: str
    tables: tuple[str, ...]
    title: str
    section: str
    compute: Callable[..., pd.DataFrame]
    paper_settings: dict[str, Any] = field(default_factory=dict)
    quick_settings: dict[str, Any] = field(default_factory=dict)
    inputs: tuple[str, ...] = ()
    restated: Callable[[pd.Series], bool] | None = None
    reasons: Callable[[pd.Series], str] | None = None
    recreated: tuple[str, ...] = ()
    evidence: str = ""

    def settings(self, quick: bool | None = None) -> dict[str, Any]:
        """The settings a run uses: the paper's, or (quick mode) the reduced ones."""
        quick = quick_mode() if quick is None else check_flag(quick, "quick")
        return {**self.paper_settings, **(self.quick_settings if quick else {})}


def _cache_file(entry: Entry, settings: dict[str, Any]) -> Path | None:
    """Where a table computed for ``entry`` at ``settings`` is kept in the cache folder
    (``None``: no cache). The name is keyed on the code too (:func:`code_digest`), so an
    edit of the package never serves a table the old code computed."""
    folder = os.environ.get(CACHE_ENV)
    if not folder:
        return None
    key = json.dumps({"name": entry.name, "settings": settings, "code": code_digest()},
                     sort_keys=True, default=str)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Path(folder) / f"{entry.name}-{digest}.csv"


def environment() -> pd.DataFrame:
    """What computed the tables: the package (its version and a digest of its code),
    Python and the libraries the numbers pass through, and whether numba compiled the
    loops (the answers are the same either way). A reader whose numbers differ from the
    book's compares this table with the one the ledger page shows.

    Book: :ref:`page-ledger`.

    Examples
    --------
    >>> env = environment()
    >>> env.columns.tolist(), env["component"].iloc[0]
    (['component', 'version'], 'microagg')
    """
    import platform
    from importlib.metadata import PackageNotFoundError, version

    from .. import __version__

    rows = [("microagg", f"{__version__} (code {code_digest()[:12]})"),
            ("Python", platform.python_version())]
    for name in ("numpy", "pandas", "scipy", "numba"):
        try:
            rows.append((name, version(name)))
        except PackageNotFoundError:
            rows.append((name, "not installed"))
    rows.append(("compiled loops (numba)", numba_status()))
    return pd.DataFrame(rows, columns=["component", "version"])


@functools.cache
def code_digest() -> str:
    """A digest of the package's version and its Python sources and published tables:
    what a reproduced table depends on besides its settings and the (checksummed) data.

    Examples
    --------
    >>> len(code_digest())
    64
    """
    from .. import __version__

    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(__version__.encode())
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".csv")
                       and "__pycache__" not in p.parts):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


#: The warning of a heavy entry (one with reduced settings) run at the papers' settings
#: without numba: measured, a GOMM run 60 and a GA run 600 times slower in plain Python
#: (GOMM's tables: hours; the genetic Table 2, 820 CPU seconds compiled: days).
_SLOW = ("{name} at the papers' settings takes hours to days instead of minutes without "
         "numba: its loops run as plain Python, 60 to 600 times slower. For reduced settings "
         "set MICROAGG_QUICK=1. Why numba is off: {status}")


def warn_if_slow(entry: Entry, settings: dict[str, Any], *, stacklevel: int = 2) -> None:
    """Warn (:class:`RuntimeWarning`) before a heavy entry (one with ``quick_settings``)
    runs at the papers' settings without numba: it would take hours or days."""
    if entry.quick_settings and settings == entry.paper_settings and not numba_enabled():
        status = numba_status().removeprefix("off: ")
        warnings.warn(_SLOW.format(name=entry.name, status=status), RuntimeWarning,
                      stacklevel=stacklevel + 1)


def run_entry(entry: Entry, *, quick: bool | None = None, progress: bool = True
              ) -> pd.DataFrame:
    """Our numbers for ``entry`` as a tidy frame, with the settings that ran in ``.attrs``.

    A heavy entry (one with ``quick_settings``) run at the papers' settings without
    numba warns first (:class:`RuntimeWarning`): it would take hours or days.

    Within a book build the result is shared between pages through a cache folder
    (``MICROAGG_REPRODUCTION_CACHE``, set by the build), so a table shown in a chapter and
    in the ledger is computed once.
    """
    settings = entry.settings(quick)
    warn_if_slow(entry, settings, stacklevel=3)
    cached = _cache_file(entry, settings)
    if cached is not None and cached.exists():
        ours = pd.read_csv(cached, keep_default_na=False, na_values=[""],
                           dtype={"dataset": str, "method": str, "parameters": str,
                                  "metric": str})
        ours["parameters"] = ours["parameters"].fillna("")
    else:
        ours = entry.compute(**settings, progress=progress)
        if cached is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            ours.to_csv(cached, index=False)
    ours = ours.copy()
    ours.attrs["settings"] = settings
    ours.attrs["quick"] = settings != entry.paper_settings
    return ours
