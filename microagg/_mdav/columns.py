r"""MDAV on data stored attribute by attribute: the loops engine's ``mdav``.

:func:`mdav_columns` runs MDAV (survey Algorithm 1, two groups per round) on the
transposed data, ``(p, n)``. Each squared distance is still summed over the attributes
in column order (the arithmetic of :func:`~microagg._mdav.kernels.sqdist_row`), but
for a whole run of records at once, so the additions of different records run side by
side in vector registers instead of one record after another. On the few hundred to
few thousand records and few attributes of GOMM's attribute groups this is 2-3 times
faster than :func:`~microagg._mdav.loops.mdav_rounds` (``tests/benchmarks/bench_gomm.py``).

Grouped records stay in place, flagged in ``done``; they are squeezed out of the
columns only once they are an eighth of them (moving ``p`` values per record costs
about one distance, so squeezing after every group would cost as much as the search;
an eighth measured faster than a quarter or a sixteenth on GOMM's attribute groups).
The decisions are those of :func:`~microagg._mdav.loops.mdav_rounds` on the same
numbers: the same squared distances bit for bit, the same running total of the
remaining records (each group leaves it in input order), ties to the first record in
input order (the engine contract of :mod:`microagg._mdav`; ``tests/test_mdav.py`` and
``tests/test_mdav_hashes.py`` hold it to the other engines).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import njit
from .kernels import offer

__all__ = ["mdav_columns"]


@njit
def _column_distances(W, width, v, d):  # type: ignore[no-untyped-def]
    """``d[a] = sum_j (W[j, a] - v[j])**2`` for ``a < width``, summed over ``j`` in order.

    Four attributes per sweep over the records (the running sums stay in registers
    between them): the same additions in the same order, a quarter of the loads and
    stores of ``d``.
    """
    p = W.shape[0]
    w0 = W[0]
    v0 = v[0]
    for a in range(width):
        t = w0[a] - v0
        d[a] = t * t
    j = 1
    while j + 3 < p:
        wa, wb, wc, wd = W[j], W[j + 1], W[j + 2], W[j + 3]
        va, vb, vc, vd = v[j], v[j + 1], v[j + 2], v[j + 3]
        for a in range(width):
            t = wa[a] - va
            s = d[a] + t * t
            t = wb[a] - vb
            s += t * t
            t = wc[a] - vc
            s += t * t
            t = wd[a] - vd
            d[a] = s + t * t
        j += 4
    while j < p:
        wj = W[j]
        vj = v[j]
        for a in range(width):
            t = wj[a] - vj
            d[a] += t * t
        j += 1


@njit
def _first_max(d, done, width):  # type: ignore[no-untyped-def]
    """Position of the largest ``d[a]`` not ``done`` (the first one on ties; -1 if none).

    Two passes over the distances: their largest value, then the first position holding
    it. Distances are never negative, and nonnegative floats order as their bit patterns
    read as integers, so the first pass is an integer maximum, which runs in vector
    registers (a float maximum does not, to keep NaN's rules); the flags enter it by a
    select, not a branch (the done positions lie scattered).
    """
    bits = d.view(np.int64)
    top = -1
    for a in range(width):
        x = -1 if done[a] else bits[a]
        top = max(top, x)
    if top >= 0:
        for a in range(width):
            if bits[a] == top and not done[a]:
                return a
    return -1


#: Up to this many positions a group's are sorted by insertion (numba's ``ndarray.sort``
#: costs about 0.2 microseconds even on five numbers: a fifth of MDAV's time at ``k = 5``).
INSERTION_SORT_MAX = 32


@njit(inline="always")
def _sort_positions(a):  # type: ignore[no-untyped-def]
    """Sort the (distinct) positions ``a`` in place, ascending."""
    if a.size > INSERTION_SORT_MAX:
        a.sort()
        return
    for x in range(1, a.size):
        v = a[x]
        y = x - 1
        while y >= 0 and a[y] > v:
            a[y + 1] = a[y]
            y -= 1
        a[y + 1] = v


class Columns(NamedTuple):
    """The state of :func:`mdav_columns`: the columns and what every step shares."""

    W: np.ndarray  #: the data, (p, width): the remaining and not yet squeezed records
    rows: np.ndarray  #: input index of each column of ``W``
    done: np.ndarray  #: flags of the columns already grouped
    d: np.ndarray  #: squared distance of each column to the current seed
    total: np.ndarray  #: running total of the remaining records
    labels: np.ndarray  #: the labels being written (-1: not grouped yet)
    heap_d: np.ndarray  #: work: distances of the nearest records kept
    group: np.ndarray  #: work: the positions of the group being formed
    seed: np.ndarray  #: work: the record a group is formed around, (p,)


@njit
def _take_group(st, width, r, k, g):  # type: ignore[no-untyped-def]
    """Group ``g``: position ``r`` and its ``k - 1`` nearest remaining records.

    ``st.d[:width]`` receives the squared distances to record ``r``; the group's
    records get label ``g``, are flagged ``done`` and leave the running ``total``
    in input order.
    """
    W, rows, done, d, total, labels, heap_d, group, seed = st
    for j in range(W.shape[0]):
        seed[j] = W[j, r]
    _column_distances(W, width, seed, d)
    count = 0
    heap_a = group[1:]
    if k > 1:
        size = k - 1
        done[r] = True  # (it is the group's seed)
        a = 0
        while a < width and count < size:  # fill the heap
            if not done[a]:
                count = offer(heap_d, heap_a, count, size, d[a], a)
            a += 1
        for b in range(a, width):  # later positions replace the farthest kept only if nearer
            x = np.inf if done[b] else d[b]  # (a select: no branch on the scattered flags)
            if x < heap_d[0]:
                offer(heap_d, heap_a, count, size, x, b)
    group[0] = r
    members = group[:count + 1]
    _sort_positions(members)  # input order, as the loops' running total loses them
    for q in range(count + 1):
        labels[rows[members[q]]] = g
        done[members[q]] = True
    for j in range(W.shape[0]):
        for q in range(count + 1):
            total[j] -= W[j, members[q]]


@njit
def _squeeze(W, rows, done, width):  # type: ignore[no-untyped-def]
    """Drop the ``done`` positions from ``W``, ``rows`` and ``done``, keeping the order."""
    w = 0
    for a in range(width):
        if not done[a]:
            rows[w] = rows[a]
            w += 1
    for j in range(W.shape[0]):
        wj = W[j]
        w = 0
        for a in range(width):
            if not done[a]:
                wj[w] = wj[a]
                w += 1
    done[:w] = False
    return w


@njit
def _farthest_from_centroid(W, done, width, m, total, c, d):  # type: ignore[no-untyped-def]
    """Position of the remaining record farthest from their centroid ``total / m``."""
    for j in range(W.shape[0]):
        c[j] = total[j] / m
    _column_distances(W, width, c, d)
    return _first_max(d, done, width)


@njit
def mdav_columns(W, k, total):  # type: ignore[no-untyped-def]
    r"""MDAV labels of the ``n`` records stored as the columns of ``W`` (shape ``(p, n)``).

    ``total`` is the column sums of the data (``X.sum(axis=0)`` of the ``(n, p)``
    array: the start of the running total); ``W`` and ``total`` are overwritten. The
    rounds of :func:`microagg.mdav`: while at least ``3k`` records remain, a group of
    ``k`` around the record farthest from the centroid and one around the record
    farthest from that one; then one more group of ``k`` if ``2k`` remain; the rest
    form the last group.
    """
    p, n = W.shape
    labels = np.full(n, -1, np.int64)
    rows = np.arange(n)
    done = np.zeros(n, np.bool_)
    d = np.empty(n)
    c = np.empty(p)
    st = Columns(W, rows, done, d, total, labels, np.empty(max(k - 1, 1)),
                 np.empty(k, np.int64), np.empty(p))
    width = n
    m = n
    g = 0
    while m >= 3 * k:
        r = _farthest_from_centroid(W, done, width, m, total, c, d)
        _take_group(st, width, r, k, g)
        s = _first_max(d, done, width)  # farthest from x_r: d holds the distances to it
        _take_group(st, width, s, k, g + 1)
        g += 2
        m -= 2 * k
        if 8 * m <= 7 * width:
            width = _squeeze(W, rows, done, width)
    if m >= 2 * k:
        r = _farthest_from_centroid(W, done, width, m, total, c, d)
        _take_group(st, width, r, k, g)
        g += 1
    for a in range(width):
        if not done[a]:
            labels[rows[a]] = g
    return labels
