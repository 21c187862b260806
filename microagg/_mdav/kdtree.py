"""The kd-tree of the indexed engine: nearest records, and the record nearest to a group.

A median split on the attribute of widest spread, implicit layout (node ``i`` has
children ``2i+1`` and ``2i+2``), leaves of about 64 records. Each node keeps its box as
cell codes (:mod:`microagg._mdav.cells`) and its number of unassigned records; a removal
moves the leaf's last record into the gap, so no query steps over an assigned record.
Queries go depth first, nearer child first; a node or record whose lower bound exceeds
the current k-th best distance is skipped (on equality only if all its input indices
are larger: ties go to the earlier record).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import njit
from .cells import code_sum, gap_tables
from .kernels import offer, sort_pairs, sqdist_row

__all__ = ["KdTree", "split", "build", "remove", "alive_rows", "knn", "nearest_to_set"]


class KdTree(NamedTuple):
    """A kd-tree over some records; positions ``a`` index its per-record arrays.

    Leaf ``l`` holds its unassigned records at positions ``start[l]`` to
    ``start[l] + cnt[l]`` (in any order).
    """

    ids: np.ndarray  #: input index of the record at each position
    pos: np.ndarray  #: position of each input record (-1: not in the tree)
    codes: np.ndarray  #: cell codes by position, (m, p) uint8
    cbox: np.ndarray  #: each node's box: lowest cells, then highest cells, (nodes, 2p) uint8
    cnt: np.ndarray  #: unassigned records under each node
    minid: np.ndarray  #: smallest input index under each node (as built)
    first_leaf: int  #: number of the first leaf; leaves are the last nodes
    start: np.ndarray  #: first position of each node
    leaf_of: np.ndarray  #: leaf of each position


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
def split(P, perm, leaf_size):  # type: ignore[no-untyped-def]
    """An implicit kd-tree over the rows ``perm`` of ``P``: median splits on the widest
    attribute.

    Node ``i`` has children ``2i+1`` and ``2i+2``; all leaves are at the same
    depth and hold ``ceil(m / 2**depth) <= leaf_size`` rows or one fewer.
    Reorders ``perm`` (``m`` row numbers of ``P``) in place and returns it, each
    node's ``[start, end)`` range in it and the first leaf's number. Reading the
    rows through ``perm`` means no copy of them is made. (The direction buckets
    are the leaves of such a tree over unit vectors.)
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
def build(X, codes, rows, m, leaf_size):  # type: ignore[no-untyped-def]
    """The :class:`KdTree` over records ``rows[:m]`` with leaves of at most ``leaf_size``.

    Each node's box is kept as cell codes (lowest, highest), 2p bytes instead of 16p.
    """
    n, p = X.shape
    ids, start, end, first_leaf = split(X, rows[:m].copy(), leaf_size)
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
    return KdTree(ids, pos, kcodes, cbox, cnt, minid, first_leaf, start, leaf_of)


@njit
def remove(kd, i):  # type: ignore[no-untyped-def]
    """Remove record ``i`` (input index): the leaf's last record fills the gap."""
    ids, pos, codes, cnt = kd.ids, kd.pos, kd.codes, kd.cnt  # (locals: no refcounts in the loop)
    a = pos[i]
    leaf = kd.leaf_of[a]
    last = kd.start[leaf] + cnt[leaf] - 1
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
def alive_rows(kd, rows):  # type: ignore[no-untyped-def]
    """Input indices of the records still unassigned, into ``rows``; returns their number."""
    ids, cnt, start = kd.ids, kd.cnt, kd.start  # (locals: no reference counts in the loop)
    m = 0
    for leaf in range(kd.first_leaf, cnt.size):
        for a in range(start[leaf], start[leaf] + cnt[leaf]):
            rows[m] = ids[a]
            m += 1
    return m


@njit(inline="always")
def _cbox_gap(TL, TH, cbox, node):  # type: ignore[no-untyped-def]
    """Squared distance from the query to the node's box (cell codes); see ``gap_tables``.

    No branches: with them, mispredictions made the traversal three times slower.
    """
    p = TL.shape[0]
    s = 0.0
    for j in range(p):
        s += TL[j, cbox[node, j]] + TH[j, cbox[node, p + j]]
    return s


@njit(inline="always")
def _boxes_gap(edges, cbox, node, gbox, p):  # type: ignore[no-untyped-def]
    """Squared gap between the node's box (cell codes) and the box ``gbox`` (monotone)."""
    s = 0.0
    for j in range(p):
        lo = edges[j, cbox[node, j]]
        hi = edges[j, int(cbox[node, p + j]) + 1]  # (uint8: 255 + 1 wraps without numba)
        t = max(max(lo - gbox[p + j], gbox[j] - hi), 0.0)
        s += t * t
    return s


@njit(inline="always")
def _push_children(stack_n, stack_b, sp, node, bl, br, minid):  # type: ignore[no-untyped-def]
    """Push the children of ``node`` (bounds ``bl``, ``br``), the nearer one on top; returns
    the new stack size."""
    c = 2 * node + 1
    near_left = bl < br or (bl == br and minid[c] <= minid[c + 1])
    stack_n[sp] = c if not near_left else c + 1
    stack_b[sp] = bl if not near_left else br
    stack_n[sp + 1] = c if near_left else c + 1
    stack_b[sp + 1] = bl if near_left else br
    return sp + 2


