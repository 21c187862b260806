r"""GOMM and D-GOMM: choosing which attributes to microaggregate together.

*Multivariate* microaggregation in the sense of Nin et al. splits the attributes
into disjoint groups and microaggregates each group on its own
(:func:`multivariate`). Which grouping is best is a search problem over set
partitions of the attributes; GOMM (Genetic Optimizer for Multivariate
Microaggregation, :cite:p:`nin2008gomm`) searches it with a grouping genetic
algorithm in the style of Falkenauer :cite:p:`falkenauer1998grouping`, scoring
each grouping by

.. math::

    F = \frac{\mathrm{IL} + \mathrm{DR}}{2},\qquad
    \mathrm{DR} = \tfrac12\,\mathrm{ID} + \tfrac12\,\mathrm{DLD}

(:mod:`microagg.risk`; lower is better). D-GOMM switches off operators that have
stopped producing improvements. Chapter 6 (``chapters/06_gomm.md``) explains the
algorithm and reproduces the paper's Tables 1, 2, 5, 6 and Figures 6-8
(:func:`reproduce`).

Speed comes from caching, not from smaller settings:

* every attribute group is microaggregated at most once per (data, k, method):
  its labels, centroids and SSE are memoised in a process-wide cache (most
  chromosomes share most of their groups with their parents);
* IL and ID decompose over attribute groups (SSE per group, ID per column), so
  they are sums of cached parts; DLD does not decompose and is recomputed on the
  assembled release by a numba kernel over its *distinct* rows;
* the full score of a grouping is memoised under its canonical form (clones and
  re-discovered groupings cost nothing).
"""

from __future__ import annotations

import hashlib
import importlib
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ._progress import progress as _progress_bar
from ._validate import as_matrix, check_k
from ._validate import check_count as _check_count
from .risk import ScoreBreakdown, _dld_standardized, _id_counts, _principal_axes

__all__ = [
    "multivariate",
    "score_grouping",
    "gomm",
    "GommResult",
    "OPERATORS",
    "gomm_data",
    "reproduce",
    "Reproduction",
    "clear_cache",
    "cache_info",
    "k_anonymity_level",
]

Grouping = tuple[tuple[int, ...], ...]

#: Operator codes, in the order the paper lists them, with their names.
OPERATORS: dict[str, str] = {
    "GC": "group create",
    "GE": "group eliminate",
    "GS": "group split",
    "ES": "element swap",
    "EM": "element move",
    "CX": "crossover",
}
_MUTATIONS = ("GC", "GE", "GS", "ES", "EM")


# ======================================================================================
# data
# ======================================================================================


def gomm_data(name: str) -> pd.DataFrame:
    """The GOMM paper's data: ``"census"`` (1080 x 12) or ``"water-treatment"`` (380 x 38).

    The paper's Census has 12 attributes, ours 13. We drop **ERNVAL**, the last
    column: the paper's ad-hoc groupings (its Table 4, numbering the attributes
    a1..a12) group exactly the strongly correlated attributes together only when
    a1..a12 are our first twelve columns (AGI, FEDTAX, TAXINC in one "correlated"
    group; PTOTVAL, PEARNVAL, FICA, WSALVAL in another), and ERNVAL is a
    near-copy of WSALVAL (correlation 0.97) and PEARNVAL (0.96), so dropping it
    loses little. Chapter 6 shows the check.
    """
    from . import datasets

    if name == "census":
        return datasets.load("census").drop(columns=["ERNVAL"])
    if name == "water-treatment":
        return datasets.load("water-treatment")
    raise ValueError(f"unknown GOMM data set {name!r}; use 'census' or 'water-treatment'")


# ======================================================================================
# the per-group cache
# ======================================================================================


def _method_function(method: str | Callable[..., Any]) -> tuple[str, Callable[..., Any]]:
    if callable(method):
        name = f"{getattr(method, '__module__', '')}.{getattr(method, '__qualname__', method)}"
        return name, method
    # the module itself (the attribute ``microagg.mdav`` is the function)
    _mdav = importlib.import_module("microagg.mdav")
    table = {"mdav": _mdav.mdav,
             "mdav_single": _mdav.mdav_single, "vmdav": _mdav.vmdav, "ivmdav": _mdav.ivmdav}
    if method not in table:
        raise ValueError(f"unknown method {method!r}; use one of {sorted(table)} or a callable")
    return method, table[method]


def _group_means(sub: np.ndarray, labels: np.ndarray, s: int) -> np.ndarray:
    """Centroid of each of the ``s`` clusters (rows) on the columns of ``sub``."""
    counts = np.bincount(labels, minlength=s)
    means = np.empty((s, sub.shape[1]))
    for c in range(sub.shape[1]):
        means[:, c] = np.bincount(labels, weights=sub[:, c], minlength=s) / counts
    return means


@dataclass
class _GroupEntry:
    labels: np.ndarray  # (n,) int64, 0..s-1
    centroids: np.ndarray  # (s, |g|) on the standardised scale
    sse: float  # within-group SSE of this attribute group (standardised scale)
    n_labels: int


