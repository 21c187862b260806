r"""An exact, sub-quadratic ("indexed") engine for the MDAV family.

The loop engine (:mod:`microagg._mdav_loops`) passes over every unassigned
record for every query, so MDAV costs :math:`O(n^2 p / k)`. This engine answers
the same queries from two indexes over the records, built once and rebuilt each
time half of the records have been grouped, and returns the *same labels*,
ties included.

Queries and the structures that answer them
-------------------------------------------

* Every record gets a one-byte **cell code** per attribute (:func:`_grid`: 256
  cells per attribute, edges half uniform, half at quantiles), the VA-file
  idea. Per query, a table of squared gaps from the query to every cell turns
  a record's codes into a bound on its distance that reads ``p`` bytes instead
  of ``8p``. On Gaussian data at :math:`10^6` records it rejects all but about
  15 of the ~10,000 records a query looks at.
* **k nearest** of a record (every method), the **k-th nearest distance**
  (IV-MDAV's :math:`z_k`), the **nearest** record (V-MDAV's :math:`d_{out}`)
  and the record nearest to a *group* (V-MDAV's :math:`e_{min}`): a kd-tree
  (median split on the attribute of widest spread, implicit layout, leaves of
  64 records) whose nodes keep their box as cell codes and their number of
  unassigned records. Depth first, nearer child first; a node or record whose
  lower bound exceeds the current k-th best distance is skipped.
* **farthest** record from a point (the centroid's :math:`\mathbf{x}_r`, and
  MDAV's :math:`\mathbf{x}_s`, farthest from :math:`\mathbf{x}_r`): direction
  buckets. With an anchor :math:`\mathbf{a}` (the centroid when built), each
  record is :math:`\mathbf{a} + r\mathbf{u}` with
  :math:`\lVert\mathbf{u}\rVert = 1`; the leaves of a kd-tree over the
  directions :math:`\mathbf{u}` are buckets of ~256 records, each a cone (axis
  :math:`\mathbf{w}`, half-angle :math:`\alpha`) sorted by decreasing
  :math:`r`. For a query :math:`\mathbf{q} = \mathbf{a} + R\hat{\mathbf{u}}` at
  angle :math:`\theta` from the axis, the law of cosines bounds every record
  of the bucket:

  .. math:: \lVert \mathbf{x}-\mathbf{q}\rVert^2 \le
            r^2 + R^2 - 2rR\cos\bigl(\min(\pi,\ \theta+\alpha)\bigr),

  largest at an end of the bucket's range of :math:`r` (it is convex in
  :math:`r`). One branch-free pass bounds all buckets; the bucket with the
  largest bound is scanned first, then every bucket whose bound still reaches
  the best distance, each from its largest radius down until the bound drops
  below it, with the cell codes' upper bound as a second filter. Peeling
  removes the outermost records, so the largest remaining radius per bucket
  is what matters; the cones add the direction, which is what makes
  :math:`\mathbf{x}_s` (on the far side of :math:`\mathbf{x}_r`) findable.
* V-MDAV's record farthest from the *fixed* global centroid: one sort.

Removal keeps both indexes compact (a kd leaf's last record fills the gap; a
bucket's records above the gap move down by one, so it stays sorted), so no
query ever steps over an assigned record. Exact distances read the input ``X``
directly (only for the few records that pass the bounds).

How exactness is guaranteed
---------------------------

Bounds only decide what is *skipped*; every record that is not skipped gets
its distance from :func:`~microagg._mdav_loops._sqdist_row`, the loop engine's
own function (same additions in the same column order), and every decision
compares those numbers with the loop engine's rule: the heap ordered by
(distance, input index) for the nearest records, "farther, or as far and
earlier in the input" for the farthest. The running total that gives MDAV's
centroid loses each group's records in ascending input order, as in
:func:`~microagg._mdav_loops._remove`. A record or node is skipped only if
*none* of its records could win or tie:

* lower bounds (boxes, cells, the gap between a node's box and a group's box)
  are computed with the operations of ``_sqdist_row`` on gaps measured from
  cell edges on the far side of every record inside; rounding is monotone, so
  the computed bound is at most the *computed* distance of each such record,
  and the comparison needs no safety margin. A bound equal to the k-th best
  distance skips a node only if its smallest input index is larger (ties go
  to the earlier record). Cell upper bounds (farthest queries) likewise.
* the cone bound involves square roots and cosines; it is inflated by a
  margin (relative :math:`10^{-9} + 16(p+8)\varepsilon`, plus an absolute
  term for underflow, and :math:`10^{-7} + 8\sqrt{(p+8)\varepsilon}` on the
  cosines), many times the worst rounding error, and a bucket or record is
  skipped only if the inflated bound is *strictly* below the best computed
  distance. Inputs with entries beyond :math:`10^{100}` in magnitude (where
  squares could overflow) are handed to the loop engine.

Cost
----

Memory is :math:`O(np)`: the cell codes (``p`` bytes per record, one copy per
index), a few integer arrays of length ``n`` and :math:`O(n/64)` nodes; peak
about 2.5 times the input while an index is built. Time depends on how well the
bounds prune, which falls with the dimension ``p``: the measured break-even
with the loops grows from n = 1,500 (p = 2) to 40,000 (p = 40), and
:func:`choose_engine` follows it. Without numba the functions run as plain
Python (slowly), with the same answers.

Tried and dropped (measured, ``tests/benchmarks/bench_scale.py`` and scratch
timings): a binary tree over the direction buckets (node visits cost more than
the flat vectorised pass), per-record partial distances with early exit and
attribute-major leaf blocks (both slower than one straight ``_sqdist_row``),
cell boxes over each bucket's 16 largest radii (no gain), and running the
nearest and farthest queries of an MDAV round on the two cores (a numba
parallel region costs ~35 us to start and, with the other core busy on this
shared machine, a 0.3 ms task pair took 5 ms).
"""

