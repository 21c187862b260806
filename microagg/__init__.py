"""microagg: microaggregation for statistical disclosure control.

The companion package of the *microagg* textbook. A partition is an ``(n,)``
integer array of group labels; the algorithms take a 2-D float array and ``k``
and return labels; :func:`aggregate` publishes the group centroids and
:func:`microaggregate` does the whole job on a table.

The functions and classes below are the public API; they are implemented in
private modules (``_core``, ``_mdav``, ``_genetic``, ``_gomm``, ...). Public
subpackages: :mod:`microagg.datasets` (reference and synthetic data),
:mod:`microagg.published` (the papers' numbers), :mod:`microagg.reproductions`
(the papers' tables, regenerated), :mod:`microagg.views` (the chapters' figures and
explorers), :mod:`microagg.teaching` (step-by-step re-runs and small experiments),
:mod:`microagg.reference` (slow, readable oracles) and, with the ``dask`` extra,
:mod:`microagg.dask` (protection within strata on a Dask cluster; import it explicitly).

The package is imported lazily (PEP 562): ``import microagg`` reads only this file;
each public name imports its module (and numpy, pandas, ...) when it is first used, so
the ``microagg`` command handles Ctrl-C before those imports (``microagg._entry``).

Book: :ref:`chap-foundations`.
"""

from __future__ import annotations

import importlib
import importlib.util

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: the command's first moments stay short
    from typing import Any

__version__ = "0.1.0"

#: Each public name and the private module that defines it, in the order of the API page.
_PUBLIC = {
    # partitions and information loss
    "standardize": "_core",
    "sse": "_core",
    "sst": "_core",
    "information_loss": "_core",
    "aggregate": "_core",
    "group_sizes": "_core",
    "is_k_partition": "_core",
    "relabel": "_core",
    # exact solutions
    "optimal_univariate": "_optimal",
    "optimal_partition": "_optimal",
    "univariate_graph": "_optimal",
    "UnivariateGraph": "_optimal",
    # the MDAV family
    "mdav": "_mdav",
    "mdav_single": "_mdav",
    "vmdav": "_mdav",
    "ivmdav": "_mdav",
    "blocked": "_blocked",
    "list_methods": "_methods",
    # genetic
    "ga_partition": "_genetic",
    "GAResult": "_genetic",
    "hybrid": "_hybrid",
    "HybridResult": "_hybrid",
    "macrogroups": "_hybrid",
    # disclosure risk and GOMM
    "distance_linkage_disclosure": "_risk",
    "interval_disclosure": "_risk",
    "disclosure_risk": "_risk",
    "score": "_risk",
    "score_breakdown": "_risk",
    "ScoreBreakdown": "_risk",
    "multivariate": "_gomm_eval",
    "score_grouping": "_gomm_eval",
    "k_anonymity_level": "_gomm_eval",
    "gomm": "_gomm",
    "GommResult": "_gomm",
    "gomm_crossover": "_gomm_ops",
    "gomm_mutate": "_gomm_ops",
    "gomm_cache_info": "_gomm_eval",
    "gomm_cache_clear": "_gomm_eval",
    # tables
    "microaggregate": "_protect",
    "MicroaggregationInfo": "_protect",
    "audit": "_audit",
    "ReleaseAudit": "_audit",
    "numba_enabled": "_jit",
}

__all__ = list(_PUBLIC)


def __getattr__(name: str) -> Any:
    """A public name (loaded from its module on first use, then kept here), or a
    submodule (``microagg.datasets``, ``microagg.published``, ...), imported on first use."""
    if name in _PUBLIC:
        value = getattr(importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
    elif (name.isidentifier() and not name.startswith("__")
          and importlib.util.find_spec(f"{__name__}.{name}") is not None):
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "datasets", "published"})
