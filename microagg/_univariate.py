r"""Kernels of the exact univariate solver: anchored group costs and two shortest-path passes.

Book: :ref:`sec-foundations-linear`.

Group costs (:func:`local_sums`, :func:`group_cost`). The SSE of the sorted values
``z[i:j]`` is computed from sums of the differences :math:`y_l = z_l - z_m` to an
*anchor* :math:`z_m` that belongs to the group itself: ``m`` is the first multiple of
``k`` at or after ``i`` (every group of ``k`` or more consecutive values holds one).
Per block of ``k`` values the kernels keep prefix sums of :math:`y` and :math:`y^2`
from the block's first value and suffix sums up to the next block's first value, so
every sum they add has terms of one sign, and any group's cost takes :math:`O(1)`:

.. math::

    c(i, j) = \sum_{l=i}^{j-1} y_l^2 - \frac{1}{j-i}\Bigl(\sum_{l=i}^{j-1} y_l\Bigr)^2 .

As :math:`|y_l|` never exceeds the group's range :math:`R` and the SSE is at least
:math:`R^2/2`, the rounding error of ``c(i, j)`` is relative to the group's own SSE
(:math:`\lesssim 6\,d^2 u` for a group of ``d`` values, ``u`` the unit roundoff),
whatever the magnitude of the values and the size of the array; whole-array prefix
sums have an error relative to :math:`\sum z^2` instead.

Two passes find the shortest path of the Hansen-Mukherjee graph with these costs:

* :func:`shortest_path`, the reference: every node tries its ``k`` incoming arcs,
  :math:`O(nk)`; it grows the groups ending at a node leftwards from their last value,
  which anchors them (no block sums needed);
* :func:`linear_path`: the targets are taken ``k`` at a time; the arcs into a block
  of ``k`` targets all start before the block, so the block is an offline
  row-minimum problem on a ``k`` by ``2k-1`` Monge matrix, solved by SMAWK
  (Aggarwal et al., 1987) in :math:`O(k)`: :math:`O(n)` in all.

Both find the same partition in exact arithmetic (ties go to the largest predecessor,
i.e. the shortest last group); in floating point their costs may differ in the last
bits, so two near-equal optima may be resolved differently.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit

__all__ = ["local_sums", "group_cost", "arc_costs", "shortest_path", "linear_path", "sorted_stably",
           "labels_from_path"]


@njit
def local_sums(z: np.ndarray, k: int) -> np.ndarray:
    """Anchored sums of the sorted values ``z`` per block of ``k``; shape ``(4, n)``.

    For ``q`` in the block starting at ``s`` (a multiple of ``k``): rows 0 and 1 hold
    :math:`\\sum_{s \\le l \\le q}` of ``z[l] - z[s]`` and its square (terms >= 0);
    rows 2 and 3 hold :math:`\\sum_{q \\le l < s+k}` of ``z[l] - z[s+k]`` and its
    square (terms <= 0 and >= 0), zero in the last block.
    """
    n = z.size
    out = np.zeros((4, n))
    for s in range(0, n, k):
        e = min(s + k, n)
        t1 = 0.0
        t2 = 0.0
        for q in range(s, e):
            y = z[q] - z[s]
            t1 += y
            t2 += y * y
            out[0, q] = t1
            out[1, q] = t2
        if e < n:
            t1 = 0.0
            t2 = 0.0
            for q in range(e - 1, s - 1, -1):
                y = z[q] - z[e]
                t1 += y
                t2 += y * y
                out[2, q] = t1
                out[3, q] = t2
    return out


@njit(inline="always")
def group_cost(z: np.ndarray, sums: np.ndarray, k: int, i: int, j: int) -> float:
    """SSE of ``z[i:j]`` (``k <= j - i <= 2k - 1``), anchored at a value of the group."""
    d = j - i
    m = ((i + k - 1) // k) * k  # the group's anchor: first multiple of k at or after i
    s1 = 0.0
    s2 = 0.0
    if m > i:  # values i .. m-1, relative to z[m]
        s1 = sums[2, i]
        s2 = sums[3, i]
    if j - m <= k:  # values m .. j-1 lie in the anchor's block
        s1 += sums[0, j - 1]
        s2 += sums[1, j - 1]
    else:  # the anchor's whole block, then the next block up to j-1, re-anchored
        e = m + k
        s1 += sums[0, e - 1]
        s2 += sums[1, e - 1]
        p1 = sums[0, j - 1]
        p2 = sums[1, j - 1]
        cnt = j - e
        delta = z[e] - z[m]
        s1 += p1 + cnt * delta
        s2 += p2 + 2.0 * delta * p1 + cnt * delta * delta
    cost = s2 - s1 * s1 / d
    return cost if cost > 0.0 else 0.0


@njit
def shortest_path(z: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Shortest path from node 0 to every node, trying every arc: ``(dist, pred)``.

    The groups ending at node ``j`` (values ``z[j-d : j]``, ``d = k .. 2k-1``) are grown
    leftwards from their last value ``z[j-1]``, their anchor: the sums of
    ``y = z[l] - z[j-1]`` (all <= 0) and of ``y*y`` give each cost. Ties: ``d`` is tried
    from ``k`` upwards and only a strictly smaller distance replaces the best, so the
    shortest last group wins.
    """
    n1 = z.size + 1
    dist = np.full(n1, np.inf)
    pred = np.full(n1, -1, dtype=np.int64)
    dist[0] = 0.0
    for j in range(k, n1):
        anchor = z[j - 1]
        s1 = 0.0
        s2 = 0.0
        for d in range(1, 2 * k):
            i = j - d
            if i < 0:
                break
            y = z[i] - anchor
            s1 += y
            s2 += y * y
            if d >= k:
                cost = s2 - s1 * s1 / d
                cand = dist[i] + (cost if cost > 0.0 else 0.0)
                if cand < dist[j]:
                    dist[j] = cand
                    pred[j] = i
    return dist, pred