from __future__ import annotations

import numpy as np

from ._jit import HAVE_NUMBA, njit
from ._mdav_loops import _offer, _sort_pairs, _sqdist_row

__all__ = ["ENGINES", "choose_engine", "mdav", "vmdav", "ivmdav"]

#: Valid values of the ``engine`` argument of the MDAV family.
ENGINES = ("auto", "indexed", "loops", "numpy")
#: ``engine="auto"`` uses this engine for ``n >= max(AUTO_MIN_N, AUTO_N_PER_P2 * p**2)``
#: records and ``p <= AUTO_MAX_P`` attributes. Measured on Gaussian data (k = 3,
#: bench_scale.py), the indexed engine breaks even with the compiled loops at about
#: n = 1,500 (p = 2), 3,500 (p = 10), 10,000 (p = 20), 20,000 (p = 30) and 40,000
#: (p = 40): roughly 30 p^2, as the bounds prune less in higher dimension. Beyond
#: p = 40 (not measured) auto keeps the loops.
AUTO_MIN_N = 2000
AUTO_N_PER_P2 = 40
AUTO_MAX_P = 40
#: Records per leaf of the kd-tree (nearest queries) and per direction bucket
#: (farthest queries); measured on Gaussian data (see bench_scale.py).
KD_LEAF = 64
DT_LEAF = 256
#: Cells per attribute of the one-byte record codes (the VA-file prefilter).
VA_CELLS = 256
#: Rebuild both trees (new anchor, tight boxes and cones) once the unassigned
#: records are this fraction of those the trees were built on.
REBUILD = 0.5
#: Radii below this are treated as "no direction" (their unit vector could be
#: spoilt by underflow); the bound's absolute term covers them.
_TINY = 1e-140
#: Largest magnitude of an entry for which the bounds' rounding analysis holds.
MAX_ABS = 1e100

# -- choosing an engine -------------------------------------------------------------------


def choose_engine(engine: str, X: np.ndarray) -> str:
    """The engine that runs: ``"indexed"``, ``"loops"`` or ``"numpy"``.

    ``"auto"`` picks the indexed engine for ``n >= max(2000, 40 p^2)`` records
    and ``p <= 40`` attributes when numba is installed (see :data:`AUTO_MIN_N`),
    the compiled loops otherwise, and the numpy engine without numba. A forced ``"indexed"`` on data
    with entries beyond ``MAX_ABS`` (where its rounding analysis does not hold)
    runs the loops instead: same labels by definition.

    Raises
    ------
    ValueError
        If ``engine`` is not one of :data:`ENGINES`.
    """
    if not isinstance(engine, str) or engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}")
    n, p = X.shape
    scaled = bool(max(X.max(), -X.min()) <= MAX_ABS)  # (no n x p temporary)
    if engine == "auto":
        if not HAVE_NUMBA:
            return "numpy"
        large = n >= max(AUTO_MIN_N, AUTO_N_PER_P2 * p * p)
        return "indexed" if large and p <= AUTO_MAX_P and scaled else "loops"
    if engine == "indexed" and not scaled:
        return "loops"
    return engine