class _GroupCache:
    """Memo of the microaggregation of each attribute group for one (data, k, method)."""

    def __init__(self, Z: np.ndarray, k: int, method_name: str, fn: Callable[..., Any]) -> None:
        self.Z = Z
        self.k = k
        self.method_name = method_name
        self.fn = fn
        self.entries: dict[tuple[int, ...], _GroupEntry] = {}
        self.n_computed = 0

    def get(self, cols: tuple[int, ...]) -> _GroupEntry:
        entry = self.entries.get(cols)
        if entry is None:
            sub = np.ascontiguousarray(self.Z[:, list(cols)])
            raw = np.asarray(self.fn(sub, self.k))
            if raw.size and raw.min() == 0 and np.bincount(raw).all():
                labels = raw.astype(np.int64)  # already 0..s-1, all used (MDAV)
            else:
                labels = np.unique(raw, return_inverse=True)[1].reshape(-1).astype(np.int64)
            s = int(labels.max()) + 1
            centroids = _group_means(sub, labels, s)
            diff = sub - centroids[labels]
            entry = _GroupEntry(labels, centroids, float(np.einsum("ij,ij->", diff, diff)), s)
            self.entries[cols] = entry
            self.n_computed += 1
        return entry


_REGISTRY: OrderedDict[tuple[Any, ...], _GroupCache] = OrderedDict()
_REGISTRY_SIZE = 32


def _data_key(Z: np.ndarray) -> tuple[Any, ...]:
    digest = hashlib.blake2b(np.ascontiguousarray(Z).tobytes(), digest_size=16).hexdigest()
    return (Z.shape, digest)


def _cache_for(Z: np.ndarray, k: int, method: str | Callable[..., Any],
               shared: bool = True) -> _GroupCache:
    name, fn = _method_function(method)
    if not shared:
        return _GroupCache(Z, k, name, fn)
    key = (_data_key(Z), k, name, id(fn) if callable(method) else 0)
    cache = _REGISTRY.get(key)
    if cache is None:
        cache = _GroupCache(Z, k, name, fn)
        _REGISTRY[key] = cache
        while len(_REGISTRY) > _REGISTRY_SIZE:
            _REGISTRY.popitem(last=False)
    else:
        _REGISTRY.move_to_end(key)
    return cache


def clear_cache() -> None:
    """Forget every memoised attribute-group microaggregation."""
    _REGISTRY.clear()


def cache_info() -> pd.DataFrame:
    """One row per cached (data, k, method): number of groups held and computed."""
    rows = [{"shape": key[0][0], "k": c.k, "method": c.method_name, "groups": len(c.entries),
             "computed": c.n_computed} for key, c in _REGISTRY.items()]
    return pd.DataFrame(rows, columns=["shape", "k", "method", "groups", "computed"])


# ======================================================================================
# groupings
# ======================================================================================


def _canonical(groups: Sequence[Sequence[int]]) -> Grouping:
    return tuple(sorted(tuple(sorted(int(a) for a in g)) for g in groups))


def _check_groups(groups: Any, p: int) -> Grouping:
    if isinstance(groups, (str, bytes)) or not isinstance(groups, Sequence | np.ndarray):
        raise TypeError("groups must be a list of lists of column indices, e.g. [[0, 2], [1]]")
    seen: list[int] = []
    clean = []
    for g in groups:
        if isinstance(g, (int, np.integer)) or isinstance(g, (str, bytes)):
            raise TypeError("groups must be a list of lists of column indices, e.g. [[0, 2], [1]]")
        members = []
        for a in g:
            if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
                raise TypeError(f"column indices must be integers, got {a!r}")
            if not 0 <= int(a) < p:
                raise ValueError(f"column index {int(a)} is out of range for {p} attributes")
            members.append(int(a))
        if not members:
            raise ValueError("groups must not contain an empty group")
        clean.append(members)
        seen.extend(members)
    if len(seen) != len(set(seen)):
        dup = sorted({a for a in seen if seen.count(a) > 1})
        raise ValueError(f"column(s) {dup} appear in more than one group; groups must be disjoint")
    if sorted(seen) != list(range(p)):
        missing = sorted(set(range(p)) - set(seen))
        raise ValueError(f"column(s) {missing} are in no group; every attribute needs a group")
    return _canonical(clean)


