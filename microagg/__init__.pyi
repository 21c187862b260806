"""The public API of ``microagg``, listed once: for type checkers and for the package itself.

Type checkers and IDEs read this stub instead of ``__init__.py`` (whose names load lazily,
PEP 562) and so see each public name's real signature. ``__init__.py`` reads the same
lines at run time (the SPEC 1 convention of ``lazy_loader.attach_stub``):

* ``from .module import name as name``: a public function or class, defined (or
  re-exported) by that private module; in ``__all__`` in this order, the order of the API
  page (``chapters/api.md``);
* ``from . import name as name``: a public subpackage (not in ``__all__``).

The ``name as name`` form is what makes a stub re-export a name (PEP 484); a new public
name is one line here and nothing else. (No ``__all__`` here: ``__init__.py`` makes it
from these lines.)
"""

# ruff: noqa: I001  (the order is the API page's, not alphabetical)

from . import (
    datasets as datasets,
    published as published,
    reproductions as reproductions,
    views as views,
    teaching as teaching,
    reference as reference,
)

# partitions and information loss
from ._core import (
    standardize as standardize,
    sse as sse,
    sst as sst,
    information_loss as information_loss,
    aggregate as aggregate,
    group_sizes as group_sizes,
    is_k_partition as is_k_partition,
    relabel as relabel,
)

# exact solutions
from ._optimal import (
    optimal_univariate as optimal_univariate,
    optimal_partition as optimal_partition,
    univariate_graph as univariate_graph,
    UnivariateGraph as UnivariateGraph,
)

# the MDAV family
from ._mdav import (
    mdav as mdav,
    mdav_single as mdav_single,
    vmdav as vmdav,
    ivmdav as ivmdav,
    list_engines as list_engines,
)
from ._blocked import blocked as blocked
from ._methods import list_methods as list_methods

# genetic
from ._genetic import ga_partition as ga_partition, GAResult as GAResult
from ._hybrid import hybrid as hybrid, HybridResult as HybridResult, macrogroups as macrogroups

# disclosure risk and GOMM
from ._risk import (
    distance_linkage_disclosure as distance_linkage_disclosure,
    interval_disclosure as interval_disclosure,
    disclosure_risk as disclosure_risk,
    score as score,
    score_breakdown as score_breakdown,
    ScoreBreakdown as ScoreBreakdown,
)
from ._gomm_eval import (
    multivariate as multivariate,
    score_grouping as score_grouping,
    k_anonymity_level as k_anonymity_level,
)
from ._gomm import gomm as gomm, GommResult as GommResult
from ._gomm_ops import gomm_crossover as gomm_crossover, gomm_mutate as gomm_mutate
from ._gomm_eval import gomm_cache_info as gomm_cache_info, gomm_cache_clear as gomm_cache_clear

# tables
from ._protect import (
    microaggregate as microaggregate,
    MicroaggregationInfo as MicroaggregationInfo,
)
from ._audit import audit as audit, ReleaseAudit as ReleaseAudit
from ._jit import numba_enabled as numba_enabled

__version__: str