def mdav(X: np.ndarray, k: int, total: np.ndarray, two_groups: bool) -> np.ndarray:
    """:func:`mdav_indexed` with the default leaf sizes (arguments as ``mdav_loops``)."""
    edges, codes = _grid(X)
    return mdav_indexed(X, k, total, two_groups, edges, codes, KD_LEAF, DT_LEAF)


def vmdav(X: np.ndarray, k: int, gamma: float, to_c: np.ndarray) -> np.ndarray:
    """:func:`vmdav_indexed` (arguments as ``vmdav_loops``)."""
    order = np.argsort(-to_c, kind="stable")  # farthest from the centroid first, ties by index
    edges, codes = _grid(X)
    return vmdav_indexed(X, k, gamma, order, edges, codes, KD_LEAF)


def ivmdav(X: np.ndarray, k: int, gamma: float, n_candidates: int, self_neighbour: bool,
           total: np.ndarray) -> np.ndarray:
    """:func:`ivmdav_indexed` (arguments as ``ivmdav_loops``)."""
    edges, codes = _grid(X)
    return ivmdav_indexed(X, k, gamma, n_candidates, self_neighbour, total, edges, codes,
                          KD_LEAF, DT_LEAF)


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
def _split(P, leaf_size):  # type: ignore[no-untyped-def]
    """An implicit kd-tree over the rows of ``P``: median splits on the widest attribute.

    Node ``i`` has children ``2i+1`` and ``2i+2``; all leaves are at the same
    depth and hold ``ceil(m / 2**depth) <= leaf_size`` rows or one fewer.
    Returns the row permutation, each node's ``[start, end)`` range in it and
    the first leaf's number.
    """
    m, q = P.shape
    depth = 0
    while ((m - 1) >> depth) + 1 > leaf_size:
        depth += 1
    n_nodes = (2 << depth) - 1
    first_leaf = (1 << depth) - 1
    start = np.zeros(n_nodes, np.int64)
    end = np.zeros(n_nodes, np.int64)
    perm = np.arange(m)
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
    P = np.empty((m, p))
    for i in range(m):
        P[i] = X[rows[i]]
    perm, start, end, first_leaf = _split(P, leaf_size)
    ids = np.empty(m, np.int64)
    kcodes = np.empty((m, p), np.uint8)
    for i in range(m):
        ids[i] = rows[perm[i]]
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
def _dt_build(X, codes, rows, m, leaf_size, cm):  # type: ignore[no-untyped-def] # long: one pass per field
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
    anchor = np.zeros(p)
    for i in range(m):
        for j in range(p):
            anchor[j] += X[rows[i], j]
    anchor /= m
    r = np.empty(m)
    U = np.zeros((m, p))
    for i in range(m):
        r[i] = np.sqrt(_sqdist_row(X, rows[i], anchor))
        if r[i] >= _TINY:
            for j in range(p):
                U[i, j] = (X[rows[i], j] - anchor[j]) / r[i]
    perm, start, end, first_leaf = _split(U, leaf_size)
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
            bucket_of[i] = b
            minid[b] = min(minid[b], ids[i])
            for j in range(p):
                w[j] += U[perm[i], j]
        norm = np.sqrt(np.sum(w * w))
        if norm > 0:
            w /= norm
        else:
            w[0] = 1.0
        lowest = 1.0  # the widest angle to the axis, from every record of the bucket
        for i in range(head[b], bend[b]):
            if rr[i] >= _TINY:
                dot = 0.0
                for j in range(p):
                    dot += w[j] * U[perm[i], j]
                lowest = min(lowest, dot)
        wT[:, b] = w
        ca[b] = max(-1.0, lowest - cm)
        sa[b] = np.sqrt(max(0.0, 1.0 - ca[b] * ca[b]))
        if bend[b] > head[b]:
            rhi[b] = rr[head[b]]
            rlo[b] = rr[bend[b] - 1]
    return (ids, pos, rr, dcodes, wT, ca, sa, rhi, rlo, minid, head, bend, bucket_of, anchor,
            np.empty(nb), np.empty(nb))


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


