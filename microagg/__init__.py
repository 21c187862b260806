"""microagg: microaggregation for statistical disclosure control.

The companion package of the *microagg* textbook. A partition is an ``(n,)``
integer array of group labels; algorithms take a 2-D float array and return
labels; :func:`aggregate` publishes the group centroids.

Modules (one idea each): :mod:`~microagg.core` (SSE, SST, IL, centroids),
:mod:`~microagg.datasets`, :mod:`~microagg.published` (the papers' numbers),
:mod:`~microagg.optimal` (exact solutions for small or univariate data),
:mod:`~microagg.mdav` (MDAV, MDAV-single-group, V-MDAV, IV-MDAV; :func:`blocked` runs them
block by block),
:mod:`~microagg.genetic` (GA and the MDAV+GA hybrid), :mod:`~microagg.risk`
(disclosure risk), :mod:`~microagg.gomm` (attribute grouping),
:mod:`~microagg.widgets` and :mod:`~microagg.cli`.
"""

from . import datasets
from .core import (
    aggregate,
    group_sizes,
    information_loss,
    is_k_partition,
    relabel,
    sse,
    sst,
    standardize,
)

# -- each module below adds its own public names here --------------------------------
# isort: split
from . import published, tables
from ._blocked import blocked
from .genetic import ga_partition, hybrid
from .gomm import GommResult, gomm, multivariate, score_grouping
from .mdav import ivmdav, mdav, mdav_single, vmdav
from .optimal import optimal_partition, optimal_univariate
from .protect import MicroaggregationInfo, microaggregate
from .risk import (
    disclosure_risk,
    distance_linkage_disclosure,
    interval_disclosure,
    score,
    score_breakdown,
)

__version__ = "0.1.0"

__all__ = [
    "gomm",
    "GommResult",
    "multivariate",
    "score_grouping",
    "distance_linkage_disclosure",
    "interval_disclosure",
    "disclosure_risk",
    "score",
    "score_breakdown",
    "tables",
    "ga_partition",
    "hybrid",
    "microaggregate",
    "MicroaggregationInfo",
    "mdav",
    "mdav_single",
    "vmdav",
    "ivmdav",
    "blocked",
    "published",
    "aggregate",
    "datasets",
    "group_sizes",
    "information_loss",
    "is_k_partition",
    "relabel",
    "sse",
    "sst",
    "standardize",
    "optimal_partition",
    "optimal_univariate",
]
