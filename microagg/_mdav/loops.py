r"""The ``"loops"`` engine: the MDAV family as plain loops, compiled by numba when installed.

Each pass over the unassigned records computes a squared distance per record and keeps
what the step needs (the farthest record, the nearest few in a small heap, a running
minimum) without building intermediate arrays; at ``n = 1,000`` this is about ten times
faster than the numpy engine, whose cost there is mostly the overhead of several numpy
calls per group (``tests/benchmarks/bench_mdav.py``). Time :math:`O(n^2 p / k)`. The
unassigned records are a compact list of row numbers in input order (:class:`Pool`), so
"first on ties" means the lowest row number. IV-MDAV's candidate tests skip records by
the triangle inequality (:func:`_kth_nearest_pruned`).

The four functions follow the engine contract of :mod:`microagg._mdav`. Without numba
they run as ordinary (slow) Python; the tests use that to check the loops themselves.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import njit
from .columns import mdav_columns
from .kernels import offer, sort_pairs, sqdist_row

__all__ = ["mdav", "mdav_single", "vmdav", "ivmdav", "mdav_rounds", "vmdav_rounds",
           "ivmdav_rounds"]


class Pool(NamedTuple):
    """The records not yet grouped, ``rows[:m]`` (``m`` is passed beside it), and the arrays
    every step shares. Positions ``a < m`` index ``rows``, ``taken`` and ``d``."""

    X: np.ndarray  #: the data
    rows: np.ndarray  #: input index of each remaining record, in input order
    taken: np.ndarray  #: flags of the records joining the current group, by position
    labels: np.ndarray  #: the labels being written (-1: not grouped yet)
    total: np.ndarray  #: running total of the remaining records
    c: np.ndarray  #: work: the centroid
    d: np.ndarray  #: squared distance of each remaining record to the current seed, by position


@njit
def _pool(X, total, d):  # type: ignore[no-untyped-def]
    n, p = X.shape
    return Pool(X, np.arange(n), np.zeros(n, np.bool_), np.full(n, -1, np.int64), total,
                np.empty(p), d)


@njit
def _distances(X, rows, m, v, d):  # type: ignore[no-untyped-def]
    """``d[a]`` = squared distance from record ``rows[a]`` to ``v``, for ``a < m``."""
    for a in range(m):
        d[a] = sqdist_row(X, rows[a], v)


@njit
def _argmax(d, m):  # type: ignore[no-untyped-def]
    """Position of the largest of ``d[:m]`` (the first one on ties)."""
    best = 0
    top = d[0]
    for a in range(1, m):
        if d[a] > top:
            best = a
            top = d[a]
    return best


@njit
def _farthest_from_centroid(pool, m):  # type: ignore[no-untyped-def]
    """Position of the remaining record farthest from their centroid ``total / m``."""
    X = pool.X
    rows = pool.rows
    c = pool.c
    for j in range(X.shape[1]):
        c[j] = pool.total[j] / m
    best = 0
    top = -1.0
    for a in range(m):
        s = sqdist_row(X, rows[a], c)
        if s > top:
            best = a
            top = s
    return best


@njit
def _nearest_to(pool, m, v, size, skip, out, dist):  # type: ignore[no-untyped-def]
    """The ``size`` remaining records nearest to ``v``, skipping flagged ones and ``skip``.

    One pass: ``pool.d[:m]`` receives the squared distance of every remaining
    record to ``v``; the nearest ``size`` eligible ones are kept in a heap. Their
    positions go to ``out`` and their distances to ``dist``, nearest first
    (equal distances in position order, as a stable sort). Returns how many
    were found: ``size``, or fewer if fewer records are eligible.
    """
    X = pool.X
    rows = pool.rows
    taken = pool.taken
    d = pool.d
    count = 0
    for a in range(m):
        s = sqdist_row(X, rows[a], v)
        d[a] = s
        if not taken[a] and a != skip:
            count = offer(dist, out, count, size, s, a)
    sort_pairs(dist, out, count)
    return count


@njit
def _kth_nearest_pruned(pool, m, y, kth, root, seeds, seen, heap):  # type: ignore[no-untyped-def]
    r"""Squared distance from position ``y`` to its ``kth`` nearest eligible record.

    Eligible: remaining, not flagged in ``taken``, not ``y`` itself. Returns
    ``inf`` if fewer than ``kth`` records are eligible. ``heap`` is a pair of
    arrays (distances, positions) of at least ``kth`` entries.

    ``root[a]`` is the (plain) distance from one fixed point, IV-MDAV's
    :math:`\mathbf{x}_r`, to record ``a``. By the triangle inequality

    .. math:: d(y, a) \ge |d(x_r, a) - d(x_r, y)|,

    so once ``kth`` records are known, a record whose lower bound exceeds the
    ``kth`` best distance so far is skipped without computing its distance. The
    positions ``seeds`` (records near ``y``) are tried first, so that the bound
    is tight from the start. A relative margin of :math:`10^{-9}` absorbs
    rounding; the records that are not skipped get the usual distance, so the
    result is exactly that of a full search.
    """
    X = pool.X
    rows = pool.rows
    taken = pool.taken
    heap_d, heap_a = heap
    n_seeds = seeds.size
    v = X[rows[y]].copy()
    ry = root[y]
    count = 0
    reach = np.inf  # the kth best plain distance so far
    for i in range(n_seeds + m):
        a = seeds[i] if i < n_seeds else i - n_seeds
        if i < n_seeds:
            seen[a] = True
        elif seen[a]:
            continue
        if taken[a] or a == y:
            continue
        if abs(root[a] - ry) > reach + 1e-9 * (root[a] + ry):
            continue
        s = sqdist_row(X, rows[a], v)
        count = offer(heap_d, heap_a, count, kth, s, a)
        if count == kth:
            reach = np.sqrt(heap_d[0])
    for i in range(n_seeds):
        seen[seeds[i]] = False
    return heap_d[0] if count == kth else np.inf


@njit
def _remove(pool, m, g):  # type: ignore[no-untyped-def]
    """Label the positions flagged in ``taken[:m]`` as group ``g`` and drop them.

    Their records leave the running ``total`` in input order; ``rows[:m]`` and
    ``d[:m]`` are compacted in order. Returns the new number of remaining records
    and resets the flags.
    """
    X = pool.X
    rows = pool.rows
    taken = pool.taken
    total = pool.total
    keep = pool.d
    w = 0
    for a in range(m):
        if taken[a]:
            pool.labels[rows[a]] = g
            for j in range(X.shape[1]):
                total[j] -= X[rows[a], j]
            taken[a] = False
        else:
            rows[w] = rows[a]
            keep[w] = keep[a]
            w += 1
    return w


@njit
def _group_around(pool, m, r, size, out, dist):  # type: ignore[no-untyped-def]
    """Position ``r`` and its ``size - 1`` nearest remaining records, into ``out[:size]``.

    ``r`` comes first, then the others nearest first; ``r`` belongs to its own
    group even when it has duplicates. ``dist`` receives their squared distances
    to record ``rows[r]`` and ``pool.d[:m]`` those of every remaining record. The
    records are not flagged (see :func:`_flag`). Returns the group's size.
    """
    got = 1
    v = pool.X[pool.rows[r]].copy()
    if size > 1:
        got += _nearest_to(pool, m, v, size - 1, r, out[1:], dist[1:])
    else:
        _distances(pool.X, pool.rows, m, v, pool.d)
    out[0] = r
    dist[0] = 0.0
    return got


@njit
def _flag(taken, out, count):  # type: ignore[no-untyped-def]
    for i in range(count):
        taken[out[i]] = True


@njit
def _take_group(pool, m, r, size, out, dist, g):  # type: ignore[no-untyped-def]
    """Group position ``r`` with its ``size - 1`` nearest as group ``g``; returns the new m."""
    _flag(pool.taken, out, _group_around(pool, m, r, size, out, dist))
    return _remove(pool, m, g)


@njit
def _last_groups(pool, k, m, g, out, dist):  # type: ignore[no-untyped-def]
    """End of MDAV and IV-MDAV: with >= 2k left, one more group of k; the rest form the last."""
    if m >= 2 * k:
        m = _take_group(pool, m, _farthest_from_centroid(pool, m), k, out, dist, g)
        g += 1
    for a in range(m):
        pool.labels[pool.rows[a]] = g


@njit
def mdav_rounds(X, k, total, two_groups):  # type: ignore[no-untyped-def]
    r"""MDAV (``two_groups=True``) or MDAV-single-group (``False``).

    See :func:`microagg.mdav` (survey Algorithm 1: a group around
    :math:`\mathbf{x}_r` and one around :math:`\mathbf{x}_s` per round) and
    :func:`microagg.mdav_single` (only the first of the two).
    """
    n = X.shape[0]
    pool = _pool(X, total, np.empty(n))
    out = np.empty(k, np.int64)
    dist = np.empty(k)
    m = n
    g = 0
    while m >= 3 * k:
        m = _take_group(pool, m, _farthest_from_centroid(pool, m), k, out, dist, g)
        g += 1
        if two_groups:  # x_s, farthest from x_r: d still holds the distances to it
            m = _take_group(pool, m, _argmax(pool.d, m), k, out, dist, g)
            g += 1
    _last_groups(pool, k, m, g, out, dist)
    return pool.labels


@njit
def vmdav_rounds(X, k, gamma, to_c):  # type: ignore[no-untyped-def]
    """V-MDAV's main loop; see :func:`microagg.vmdav`.

    ``to_c`` holds each record's squared distance to the global centroid.
    Returns labels with ``-1`` for the (fewer than k) records left over.
    """
    n, p = X.shape
    # pool.d: squared distance of each remaining record to the group; total: not needed
    # by V-MDAV, kept for the shared _remove
    pool = _pool(X, np.zeros(p), np.empty(n))
    rows = pool.rows
    taken = pool.taken
    d_group = pool.d
    d_e = np.empty(n)
    out = np.empty(k, np.int64)
    dist = np.empty(k)
    m = n
    g = 0
    while m >= k:
        # the unassigned record farthest from the global centroid, and its k-1 nearest
        e = 0
        for a in range(1, m):
            if to_c[rows[a]] > to_c[rows[e]]:
                e = a
        _flag(taken, out, _group_around(pool, m, e, k, out, dist))
        for i in range(1, k):  # distance to the group = minimum over its members
            _distances(X, rows, m, X[rows[out[i]]].copy(), d_e)
            for a in range(m):
                if d_e[a] < d_group[a]:
                    d_group[a] = d_e[a]
        size = k
        while size < 2 * k - 1 and size < m:
            # e_min: the record outside the group nearest to it (Eqs. 2-3)
            e_min = -1
            for a in range(m):
                if not taken[a] and (e_min < 0 or d_group[a] < d_group[e_min]):
                    e_min = a
            d_in = np.sqrt(d_group[e_min])
            # d_out: from e_min to its nearest other record outside the group (Eq. 4)
            _distances(X, rows, m, X[rows[e_min]].copy(), d_e)
            best = np.inf
            for a in range(m):
                if not taken[a] and a != e_min and d_e[a] < best:
                    best = d_e[a]
            d_out = np.sqrt(best)
            if not d_in < gamma * d_out:  # Eq. (5)
                break
            taken[e_min] = True
            size += 1
            for a in range(m):
                if d_e[a] < d_group[a]:
                    d_group[a] = d_e[a]
        m = _remove(pool, m, g)
        g += 1
    return pool.labels


@njit
def ivmdav_rounds(X, k, gamma, n_candidates, self_neighbour, total):  # type: ignore[no-untyped-def]
    """IV-MDAV; see :func:`microagg.ivmdav` for the readings."""
    n = X.shape[0]
    pool = _pool(X, total, np.empty(n))  # pool.d: squared distances to x_r
    root = np.empty(n)  # plain distances to x_r
    ys = np.empty(n_candidates, np.int64)
    d_ys = np.empty(n_candidates)
    heap = (np.empty(k), np.empty(k, np.int64))
    seen = np.zeros(n, np.bool_)
    need = k - 1 if self_neighbour else k  # with z_1 = y itself, z_k is the (k-1)-th other
    m = n
    g = 0
    while m >= 3 * k:
        r = _farthest_from_centroid(pool, m)
        # y_1 = x_r, y_2, ...: x_r and its nearest records; the first k form the group
        got = _group_around(pool, m, r, min(n_candidates, m), ys, d_ys)
        _flag(pool.taken, ys, k)
        for a in range(m):
            root[a] = np.sqrt(pool.d[a])
        size = k
        for i in range(k, got):
            if size >= 2 * k - 1:  # (also stops k = 1, where need would be 0)
                break
            y = ys[i]
            # d_2: distance from y to z_k, its need-th nearest record outside the group
            d2 = np.sqrt(_kth_nearest_pruned(pool, m, y, need, root, ys[:got], seen, heap))
            if d2 < np.inf and d2 > gamma * np.sqrt(d_ys[i]):  # d_2 > gamma d_1
                pool.taken[y] = True
                size += 1
        m = _remove(pool, m, g)
        g += 1
    _last_groups(pool, k, m, g, heap[1], heap[0])
    return pool.labels


# -- the engine contract (see microagg._mdav) -------------------------------------------------


def mdav(X: np.ndarray, k: int, total: np.ndarray) -> np.ndarray:
    """MDAV on the loops (engine contract of :mod:`microagg._mdav`).

    The rounds of :func:`mdav_rounds`, run on the transposed data by
    :func:`~microagg._mdav.columns.mdav_columns` (same labels, 2-3 times faster).
    """
    return mdav_columns(X.T.copy(), k, total)  # a copy: the kernel overwrites it


def mdav_single(X: np.ndarray, k: int, total: np.ndarray) -> np.ndarray:
    """MDAV-single-group on the loops (engine contract of :mod:`microagg._mdav`)."""
    return mdav_rounds(X, k, total, False)


def vmdav(X: np.ndarray, k: int, gamma: float, to_c: np.ndarray) -> np.ndarray:
    """V-MDAV's main loop on the loops (engine contract of :mod:`microagg._mdav`)."""
    return vmdav_rounds(X, k, gamma, to_c)


def ivmdav(X: np.ndarray, k: int, gamma: float, n_candidates: int, self_neighbour: bool,
           total: np.ndarray) -> np.ndarray:
    """IV-MDAV on the loops (engine contract of :mod:`microagg._mdav`)."""
    return ivmdav_rounds(X, k, gamma, n_candidates, self_neighbour, total)