@njit
def _close_group(X, members, size, labels, g, total):  # type: ignore[no-untyped-def]
    """Label ``members[:size]`` as group ``g``; ``total`` loses them in input order.

    The same subtractions, in the same order, as the loop engine's ``_remove``.
    """
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
def _workspace(edges, p):  # type: ignore[no-untyped-def]
    """Work arrays of the queries: two stacks, two p-vectors, the grid and three cell tables."""
    cells = edges.shape[1] - 1
    return (np.empty(256, np.int64), np.empty(256), np.empty(p), np.empty(p), edges,
            np.empty((p, cells)), np.empty((p, cells)), np.empty((p, cells)))


@njit
def _rebuild(X, codes, rows, kd, leaf_kd, leaf_dt, cm):  # type: ignore[no-untyped-def]
    """Both indexes over the records still unassigned (a fresh anchor, tight boxes and cones)."""
    m = _alive_rows(kd, rows)
    return (_kd_build(X, codes, rows, m, leaf_kd),
            _dt_build(X, codes, rows, m, leaf_dt, cm))


@njit
def _take(kd, dt, members, count):  # type: ignore[no-untyped-def]
    for i in range(count):
        _kd_remove(kd, members[i])
        _dt_remove(dt, members[i])


@njit
def _farthest_from_centroid(dt, X, total, m, rel, cm, ws):  # type: ignore[no-untyped-def]
    """The record farthest from the centroid ``total / m`` (computed as the loops do)."""
    c = ws[3]
    for j in range(c.size):
        c[j] = total[j] / m
    return _dt_farthest(dt, X, c, rel, cm, ws)[0]


@njit
def _group_around(kd, X, r, size, out, dist, ws):  # type: ignore[no-untyped-def]
    """Record ``r`` and its ``size - 1`` nearest unassigned records, into ``out``; returns
    how many. ``dist`` receives their squared distances to ``r`` (0 for ``r``)."""
    out[0] = r
    dist[0] = 0.0
    return 1 + _kd_knn(kd, X, X[r], size - 1, r, dist[1:], out[1:], ws)


@njit
def _one_group(kd, dt, X, r, k, out, dist, labels, g, total, ws):  # type: ignore[no-untyped-def]
    """Group ``r`` with its ``k - 1`` nearest unassigned records as group ``g``; returns k."""
    got = _group_around(kd, X, r, k, out, dist, ws)
    _take(kd, dt, out, got)
    _close_group(X, out, got, labels, g, total)
    return got


@njit
def mdav_indexed(X, k, total, two_groups, edges, codes, leaf_kd, leaf_dt):  # type: ignore[no-untyped-def]
    """MDAV (``two_groups=True``) or MDAV-single-group on the indexed engine.

    Same arguments and result as :func:`microagg._mdav_loops.mdav_loops`, plus the
    grid (:func:`_grid`) and the two leaf sizes.
    """
    n, p = X.shape
    rel, cm = _margins(p)
    labels = np.full(n, -1, np.int64)
    rows = np.arange(n)
    kd = _kd_build(X, codes, rows, n, leaf_kd)
    dt = _dt_build(X, codes, rows, n, leaf_dt, cm)
    built = n
    out = np.empty(k, np.int64)
    dist = np.empty(k)
    ws = _workspace(edges, p)
    m = n
    g = 0
    while m >= 3 * k:
        if m < REBUILD * built and m >= 64:
            kd, dt = _rebuild(X, codes, rows, kd, leaf_kd, leaf_dt, cm)
            built = m
        r = _farthest_from_centroid(dt, X, total, m, rel, cm, ws)
        m -= _one_group(kd, dt, X, r, k, out, dist, labels, g, total, ws)
        g += 1
        if two_groups:  # x_s: farthest from x_r among the records left
            s = _dt_farthest(dt, X, X[r], rel, cm, ws)[0]
            m -= _one_group(kd, dt, X, s, k, out, dist, labels, g, total, ws)
            g += 1
    if m >= 2 * k:  # one more group of k, then the last group
        r = _farthest_from_centroid(dt, X, total, m, rel, cm, ws)
        m -= _one_group(kd, dt, X, r, k, out, dist, labels, g, total, ws)
        g += 1
    rest = _alive_rows(kd, rows)
    for i in range(rest):
        labels[rows[i]] = g
    return labels


