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

Book: :ref:`chap-foundations`.
"""

from . import datasets, published  # noqa: F401  (public subpackages)
from ._audit import ReleaseAudit, audit
from ._blocked import blocked
from ._core import (
    aggregate,
    group_sizes,
    information_loss,
    is_k_partition,
    relabel,
    sse,
    sst,
    standardize,
)
from ._genetic import GAResult, ga_partition
from ._gomm import GommResult, gomm
from ._gomm_eval import (
    gomm_cache_clear,
    gomm_cache_info,
    k_anonymity_level,
    multivariate,
    score_grouping,
)
from ._gomm_ops import gomm_crossover, gomm_mutate
from ._hybrid import HybridResult, hybrid, macrogroups
from ._jit import numba_enabled
from ._mdav import ivmdav, mdav, mdav_single, vmdav
from ._methods import list_methods
from ._optimal import UnivariateGraph, optimal_partition, optimal_univariate, univariate_graph
from ._protect import MicroaggregationInfo, microaggregate
from ._risk import (
    ScoreBreakdown,
    disclosure_risk,
    distance_linkage_disclosure,
    interval_disclosure,
    score,
    score_breakdown,
)

__version__ = "0.1.0"

__all__ = [
    # partitions and information loss
    "standardize",
    "sse",
    "sst",
    "information_loss",
    "aggregate",
    "group_sizes",
    "is_k_partition",
    "relabel",
    # exact solutions
    "optimal_univariate",
    "optimal_partition",
    "univariate_graph",
    "UnivariateGraph",
    # the MDAV family
    "mdav",
    "mdav_single",
    "vmdav",
    "ivmdav",
    "blocked",
    "list_methods",
    # genetic
    "ga_partition",
    "GAResult",
    "hybrid",
    "HybridResult",
    "macrogroups",
    # disclosure risk and GOMM
    "distance_linkage_disclosure",
    "interval_disclosure",
    "disclosure_risk",
    "score",
    "score_breakdown",
    "ScoreBreakdown",
    "multivariate",
    "score_grouping",
    "k_anonymity_level",
    "gomm",
    "GommResult",
    "gomm_crossover",
    "gomm_mutate",
    "gomm_cache_info",
    "gomm_cache_clear",
    # tables
    "microaggregate",
    "MicroaggregationInfo",
    "audit",
    "ReleaseAudit",
    "numba_enabled",
]
