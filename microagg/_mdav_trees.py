r"""The indexes behind the indexed MDAV engine: cell codes, a kd-tree and direction buckets.

:mod:`microagg._mdav_index` explains the design and the exactness argument; this module
builds the structures and answers the queries (k nearest, nearest to a set of records,
farthest), all as plain loops that numba compiles when it is installed.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit
from ._mdav_loops import _offer, _sort_pairs, _sqdist_row

#: Cells per attribute of the one-byte record codes (the VA-file prefilter).
VA_CELLS = 256
#: Radii below this are treated as "no direction" (their unit vector could be
#: spoilt by underflow); the bound's absolute term covers them.
_TINY = 1e-140
# -- building the indexes ------------------------------------------------------------------


@njit
def _select(perm, P, dim, s, e, kth):  # type: ignore[no-untyped-def]
    """Quickselect: reorder ``perm[s:e]`` so that ``P[perm[kth], dim]`` is in sorted place."""
    lo = s
    hi = e - 1
    while lo < hi:
        a = P[perm[lo], dim]
        b = P[perm[(lo + hi) // 2], dim]
        c = P[perm[hi], dim]
        if a < b:
            pivot = b if b < c else (c if a < c else a)
        else:
            pivot = a if a < c else (c if b < c else b)
        i = lo
        j = hi
        while i <= j:
            while P[perm[i], dim] < pivot:
                i += 1
            while P[perm[j], dim] > pivot:
                j -= 1
            if i <= j:
                t = perm[i]
                perm[i] = perm[j]
                perm[j] = t
                i += 1
                j -= 1
        if kth <= j:
            hi = j
        elif kth >= i:
            lo = i
        else:
            return


@njit
def _split(P, perm, leaf_size):  # type: ignore[no-untyped-def]
    """An implicit kd-tree over the rows ``perm`` of ``P``: median splits on the widest
    attribute.

    Node ``i`` has children ``2i+1`` and ``2i+2``; all leaves are at the same
    depth and hold ``ceil(m / 2**depth) <= leaf_size`` rows or one fewer.
    Reorders ``perm`` (``m`` row numbers of ``P``) in place and returns it, each
    node's ``[start, end)`` range in it and the first leaf's number. Reading the
    rows through ``perm`` means no copy of them is made.
    """
    m = perm.size
    q = P.shape[1]
    depth = 0
    while ((m - 1) >> depth) + 1 > leaf_size:
        depth += 1
    n_nodes = (2 << depth) - 1
    first_leaf = (1 << depth) - 1
    start = np.zeros(n_nodes, np.int64)
    end = np.zeros(n_nodes, np.int64)
    end[0] = m
    lo = np.empty(q)
    hi = np.empty(q)
    for node in range(first_leaf):
        s = start[node]
        e = end[node]
        mid = (s + e) // 2
        if e - s > 1:
            lo[:] = np.inf
            hi[:] = -np.inf
            for i in range(s, e):
                for j in range(q):
                    v = P[perm[i], j]
                    lo[j] = min(lo[j], v)
                    hi[j] = max(hi[j], v)
            dim = 0
            for j in range(1, q):
                if hi[j] - lo[j] > hi[dim] - lo[dim]:
                    dim = j
            _select(perm, P, dim, s, e, mid)
        start[2 * node + 1] = s
        end[2 * node + 1] = mid
        start[2 * node + 2] = mid
        end[2 * node + 2] = e
    return perm, start, end, first_leaf


@njit
def _kd_build(X, codes, rows, m, leaf_size):  # type: ignore[no-untyped-def]
    """The kd-tree over records ``rows[:m]`` (see :func:`_kd_knn` for its fields).

    Leaf ``l`` holds its unassigned records at positions ``start[l]`` to
    ``start[l] + cnt[l]`` (in any order: a removal swaps the last one into the
    gap). Each node's box is kept as cell codes (lowest, highest; see
    :func:`_grid`), 2p bytes instead of 16p.
    """
    n, p = X.shape
    ids, start, end, first_leaf = _split(X, rows[:m].copy(), leaf_size)
    kcodes = np.empty((m, p), np.uint8)
    for i in range(m):
        kcodes[i] = codes[ids[i]]
    n_nodes = start.size
    cbox = np.empty((n_nodes, 2 * p), np.uint8)  # lowest cells, then highest cells
    cbox[:, :p] = 255
    cbox[:, p:] = 0
    cnt = np.zeros(n_nodes, np.int64)
    minid = np.full(n_nodes, n, np.int64)
    leaf_of = np.empty(m, np.int64)
    pos = np.full(n, -1, np.int64)
    for leaf in range(first_leaf, n_nodes):
        for i in range(start[leaf], end[leaf]):
            leaf_of[i] = leaf
            pos[ids[i]] = i
            minid[leaf] = min(minid[leaf], ids[i])
            for j in range(p):
                cbox[leaf, j] = min(cbox[leaf, j], kcodes[i, j])
                cbox[leaf, p + j] = max(cbox[leaf, p + j], kcodes[i, j])
        cnt[leaf] = end[leaf] - start[leaf]
    for node in range(first_leaf - 1, -1, -1):
        a = 2 * node + 1
        b = a + 1
        cnt[node] = cnt[a] + cnt[b]
        minid[node] = min(minid[a], minid[b])
        for j in range(p):
            cbox[node, j] = min(cbox[a, j], cbox[b, j])
            cbox[node, p + j] = max(cbox[a, p + j], cbox[b, p + j])
    return ids, pos, kcodes, cbox, cnt, minid, first_leaf, start, leaf_of


@njit
def _dt_build(X, codes, rows, m, leaf_size, cm):  # type: ignore[no-untyped-def]
    """The direction index over records ``rows[:m]``, anchored at their mean.

    Buckets of about ``leaf_size`` records with similar directions (the leaves
    of a kd-tree over the unit vectors), each sorted by decreasing radius, with
    its cone: unit axis (column of ``wT``), cosine and sine of its half-angle
    (``ca``, ``sa``; ``cm`` is subtracted from the cosine, see :func:`_margins`).
    Bucket ``b`` holds its unassigned records at positions ``head[b]`` to
    ``end[b]`` (a removal shifts the records above the gap down by one, so the
    order by radius is kept). See :func:`_dt_farthest` for the other fields.
    """
    n, p = X.shape
    perm, r, head, bend, wT, ca, sa, rhi, rlo, minid, anchor = _dt_buckets(X, rows, m,
                                                                           leaf_size, cm)
    nb = head.size
    ids = np.empty(m, np.int64)
    rr = np.empty(m)
    dcodes = np.empty((m, p), np.uint8)
    bucket_of = np.empty(m, np.int64)
    pos = np.full(n, -1, np.int64)
    for i in range(m):
        ids[i] = rows[perm[i]]
        rr[i] = r[perm[i]]
        dcodes[i] = codes[ids[i]]
        pos[ids[i]] = i
    for b in range(nb):
        for i in range(head[b], bend[b]):
            bucket_of[i] = b
    return (ids, pos, rr, dcodes, wT, ca, sa, rhi, rlo, minid, head, bend, bucket_of, anchor,
            np.empty(nb), np.empty(nb))


@njit
def _dt_buckets(X, rows, m, leaf_size, cm):  # type: ignore[no-untyped-def]
    """The buckets of :func:`_dt_build` (records ``perm``, radii ``r`` by position)
    and their cones. The unit vectors (``m x p``, the build's largest array) live
    only here, so they are freed before the per-record fields are made."""
    n, p = X.shape
    anchor = np.zeros(p)
    for i in range(m):
        for j in range(p):
            anchor[j] += X[rows[i], j]
    if m > 0:
        anchor /= m
    r = np.empty(m)
    U = np.zeros((m, p))
    for i in range(m):
        r[i] = np.sqrt(_sqdist_row(X, rows[i], anchor))
        if r[i] >= _TINY:
            for j in range(p):
                U[i, j] = (X[rows[i], j] - anchor[j]) / r[i]
    perm, start, end, first_leaf = _split(U, np.arange(m), leaf_size)
    head = start[first_leaf:].copy()
    bend = end[first_leaf:].copy()
    nb = head.size
    for b in range(nb):  # each bucket: records by decreasing radius
        for i in range(head[b] + 1, bend[b]):
            t = perm[i]
            j = i
            while j > head[b] and r[perm[j - 1]] < r[t]:
                perm[j] = perm[j - 1]
                j -= 1
            perm[j] = t
    wT = np.zeros((p, nb))
    ca = np.ones(nb)
    sa = np.zeros(nb)
    minid = np.full(nb, n, np.int64)
    rhi = np.full(nb, -1.0)
    rlo = np.full(nb, np.inf)
    w = np.zeros(p)
    for b in range(nb):
        w[:] = 0.0
        for i in range(head[b], bend[b]):
            minid[b] = min(minid[b], rows[perm[i]])
            for j in range(p):
                w[j] += U[perm[i], j]
        norm = np.sqrt(np.sum(w * w))
        if norm > 0:
            w /= norm
        else:
            w[0] = 1.0
        lowest = 1.0  # the widest angle to the axis, from every record of the bucket
        for i in range(head[b], bend[b]):
            if r[perm[i]] >= _TINY:
                dot = 0.0
                for j in range(p):
                    dot += w[j] * U[perm[i], j]
                lowest = min(lowest, dot)
        wT[:, b] = w
        ca[b] = max(-1.0, lowest - cm)
        sa[b] = np.sqrt(max(0.0, 1.0 - ca[b] * ca[b]))
        if bend[b] > head[b]:
            rhi[b] = r[perm[head[b]]]
            rlo[b] = r[perm[bend[b] - 1]]
    return perm, r, head, bend, wT, ca, sa, rhi, rlo, minid, anchor


@njit
def _margins(p):  # type: ignore[no-untyped-def]
    """Safety margins of the cone bound: relative (on squared distances) and on cosines."""
    eps = 2.3e-16
    return 1e-9 + 16.0 * (p + 8) * eps, 1e-7 + 8.0 * np.sqrt((p + 8) * eps)


# -- removing records ----------------------------------------------------------------------


@njit
def _kd_remove(kd, i):  # type: ignore[no-untyped-def]
    """Remove record ``i`` (input index) from the kd-tree: the leaf's last record fills the gap."""
    ids, pos, codes, cbox, cnt, minid, first_leaf, start, leaf_of = kd
    a = pos[i]
    leaf = leaf_of[a]
    last = start[leaf] + cnt[leaf] - 1
    if a != last:
        moved = ids[last]
        ids[a] = moved
        codes[a] = codes[last]
        pos[moved] = a
    ids[last] = i
    pos[i] = -1
    node = leaf
    while True:
        cnt[node] -= 1
        if node == 0:
            break
        node = (node - 1) // 2


@njit
def _dt_remove(dt, i):  # type: ignore[no-untyped-def]
    """Remove record ``i`` from the direction index, keeping its bucket sorted by radius."""
    ids, pos, rr, codes, wT, ca, sa, rhi, rlo, minid, head, end, bucket_of, anchor, f, cbs = dt
    a = pos[i]
    b = bucket_of[a]
    h = head[b]
    for t in range(a, h, -1):  # the records above the gap move down by one
        moved = ids[t - 1]
        ids[t] = moved
        rr[t] = rr[t - 1]
        codes[t] = codes[t - 1]
        pos[moved] = t
    pos[i] = -1
    head[b] = h + 1
    rhi[b] = rr[h + 1] if h + 1 < end[b] else -1.0


@njit
def _alive_rows(kd, rows):  # type: ignore[no-untyped-def]
    """Input indices of the records still unassigned, into ``rows``; returns their number."""
    ids, pos, codes, cbox, cnt, minid, first_leaf, start, leaf_of = kd
    m = 0
    for leaf in range(first_leaf, cnt.size):
        for a in range(start[leaf], start[leaf] + cnt[leaf]):
            rows[m] = ids[a]
            m += 1
    return m


# -- the cell codes ------------------------------------------------------------------------


def _grid(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cell edges per attribute and each record's cell codes (one byte per attribute).

    The edges of attribute ``j`` are sorted, start at its minimum and end at its
    maximum: half uniformly spaced (resolution in the sparse tails, where MDAV
    starts), half at quantiles of a sample (resolution where records crowd).
    Record ``i`` lies in ``edges[j, codes[i, j]] <= X[i, j] <= edges[j, codes[i, j] + 1]``,
    which is all the bounds rely on; how the edges are placed only affects speed.
    """
    n, p = X.shape
    half = VA_CELLS // 2
    edges = np.empty((p, VA_CELLS + 1))
    codes = np.empty((n, p), np.uint8)
    sample = X[:: max(1, n // 65536)]
    for j in range(p):
        lo, hi = X[:, j].min(), X[:, j].max()
        e = np.unique(np.concatenate([np.linspace(lo, hi, half + 1),
                                      np.quantile(sample[:, j], np.linspace(0, 1, half + 1)),
                                      [lo, hi]]))
        e = e[(e >= lo) & (e <= hi)]
        if e.size > VA_CELLS + 1:
            e = e[np.linspace(0, e.size - 1, VA_CELLS + 1).round().astype(np.int64)]
        edges[j, : e.size] = e
        edges[j, e.size:] = hi
        edges[j, 0] = lo
        cell = np.searchsorted(edges[j], X[:, j], side="right") - 1
        codes[:, j] = np.clip(cell, 0, VA_CELLS - 1)
    return edges, codes


@njit
def _gap_tables(edges, q, TL, TH, T):  # type: ignore[no-untyped-def]
    """Squared gaps from ``q`` to the cells: ``TL`` below a cell's lower edge, ``TH`` above
    its upper edge, ``T`` to the cell (``TL + TH``, one of which is 0).

    A record's ``T`` entries (or a box's ``TL`` of its lowest and ``TH`` of its
    highest cells), summed over the attributes in column order, are at most the
    computed squared distance of every record inside: the gaps are computed
    from edges on the far side of the record, rounding is monotone, and the
    additions come in the order of ``_sqdist_row``. No safety margin is needed.
    """
    for j in range(q.size):
        v = q[j]
        for c in range(T.shape[1]):
            below = max(edges[j, c] - v, 0.0)
            above = max(v - edges[j, c + 1], 0.0)
            TL[j, c] = below * below
            TH[j, c] = above * above
            T[j, c] = TL[j, c] + TH[j, c]


@njit
def _upper_table(edges, q, T):  # type: ignore[no-untyped-def]
    """``T[j, c]``: largest squared difference between ``q[j]`` and cell ``c`` of attribute ``j``.

    Summed in column order: at least every computed squared distance of a record
    in those cells (the farthest queries' prefilter).
    """
    for j in range(q.size):
        v = q[j]
        for c in range(T.shape[1]):
            t = max(abs(edges[j, c] - v), abs(edges[j, c + 1] - v))
            T[j, c] = t * t


@njit(inline="always")
def _code_sum(T, codes, a):  # type: ignore[no-untyped-def]
    """Sum of ``T[j, codes[a, j]]`` in column order."""
    s = 0.0
    for j in range(codes.shape[1]):
        s += T[j, codes[a, j]]
    return s


@njit(inline="always")
def _cbox_gap(TL, TH, cbox, node):  # type: ignore[no-untyped-def]
    """Squared distance from the query to the node's box (cell codes); see :func:`_gap_tables`.

    No branches: with them, mispredictions made the traversal three times slower.
    """
    p = TL.shape[0]
    s = 0.0
    for j in range(p):
        s += TL[j, cbox[node, j]] + TH[j, cbox[node, p + j]]
    return s


# -- queries -------------------------------------------------------------------------------


@njit
def _kd_knn(kd, X, q, size, skip, heap_d, heap_i, ws):  # type: ignore[no-untyped-def]
    """The ``size`` unassigned records nearest to ``q`` (other than record ``skip``).

    Same result as the loop engine's heap: ordered by (squared distance, input
    index), into ``heap_i[:count]`` / ``heap_d[:count]`` nearest first. Returns
    ``count`` (``size``, or fewer if fewer records are eligible). Depth first,
    nearer child first; a node or record whose lower bound exceeds the current
    ``size``-th distance is skipped (on equality only if its input indices are
    all larger). ``ws`` is the work space (:func:`_workspace`).
    """
    ids, pos, codes, cbox, cnt, minid, first_leaf, start, leaf_of = kd
    if size <= 0:
        return 0
    stack_n, stack_b, uq, cvec, edges, TL, TH, T = ws
    _gap_tables(edges, q, TL, TH, T)
    count = 0
    stack_n[0] = 0
    stack_b[0] = 0.0
    sp = 1
    while sp > 0:
        sp -= 1
        node = stack_n[sp]
        b = stack_b[sp]
        if cnt[node] == 0:
            continue
        if count == size and (b > heap_d[0] or (b >= heap_d[0] and minid[node] > heap_i[0])):
            continue
        if node >= first_leaf:
            for a in range(start[node], start[node] + cnt[node]):
                if count == size and _code_sum(T, codes, a) > heap_d[0]:
                    continue
                i = ids[a]
                if i != skip:
                    count = _offer(heap_d, heap_i, count, size, _sqdist_row(X, i, q), i)
            continue
        c = 2 * node + 1
        bl = _cbox_gap(TL, TH, cbox, c)
        br = _cbox_gap(TL, TH, cbox, c + 1)
        near_left = bl < br or (bl == br and minid[c] <= minid[c + 1])
        stack_n[sp] = c if not near_left else c + 1
        stack_b[sp] = bl if not near_left else br
        stack_n[sp + 1] = c if near_left else c + 1
        stack_b[sp + 1] = bl if near_left else br
        sp += 2
    _sort_pairs(heap_d, heap_i, count)
    return count


@njit(inline="always")
def _cone_bound(r, R, cb, rel):  # type: ignore[no-untyped-def]
    """Upper bound on the squared distance from the query to a record at radius ``r``.

    ``R`` is the query's radius and ``cb`` a safe lower value of the cosine of the
    largest angle between the query's and the record's directions.
    """
    s = r + R
    return r * r + R * R - 2.0 * r * R * cb + rel * s * s + 4e-140 * s + 1e-279


@njit
def _bucket_bounds(dt, uq, R, directional, rel, cm):  # type: ignore[no-untyped-def]
    r"""Each bucket's bound into ``f`` (-1 if empty) and its cosine into ``cbs``.

    With :math:`\theta` the angle between the query's direction and the axis,
    the largest angle to a record is :math:`\min(\pi, \theta + \alpha)`; its cosine
    is :math:`\cos\theta\cos\alpha - \sin\theta\sin\alpha` (or -1), lowered by ``cm``.
    One pass without branches over all buckets (it vectorises).
    """
    ids, pos, rr, codes, wT, ca, sa, rhi, rlo, minid, head, end, bucket_of, anchor, f, cbs = dt
    nb = f.size
    f[:] = 0.0
    if directional:
        for j in range(uq.size):
            u = uq[j]
            for b in range(nb):
                f[b] += wT[j, b] * u
    for b in range(nb):
        ct = min(1.0, max(-1.0, f[b]))
        cb = ct * ca[b] - np.sqrt(max(0.0, 1.0 - ct * ct)) * sa[b] - cm
        cb = -1.0 if (ct <= -ca[b] or not directional) else max(-1.0, cb)
        cbs[b] = cb
        top = max(_cone_bound(rhi[b], R, cb, rel), _cone_bound(rlo[b], R, cb, rel))
        f[b] = top if head[b] < end[b] else -1.0


@njit(inline="always")
def _scan_bucket(dt, X, b, q, R, rel, best, best_i, T):  # type: ignore[no-untyped-def]
    """Update (``best``, ``best_i``) with bucket ``b``'s records, by decreasing radius.

    A record is skipped if its cone bound, or its code bound (``T``, an
    :func:`_upper_table`), is below ``best``: it can neither win nor tie.
    """
    ids, pos, rr, codes, wT, ca, sa, rhi, rlo, minid, head, end, bucket_of, anchor, f, cbs = dt
    cb = cbs[b]
    f_low = _cone_bound(rlo[b], R, cb, rel)
    for a in range(head[b], end[b]):
        if _cone_bound(rr[a], R, cb, rel) < best:
            if f_low < best:  # convex in r: no later (smaller) radius can reach best
                break
            continue
        if _code_sum(T, codes, a) < best:
            continue
        i = ids[a]
        s = _sqdist_row(X, i, q)
        if s > best or (s == best and i < best_i):
            best = s
            best_i = i
    return best, best_i


@njit
def _dt_farthest(dt, X, q, rel, cm, ws):  # type: ignore[no-untyped-def]
    """The unassigned record farthest from ``q``; the earliest in the input on ties.

    Returns its input index and its squared distance (computed by
    ``_sqdist_row``). The bucket with the largest bound is scanned first, then
    every bucket whose bound still reaches the best distance. ``ws`` is the work
    space (:func:`_workspace`).
    """
    minid = dt[9]
    anchor = dt[13]
    f = dt[14]
    stack_n, stack_b, uq, cvec, edges, TL, TH, T = ws
    _upper_table(edges, q, T)
    R = 0.0
    for j in range(q.size):
        t = q[j] - anchor[j]
        R += t * t
    R = np.sqrt(R)
    directional = R >= _TINY
    if directional:
        for j in range(q.size):
            uq[j] = (q[j] - anchor[j]) / R
    _bucket_bounds(dt, uq, R, directional, rel, cm)
    b0 = 0
    for b in range(1, f.size):
        if f[b] > f[b0]:
            b0 = b
    best, best_i = _scan_bucket(dt, X, b0, q, R, rel, -1.0, -1, T)
    for b in range(f.size):
        fb = f[b]
        if b == b0 or fb < best or (fb <= best and minid[b] > best_i):
            continue
        best, best_i = _scan_bucket(dt, X, b, q, R, rel, best, best_i, T)
    return best_i, best


# -- the heuristics ------------------------------------------------------------------------