@njit
def _kd_nearest_to_set(kd, X, members, size, gbox, ws):  # type: ignore[no-untyped-def]
    r"""V-MDAV's :math:`e_{min}`: the unassigned record nearest to any of ``members[:size]``.

    Returns (squared distance, input index): the smallest (distance, index) pair,
    where a record's distance is the minimum of its ``_sqdist_row`` distances to
    the members, exactly the loop engine's ``d_group``. Nodes are pruned with the
    gap between their box and the members' bounding box ``gbox``, records with
    the smallest of the members' cell tables (both lower bounds on every
    member-record distance, computed with monotone rounding).
    """
    ids, pos, codes, cbox, cnt, minid, first_leaf, start, leaf_of = kd
    stack_n, stack_b, uq, cvec, edges, TL, TH, T = ws
    p = X.shape[1]
    for j in range(p):
        gbox[j] = np.inf
        gbox[p + j] = -np.inf
    for i in range(size):
        for j in range(p):
            gbox[j] = min(gbox[j], X[members[i], j])
            gbox[p + j] = max(gbox[p + j], X[members[i], j])
    _gap_tables(edges, X[members[0]], TL, TH, T)
    for i in range(1, size):  # a sum of per-attribute minima is at most each member's sum
        v = X[members[i]]
        for j in range(p):
            for cell in range(T.shape[1]):
                t = max(max(edges[j, cell] - v[j], v[j] - edges[j, cell + 1]), 0.0)
                T[j, cell] = min(T[j, cell], t * t)
    best = np.inf
    best_i = -1
    stack_n[0] = 0
    stack_b[0] = 0.0
    sp = 1
    while sp > 0:
        sp -= 1
        node = stack_n[sp]
        b = stack_b[sp]
        if cnt[node] == 0 or b > best or (b >= best and minid[node] > best_i):
            continue
        if node >= first_leaf:
            for a in range(start[node], start[node] + cnt[node]):
                if _code_sum(T, codes, a) > best:
                    continue
                i = ids[a]
                s = _sqdist_row(X, i, X[members[0]])
                for t in range(1, size):
                    s = min(s, _sqdist_row(X, i, X[members[t]]))
                if s < best or (s == best and i < best_i):
                    best = s
                    best_i = i
            continue
        c = 2 * node + 1
        bl = _boxes_gap(edges, cbox, c, gbox, p)
        br = _boxes_gap(edges, cbox, c + 1, gbox, p)
        near_left = bl < br or (bl == br and minid[c] <= minid[c + 1])
        stack_n[sp] = c if not near_left else c + 1
        stack_b[sp] = bl if not near_left else br
        stack_n[sp + 1] = c if near_left else c + 1
        stack_b[sp + 1] = bl if near_left else br
        sp += 2
    return best, best_i


@njit(inline="always")
def _boxes_gap(edges, cbox, node, gbox, p):  # type: ignore[no-untyped-def]
    """Squared gap between the node's box (cell codes) and the box ``gbox`` (monotone)."""
    s = 0.0
    for j in range(p):
        lo = edges[j, cbox[node, j]]
        hi = edges[j, cbox[node, p + j] + 1]
        t = max(max(lo - gbox[p + j], gbox[j] - hi), 0.0)
        s += t * t
    return s


