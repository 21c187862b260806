"""The ``"indexed"`` engine: exact and sub-quadratic, from a kd-tree and direction buckets.

The loops pass over every unassigned record for every query, so MDAV costs
:math:`O(n^2 p / k)`. This engine answers the same queries from two indexes over the
records (:mod:`~microagg._mdav.kdtree` for the nearest records,
:mod:`~microagg._mdav.buckets` for the farthest, both prefiltered by the cell codes of
:mod:`~microagg._mdav.cells`), and returns the *same labels*, ties included (the
exactness argument is in :mod:`microagg._mdav`).

It runs in **phases**: each builds both indexes over the records still unassigned and
forms groups until fewer than :data:`REBUILD` times as many are left, then returns, so
its indexes are freed before the next phase builds smaller ones (new anchor, tight boxes
and cones). A phase function takes a :class:`Run` (what all phases of one call share),
the counters ``m`` (records left) and ``g`` (next label), and its method's buffers.

V-MDAV's record farthest from the *fixed* global centroid needs no index: one sort.

Tried and dropped (measured, ``tests/benchmarks/bench_scale.py`` and scratch timings): a
binary tree over the direction buckets (node visits cost more than the flat vectorised
pass), per-record partial distances with early exit and attribute-major leaf blocks (both
slower than one straight ``sqdist_row``), cell boxes over each bucket's 16 largest radii
(no gain), and running the nearest and farthest queries of an MDAV round on the two
cores (a numba parallel region costs ~35 us to start and, with the other core busy on
this shared machine, a 0.3 ms task pair took 5 ms).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import njit
from . import buckets, kdtree
from .cells import Workspace, grid, workspace

__all__ = ["mdav", "mdav_single", "vmdav", "ivmdav", "Leaves", "LEAVES", "Run", "MAX_ABS",
           "mdav_rounds", "vmdav_rounds", "ivmdav_rounds"]


class Leaves(NamedTuple):
    """Records per kd-tree leaf (nearest queries) and per direction bucket (farthest)."""

    kd: int
    dt: int


#: The leaf sizes, measured on Gaussian data (see bench_scale.py).
LEAVES = Leaves(kd=64, dt=256)
#: Rebuild both indexes once the unassigned records are this fraction of those they
#: were built on.
REBUILD = 0.5
#: Largest magnitude of an entry for which the bounds' rounding analysis holds.
MAX_ABS = 1e100


class Run(NamedTuple):
    """What every phase of one call shares."""

    X: np.ndarray  #: the data
    k: int  #: minimum group size
    total: np.ndarray  #: running total of the unassigned records (unused by V-MDAV)
    codes: np.ndarray  #: each record's cell codes (the grid's)
    leaves: Leaves  #: leaf sizes of the indexes
    rows: np.ndarray  #: between phases: the unassigned records, ``rows[:m]``
    labels: np.ndarray  #: the labels being written (-1: not grouped yet)
    ws: Workspace  #: work arrays of the queries


@njit
def _run(X, k, total, grid_, leaves):  # type: ignore[no-untyped-def]
    n, p = X.shape
    return Run(X, k, total, grid_.codes, leaves, np.arange(n), np.full(n, -1, np.int64),
               workspace(grid_.edges, p))


@njit(inline="always")
def _close_group(run, members, size, g):  # type: ignore[no-untyped-def]
    """Label ``members[:size]`` as group ``g``; ``total`` loses them in input order.

    The same subtractions, in the same order, as the loops' ``_remove``.
    """
    X, total, labels = run.X, run.total, run.labels
    for i in range(1, size):
        t = members[i]
        j = i
        while j > 0 and members[j - 1] > t:
            members[j] = members[j - 1]
            j -= 1
        members[j] = t
    for i in range(size):
        labels[members[i]] = g
        for j in range(X.shape[1]):
            total[j] -= X[members[i], j]


@njit
def _build(run, m):  # type: ignore[no-untyped-def]
    """Both indexes over records ``rows[:m]``. The direction buckets come first: their unit
    vectors (``m x p``, the largest temporary) then sit beside fewer arrays."""
    dt = buckets.build(run.X, run.codes, run.rows, m, run.leaves.dt)
    return kdtree.build(run.X, run.codes, run.rows, m, run.leaves.kd), dt


@njit(inline="always")
def _take(kd, dt, members, count):  # type: ignore[no-untyped-def]
    for i in range(count):
        kdtree.remove(kd, members[i])
        buckets.remove(dt, members[i])


@njit(inline="always")
def _farthest_from_centroid(run, dt, m):  # type: ignore[no-untyped-def]
    """The record farthest from the centroid ``total / m`` (computed as the loops do)."""
    c, total = run.ws.cvec, run.total
    for j in range(c.size):
        c[j] = total[j] / m
    return buckets.farthest(dt, run.X, c, run.ws)[0]


@njit(inline="always")
def _group_around(run, kd, r, size, out, dist):  # type: ignore[no-untyped-def]
    """Record ``r`` and its ``size - 1`` nearest unassigned records, into ``out``; returns
    how many. ``dist`` receives their squared distances to ``r`` (0 for ``r``)."""
    out[0] = r
    dist[0] = 0.0
    return 1 + kdtree.knn(kd, run.X, run.X[r], size - 1, r, dist[1:], out[1:], run.ws)


@njit(inline="always")
def _one_group(run, kd, dt, r, g, out, dist):  # type: ignore[no-untyped-def]
    """Group ``r`` with its ``k - 1`` nearest unassigned records as group ``g``; returns k."""
    got = _group_around(run, kd, r, run.k, out, dist)
    _take(kd, dt, out, got)
    _close_group(run, out, got, g)
    return got


@njit
def _last_groups(run, kd, dt, m, g, out, dist):  # type: ignore[no-untyped-def]
    """The end of MDAV and IV-MDAV, fewer than ``3k`` records left: one more group of
    ``k`` around the farthest record if ``2k`` or more are left, then the last group.
    Returns ``(m, g, True)``, a finished phase."""
    if m >= 2 * run.k:
        m -= _one_group(run, kd, dt, _farthest_from_centroid(run, dt, m), g, out, dist)
        g += 1
    rows, labels = run.rows, run.labels
    rest = kdtree.alive_rows(kd, rows)
    for i in range(rest):
        labels[rows[i]] = g
    return m, g, True


@njit
def mdav_rounds(X, k, total, two_groups, grid_, leaves):  # type: ignore[no-untyped-def]
    """MDAV (``two_groups=True``) or MDAV-single-group, on the grid ``grid_`` (a
    :class:`~microagg._mdav.cells.Grid`) with indexes of the given :class:`Leaves`."""
    run = _run(X, k, total, grid_, leaves)
    out = np.empty(k, np.int64)
    dist = np.empty(k)
    m, g, finished = X.shape[0], 0, False
    while not finished:
        m, g, finished = _mdav_phase(run, two_groups, m, g, out, dist)
    return run.labels


@njit
def _mdav_phase(run, two_groups, m, g, out, dist):  # type: ignore[no-untyped-def]
    """MDAV's rounds on indexes built over the ``m`` unassigned records ``rows[:m]``,
    until fewer than :data:`REBUILD` times that many are left (then ``rows[:m]`` lists
    them) or the partition is finished. Returns ``(m, g, finished)``."""
    X = run.X
    k = run.k
    kd, dt = _build(run, m)
    built = m
    while m >= 3 * k:
        if m < REBUILD * built and m >= 64:
            kdtree.alive_rows(kd, run.rows)
            return m, g, False
        r = _farthest_from_centroid(run, dt, m)
        m -= _one_group(run, kd, dt, r, g, out, dist)
        g += 1
        if two_groups:  # x_s: farthest from x_r among the records left
            s = buckets.farthest(dt, X, X[r], run.ws)[0]
            m -= _one_group(run, kd, dt, s, g, out, dist)
            g += 1
    return _last_groups(run, kd, dt, m, g, out, dist)


class _VWork(NamedTuple):
    """V-MDAV's buffers: the group, its distances, one nearest neighbour, the group's box."""

    members: np.ndarray
    dist: np.ndarray
    one_d: np.ndarray
    one_i: np.ndarray
    gbox: np.ndarray


@njit
def vmdav_rounds(X, k, gamma, order, grid_, leaves):  # type: ignore[no-untyped-def]
    """V-MDAV's main loop; ``order`` lists the records by decreasing distance to the global
    centroid (ties by input index), so the next unassigned one is the loops' ``e``.
    Returns labels with ``-1`` for the records left over."""
    n, p = X.shape
    run = _run(X, k, np.zeros(p), grid_, leaves)
    done = np.zeros(n, np.bool_)
    work = _VWork(np.empty(2 * k, np.int64), np.empty(2 * k), np.empty(1),
                  np.empty(1, np.int64), np.empty(2 * p))
    m, g, at, finished = n, 0, 0, False
    while not finished:
        m, g, at, finished = _vmdav_phase(run, gamma, order, done, (m, g, at), work)
    return run.labels


@njit
def _vmdav_phase(run, gamma, order, done, counters, work):  # type: ignore[no-untyped-def]
    """V-MDAV's rounds on a kd-tree over ``rows[:m]``; as :func:`_mdav_phase`.
    ``counters`` is ``(m, g, at)``, ``at`` the position reached in ``order``.
    Returns ``(m, g, at, finished)``."""
    X, k, ws, labels = run.X, run.k, run.ws, run.labels
    members, dist, one_d, one_i, gbox = work.members, work.dist, work.one_d, work.one_i, work.gbox
    m, g, at = counters
    kd = kdtree.build(X, run.codes, run.rows, m, run.leaves.kd)
    built = m
    while m >= k:
        if m < REBUILD * built and m >= 64:
            kdtree.alive_rows(kd, run.rows)
            return m, g, at, False
        while done[order[at]]:
            at += 1
        size = _group_around(run, kd, order[at], k, members, dist)
        for i in range(size):
            done[members[i]] = True
            kdtree.remove(kd, members[i])
        while size < 2 * k - 1 and size < m:
            d2, e_min = kdtree.nearest_to_set(kd, X, members, size, gbox, ws)
            d_in = np.sqrt(d2)
            found = kdtree.knn(kd, X, X[e_min], 1, e_min, one_d, one_i, ws)
            d_out = np.sqrt(one_d[0] if found else np.inf)
            if not d_in < gamma * d_out:  # Eq. (5)
                break
            members[size] = e_min
            size += 1
            done[e_min] = True
            kdtree.remove(kd, e_min)
        for i in range(size):
            labels[members[i]] = g
        m -= size
        g += 1
    return m, g, at, True


class _IvWork(NamedTuple):
    """IV-MDAV's buffers: the candidates and their distances to x_r, the group, a heap."""

    ys: np.ndarray
    d_ys: np.ndarray
    members: np.ndarray
    heap_d: np.ndarray
    heap_i: np.ndarray


