"""The one home of the methods' default settings.

Each method with options has a frozen dataclass here whose fields are its options and
whose field defaults are its default values. Everything else reads them:

* the function signatures (:func:`microagg.ga_partition`, :func:`microagg.hybrid`,
  :func:`microagg.vmdav`, :func:`microagg.ivmdav`, :func:`microagg.gomm`, the readable
  oracles of :mod:`microagg.reference` and the paper reproductions), so the API pages,
  which show the signatures, read them too;
* the method registry (``microagg._methods.METHODS``): a method's ``options`` are the
  field names of its settings, and its ``defaults`` their values (read by the provenance
  record of ``microagg protect --report``, which lists every option a release ran with);
* the command line's help text (``microagg protect --help``).

``tests/test_defaults.py`` checks that all of them agree with this module.

Book: :ref:`chap-mdav`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

__all__ = ["EngineSettings", "GASettings", "HybridSettings", "VMDAVSettings",
           "IVMDAVSettings", "GOMMSettings", "ENGINE", "GA", "HYBRID", "VMDAV", "IVMDAV", "GOMM",
           "MACROGROUP_SIZE", "GOMM_CACHE_BYTES", "GOMM_REPRODUCTION_CACHE_BYTES",
           "VMDAV_CLUSTERED_GAMMA", "METHOD", "SMALL_STRATA_POLICY", "option_names",
           "option_defaults"]


@dataclass(frozen=True)
class EngineSettings:
    """The MDAV family's choice of implementation (every engine gives the same labels):
    ``"auto"`` picks one by the method and the number of records
    (``microagg._mdav.dispatch.choose_engine``)."""

    engine: str = "auto"


@dataclass(frozen=True)
class GASettings:
    """The genetic algorithm's settings: Table 1 of Martinez-Balleste et al. (2007)."""

    population: int = 10
    mutation_rate: float = 0.1
    crossover_rate: float = 0.5
    iterations: int = 10_000


#: The method a release runs unless told otherwise (:func:`microagg.microaggregate`,
#: :func:`microagg.dask.microaggregate`, :func:`microagg.blocked`, ``microagg protect``).
METHOD = "mdav"
#: What a stratum with fewer than k records does unless told otherwise: stop the run,
#: naming it (``"merge"``: protect it with its most similar stratum).
SMALL_STRATA_POLICY = "error"


#: The genetic paper's example macrogroup size (Section 3.2, step 2: K = 21); the hybrid's
#: ``K`` when none is given is derived from it (``microagg._hybrid.default_K``).
MACROGROUP_SIZE = 21


@dataclass(frozen=True)
class HybridSettings:
    """The MDAV+GA hybrid's own options (the GA's are :class:`GASettings`).

    ``K=None`` means: chosen from ``k`` and :data:`MACROGROUP_SIZE`.
    """

    K: int | None = None
    partitioning: str = "two-step"
    seed: Any = None
    n_jobs: int = 1


@dataclass(frozen=True)
class VMDAVSettings:
    """V-MDAV's options (Solanas & Martinez-Balleste 2006)."""

    gamma: float = 0.2
    leftover: str = "centroid"


#: V-MDAV's gain factor for clustered data, as its paper recommends (0.2,
#: :attr:`VMDAVSettings.gamma`, for scattered data): the explorers' and exercises' default,
#: and the gamma the reproduction uses where the paper classifies a data set as clustered.
VMDAV_CLUSTERED_GAMMA = 1.1


@dataclass(frozen=True)
class IVMDAVSettings:
    """IV-MDAV's options: the paper's recommended gain factor (Rawat & Borah 2014).

    ``candidates=None`` means ``2k``, the paper's choice.
    """

    gamma: float = 1.16
    candidates: int | None = None
    self_neighbour: bool = True


@dataclass(frozen=True)
class GOMMSettings:
    """GOMM's search settings: the paper's (Section 4.2, stated for the
    operator analysis; Section 5 does not restate them, and we take them for Tables 1-6
    too), and D-GOMM's window ``patience`` (the paper says "several" generations; the number
    is our choice)."""

    population: int = 200
    generations: int = 100
    crossovers: int = 25
    mutations_per_operator: int = 10
    patience: int = 5


#: GOMM's memory budget, in bytes: the process-wide cache of microaggregated attribute
#: groups (``microagg.gomm_cache_info``) and, separately, each run's arena of the groups'
#: release parts hold at most this much, the least recently used groups going first
#: (``microagg._gomm_eval``). One run at the papers' sizes (Census, 1,080 x 12;
#: Water-treatment, 527 x 38) holds at most about 130 MB in the cache and 190 MB in the
#: arena, so nothing is evicted there. ``$MICROAGG_GOMM_CACHE_MB`` overrides it.
GOMM_CACHE_BYTES = 512 * 2**20

#: GOMM's memory budget in each worker process of the book's GOMM reproduction
#: (:mod:`microagg.reproductions`), unless ``$MICROAGG_GOMM_CACHE_MB`` is set. A worker runs
#: about half of the seeds after the first over the ten (data set, k) pairs of the papers,
#: sharing one cache: it held 1.2 GB after four seeds, and with the 512 MB budget seeds 3
#: and 4 took 48 and 50 s of CPU instead of 40 and 38 s (the same runs).
GOMM_REPRODUCTION_CACHE_BYTES = 2 * 2**30

ENGINE = EngineSettings()
GA = GASettings()
HYBRID = HybridSettings()
VMDAV = VMDAVSettings()
IVMDAV = IVMDAVSettings()
GOMM = GOMMSettings()


def option_names(*settings: Any) -> tuple[str, ...]:
    """The field names of one or more settings, in order (a method's ``options``).

    Examples
    --------
    >>> option_names(VMDAV)
    ('gamma', 'leftover')
    >>> option_names(HYBRID, GA)[-2:]
    ('crossover_rate', 'iterations')
    """
    return tuple(f.name for s in settings for f in fields(s))


def option_defaults(*settings: Any) -> dict[str, Any]:
    """The fields of one or more settings and their default values, in order (a method's
    ``defaults``).

    Examples
    --------
    >>> option_defaults(ENGINE, VMDAV)
    {'engine': 'auto', 'gamma': 0.2, 'leftover': 'centroid'}
    """
    return {f.name: getattr(s, f.name) for s in settings for f in fields(s)}