@njit
def _pop(stack_n, stack_b, sp):  # type: ignore[no-untyped-def]
    """Take the top of the traversal stack: (new size, node, its lower bound)."""
    return sp - 1, stack_n[sp - 1], stack_b[sp - 1]


@njit
def knn(kd, X, q, size, skip, heap_d, heap_i, ws):  # type: ignore[no-untyped-def]
    """The ``size`` unassigned records nearest to ``q`` (other than record ``skip``).

    Same result as the loop engine's heap: ordered by (squared distance, input
    index), into ``heap_i[:count]`` / ``heap_d[:count]`` nearest first. Returns
    ``count`` (``size``, or fewer if fewer records are eligible). ``ws`` is a
    :class:`~microagg._mdav.cells.Workspace`.
    """
    if size <= 0:
        return 0
    # (fields read once into locals: each read of an array field inside the loop would
    # cost numba a reference count update)
    ids, codes, cbox, cnt, minid, first_leaf, start = (kd.ids, kd.codes, kd.cbox, kd.cnt,
                                                       kd.minid, kd.first_leaf, kd.start)
    stack_n, stack_b, TL, TH, T = ws.stack_n, ws.stack_b, ws.TL, ws.TH, ws.T
    gap_tables(ws.edges, q, TL, TH, T)
    count = 0
    stack_n[0] = 0  # the root, with gap 0
    stack_b[0] = 0.0
    sp = 1
    while sp > 0:
        sp, node, b = _pop(stack_n, stack_b, sp)
        if cnt[node] == 0:
            continue
        if count == size and (b > heap_d[0] or (b >= heap_d[0] and minid[node] > heap_i[0])):
            continue
        if node >= first_leaf:
            for a in range(start[node], start[node] + cnt[node]):
                if count == size and code_sum(T, codes, a) > heap_d[0]:
                    continue
                i = ids[a]
                if i != skip:
                    count = offer(heap_d, heap_i, count, size, sqdist_row(X, i, q), i)
            continue
        c = 2 * node + 1
        sp = _push_children(stack_n, stack_b, sp, node, _cbox_gap(TL, TH, cbox, c),
                            _cbox_gap(TL, TH, cbox, c + 1), minid)
    sort_pairs(heap_d, heap_i, count)
    return count


@njit
def nearest_to_set(kd, X, members, size, gbox, ws):  # type: ignore[no-untyped-def]
    r"""V-MDAV's :math:`e_{min}`: the unassigned record nearest to any of ``members[:size]``.

    Returns (squared distance, input index): the smallest (distance, index) pair,
    where a record's distance is the minimum of its ``sqdist_row`` distances to
    the members, exactly the loop engine's ``d_group``. Nodes are pruned with the
    gap between their box and the members' bounding box ``gbox``, records with
    the smallest of the members' cell tables (both lower bounds on every
    member-record distance, computed with monotone rounding).
    """
    ids, codes, cbox, cnt, minid, first_leaf, start = (kd.ids, kd.codes, kd.cbox, kd.cnt,
                                                       kd.minid, kd.first_leaf, kd.start)
    stack_n, stack_b, edges, T = ws.stack_n, ws.stack_b, ws.edges, ws.T
    p = X.shape[1]
    for j in range(p):
        gbox[j] = np.inf
        gbox[p + j] = -np.inf
    for i in range(size):
        for j in range(p):
            gbox[j] = min(gbox[j], X[members[i], j])
            gbox[p + j] = max(gbox[p + j], X[members[i], j])
    gap_tables(edges, X[members[0]], ws.TL, ws.TH, T)
    for i in range(1, size):  # a sum of per-attribute minima is at most each member's sum
        v = X[members[i]]
        for j in range(p):
            for cell in range(T.shape[1]):
                t = max(max(edges[j, cell] - v[j], v[j] - edges[j, cell + 1]), 0.0)
                T[j, cell] = min(T[j, cell], t * t)
    best = np.inf
    best_i = -1
    stack_n[0] = 0  # the root, with gap 0
    stack_b[0] = 0.0
    sp = 1
    while sp > 0:
        sp, node, b = _pop(stack_n, stack_b, sp)
        if cnt[node] == 0 or b > best or (b >= best and minid[node] > best_i):
            continue
        if node >= first_leaf:
            for a in range(start[node], start[node] + cnt[node]):
                if code_sum(T, codes, a) > best:
                    continue
                i = ids[a]
                s = sqdist_row(X, i, X[members[0]])
                for t in range(1, size):
                    s = min(s, sqdist_row(X, i, X[members[t]]))
                if s < best or (s == best and i < best_i):
                    best = s
                    best_i = i
            continue
        c = 2 * node + 1
        sp = _push_children(stack_n, stack_b, sp, node, _boxes_gap(edges, cbox, c, gbox, p),
                            _boxes_gap(edges, cbox, c + 1, gbox, p), minid)
    return best, best_i