@njit(inline="always")
def _key(z: np.ndarray, sums: np.ndarray, k: int, dist: np.ndarray,
         j: int, i: int) -> tuple[int, float]:
    """Entry ``(j, i)`` of a block's matrix as (penalty, distance), compared in that order.

    Arcs shorter than ``k`` or longer than ``2k-1`` get a penalty that is a convex
    function of ``j - i`` (even values for short arcs, odd for long ones, so two
    entries of a row never share one); sources not reachable from node 0 get ``4k``
    more. Both are Monge, so the matrix stays Monge; only unpenalised (or equally
    penalised unreachable) entries are compared by distance.
    """
    d = j - i
    pen = 0
    if d < k:
        pen = 2 * (k - d)
    elif d >= 2 * k:
        pen = 2 * (d - 2 * k) + 1
    base = dist[i]
    if base == np.inf:
        pen += 4 * k
        base = 0.0
    if d < k or d >= 2 * k:
        return pen, 0.0
    return pen, base + group_cost(z, sums, k, i, j)


@njit(inline="always")
def _less(pa: int, va: float, pb: int, vb: float) -> bool:
    return pa < pb or (pa == pb and va < vb)


@njit
def _block_minima(z: np.ndarray, sums: np.ndarray, k: int, dist: np.ndarray, s: int,
                  rows: int, res: np.ndarray, cols: np.ndarray, pens: np.ndarray,
                  vals: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> None:
    """SMAWK on the block of targets ``s .. s+rows-1`` and sources ``s-2k+1 .. s-1``.

    Rows and columns are both taken in reverse (row ``r`` is target ``s+rows-1-r``,
    column ``c`` is source ``s-1-c``), which keeps the matrix Monge and turns the
    leftmost minimum SMAWK finds into the largest source (shortest last group).
    ``res[r]`` receives row ``r``'s column. Recursion unrolled: level ``l`` holds the
    rows ``2**l - 1 + t * 2**l``; ``cols`` stores each level's reduced columns (from
    ``starts[l]``, ``counts[l]`` of them) and ``pens``, ``vals`` the entry of each in the
    row of its stack position, so that REDUCE evaluates one entry per comparison.
    """
    ncol = 2 * k - 1
    top_row = s + rows - 1
    # down: REDUCE the columns of each level to at most as many as it has rows
    nrows = rows
    level = 0
    pos = 0
    while nrows > 0:
        step = 1 << level
        first = step - 1
        starts[level] = pos
        top = 0
        n_in = ncol if level == 0 else counts[level - 1]
        for t in range(n_in):
            c = t if level == 0 else cols[starts[level - 1] + t]
            while top > 0:  # stack entry top-1 belongs to row first + (top-1) * step
                pc, vc = _key(z, sums, k, dist, top_row - first - (top - 1) * step, s - 1 - c)
                if _less(pc, vc, pens[pos + top - 1], vals[pos + top - 1]):
                    top -= 1
                else:
                    break
            if top < nrows:
                cols[pos + top] = c
                pens[pos + top], vals[pos + top] = _key(z, sums, k, dist,
                                                        top_row - first - top * step, s - 1 - c)
                top += 1
        counts[level] = top
        pos += top
        nrows //= 2
        level += 1
    # up: fill the even-position rows of each level between their odd neighbours
    for lv in range(level - 1, -1, -1):
        step = 1 << lv
        first = step - 1
        nrows_l = rows
        for _ in range(lv):
            nrows_l //= 2
        base = starts[lv]
        idx = 0
        for t in range(0, nrows_l, 2):
            r = first + t * step
            j = top_row - r
            stop = cols[base + counts[lv] - 1] if t + 1 >= nrows_l else res[r + step]
            best = cols[base + idx]
            pb, vb = _key(z, sums, k, dist, j, s - 1 - best)
            while cols[base + idx] != stop:
                idx += 1
                c = cols[base + idx]
                pc, vc = _key(z, sums, k, dist, j, s - 1 - c)
                if _less(pc, vc, pb, vb):
                    best, pb, vb = c, pc, vc
            res[r] = best


@njit
def linear_path(z: np.ndarray, sums: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Shortest path with SMAWK on blocks of ``k`` targets, :math:`O(n)`: ``(dist, pred)``.

    Targets ``k .. 2k-1`` have one arc (from node 0); from ``2k`` on, the targets
    ``s .. s+k-1`` only need distances of nodes before ``s``, so each block is solved
    offline. Same tie rule as :func:`shortest_path`.
    """
    n = z.size
    dist = np.full(n + 1, np.inf)
    pred = np.full(n + 1, -1, dtype=np.int64)
    dist[0] = 0.0
    for j in range(k, min(2 * k - 1, n) + 1):
        dist[j] = group_cost(z, sums, k, 0, j)
        pred[j] = 0
    res = np.empty(k, dtype=np.int64)
    cols = np.empty(2 * k + 128, dtype=np.int64)
    pens = np.empty(2 * k + 128, dtype=np.int64)
    vals = np.empty(2 * k + 128)
    starts = np.empty(64, dtype=np.int64)
    counts = np.empty(64, dtype=np.int64)
    for s in range(2 * k, n + 1, k):
        rows = min(k, n + 1 - s)
        _block_minima(z, sums, k, dist, s, rows, res, cols, pens, vals, starts, counts)
        for r in range(rows):
            j = s + rows - 1 - r
            i = s - 1 - res[r]
            pen, val = _key(z, sums, k, dist, j, i)
            if pen != 0:  # cannot happen: every target >= 2k has a reachable source
                dist[n] = np.nan  # the caller refuses a non-finite optimum
                return dist, pred
            dist[j] = val
            pred[j] = i
    return dist, pred


@njit
def sorted_stably(x: np.ndarray, order: np.ndarray) -> np.ndarray:
    """``x[order]``, and ``order`` made stable in place (indices sorted within each run of
    equal values).

    ``order`` is any argsort of ``x`` (quicksort is faster); afterwards it equals
    ``np.argsort(x, kind="stable")``.
    """
    n = order.size
    values = np.empty(n)
    a = 0
    for q in range(n):
        values[q] = x[order[q]]
        if q > 0 and values[q] != values[q - 1]:
            if q - a > 1:
                order[a:q] = np.sort(order[a:q])
            a = q
    if n - a > 1:
        order[a:n] = np.sort(order[a:n])
    return values


@njit
def labels_from_path(pred: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Group labels in input order: follow ``pred`` back from node ``n``; groups numbered
    from the smallest values."""
    n = order.size
    groups = 0
    v = n
    while v > 0:
        v = pred[v]
        groups += 1
    labels = np.empty(n, dtype=np.int64)
    v = n
    g = groups - 1
    while v > 0:
        u = pred[v]
        for q in range(u, v):
            labels[order[q]] = g
        g -= 1
        v = u
    return labels


@njit
def arc_costs(z: np.ndarray, sums: np.ndarray, k: int) -> np.ndarray:
    """Table of every arc's cost: ``C[j, d - k]`` is the SSE of ``z[j-d:j]``, ``inf`` if
    ``j < d``."""
    n1 = z.size + 1
    out = np.full((n1, k), np.inf)
    for j in range(k, n1):
        for d in range(k, 2 * k):
            if j - d < 0:
                break
            out[j, d - k] = group_cost(z, sums, k, j - d, j)
    return out
