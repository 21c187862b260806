r"""Kernels of the exact univariate solver: anchored group costs and two shortest-path passes.

Book: :ref:`sec-foundations-linear`.

Group costs. The SSE of the sorted values ``z[i:j]`` (``d = j - i`` of them) is computed
from sums of the differences :math:`y_l = z_l - z_m` to an *anchor* :math:`z_m` that
belongs to the group itself,

.. math::

    c(i, j) = \sum_{l=i}^{j-1} y_l^2 - \frac{1}{d}\Bigl(\sum_{l=i}^{j-1} y_l\Bigr)^2 ,

never from whole-array prefix sums. As :math:`|y_l|` never exceeds the group's range
:math:`R` and the SSE is at least :math:`R^2/2`, the rounding error of ``c(i, j)`` is
relative to the group's own SSE (:math:`\lesssim 6\,d^2 u`, ``u`` the unit roundoff),
whatever the magnitude of the values and the size of the array; prefix sums over the
whole array have an error relative to :math:`\sum z^2` instead.

Two passes find the shortest path of the Hansen-Mukherjee graph with these costs:

* :func:`shortest_path`, the reference: every node ``j`` tries its ``k`` incoming arcs,
  :math:`O(nk)`;
* :func:`linear_path`: the best predecessor never moves left (the costs are Monge), and
  each block of ``k`` targets is first scanned from the previous target's best
  predecessor on (a few entries per target on most data); a block that needs more than
  ``16k`` entries is solved by SMAWK (Aggarwal et al., 1987), :math:`O(k)`: :math:`O(n)`
  in all.

The targets are taken ``k`` at a time (``s .. s+k-1``, ``s`` a multiple of ``k``); their
arcs all start before ``s``, at nodes whose distances are known, so each block is an
offline row-minimum problem on a ``k`` by ``2k-1`` Monge matrix. A group starting at
``i`` is anchored at the first multiple of ``k`` at or after ``i`` (``s-k`` or ``s``,
inside the group); per block, sums of the sources up to their anchor and of the
targets from theirs make each cost :math:`O(1)`, and both passes use them, so they
compute every cost bit for bit alike.

Both find the same partition whenever the computed costs keep the Monge property, as
exact arithmetic does (ties go to the largest predecessor, i.e. the shortest last
group).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._jit import HAVE_NUMBA, njit

__all__ = ["arc_costs", "shortest_path", "linear_path", "stable_order", "labels_from_path",
           "SCAN_PER_TARGET"]


@njit
def _block_sums(z: np.ndarray, k: int, s: int, rows: int, blk: np.ndarray) -> None:
    """Anchored sums for the block of targets ``s .. s+rows-1`` (sources ``s-2k+1 .. s-1``).

    ``blk[0:2, c]``: sums of ``y`` and ``y*y`` over ``z[i : m]`` for source
    ``i = s-2k+1+c``, ``y`` relative to its anchor ``z[m]`` (``m = s-k`` for the first
    ``k`` sources, ``s`` for the others; terms <= 0). ``blk[2:4, t]``: over
    ``z[s : s+t]`` relative to ``z[s]`` (terms >= 0), for groups anchored at ``s``;
    ``blk[4:6, t]``: over ``z[s-k : s+t]`` relative to ``z[s-k]``, for groups anchored
    at ``s-k`` (the block ``z[s-k : s]``, then ``z[s : s+t]`` moved by ``z[s] - z[s-k]``).
    """
    for c0, m in ((0, s - k), (k, s)):  # sources anchored at s-k, then at s
        t1 = 0.0
        t2 = 0.0
        blk[0, c0 + k - 1] = 0.0  # source s-k (c = k-1) is its own anchor
        blk[1, c0 + k - 1] = 0.0
        if m >= z.size:  # s == n: target n only, and these sources are too close to it
            blk[0:2, c0:c0 + k - 1] = 0.0
            continue
        for i in range(m - 1, m - k, -1):
            y = z[i] - z[m]
            t1 += y
            t2 += y * y
            blk[0, i - (s - 2 * k + 1)] = t1
            blk[1, i - (s - 2 * k + 1)] = t2
    f1 = 0.0
    f2 = 0.0
    for q in range(s - k, s):
        y = z[q] - z[s - k]
        f1 += y
        f2 += y * y
    delta = z[s] - z[s - k] if s < z.size else 0.0
    t1 = 0.0
    t2 = 0.0
    for t in range(rows):
        blk[2, t] = t1
        blk[3, t] = t2
        blk[4, t] = f1 + t1 + t * delta
        blk[5, t] = f2 + t2 + 2.0 * delta * t1 + t * delta * delta
        if s + t < z.size:
            y = z[s + t] - z[s]
            t1 += y
            t2 += y * y


@njit(inline="always")
def _cost(blk: np.ndarray, k: int, t: int, c: int, d: int) -> float:
    """SSE of the ``d`` values from source ``s-2k+1+c`` to target ``s+t`` (block sums)."""
    row = 4 if c < k else 2  # anchored at s-k, or at s
    s1 = blk[0, c] + blk[row, t]
    s2 = blk[1, c] + blk[row + 1, t]
    cost = s2 - s1 * s1 / d
    return cost if cost > 0.0 else 0.0


@njit
def _first_groups(z: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(dist, pred)`` with node 0 and targets ``k .. 2k-1`` set: one group ``z[0:j]``."""
    n = z.size
    dist = np.full(n + 1, np.inf)
    pred = np.full(n + 1, -1, dtype=np.int64)
    dist[0] = 0.0
    s1 = 0.0
    s2 = 0.0
    for j in range(1, min(2 * k - 1, n) + 1):  # anchored at z[0]
        y = z[j - 1] - z[0]
        s1 += y
        s2 += y * y
        if j >= k:
            cost = s2 - s1 * s1 / j
            dist[j] = cost if cost > 0.0 else 0.0
            pred[j] = 0
    return dist, pred