@njit
def ivmdav_rounds(X, k, gamma, n_candidates, self_neighbour, total, grid_, leaves):  # type: ignore[no-untyped-def]
    """IV-MDAV; ``n_candidates`` at most ``n``."""
    run = _run(X, k, total, grid_, leaves)
    work = _IvWork(np.empty(max(n_candidates, k), np.int64), np.empty(max(n_candidates, k)),
                   np.empty(2 * k, np.int64), np.empty(k + 1), np.empty(k + 1, np.int64))
    test = (gamma, n_candidates, self_neighbour)
    m, g, finished = X.shape[0], 0, False
    while not finished:
        m, g, finished = _ivmdav_phase(run, test, m, g, work)
    return run.labels


@njit
def _ivmdav_phase(run, test, m, g, work):  # type: ignore[no-untyped-def]
    """IV-MDAV's rounds on indexes over ``rows[:m]``; as :func:`_mdav_phase`. ``test`` is
    ``(gamma, n_candidates, self_neighbour)``."""
    X = run.X
    k = run.k
    ws = run.ws
    gamma, n_candidates, self_neighbour = test
    ys, d_ys, members, heap_d, heap_i = work.ys, work.d_ys, work.members, work.heap_d, work.heap_i
    kd, dt = _build(run, m)
    built = m
    need = k - 1 if self_neighbour else k  # with z_1 = y itself, z_k is the (k-1)-th other
    while m >= 3 * k:
        if m < REBUILD * built and m >= 64:
            kdtree.alive_rows(kd, run.rows)
            return m, g, False
        r = _farthest_from_centroid(run, dt, m)
        # y_1 = x_r, y_2, ...: x_r and its nearest records; the first k form the group
        got = _group_around(run, kd, r, min(n_candidates, m), ys, d_ys)
        _take(kd, dt, ys, k)
        size = k
        members[:k] = ys[:k]
        for i in range(k, got):
            if size >= 2 * k - 1:  # (also stops k = 1, where need would be 0)
                break
            y = ys[i]
            # d_2: distance from y to z_k, its need-th nearest record outside the group
            found = kdtree.knn(kd, X, X[y], need, y, heap_d, heap_i, ws)
            d2 = np.sqrt(heap_d[need - 1] if found == need else np.inf)
            if d2 < np.inf and d2 > gamma * np.sqrt(d_ys[i]):  # d_2 > gamma d_1
                _take(kd, dt, ys[i:], 1)
                members[size] = y
                size += 1
        _close_group(run, members, size, g)
        m -= size
        g += 1
    return _last_groups(run, kd, dt, m, g, members, d_ys)


