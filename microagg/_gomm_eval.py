r"""Scoring attribute groupings: multivariate microaggregation and GOMM's fitness.

*Multivariate* microaggregation in the sense of the GOMM paper :cite:p:`balasch2014gomm`
splits the attributes into disjoint groups and microaggregates each group on its
own (:func:`multivariate`); :func:`score_grouping` scores a grouping by
:math:`(\mathrm{IL} + \mathrm{DR})/2`. GOMM (:mod:`microagg._gomm`) calls the
scorer thousands of times, so everything is memoised:

* every attribute group is microaggregated at most once per (data, k, method):
  its labels, centroids and SSE are kept in a process-wide cache (most
  chromosomes share most of their groups with their parents); with numba, MDAV's
  compiled loops are called directly on the (already checked) data;
* IL and ID decompose over attribute groups (SSE per group, ID per column), so
  they are sums of cached parts; DLD does not decompose, but what its search needs
  of each group is kept too: the value classes of its clusters, each record's
  *rival* classes (those not clearly farther than its own) and the values'
  projections. With numba, one compiled call per new group
  (:func:`~microagg._gomm_kernels.group_parts`) computes them into an arena, and one
  per grouping (:func:`~microagg._risk_kernels.dld_assembled`) assembles the release
  and searches, for each record, only the distinct rows holding one of its rivals,
  deciding on the exact distances as the full search would
  (``tests/test_gomm_fast.py``); without numba, the numpy search runs on the
  assembled release (the same answer);
* the full score of a grouping is memoised under its canonical form (clones and
  re-discovered groupings cost nothing).

Memory is bounded by bytes (:data:`microagg._defaults.GOMM_CACHE_BYTES`, 512 MB unless
``$MICROAGG_GOMM_CACHE_MB`` says otherwise): the process-wide cache drops the groups of
the least recently used (data, k, method) first, then its own least recently used groups,
and each :class:`Evaluator`'s arena keeps its most recently used slots when full. A
dropped group is computed again when next needed, with the same result (the methods are
deterministic; slot numbers are internal and do not enter the score). At n = 1,080 a
group holds about 10-45 kB in the cache and 10-65 kB in the arena; one run at the papers'
settings (Census, 1,080 x 12, and Water-treatment, 527 x 38, k = 3 to 25) at most about
130 MB in the cache and 190 MB in the arena: nothing is dropped. At n = 100,000 a group
holds 0.8-4 MB in the cache and 1-20 MB in the arena.

Threads may run GOMM and score groupings at once, on the same data or not: the process-wide
cache is read and changed under one lock (:data:`_LOCK`), which is never held while a group
is microaggregated, so the threads compute in parallel where the method releases the GIL,
and a method that itself scores groupings does not deadlock. Two threads that need the same
new group at the same moment may both compute it (the same entry; one is kept). An
:class:`Evaluator` and its arena belong to one run and are not shared.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from . import _defaults
from ._core import standardize as _standardize
from ._gomm_kernels import GroupParts, cluster_means, group_parts, mdav_means
from ._jit import HAVE_NUMBA
from ._mdav import mdav
from ._mdav.dispatch import auto_picks_indexed
from ._methods import method_function
from ._risk import ScoreBreakdown
from ._risk_kernels import (
    Released,
    dld_assembled,
    dld_grouped,
    id_counts,
    principal_axes,
    rival_margin,
)
from ._validate import as_labels, as_matrix, check_k, scale_exponent

__all__ = ["multivariate", "score_grouping", "k_anonymity_level", "gomm_cache_info",
           "gomm_cache_clear"]

Grouping = tuple[tuple[int, ...], ...]


#: The environment switch that sets :func:`cache_budget` (megabytes).
CACHE_ENV = "MICROAGG_GOMM_CACHE_MB"


def cache_budget() -> int:
    """GOMM's memory budget in bytes: ``$MICROAGG_GOMM_CACHE_MB`` (megabytes) if set, else
    :data:`microagg._defaults.GOMM_CACHE_BYTES`.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"MICROAGG_GOMM_CACHE_MB": "64"}):
    ...     cache_budget()
    67108864
    """
    env = os.environ.get(CACHE_ENV, "").strip()
    if not env:
        return int(_defaults.GOMM_CACHE_BYTES)
    try:
        mb = float(env)
    except ValueError:
        mb = -1.0
    if not (mb >= 0 and math.isfinite(mb)):
        raise ValueError(f"{CACHE_ENV}={env!r} is not a number of megabytes; set it "
                         "to e.g. 512, or unset it for the default")
    return int(mb * 2**20)


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

    @property
    def nbytes(self) -> int:
        return self.labels.nbytes + self.centroids.nbytes


class _GroupCache:
    """Memo of the microaggregation of each attribute group for one (data, k, method).

    ``entries`` are in least recently used order; ``nbytes`` counts them and the data the
    cache keeps; ``key`` is its key in the process-wide registry (``None``: private).
    """

    def __init__(self, Z: np.ndarray, k: int, method_name: str, fn: Callable[..., Any],
                 key: tuple[Any, ...] | None = None) -> None:
        self.Z = Z
        self.k = k
        self.method_name = method_name
        self.fn = fn
        self.key = key
        self.entries: OrderedDict[tuple[int, ...], _GroupEntry] = OrderedDict()
        self.n_computed = 0
        # MDAV with numba: one compiled call runs its loops and the centroids (mdav_means)
        self.direct = HAVE_NUMBA and fn is mdav and Z.size > 0
        # each column's largest absolute value; if mdav leaves every column unscaled, it
        # leaves every group unscaled (a group's largest value is one of its columns')
        self.top = np.maximum(Z.max(axis=0), -Z.min(axis=0)) if self.direct else np.zeros(0)
        self.unscaled = not scale_exponent(self.top[None, :], axis=0).any()
        self.nbytes = Z.nbytes

    def drop_oldest(self) -> int:
        """Forget the least recently used group; return the bytes freed (the caller holds
        :data:`_LOCK`, or owns this private cache)."""
        entry = self.entries.popitem(last=False)[1]
        self.nbytes -= entry.nbytes
        return entry.nbytes

    def get(self, cols: tuple[int, ...], sub: np.ndarray | None = None) -> _GroupEntry:
        """The group's entry, computed if not held; ``sub``, if given, is the group's data
        ``Z[:, cols]`` (C-contiguous), which the caller has already gathered.

        The entries are read and changed under :data:`_LOCK`; the group is computed outside
        it (another thread may compute the same group meanwhile: the entry held first is
        returned, equal to this one)."""
        with _LOCK:
            entry = self.entries.get(cols)
            if entry is not None:
                self.entries.move_to_end(cols)
                return entry
        entry = self._compute(cols, sub)
        with _LOCK:
            self.n_computed += 1
            held = self.entries.get(cols)
            if held is not None:  # another thread computed it meanwhile
                self.entries.move_to_end(cols)
                return held
            self.entries[cols] = entry
            self.nbytes += entry.nbytes
            _trim(self)
        return entry

    def _compute(self, cols: tuple[int, ...], sub: np.ndarray | None) -> _GroupEntry:
        """Microaggregate the group (nothing shared is read or changed)."""
        if sub is None:
            sub = np.ascontiguousarray(self.Z[:, list(cols)])
        if self.direct and self._runs_loops(cols):
            # what microagg.mdav(sub, k) runs, without its checks (the data are checked)
            labels, centroids, diff = mdav_means(sub, self.k, sub.sum(axis=0))
        else:
            labels = self._labels(sub)
            s = int(labels.max()) + 1
            if HAVE_NUMBA:
                centroids, diff = cluster_means(sub, labels, s)
            else:
                centroids = _group_means(sub, labels, s)
                diff = sub - centroids[labels]
        return _GroupEntry(labels, centroids, float(np.einsum("ij,ij->", diff, diff)),
                           centroids.shape[0])

    def _labels(self, sub: np.ndarray) -> np.ndarray:
        """The partition of the group's records by the method, labels ``0..s-1`` all used.

        A callable's answer is checked: one integer label per record, every group at least
        ``k`` records (the compiled kernels index by the labels, and a smaller group would
        be released as if k-anonymous)."""
        answer = self.fn(sub, self.k)
        try:
            raw = as_labels(answer, sub.shape[0])
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"method {self.method_name} returned labels that cannot be "
                            f"used: {exc}") from None
        if raw.size and raw.min() == 0 and np.bincount(raw).all():
            labels = raw  # already 0..s-1, all used (MDAV)
        else:
            labels = np.unique(raw, return_inverse=True)[1].reshape(-1).astype(np.int64)
        smallest = int(np.bincount(labels).min()) if labels.size else 0
        if smallest < self.k:
            raise ValueError(f"method {self.method_name} returned a group of {smallest} "
                             f"record(s), fewer than k={self.k}: a method must return a "
                             f"{self.k}-partition (every group at least k records)")
        return labels

    def _runs_loops(self, cols: tuple[int, ...]) -> bool:
        """Whether ``microagg.mdav`` runs the compiled loops on these columns unscaled."""
        if not self.unscaled and scale_exponent(self.top[list(cols)]):
            return False  # mdav would rescale the group first (its exponent: its columns')
        return not auto_picks_indexed("mdav", self.Z.shape[0], len(cols))


_REGISTRY: OrderedDict[tuple[Any, ...], _GroupCache] = OrderedDict()
_REGISTRY_SIZE = 32
#: Guards :data:`_REGISTRY` and the entries and tallies of every :class:`_GroupCache`
#: (threads share them); held only while they are read or changed, never while a group is
#: microaggregated.
_LOCK = threading.Lock()


def _data_key(Z: np.ndarray) -> tuple[Any, ...]:
    digest = hashlib.blake2b(np.ascontiguousarray(Z).tobytes(), digest_size=16).hexdigest()
    return (Z.shape, digest)


def _trim(cache: _GroupCache) -> None:
    """Bring the bytes held back within :func:`cache_budget` after ``cache`` grew (the
    caller holds :data:`_LOCK`).

    A registered cache first takes from the least recently used other caches (their
    least recently used groups, then the emptied caches themselves), then from its own
    least recently used groups; a private one only from its own. Only the data of
    ``cache`` itself, which it needs, can stay above the budget.
    """
    budget = cache_budget()
    if cache.key is None or _REGISTRY.get(cache.key) is not cache:
        while cache.nbytes > budget and cache.entries:
            cache.drop_oldest()
        return
    held = sum(c.nbytes for c in _REGISTRY.values())
    while held > budget:
        key, oldest = next(iter(_REGISTRY.items()))
        if oldest is cache:
            break
        if oldest.entries:
            held -= oldest.drop_oldest()
        else:
            held -= oldest.nbytes
            del _REGISTRY[key]
    while held > budget and cache.entries:
        held -= cache.drop_oldest()


def _cache_for(Z: np.ndarray, k: int, method: str | Callable[..., Any],
               shared: bool = True) -> _GroupCache:
    name, fn = method_function(method)
    if not shared:
        return _GroupCache(Z, k, name, fn)
    key = (_data_key(Z), k, name, id(fn) if callable(method) else 0)
    with _LOCK:
        cache = _REGISTRY.get(key)
        if cache is not None:
            _REGISTRY.move_to_end(key)
            return cache
    fresh = _GroupCache(Z, k, name, fn, key)  # (its checks of the data: outside the lock)
    with _LOCK:
        cache = _REGISTRY.get(key)
        if cache is not None:  # another thread registered it meanwhile
            _REGISTRY.move_to_end(key)
            return cache
        _REGISTRY[key] = fresh
        while len(_REGISTRY) > _REGISTRY_SIZE:
            _REGISTRY.popitem(last=False)
        _trim(fresh)
    return fresh


def gomm_cache_clear() -> None:
    """Forget every memoised attribute-group microaggregation.

    The cache never holds more than GOMM's memory budget (512 MB by default,
    ``$MICROAGG_GOMM_CACHE_MB`` to change it): it forgets the least recently used groups
    itself, so clearing it is never needed for correctness, only to free the memory at
    once.

    Book: :ref:`chap-gomm`.

    Examples
    --------
    >>> import numpy as np
    >>> b = score_grouping(np.random.default_rng(0).normal(size=(30, 3)), [[0, 1, 2]], 3)
    >>> gomm_cache_clear()
    >>> len(gomm_cache_info())
    0
    """
    with _LOCK:
        _REGISTRY.clear()


def gomm_cache_info() -> pd.DataFrame:
    """One row per cached (data, k, method), least recently used first: groups held, groups
    computed, and bytes held.

    ``computed`` counts every microaggregation, including a group computed again after
    the cache forgot it; ``bytes`` counts the groups' labels and centroids and the data
    the cache keeps. Together the rows hold at most GOMM's memory budget (512 MB by
    default, ``$MICROAGG_GOMM_CACHE_MB`` to change it), the least recently used groups
    being forgotten first.

    Book: :ref:`chap-gomm`.

    Examples
    --------
    >>> import numpy as np
    >>> gomm_cache_clear()
    >>> X = np.random.default_rng(0).normal(size=(30, 3))
    >>> b = score_grouping(X, [[0, 1], [2]], 3)  # two attribute groups microaggregated
    >>> info = gomm_cache_info()
    >>> info[["k", "method", "groups", "computed"]].to_dict("records")
    [{'k': 3, 'method': 'mdav', 'groups': 2, 'computed': 2}]
    >>> bool(info["bytes"].sum() < 4000)  # 30 labels x 2, 10 x 3 centroids, the data
    True
    """
    with _LOCK:  # (other threads may be running GOMM)
        rows = [{"shape": key[0][0], "k": c.k, "method": c.method_name,
                 "groups": len(c.entries), "computed": c.n_computed, "bytes": c.nbytes}
                for key, c in _REGISTRY.items()]
    return pd.DataFrame(rows, columns=["shape", "k", "method", "groups", "computed", "bytes"])


def canonical(groups: Sequence[Sequence[int]]) -> Grouping:
    return tuple(sorted(tuple(sorted(int(a) for a in g)) for g in groups))


def check_groups(groups: Any, p: int) -> Grouping:
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
    return canonical(clean)


def multivariate(X: Any, groups: Sequence[Sequence[int]], k: int, *,
                 method: str | Callable[..., Any] = "mdav",
                 standardize: bool = True) -> np.ndarray:
    r"""Microaggregate each attribute group independently and return the released data.

    For a grouping :math:`G_1, \dots, G_m` of the columns, group :math:`G_j` is
    partitioned by ``method`` (MDAV by default) using only its own columns, and each
    of those columns is replaced by its group centroids:

    .. math:: x'_{ic} = \bar{x}_{c}\bigl(\text{cluster of } i \text{ in } G_j\bigr),
              \qquad c \in G_j .

    A record then shares its released values with different records in different
    attribute groups, so the release is in general **not** k-anonymous (:ref:`chap-gomm`
    counts the distinct released rows).

    Book: :ref:`chap-gomm`.

    Parameters
    ----------
    X : array_like, shape (n, p)
    groups : list of lists of int
        A partition of the column indices ``0..p-1`` (each column in exactly one group).
    k : int
        Minimum cluster size, ``1 <= k <= n``.
    method : {"mdav", "mdav_single", "vmdav", "ivmdav"} or callable
        ``method(Z, k) -> labels`` partitions the records on the group's columns; a
        callable's labels are checked (one integer per record, every group at least
        ``k`` records: a ``ValueError`` otherwise). ``"mdav"`` is :func:`microagg.mdav`
        (compiled loops when numba is installed).
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
    share groups never repeats a microaggregation; :func:`gomm_cache_info` shows the
    cache and :func:`gomm_cache_clear` empties it.

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
    canon = check_groups(groups, p)
    e = scale_exponent(arr)  # values near 1e308 would overflow the sums: rescale (exact)
    if e:
        arr = np.ldexp(arr, e)
    Z = _standardize(arr) if standardize else arr
    cache = _cache_for(Z, k, method)
    out = np.empty_like(arr)
    for cols in canon:
        entry = cache.get(cols)
        means = _group_means(arr[:, list(cols)], entry.labels, entry.n_labels)
        out[:, list(cols)] = means[entry.labels]
    return np.ldexp(out, -e) if e else out