@njit
def shortest_path(z: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Shortest path from node 0 to every node, trying every arc: ``(dist, pred)``.

    Targets are taken ``k`` at a time with their block sums; node ``j`` tries the groups
    of ``d = k .. 2k-1`` values ending at it. Ties: ``d`` is tried from ``k`` upwards and
    only a strictly smaller distance replaces the best, so the shortest last group wins.
    """
    n = z.size
    dist, pred = _first_groups(z, k)
    blk = np.empty((6, 2 * k))
    for s in range(2 * k, n + 1, k):
        rows = min(k, n + 1 - s)
        _block_sums(z, k, s, rows, blk)
        for t in range(rows):
            j = s + t
            for d in range(k, 2 * k):
                c = t + 2 * k - 1 - d  # source i = j - d = s - 2k + 1 + c
                cand = dist[j - d] + _cost(blk, k, t, c, d)
                if cand < dist[j]:
                    dist[j] = cand
                    pred[j] = j - d
    return dist, pred


@njit(inline="always")
def _key(k: int, dist: np.ndarray, blk: np.ndarray, s: int, t: int,
         c: int) -> tuple[int, float]:
    """Entry (target ``s+t``, source ``s-2k+1+c``) of a block as (penalty, distance).

    Entries are compared by penalty, then distance. Arcs shorter than ``k`` or longer
    than ``2k-1`` get a penalty that is a convex function of the arc's length (even
    values for short arcs, odd for long ones, so two entries of a row never share
    one); sources not reachable from node 0 get ``4k`` more. Both are Monge, so the
    block stays Monge, and only arcs of allowed length are compared by distance.
    """
    d = t + 2 * k - 1 - c
    i = s - 2 * k + 1 + c
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
    return pen, base + _cost(blk, k, t, c, d)


@njit(inline="always")
def _less(pa: int, va: float, pb: int, vb: float) -> bool:
    return pa < pb or (pa == pb and va < vb)


class _Smawk(NamedTuple):
    """The work arrays of :func:`_block_minima`, allocated once per pass."""

    res: np.ndarray     # (k,) each reversed row's column
    cols: np.ndarray    # each level's reduced columns
    pens: np.ndarray    # the penalty of each stacked entry
    vals: np.ndarray    # the distance of each stacked entry
    starts: np.ndarray  # (64,) where each level's columns start in cols
    counts: np.ndarray  # (64,) how many columns each level keeps


@njit
def _block_minima(k: int, dist: np.ndarray, blk: np.ndarray, s: int, rows: int,
                  work: _Smawk) -> None:
    """SMAWK on the block of targets ``s .. s+rows-1`` and sources ``s-2k+1 .. s-1``.

    Rows and columns are both taken in reverse (row ``r`` is target ``s+rows-1-r``,
    column ``c`` is source ``s-1-c``), which keeps the matrix Monge and turns the
    leftmost minimum SMAWK finds into the largest source (shortest last group).
    ``res[r]`` receives row ``r``'s column. Recursion unrolled: level ``l`` holds the
    rows ``2**l - 1 + t * 2**l``; ``cols`` stores each level's reduced columns (from
    ``starts[l]``, ``counts[l]`` of them) and ``pens``, ``vals`` the entry of each in the
    row of its stack position, so that REDUCE evaluates one entry per comparison
    (the arrays of ``work``).
    """
    res, cols, pens, vals = work.res, work.cols, work.pens, work.vals
    starts, counts = work.starts, work.counts
    ncol = 2 * k - 1
    last = rows - 1  # reversed row r is t = last - r; reversed column c is ncol - 1 - c
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
        for u in range(n_in):
            c = u if level == 0 else cols[starts[level - 1] + u]
            while top > 0:  # stack entry top-1 belongs to row first + (top-1) * step
                pc, vc = _key(k, dist, blk, s, last - first - (top - 1) * step, ncol - 1 - c)
                if _less(pc, vc, pens[pos + top - 1], vals[pos + top - 1]):
                    top -= 1
                else:
                    break
            if top < nrows:
                cols[pos + top] = c
                pens[pos + top], vals[pos + top] = _key(k, dist, blk, s,
                                                        last - first - top * step, ncol - 1 - c)
                top += 1
        counts[level] = top
        pos += top
        nrows //= 2
        level += 1
    # up: fill the even-position rows of each level between their odd neighbours
    for lv in range(level - 1, -1, -1):
        step = 1 << lv
        first = step - 1
        nrows_l = rows >> lv
        base = starts[lv]
        idx = 0
        for u in range(0, nrows_l, 2):
            r = first + u * step
            stop = cols[base + counts[lv] - 1] if u + 1 >= nrows_l else res[r + step]
            best = cols[base + idx]
            pb, vb = _key(k, dist, blk, s, last - r, ncol - 1 - best)
            while cols[base + idx] != stop:
                idx += 1
                c = cols[base + idx]
                pc, vc = _key(k, dist, blk, s, last - r, ncol - 1 - c)
                if _less(pc, vc, pb, vb):
                    best, pb, vb = c, pc, vc
            res[r] = best


@njit
def _pruned_scan(k: int, dist: np.ndarray, pred: np.ndarray, blk: np.ndarray, s: int,
                 rows: int, budget: int) -> bool:
    """Row minima of a block, each row scanned from the previous row's best source on.

    The best (largest optimal) source never moves left from one target to the next
    (Monge), so target ``j`` only tries sources from ``pred[j-1]``. Usually a few per
    target; gives up (returns ``False``) once ``budget`` entries are spent.
    """
    spent = 0
    for t in range(rows):
        j = s + t
        lo = max(j - 2 * k + 1, pred[j - 1])
        for i in range(lo, j - k + 1):  # increasing i, ties to the larger: <=
            base = dist[i]
            if base == np.inf:
                continue
            cand = base + _cost(blk, k, t, i - (s - 2 * k + 1), j - i)
            if cand <= dist[j]:
                dist[j] = cand
                pred[j] = i
        spent += j - k + 1 - lo
        if spent > budget:
            return False
    return True


#: Entries per target a block's scan may spend before SMAWK takes the block over.
SCAN_PER_TARGET = 16


@njit
def linear_path(z: np.ndarray, k: int, budget: int) -> tuple[np.ndarray, np.ndarray]:
    """Shortest path in :math:`O(n)` by blocks of ``k`` targets: ``(dist, pred)``.

    Targets ``k .. 2k-1`` have one arc (from node 0); from ``2k`` on, the targets
    ``s .. s+k-1`` only need distances of nodes before ``s``, so each block is solved
    offline: first by the pruned scan (:func:`_pruned_scan`), and if that needs more
    than ``budget`` entries (``SCAN_PER_TARGET * k`` in :func:`microagg.optimal_univariate`;
    0 sends every block to SMAWK), by SMAWK; :math:`O(k)` per block for a budget of
    order ``k``. Same tie rule as :func:`shortest_path`. Memory: ``O(n)`` for the result,
    ``O(k)`` besides.
    """
    n = z.size
    dist, pred = _first_groups(z, k)
    blk = np.empty((6, 2 * k))
    work = _Smawk(np.empty(k, dtype=np.int64), np.empty(2 * k + 128, dtype=np.int64),
                  np.empty(2 * k + 128, dtype=np.int64), np.empty(2 * k + 128),
                  np.empty(64, dtype=np.int64), np.empty(64, dtype=np.int64))
    res = work.res
    for s in range(2 * k, n + 1, k):
        rows = min(k, n + 1 - s)
        _block_sums(z, k, s, rows, blk)
        if _pruned_scan(k, dist, pred, blk, s, rows, budget):
            continue
        dist[s:s + rows] = np.inf
        _block_minima(k, dist, blk, s, rows, work)
        for r in range(rows):
            t = rows - 1 - r
            pen, val = _key(k, dist, blk, s, t, 2 * k - 2 - res[r])
            if pen != 0:  # cannot happen: every target >= 2k has a reachable source
                dist[n] = np.nan  # the caller refuses a non-finite optimum
                return dist, pred
            dist[s + t] = val
            pred[s + t] = s - 1 - res[r]
    return dist, pred


#: Bits of the key sorted per pass of :func:`radix_order` (8 passes of 256 buckets: the
#: counts stay in the L1 cache; 11 and 16 bits measured no faster at n = 1e7).
RADIX_BITS = 8


@njit
def radix_order(x: np.ndarray) -> np.ndarray:
    """``np.argsort(x, kind="stable")`` for finite float64 ``x``, by a least-significant-digit
    radix sort: :math:`O(n)`, several times faster than numpy's comparison sorts at large n.

    Each value becomes an unsigned 64-bit key with the same order (negative values: all bits
    flipped; others: the sign bit set; ``-0.0`` first made ``+0.0``, which compares equal).
    Passes sort by ``RADIX_BITS`` bits at a time, from the lowest, and each keeps the order of
    the previous one among equal digits, so equal values keep their input order. A pass
    whose digit is the same for every key is skipped.
    """
    n = x.size
    bits = RADIX_BITS
    passes = (64 + bits - 1) // bits
    buckets = 1 << bits
    mask = np.uint64(buckets - 1)
    sign = np.uint64(1) << np.uint64(63)
    raw = x.view(np.uint64)
    keys = np.empty(n, np.uint64)
    counts = np.zeros((passes, buckets), np.int64)
    for i in range(n):
        b = raw[i]
        if b == sign:  # -0.0
            b = np.uint64(0)
        key = ~b if b & sign else b | sign
        keys[i] = key
        for p in range(passes):
            counts[p, (key >> np.uint64(p * bits)) & mask] += 1
    order = np.arange(n)
    keys_to = np.empty(n, np.uint64)
    order_to = np.empty(n, np.int64)
    start = np.empty(buckets, np.int64)
    for p in range(passes):
        total = 0
        constant = False
        for d in range(buckets):
            constant = counts[p, d] == n
            start[d] = total
            total += counts[p, d]
            if constant:
                break
        if constant:
            continue
        shift = np.uint64(p * bits)
        for i in range(n):
            key = keys[i]
            d = (key >> shift) & mask
            q = start[d]
            start[d] = q + 1
            keys_to[q] = key
            order_to[q] = order[i]
        keys, keys_to = keys_to, keys
        order, order_to = order_to, order
    return order


def stable_order(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(order, values)``: ``order = np.argsort(x, kind="stable")`` and ``values = x[order]``.

    With numba, :func:`radix_order` computes ``order``; without it, numpy's stable sort
    does (the same array: both keep equal values in input order).
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    order = radix_order(x) if HAVE_NUMBA else np.argsort(x, kind="stable")
    return order, x[order]


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
def arc_costs(z: np.ndarray, k: int) -> np.ndarray:
    """Table of every arc's cost: ``C[j, d - k]`` is the SSE of ``z[j-d:j]`` (anchored at
    ``z[j-1]``, as in :func:`shortest_path`), ``inf`` if ``j < d``."""
    n1 = z.size + 1
    out = np.full((n1, k), np.inf)
    for j in range(k, n1):
        s1 = 0.0
        s2 = 0.0
        for d in range(1, 2 * k):
            if j - d < 0:
                break
            y = z[j - d] - z[j - 1]
            s1 += y
            s2 += y * y
            if d >= k:
                cost = s2 - s1 * s1 / d
                out[j, d - k] = cost if cost > 0.0 else 0.0
    return out