@njit
def vmdav_indexed(X, k, gamma, order, edges, codes, leaf_kd):  # type: ignore[no-untyped-def]
    """V-MDAV's main loop on the indexed engine; see :func:`microagg._mdav_loops.vmdav_loops`.

    ``order`` lists the records by decreasing distance to the global centroid
    (ties by input index), so the next unassigned one is the loop engine's
    ``e``. Returns labels with ``-1`` for the records left over.
    """
    n, p = X.shape
    labels = np.full(n, -1, np.int64)
    done = np.zeros(n, np.bool_)
    rows = np.arange(n)
    kd = _kd_build(X, codes, rows, n, leaf_kd)
    built = n
    members = np.empty(2 * k, np.int64)
    dist = np.empty(2 * k)
    one_d = np.empty(1)
    one_i = np.empty(1, np.int64)
    gbox = np.empty(2 * p)
    ws = _workspace(edges, p)
    m = n
    g = 0
    at = 0
    while m >= k:
        if m < REBUILD * built and m >= 64:
            kd = _kd_build(X, codes, rows, _alive_rows(kd, rows), leaf_kd)
            built = m
        while done[order[at]]:
            at += 1
        size = _group_around(kd, X, order[at], k, members, dist, ws)
        for i in range(size):
            done[members[i]] = True
            _kd_remove(kd, members[i])
        while size < 2 * k - 1 and size < m:
            d2, e_min = _kd_nearest_to_set(kd, X, members, size, gbox, ws)
            d_in = np.sqrt(d2)
            found = _kd_knn(kd, X, X[e_min], 1, e_min, one_d, one_i, ws)
            d_out = np.sqrt(one_d[0] if found else np.inf)
            if not d_in < gamma * d_out:  # Eq. (5)
                break
            members[size] = e_min
            size += 1
            done[e_min] = True
            _kd_remove(kd, e_min)
        for i in range(size):
            labels[members[i]] = g
        m -= size
        g += 1
    return labels


@njit
def ivmdav_indexed(X, k, gamma, n_candidates, self_neighbour, total, edges, codes,  # type: ignore[no-untyped-def] # long: one round per loop, as ivmdav_loops
                   leaf_kd, leaf_dt):
    """IV-MDAV on the indexed engine; see :func:`microagg._mdav_loops.ivmdav_loops`."""
    n, p = X.shape
    rel, cm = _margins(p)
    labels = np.full(n, -1, np.int64)
    rows = np.arange(n)
    kd = _kd_build(X, codes, rows, n, leaf_kd)
    dt = _dt_build(X, codes, rows, n, leaf_dt, cm)
    built = n
    ys = np.empty(max(n_candidates, k), np.int64)
    d_ys = np.empty(max(n_candidates, k))
    members = np.empty(2 * k, np.int64)
    heap_d = np.empty(k + 1)
    heap_i = np.empty(k + 1, np.int64)
    ws = _workspace(edges, p)
    need = k - 1 if self_neighbour else k  # with z_1 = y itself, z_k is the (k-1)-th other
    m = n
    g = 0
    while m >= 3 * k:
        if m < REBUILD * built and m >= 64:
            kd, dt = _rebuild(X, codes, rows, kd, leaf_kd, leaf_dt, cm)
            built = m
        r = _farthest_from_centroid(dt, X, total, m, rel, cm, ws)
        # y_1 = x_r, y_2, ...: x_r and its nearest records; the first k form the group
        got = _group_around(kd, X, r, min(n_candidates, m), ys, d_ys, ws)
        _take(kd, dt, ys, k)
        size = k
        members[:k] = ys[:k]
        for i in range(k, got):
            if size >= 2 * k - 1:
                break
            if need == 0:
                continue
            y = ys[i]
            # d_2: distance from y to z_k, its need-th nearest record outside the group
            found = _kd_knn(kd, X, X[y], need, y, heap_d, heap_i, ws)
            d2 = np.sqrt(heap_d[need - 1] if found == need else np.inf)
            if d2 < np.inf and d2 > gamma * np.sqrt(d_ys[i]):  # d_2 > gamma d_1
                _take(kd, dt, ys[i:], 1)
                members[size] = y
                size += 1
        _close_group(X, members, size, labels, g, total)
        m -= size
        g += 1
    if m >= 2 * k:  # one more group of k, then the last group
        r = _farthest_from_centroid(dt, X, total, m, rel, cm, ws)
        m -= _one_group(kd, dt, X, r, k, members, d_ys, labels, g, total, ws)
        g += 1
    rest = _alive_rows(kd, rows)
    for i in range(rest):
        labels[rows[i]] = g
    return labels