# -- the engine contract (see microagg._mdav) -------------------------------------------------


def mdav(X: np.ndarray, k: int, total: np.ndarray) -> np.ndarray:
    """MDAV on the indexed engine (engine contract of :mod:`microagg._mdav`)."""
    return mdav_rounds(X, k, total, True, grid(X), LEAVES)


def mdav_single(X: np.ndarray, k: int, total: np.ndarray) -> np.ndarray:
    """MDAV-single-group on the indexed engine (engine contract of :mod:`microagg._mdav`)."""
    return mdav_rounds(X, k, total, False, grid(X), LEAVES)


def vmdav(X: np.ndarray, k: int, gamma: float, to_c: np.ndarray) -> np.ndarray:
    """V-MDAV's main loop on the indexed engine (engine contract of :mod:`microagg._mdav`)."""
    order = np.argsort(-to_c, kind="stable")  # farthest from the centroid first, ties by index
    return vmdav_rounds(X, k, gamma, order, grid(X), LEAVES)


def ivmdav(X: np.ndarray, k: int, gamma: float, n_candidates: int, self_neighbour: bool,
           total: np.ndarray) -> np.ndarray:
    """IV-MDAV on the indexed engine (engine contract of :mod:`microagg._mdav`)."""
    return ivmdav_rounds(X, k, gamma, n_candidates, self_neighbour, total, grid(X), LEAVES)