def k_anonymity_level(protected: Any) -> int:
    """Size of the smallest set of identical released rows (k-anonymity actually achieved).

    Book: :ref:`chap-gomm`.

    Parameters
    ----------
    protected : array_like, shape (n, p)
        The released records.

    Returns
    -------
    int

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


@dataclass
class _Released:
    """An attribute group's release as DLD's search sees it."""

    labels: np.ndarray  # (n,) each record's value class (clusters with equal centroids)
    values: np.ndarray  # (classes, |g|) the distinct centroids


def _room(x: np.ndarray, need: int, used: int) -> np.ndarray:
    """``x``, or a copy of its first ``used`` rows with room for ``need`` rows (four times
    as many: fewer copies; the pages not yet written cost nothing)."""
    if x.shape[0] >= need:
        return x
    grown = np.empty((max(need, 4 * x.shape[0]), *x.shape[1:]), x.dtype)
    grown[:used] = x[:used]
    return grown


def _parts_bytes(n: int, parts: GroupParts) -> int:
    """Bytes a group's parts take in an :class:`_Arena`: its class row, its rival pairs,
    its values and projections, and the seven per-slot numbers."""
    return 4 * n + 16 * parts.rivals.size + 8 * (parts.values.size + parts.projected.size + 7)


def _parts_at(a: Released, at: int, width: int, projections: int) -> GroupParts:
    """The parts held in slot ``at`` of the arena ``a`` (views; ``id_count`` not kept)."""
    r0, v0, p0 = int(a.rival_at[at]), int(a.value_at[at]), int(a.projected_at[at])
    pairs, classes = int(a.n_rivals[at]), int(a.n_values[at])
    return GroupParts(0, a.classes[at], a.values[v0:v0 + classes * width].reshape(classes, width),
                      a.holders[r0:r0 + pairs], a.rivals[r0:r0 + pairs],
                      a.projected[p0:p0 + projections], float(a.reach[at]))


class _Arena:
    """The :class:`~microagg._risk_kernels.Released` arena of an :class:`Evaluator`: one
    slot per attribute group, the arrays grown fourfold when full.

    ``slot_of`` maps a group's columns to its slot, least recently used first; ``nbytes``
    counts the slots' parts. When a new group would take it above :func:`cache_budget`,
    the arena is rebuilt with the groups it is told to keep (the grouping being scored)
    and the most recently used others, up to half the budget (so a rebuild, which copies
    at most half the budget, comes at most once per half a budget of new groups). The
    slots of a rebuilt arena are numbered anew: read them from ``slot_of`` after adding.
    """

    def __init__(self, n: int, rows: int = 64) -> None:
        self.n = n
        self.used = [0, 0, 0, 0]  # slots, rival pairs, values, projections
        self.store = Released(
            np.empty((rows, n), np.int32), np.empty(4 * rows, np.int64),
            np.empty(4 * rows, np.int64), np.empty(rows, np.int64), np.empty(rows, np.int64),
            np.empty(4 * rows), np.empty(rows, np.int64), np.empty(4 * rows),
            np.empty(rows, np.int64), np.empty(rows, np.int64), np.empty(rows))
        self.slot_of: OrderedDict[tuple[int, ...], int] = OrderedDict()
        self.sizes: dict[tuple[int, ...], tuple[int, int]] = {}  # bytes, projections
        self.nbytes = 0
        self.rebuilds = 0

    def slot(self, cols: tuple[int, ...]) -> int | None:
        """The group's slot (now its most recently used), or ``None`` if not held."""
        at = self.slot_of.get(cols)
        if at is not None:
            self.slot_of.move_to_end(cols)
        return at

    def add(self, cols: tuple[int, ...], parts: GroupParts,
            keep: Sequence[tuple[int, ...]] = ()) -> None:
        """Hold a group's parts, first making room if the budget asks (keeping ``keep``)."""
        size = _parts_bytes(self.n, parts)
        budget = cache_budget()
        if self.slot_of and self.nbytes + size > budget:
            self._rebuild(budget // 2 - size, set(keep))
        self.slot_of[cols] = self._put(parts)
        self.sizes[cols] = (size, parts.projected.size)
        self.nbytes += size

    def _rebuild(self, room: int, keep: set[tuple[int, ...]]) -> None:
        """Keep ``keep`` and the most recently used other groups that fit in ``room`` bytes,
        in their order, in fresh arrays."""
        kept: list[tuple[int, ...]] = []
        total = 0
        for cols in reversed(self.slot_of):
            size = self.sizes[cols][0]
            if cols in keep or total + size <= room:
                kept.append(cols)
                total += size
        fresh = _Arena(self.n, max(64, len(kept)))
        for cols in reversed(kept):
            fresh.slot_of[cols] = fresh._put(_parts_at(self.store, self.slot_of[cols], len(cols),
                                                        self.sizes[cols][1]))
            fresh.sizes[cols] = self.sizes[cols]
        self.store, self.used, self.slot_of, self.sizes = (fresh.store, fresh.used,
                                                           fresh.slot_of, fresh.sizes)
        self.nbytes = total
        self.rebuilds += 1

    def _put(self, parts: GroupParts) -> int:
        """Store one group's parts in the next slot; return the slot."""
        slot, at_r, at_v, at_p = self.used
        end_r, end_v = at_r + parts.rivals.size, at_v + parts.values.size
        end_p = at_p + parts.projected.size
        a = self.store
        if (slot >= a.reach.size or end_r > a.rivals.size or end_v > a.values.size
                or end_p > a.projected.size):
            needs = (slot + 1, end_r, end_r, slot + 1, slot + 1, end_v, slot + 1, end_p,
                     slot + 1, slot + 1, slot + 1)
            used = (slot, at_r, at_r, slot, slot, at_v, slot, at_p, slot, slot, slot)
            a = self.store = Released(*map(_room, a, needs, used))
        a.classes[slot] = parts.classes
        a.holders[at_r:end_r] = parts.holders
        a.rivals[at_r:end_r] = parts.rivals
        a.values[at_v:end_v] = parts.values.ravel()
        a.projected[at_p:end_p] = parts.projected.ravel()
        a.rival_at[slot], a.value_at[slot], a.projected_at[slot] = at_r, at_v, at_p
        a.n_rivals[slot] = parts.rivals.size
        a.n_values[slot] = parts.values.shape[0]
        a.reach[slot] = parts.reach
        self.used = [slot + 1, end_r, end_v, end_p]
        return slot


class Evaluator:
    """Scores groupings of the columns of standardised data ``Z``, memoising everything.

    With numba, each new attribute group is reduced once to its SSE, its interval count
    and its slot in an :class:`_Arena` (:func:`~microagg._gomm_kernels.group_parts`), and
    a grouping's DLD is one compiled call on its slots
    (:func:`~microagg._risk_kernels.dld_assembled`); without numba, the numpy twins.
    The arena (without numba, ``released``) holds at most :func:`cache_budget` bytes of
    groups besides those of the grouping being scored; a group it let go is computed again
    from the group cache when a grouping needs it (the same parts).
    """

    def __init__(self, Z: np.ndarray, k: int, method: str | Callable[..., Any] = "mdav",
                 width: float = 0.10, shared_cache: bool = True) -> None:
        self.Z = Z
        self.n, self.p = Z.shape
        self.k = k
        self.width = width
        self.groups = _cache_for(Z, k, method, shared=shared_cache)
        self.id_counts: dict[tuple[int, ...], int] = {}
        self.scores: dict[Grouping, ScoreBreakdown] = {}
        self.by_chromosome: dict[Grouping, float] = {}
        centred = Z - Z.mean(axis=0)
        self.sst = float(np.einsum("ij,ij->", centred, centred))
        self.margin = rival_margin(Z)
        self.axes = principal_axes(Z)
        self.Pz = np.ascontiguousarray(Z @ self.axes)
        self.released: OrderedDict[tuple[int, ...], _Released] = OrderedDict()
        self.released_bytes = 0
        self.parts: dict[tuple[int, ...], tuple[float, int]] = {}
        self.arena = _Arena(self.n)
        self.zscale = 1.0 + float(np.abs(Z).sum(axis=1).max()) if Z.size else 1.0

    def _id_count(self, cols: tuple[int, ...], entry: _GroupEntry) -> int:
        c = self.id_counts.get(cols)
        if c is None:
            sub = self.Z[:, list(cols)]
            c = int(id_counts(sub, entry.centroids[entry.labels], self.width).sum())
            self.id_counts[cols] = c
        return c

    def _released(self, cols: tuple[int, ...], entry: _GroupEntry) -> _Released:
        """What the numpy DLD search needs of an attribute group (memoised)."""
        r = self.released.get(cols)
        if r is not None:
            self.released.move_to_end(cols)
        else:
            # clusters with equal centroids release equal values: one value class
            cen = np.ascontiguousarray(entry.centroids)
            rows = cen.view(np.dtype((np.void, cen.dtype.itemsize * cen.shape[1]))).ravel()
            _, at, cls = np.unique(rows, return_index=True, return_inverse=True)
            values = cen[at]
            labels = cls.reshape(-1)[entry.labels]
            r = self.released[cols] = _Released(labels, values)
            self.released_bytes += labels.nbytes + values.nbytes
            budget = cache_budget()
            while self.released_bytes > budget and self.released:  # r itself stays referenced
                old = self.released.popitem(last=False)[1]
                self.released_bytes -= old.labels.nbytes + old.values.nbytes
        return r

    def _group_parts(self, cols: tuple[int, ...], entry: _GroupEntry,
                     sub: np.ndarray | None = None) -> GroupParts:
        """The group's parts (``sub``: its data ``Z[:, cols]``, if already gathered)."""
        at = list(cols)
        if sub is None:
            sub = np.ascontiguousarray(self.Z[:, at])
        return GroupParts(*group_parts(sub, entry.labels, entry.centroids, self.margin,
                                       self.width, np.ascontiguousarray(self.axes[at])))

    def _part(self, cols: tuple[int, ...], canon: Grouping) -> tuple[float, int]:
        """An attribute group's SSE and interval count; with numba its parts go into the
        arena (keeping those of ``canon``, the grouping being scored)."""
        part = self.parts.get(cols)
        if part is None:
            if HAVE_NUMBA:
                sub = np.ascontiguousarray(self.Z[:, list(cols)])  # gathered once for both
                entry = self.groups.get(cols, sub)
                got = self._group_parts(cols, entry, sub)
                self.arena.add(cols, got, canon)
                part = (entry.sse, int(got.id_count))
            else:
                entry = self.groups.get(cols)
                part = (entry.sse, self._id_count(cols, entry))
            self.parts[cols] = part
        return part

    def _slots(self, canon: Grouping) -> np.ndarray:
        """The arena slots of the groups of ``canon``, putting back any the arena let go."""
        arena = self.arena
        for cols in canon:
            if arena.slot(cols) is None:
                arena.add(cols, self._group_parts(cols, self.groups.get(cols)), canon)
        return np.array([arena.slot_of[cols] for cols in canon], np.int64)

    def fitness(self, c: Grouping) -> float:
        """GOMM's fitness of a chromosome (any group order): its score."""
        score = self.by_chromosome.get(c)  # clones come back often: skip the sorting
        if score is None:
            score = self.by_chromosome[c] = self(canonical(c)).score
        return score

    def __call__(self, canon: Grouping) -> ScoreBreakdown:
        hit = self.scores.get(canon)
        if hit is not None:
            return hit
        sse = 0.0
        idc = 0
        for cols in canon:
            part = self._part(cols, canon)
            sse += part[0]
            idc += part[1]
        if HAVE_NUMBA:
            slots = self._slots(canon)
            gptr = np.zeros(len(canon) + 1, np.int64)
            np.cumsum([len(cols) for cols in canon], out=gptr[1:])
            linked = dld_assembled(self.Z, self.Pz, self.zscale, self.arena.store, slots,
                                   np.fromiter(itertools.chain.from_iterable(canon), np.int64,
                                               self.p), gptr)
            dld = 100.0 * math.fsum(linked.tolist()) / self.n  # (floats: faster to sum)
        else:
            released = [self._released(cols, self.groups.get(cols)) for cols in canon]
            dld = dld_grouped(self.Z, canon, [r.labels for r in released],
                              [r.values for r in released])
        result = ScoreBreakdown(il=100.0 * sse / self.sst, id=100.0 * idc / (self.n * self.p),
                                dld=dld)
        self.scores[canon] = result
        return result


def score_grouping(X: Any, groups: Sequence[Sequence[int]], k: int, *,
                   method: str | Callable[..., Any] = "mdav") -> ScoreBreakdown:
    r"""IL, ID, DLD (and DR, score) of microaggregating ``X`` with a given attribute grouping.

    The same as ``microagg.score_breakdown(X, multivariate(X, groups, k))``
    (up to rounding in the last digit), but computed on the standardised scale
    directly and with every part memoised; this is GOMM's fitness (Eq. 2 of
    :cite:p:`balasch2014gomm`).

    Book: :ref:`chap-gomm`.

    Parameters
    ----------
    X : array-like of shape (n, p)
        The original data (standardised here).
    groups : sequence of sequences of int
        The attribute grouping: disjoint column indices that together cover ``0..p-1``.
    k : int
        Minimum cluster size.
    method : {"mdav", "mdav_single", "vmdav", "ivmdav"} or callable, default "mdav"
        How each attribute group is partitioned, as in :func:`multivariate`; a callable
        ``method(Z, k) -> labels`` must return a k-partition of the rows of ``Z``.

    Returns
    -------
    ScoreBreakdown
        ``il``, ``id``, ``dld`` (percentages) and the derived ``dr`` and ``score``.

    Raises
    ------
    ValueError
        For a grouping that is not a partition of the columns, an invalid ``k``, or a
        callable whose labels do not fit the data or leave a group smaller than ``k``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(60, 4))
    >>> b = score_grouping(X, [[0, 1, 2, 3]], 3)
    >>> round(b.score, 6) == round((b.il + 0.5 * b.id + 0.5 * b.dld) / 2, 6)
    True
    """
    Z = _standardize(as_matrix(X))
    k = check_k(k, Z.shape[0])
    canon = check_groups(groups, Z.shape[1])
    return Evaluator(Z, k, method)(canon)


# ======================================================================================
# the genetic operators