def _standardized(X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    arr = as_matrix(X)
    mean = arr.mean(axis=0)
    sd = arr.std(axis=0)
    if np.any(sd == 0):
        raise ValueError(f"column(s) {np.flatnonzero(sd == 0).tolist()} have zero variance "
                         "and cannot be standardised; drop them")
    return (arr - mean) / sd, mean, sd


def multivariate(X: Any, groups: Sequence[Sequence[int]], k: int, method: str | Callable[..., Any]
                 = "mdav", *, standardize: bool = True) -> np.ndarray:
    r"""Microaggregate each attribute group independently and return the released data.

    For a grouping :math:`G_1, \dots, G_m` of the columns, group :math:`G_j` is
    partitioned by ``method`` (MDAV by default) using only its own columns, and each
    of those columns is replaced by its group centroids:

    .. math:: x'_{ic} = \bar{x}_{c}\bigl(\text{cluster of } i \text{ in } G_j\bigr),
              \qquad c \in G_j .

    A record then shares its released values with different records in different
    attribute groups, so the release is in general **not** k-anonymous (chapter 6,
    ``chapters/06_gomm.md``, counts the distinct released rows).

    Parameters
    ----------
    X : array_like, shape (n, p)
    groups : list of lists of int
        A partition of the column indices ``0..p-1`` (each column in exactly one group).
    k : int
        Minimum cluster size, ``1 <= k <= n``.
    method : {"mdav", "mdav_single", "vmdav", "ivmdav"} or callable
        ``method(Z, k) -> labels`` partitions the records on the group's columns.
        ``"mdav"`` is :func:`microagg.mdav.mdav` (compiled loops when numba is
        installed).
    standardize : bool, default True
        Partition on standardised columns (z-scores with population sd, as the
        book does throughout). The released values are the centroids of the values
        of ``X`` as given either way.

    Returns
    -------
    numpy.ndarray, shape (n, p)

    Notes
    -----
    Each group's partition is memoised (key: the data's content hash, the
    group's columns, ``k`` and ``method``), so calling again with groupings that
    share groups never repeats a microaggregation; :func:`cache_info` shows the
    cache and :func:`clear_cache` empties it.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0., 0.], [1., 9.], [8., 1.], [9., 8.]])
    >>> multivariate(X, [[0], [1]], 2)
    array([[0.5, 0.5],
           [0.5, 8.5],
           [8.5, 0.5],
           [8.5, 8.5]])
    """
    arr = as_matrix(X)
    n, p = arr.shape
    k = check_k(k, n)
    canon = _check_groups(groups, p)
    Z = _standardized(arr)[0] if standardize else arr
    cache = _cache_for(Z, k, method)
    out = np.empty_like(arr)
    for cols in canon:
        entry = cache.get(cols)
        means = _group_means(arr[:, list(cols)], entry.labels, entry.n_labels)
        out[:, list(cols)] = means[entry.labels]
    return out


def k_anonymity_level(protected: Any) -> int:
    """Size of the smallest set of identical released rows (k-anonymity actually achieved).

    Examples
    --------
    >>> k_anonymity_level([[1.0, 2.0], [1.0, 2.0], [3.0, 4.0]])
    1
    """
    arr = as_matrix(protected, "protected")
    return int(np.unique(arr, axis=0, return_counts=True)[1].min())


# ======================================================================================
# scoring groupings
# ======================================================================================


class _Evaluator:
    """Scores groupings of the columns of standardised data ``Z``, memoising everything."""

    def __init__(self, Z: np.ndarray, k: int, method: str | Callable[..., Any] = "mdav",
                 width: float = 0.10, shared_cache: bool = True) -> None:
        self.Z = Z
        self.n, self.p = Z.shape
        self.k = k
        self.width = width
        self.groups = _cache_for(Z, k, method, shared=shared_cache)
        self.id_counts: dict[tuple[int, ...], int] = {}
        self.scores: dict[Grouping, ScoreBreakdown] = {}
        centred = Z - Z.mean(axis=0)
        self.sst = float(np.einsum("ij,ij->", centred, centred))
        self._Q = np.empty_like(Z)
        self.axes = _principal_axes(Z)
        self.dld_time = 0.0

    def _id_count(self, cols: tuple[int, ...], entry: _GroupEntry) -> int:
        c = self.id_counts.get(cols)
        if c is None:
            sub = self.Z[:, list(cols)]
            c = int(_id_counts(sub, entry.centroids[entry.labels], self.width).sum())
            self.id_counts[cols] = c
        return c

    def __call__(self, canon: Grouping) -> ScoreBreakdown:
        hit = self.scores.get(canon)
        if hit is not None:
            return hit
        Q = self._Q
        sse = 0.0
        idc = 0
        labels = []
        for cols in canon:
            entry = self.groups.get(cols)
            Q[:, list(cols)] = entry.centroids[entry.labels]
            sse += entry.sse
            idc += self._id_count(cols, entry)
            labels.append(entry.labels)
        # identity of each released row: the tuple of its cluster in every group
        keys = np.vstack(labels)
        t0 = time.perf_counter()
        dld = _dld_standardized(self.Z, Q, keys, self.axes)
        self.dld_time += time.perf_counter() - t0
        result = ScoreBreakdown(il=100.0 * sse / self.sst, id=100.0 * idc / (self.n * self.p),
                                dld=dld)
        self.scores[canon] = result
        return result


def score_grouping(X: Any, groups: Sequence[Sequence[int]], k: int,
                   method: str | Callable[..., Any] = "mdav") -> ScoreBreakdown:
    r"""IL, ID, DLD (and DR, score) of microaggregating ``X`` with a given attribute grouping.

    The same as ``microagg.risk.score_breakdown(X, multivariate(X, groups, k))``
    (up to rounding in the last digit), but computed on the standardised scale
    directly and with every part memoised; this is GOMM's fitness (Eq. 2 of
    :cite:p:`nin2008gomm`).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(60, 4))
    >>> b = score_grouping(X, [[0, 1, 2, 3]], 3)
    >>> round(b.score, 6) == round((b.il + 0.5 * b.id + 0.5 * b.dld) / 2, 6)
    True
    """
    Z = _standardized(X)[0]
    k = check_k(k, Z.shape[0])
    canon = _check_groups(groups, Z.shape[1])
    return _Evaluator(Z, k, method)(canon)


# ======================================================================================
# the genetic operators
# ======================================================================================
# A chromosome is its group part: a tuple of groups (each a sorted tuple of column
# indices) in group-part order; the object part (group of each attribute) follows
# from it. Two chromosomes with the same groups in another order are clones.


def _random_chromosome(p: int, rng: np.random.Generator) -> Grouping:
    labels = rng.integers(0, p, size=p)
    return tuple(tuple(np.flatnonzero(labels == g).tolist()) for g in np.unique(labels))


def _tidy(groups: list[list[int]]) -> Grouping:
    return tuple(tuple(sorted(g)) for g in groups if g)


def _crossover_one(donor: Grouping, site: tuple[int, int], host: Grouping, insert_at: int
                   ) -> Grouping:
    """Inject ``donor``'s groups ``site`` into ``host`` at group position ``insert_at``."""
    injected = [list(g) for g in donor[site[0]:site[1]]]
    taken = {a for g in injected for a in g}
    rest = [[a for a in g if a not in taken] for g in host]
    return _tidy(rest[:insert_at] + injected + rest[insert_at:])


def _site(c: Grouping, rng: np.random.Generator) -> tuple[int, int]:
    lo = int(rng.integers(0, len(c)))
    hi = int(rng.integers(lo + 1, len(c) + 1))
    return lo, hi


def crossover(p1: Grouping, p2: Grouping, rng: np.random.Generator) -> tuple[Grouping, Grouping]:
    """GGA crossover (Falkenauer; Fig. 4 of the GOMM paper): two children from two parents.

    A crossing site (a run of consecutive groups) is drawn in each parent's group
    part. Child 1 is parent 2 with parent 1's site injected at the start of parent
    2's site, the injected attributes being removed from the groups they had in
    parent 2 (groups left empty disappear); child 2 swaps the roles.
    """
    s1, s2 = _site(p1, rng), _site(p2, rng)
    return _crossover_one(p1, s1, p2, s2[0]), _crossover_one(p2, s2, p1, s1[0])


def mutate(op: str, c: Grouping, p: int, rng: np.random.Generator) -> Grouping:
    """Apply mutation ``op`` (one of ``GC, GE, GS, ES, EM``) to chromosome ``c`` (Fig. 5).

    * ``GC`` group create: a new group of ``s ~ U{1..p}`` random attributes, the
      others stay as they were (``s = p`` gives the single group);
    * ``GE`` group eliminate: a random group's attributes go, one by one, to random
      remaining groups (a clone if there is only one group);
    * ``GS`` group split: a random group is split into two random halves (a clone
      if it is a singleton);
    * ``ES`` element swap: two random attributes exchange their groups (a clone if
      they share one);
    * ``EM`` element move: a random attribute moves to another existing group (a
      clone if there is only one group).
    """
    groups = [list(g) for g in c]
    G = len(groups)
    if op == "GC":
        size = int(rng.integers(1, p + 1))
        new = sorted(rng.choice(p, size=size, replace=False).tolist())
        chosen = set(new)
        rest = [[a for a in g if a not in chosen] for g in groups]
        return _tidy(rest + [new])
    if op == "GE":
        if G == 1:
            return c
        victim = int(rng.integers(0, G))
        rest = groups[:victim] + groups[victim + 1:]
        for a in groups[victim]:
            rest[int(rng.integers(0, G - 1))].append(a)
        return _tidy(rest)
    if op == "GS":
        g = int(rng.integers(0, G))
        if len(groups[g]) == 1:
            return c
        perm = rng.permutation(groups[g]).tolist()
        half = len(perm) // 2
        return _tidy(groups[:g] + [perm[:half], perm[half:]] + groups[g + 1:])
    where = {a: gi for gi, g in enumerate(groups) for a in g}
    if op == "ES":
        a, b = (int(v) for v in rng.choice(p, size=2, replace=False))
        ga, gb = where[a], where[b]
        if ga == gb:
            return c
        groups[ga][groups[ga].index(a)] = b
        groups[gb][groups[gb].index(b)] = a
        return _tidy(groups)
    if op == "EM":
        if G == 1:
            return c
        a = int(rng.integers(0, p))
        ga = where[a]
        target = int(rng.integers(0, G - 1))
        target += target >= ga
        groups[ga].remove(a)
        groups[target].append(a)
        return _tidy(groups)
    raise ValueError(f"unknown mutation {op!r}; use one of {list(_MUTATIONS)}")


def _efficiency(child: float, reference: float) -> float:
    """Formulas (7)-(9): % improvement (> 0) or worsening (< 0) of ``child`` vs ``reference``."""
    if reference == child:
        return 0.0
    r = child / reference if reference > 0 else np.inf
    return (1.0 - r) * 100.0 if r <= 1 else (1.0 / r - 1.0) * 100.0


# ======================================================================================
# GOMM
# ======================================================================================


@dataclass
class GommResult:
    """Outcome of a GOMM / D-GOMM run (all measures in percent; lower score is better).

    Attributes
    ----------
    groups : list of lists of int
        Best grouping found (column indices, groups sorted).
    il, id, dld, score : float
        Its information loss, interval disclosure, distance-linkage disclosure and
        score :math:`(IL + (ID + DLD)/2)/2`.
    n_groups : int
    history : pandas.DataFrame
        One row per generation (0 = initial population): ``best``, ``mean``,
        ``worst`` score, ``best_groups`` and ``mean_groups`` (number of groups),
        ``evaluations`` (distinct groupings scored so far), ``seconds``.
    operators : pandas.DataFrame
        One row per (generation, operator) with the analysis measures of the
        paper's Section 4.1: ``children``, ``improved``, ``worsened``, ``unchanged``
        (efficacy), ``unused_pct`` (utilization: % of the children later removed
        from the population without ever having been a parent), ``life_time``
        (mean number of generations the children survived; 0 = rejected at once;
        children alive at the end are counted up to the last generation),
        ``eff_improve_mean``/``eff_improve_max`` and
        ``eff_worsen_mean``/``eff_worsen_max`` (efficiency, formulas 7-9; worsening
        is negative, ``eff_worsen_max`` is the most negative) and ``active``.
    population_scores, population_groups : numpy.ndarray, shape (generations + 1, population)
        Score and number of groups of every member, sorted best first, per generation.
    best_history : list of list of list of int
        The best grouping of every generation.
    switched_off : dict
        D-GOMM only: generation at which each operator was switched off.
    elapsed, cpu_seconds : float
        Wall-clock and CPU (process) seconds of the run; CPU time is the one to
        compare when other jobs share the machine.
    evaluations, group_microaggregations : int
        Distinct groupings scored, and attribute groups microaggregated in this run
        (cache misses).
    """

    groups: list[list[int]]
    il: float
    id: float
    dld: float
    score: float
    n_groups: int
    k: int
    dynamic: bool
    history: pd.DataFrame
    operators: pd.DataFrame
    population_scores: np.ndarray
    population_groups: np.ndarray
    best_history: list[list[list[int]]]
    elapsed: float
    evaluations: int
    group_microaggregations: int
    settings: dict[str, Any] = field(default_factory=dict)
    switched_off: dict[str, int] = field(default_factory=dict)
    cpu_seconds: float = 0.0

    @property
    def dr(self) -> float:
        """Disclosure risk ``(id + dld) / 2``."""
        return 0.5 * (self.id + self.dld)


def gomm(X: Any, k: int, population: int = 200, generations: int = 100, crossovers: int = 25,
         mutations_per_operator: int = 10, dynamic: bool = False, seed: int | None = None,
         progress: bool = True, *, patience: int = 5, method: str | Callable[..., Any] = "mdav",
         shared_cache: bool = True,
         initial: Sequence[Sequence[Sequence[int]]] | None = None) -> GommResult:
    r"""GOMM: a grouping GA for the attribute grouping of multivariate microaggregation.

    Nin et al. :cite:p:`nin2008gomm` (Algorithm 1): a population of attribute
    groupings evolves for ``generations`` generations. Each generation

    1. ``crossovers`` GGA crossovers (:func:`crossover`) of two parents drawn at
       random produce two children each;
    2. each of the five mutations (:func:`mutate`: group create, group eliminate,
       group split, element swap, element move) is applied ``mutations_per_operator``
       times to a parent drawn at random;
    3. elitist selection keeps the ``population`` best of parents and children
       (ties: parents first, then children in order of creation).

    The fitness of a grouping is its score :math:`(\mathrm{IL}+\mathrm{DR})/2`
    (:func:`score_grouping`; lower is better). The initial population assigns each
    attribute a group label drawn uniformly from ``0..p-1`` (so it starts with many
    groups, as the paper observes).

    With ``dynamic=True`` this is **D-GOMM** (Sec. 4.3): an operator whose children
    have not improved on their parents (mutation: on the parent; crossover: on the
    mean of the two parents) in ``patience`` consecutive generations is switched off
    for the rest of the run; when every operator is off the run stops. The paper
    describes the rule only as stopping operators that produce worse children
    "during several generations"; the window length is our choice.

    Parameters
    ----------
    X : array_like, shape (n, p)
        Original data; standardised inside (population sd).
    k : int
        Minimum cluster size of the microaggregation of each attribute group.
    population, generations, crossovers, mutations_per_operator : int
        Paper settings: 200, 100, 25 (50 children), 10 (50 children).
    dynamic : bool
        D-GOMM.
    seed : int or None
        Seed of ``numpy.random.default_rng``; the same seed gives the same run.
    progress : bool
        Show a progress bar.
    patience : int
        D-GOMM window (generations without improvement before an operator stops).
    method : str or callable
        Microaggregation of each group (default MDAV).
    shared_cache : bool
        Reuse the process-wide cache of microaggregated attribute groups (default).
        ``False`` starts from an empty cache (fair timings).
    initial : list of groupings, optional
        Members to put in the initial population (the rest random).

    Returns
    -------
    GommResult

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(1).normal(size=(80, 5))
    >>> r = gomm(X, 5, population=10, generations=3, crossovers=2,
    ...          mutations_per_operator=1, seed=0, progress=False)
    >>> float(r.history["best"].iloc[-1]) == r.score
    True
    """
    start = time.perf_counter()
    cpu_start = time.process_time()
    Z = _standardized(X)[0]
    n, p = Z.shape
    k = check_k(k, n)
    population = _check_count(population, "population", 1)
    generations = _check_count(generations, "generations", 0)
    crossovers = _check_count(crossovers, "crossovers", 0)
    mutations_per_operator = _check_count(mutations_per_operator, "mutations_per_operator", 0)
    patience = _check_count(patience, "patience", 1)
    rng = np.random.default_rng(seed)
    evaluate = _Evaluator(Z, k, method, shared_cache=shared_cache)
    computed_before = evaluate.groups.n_computed

    # --- population, with the bookkeeping of the operator analysis -------------------
    pop: list[Grouping] = []
    for g in initial or []:
        pop.append(tuple(tuple(x) for x in _check_groups(g, p)))
    while len(pop) < population:
        pop.append(_random_chromosome(p, rng))
    pop = pop[:population]

    def fit(c: Grouping) -> float:
        return evaluate(_canonical(c)).score

    fitness = [fit(c) for c in pop]
    # per individual (by identity): operator that made it, birth generation, used as a
    # parent?, generation of its removal
    ident = list(range(population))
    born_op: list[str | None] = [None] * population
    born_gen = [0] * population
    used = [False] * population
    died: list[int | None] = [None] * population

    ops = list(_MUTATIONS) + ["CX"]
    active = dict.fromkeys(ops, True)
    stale = dict.fromkeys(ops, 0)
    switched_off: dict[str, int] = {}
    op_rows: list[dict[str, Any]] = []
    hist_rows: list[dict[str, Any]] = []
    pop_scores = [np.sort(np.asarray(fitness))]
    pop_groups: list[np.ndarray] = []
    best_hist: list[list[list[int]]] = []

    def record(gen: int) -> None:
        f = np.asarray(fitness)
        ng = np.array([len(c) for c in pop])
        order = np.argsort(f, kind="stable")
        pop_groups.append(ng[order])
        best = pop[int(order[0])]
        best_hist.append([list(g) for g in _canonical(best)])
        hist_rows.append({"generation": gen, "best": float(f.min()), "mean": float(f.mean()),
                          "worst": float(f.max()), "best_groups": int(ng[order[0]]),
                          "mean_groups": float(ng.mean()), "evaluations": len(evaluate.scores),
                          "seconds": time.perf_counter() - start})

    record(0)
    last_gen = 0
    for gen in _progress_bar(range(1, generations + 1), total=generations,
                             desc=f"{'D-GOMM' if dynamic else 'GOMM'} k={k}", enabled=progress):
        if dynamic and not any(active.values()):
            break
        last_gen = gen
        children: list[Grouping] = []
        child_fit: list[float] = []
        child_op: list[str] = []
        child_eff: list[float] = []
        # crossovers
        if active["CX"]:
            for _ in range(crossovers):
                a, b = (int(v) for v in rng.integers(0, len(pop), size=2))
                used[ident[a]] = used[ident[b]] = True
                ref = 0.5 * (fitness[a] + fitness[b])
                for c in crossover(pop[a], pop[b], rng):
                    f = fit(c)
                    children.append(c)
                    child_fit.append(f)
                    child_op.append("CX")
                    child_eff.append(_efficiency(f, ref))
        # mutations
        for op in _MUTATIONS:
            if not active[op]:
                continue
            for _ in range(mutations_per_operator):
                a = int(rng.integers(0, len(pop)))
                used[ident[a]] = True
                c = mutate(op, pop[a], p, rng)
                f = fit(c)
                children.append(c)
                child_fit.append(f)
                child_op.append(op)
                child_eff.append(_efficiency(f, fitness[a]))
        # elitist selection over parents + children
        m0 = len(pop)
        all_pop = pop + children
        all_fit = np.asarray(fitness + child_fit)
        first_id = len(born_op)
        n_child = len(children)
        born_op.extend(child_op)
        born_gen.extend([gen] * n_child)
        used.extend([False] * n_child)
        died.extend([None] * n_child)
        all_ident = ident + list(range(first_id, first_id + n_child))
        keep = np.argsort(all_fit, kind="stable")[:population]
        keep_set = set(keep.tolist())
        for pos in range(m0 + n_child):
            if pos not in keep_set:
                died[all_ident[pos]] = gen
        keep.sort()  # preserve the order parents-then-children among survivors
        pop = [all_pop[i] for i in keep]
        fitness = [float(all_fit[i]) for i in keep]
        ident = [all_ident[i] for i in keep]
        # operator statistics of this generation (efficacy and efficiency now;
        # utilization and life time are filled in at the end)
        eff = np.asarray(child_eff)
        opv = np.asarray(child_op)
        for op in ops:
            sel = opv == op
            e = eff[sel]
            imp, wor = e[e > 0], e[e < 0]
            op_rows.append({
                "generation": gen, "operator": op, "active": active[op], "children": int(sel.sum()),
                "improved": int(imp.size), "worsened": int(wor.size),
                "unchanged": int(np.sum(e == 0)),
                "eff_improve_mean": float(imp.mean()) if imp.size else np.nan,
                "eff_improve_max": float(imp.max()) if imp.size else np.nan,
                "eff_worsen_mean": float(wor.mean()) if wor.size else np.nan,
                "eff_worsen_max": float(wor.min()) if wor.size else np.nan,
            })
            if dynamic and active[op]:
                stale[op] = stale[op] + 1 if imp.size == 0 else 0
                if stale[op] >= patience:
                    active[op] = False
                    switched_off[op] = gen
        pop_scores.append(np.sort(np.asarray(fitness)))
        record(gen)

    # --- utilization and life time per (generation, operator) -------------------------
    ops_df = pd.DataFrame(op_rows)
    if not ops_df.empty:
        b_op = np.array([o if o is not None else "" for o in born_op])
        b_gen = np.asarray(born_gen)
        d_gen = np.array([d if d is not None else -1 for d in died])
        u = np.asarray(used)
        alive = d_gen < 0
        life = np.where(alive, last_gen - b_gen, d_gen - b_gen)
        unused_pct = []
        life_time = []
        for gen, op in zip(ops_df["generation"], ops_df["operator"], strict=True):
            sel = (b_gen == gen) & (b_op == op)
            if not sel.any():
                unused_pct.append(np.nan)
                life_time.append(np.nan)
                continue
            unused_pct.append(100.0 * np.mean(~u[sel] & ~alive[sel]))
            life_time.append(float(life[sel].mean()))
        ops_df["unused_pct"] = unused_pct
        ops_df["life_time"] = life_time

    f = np.asarray(fitness)
    best_pos = int(np.argmin(f))
    best = _canonical(pop[best_pos])
    b = evaluate(best)
    return GommResult(
        groups=[list(g) for g in best], il=b.il, id=b.id, dld=b.dld, score=b.score,
        n_groups=len(best), k=k, dynamic=dynamic, history=pd.DataFrame(hist_rows),
        operators=ops_df, population_scores=np.vstack(pop_scores),
        population_groups=np.vstack(pop_groups), best_history=best_hist,
        elapsed=time.perf_counter() - start, cpu_seconds=time.process_time() - cpu_start,
        evaluations=len(evaluate.scores),
        group_microaggregations=evaluate.groups.n_computed - computed_before,
        settings={"population": population, "generations": generations,
                  "crossovers": crossovers, "mutations_per_operator": mutations_per_operator,
                  "seed": seed, "patience": patience, "method": evaluate.groups.method_name},
        switched_off=switched_off,
    )


# ======================================================================================
# the paper's experiments in one call
# ======================================================================================


@dataclass
class Reproduction:
    """Everything :func:`reproduce` computes (our numbers only; compare with
    :func:`microagg.published.table` ``("gomm", ...)``).

    Attributes
    ----------
    table1, table2 : pandas.DataFrame
        Best grouping found by GOMM per ``k`` on Water-treatment (Table 1) and Census
        (Table 2): columns ``dataset, k, IL, ID, DLD, score, groups``.
    table5, table6 : pandas.DataFrame
        Score and number of groups of each ad-hoc grouping of the paper's Tables 3
        and 4 and of GOMM's best, per ``k``: columns ``dataset, method, k, score,
        groups, IL, ID, DLD`` (``method`` as in :mod:`microagg.published`:
        ``adhoc-g38`` ..., ``gomm``).
    operators : pandas.DataFrame
        Operator analysis of the Water-treatment run at ``k = 25`` (Figures 6-7);
        see :class:`GommResult`.
    timing : pandas.DataFrame
        Figure 8: ``k``, ``gomm_seconds``, ``dgomm_seconds`` (wall clock),
        ``gomm_cpu``, ``dgomm_cpu`` (CPU seconds), ``gomm_score``,
        ``dgomm_score``, ``gomm_evaluations``, ``dgomm_evaluations`` (distinct
        groupings scored), ``gomm_children``, ``dgomm_children`` (children made) on
        Water-treatment, each run from an empty cache.
    results : dict
        Every run, keyed ``(dataset, k, "gomm" | "d-gomm")``.
    settings : dict
    elapsed : float
        Seconds for the whole reproduction.
    """

    table1: pd.DataFrame
    table2: pd.DataFrame
    table5: pd.DataFrame
    table6: pd.DataFrame
    operators: pd.DataFrame
    timing: pd.DataFrame
    results: dict[tuple[str, int, str], GommResult]
    settings: dict[str, Any]
    elapsed: float


def reproduce(population: int = 200, generations: int = 100, crossovers: int = 25,
              mutations_per_operator: int = 10, ks: Sequence[int] = (5, 10, 25, 50, 100),
              datasets: Sequence[str] = ("water-treatment", "census"), seed: int = 0,
              patience: int = 5, analysis_k: int = 25, progress: bool = True) -> Reproduction:
    """Run the GOMM paper's experiments: Tables 1, 2, 5, 6 and Figures 6-8.

    The defaults are the paper's settings (population 200, 100 generations, 25
    crossovers and 10 mutations of each kind per generation, k = 5, 10, 25, 50,
    100). For each data set and ``k``: one GOMM run (Tables 1-2, and the GOMM row
    of Tables 5-6), the ad-hoc groupings of the paper's Tables 3-4
    (:func:`microagg.published.adhoc_groupings`) scored with the same measures
    (Tables 5-6); on Water-treatment also one D-GOMM run per ``k`` (Figure 8; GOMM
    and D-GOMM each start from an empty group cache so that their times compare).
    The operator analysis (Figures 6-7) is that of the Water-treatment GOMM run
    at ``k = analysis_k``.

    The paper reports averages over runs; we report one seeded run per setting.
    Chapter 6 (``chapters/06_gomm.md``) shows the results beside the published ones.
    """
    from . import published

    start = time.perf_counter()
    settings = {"population": population, "generations": generations,
                "crossovers": crossovers, "mutations_per_operator": mutations_per_operator,
                "ks": list(ks), "datasets": list(datasets), "seed": seed, "patience": patience}
    results: dict[tuple[str, int, str], GommResult] = {}
    best_rows: list[dict[str, Any]] = []
    adhoc_rows: list[dict[str, Any]] = []
    timing_rows: list[dict[str, Any]] = []
    for ds in datasets:
        X = gomm_data(ds)
        for k in ks:
            run = gomm(X, k, population, generations, crossovers, mutations_per_operator,
                       dynamic=False, seed=seed, progress=progress, shared_cache=False)
            results[(ds, k, "gomm")] = run
            best_rows.append({"dataset": ds, "k": k, "IL": run.il, "ID": run.id, "DLD": run.dld,
                              "score": run.score, "groups": run.n_groups})
            for name, groups in published.adhoc_groupings(ds).items():
                b = score_grouping(X, groups, k)
                adhoc_rows.append({"dataset": ds, "method": f"adhoc-{name}", "k": k,
                                   "score": b.score, "groups": len(groups), "IL": b.il,
                                   "ID": b.id, "DLD": b.dld})
            adhoc_rows.append({"dataset": ds, "method": "gomm", "k": k, "score": run.score,
                               "groups": run.n_groups, "IL": run.il, "ID": run.id,
                               "DLD": run.dld})
            if ds == "water-treatment":
                drun = gomm(X, k, population, generations, crossovers, mutations_per_operator,
                            dynamic=True, seed=seed, progress=progress, patience=patience,
                            shared_cache=False)
                results[(ds, k, "d-gomm")] = drun
                timing_rows.append({"k": k, "gomm_seconds": run.elapsed,
                                    "dgomm_seconds": drun.elapsed,
                                    "gomm_cpu": run.cpu_seconds, "dgomm_cpu": drun.cpu_seconds,
                                    "gomm_score": run.score,
                                    "dgomm_score": drun.score,
                                    "gomm_evaluations": run.evaluations,
                                    "dgomm_evaluations": drun.evaluations,
                                    "gomm_children": int(run.operators["children"].sum()),
                                    "dgomm_children": int(drun.operators["children"].sum())})
    best = pd.DataFrame(best_rows)
    adhoc = pd.DataFrame(adhoc_rows)
    key = ("water-treatment", analysis_k, "gomm")
    operators = results[key].operators if key in results else pd.DataFrame()
    return Reproduction(
        table1=best[best["dataset"] == "water-treatment"].reset_index(drop=True),
        table2=best[best["dataset"] == "census"].reset_index(drop=True),
        table5=adhoc[adhoc["dataset"] == "water-treatment"].reset_index(drop=True),
        table6=adhoc[adhoc["dataset"] == "census"].reset_index(drop=True),
        operators=operators, timing=pd.DataFrame(timing_rows), results=results,
        settings=settings, elapsed=time.perf_counter() - start)


gomm.reproduce = reproduce  # type: ignore[attr-defined]  # ``microagg.gomm.reproduce(...)``
