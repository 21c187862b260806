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
from ._mdav_loops import _sqdist_row
from ._mdav_trees import (
    _alive_rows,
    _code_sum,
    _dt_build,
    _dt_farthest,
    _dt_remove,
    _gap_tables,
    _grid,
    _kd_build,
    _kd_knn,
    _kd_remove,
    _margins,
)

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
#: Rebuild both trees (new anchor, tight boxes and cones) once the unassigned
#: records are this fraction of those the trees were built on.
REBUILD = 0.5
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
def _build(X, codes, rows, m, leaf_kd, leaf_dt, cm):  # type: ignore[no-untyped-def]
    """Both indexes over records ``rows[:m]``. The direction index comes first: its unit
    vectors (``m x p``, the largest temporary) then sit beside fewer arrays."""
    dt = _dt_build(X, codes, rows, m, leaf_dt, cm)
    return _kd_build(X, codes, rows, m, leaf_kd), dt


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
def _last_groups(kd, dt, X, k, m, out, dist, labels, g, total, rows, rel, cm, ws):  # type: ignore[no-untyped-def]
    """The end of MDAV and IV-MDAV, fewer than ``3k`` records left: one more group of
    ``k`` around the farthest record if ``2k`` or more are left, then the last group.
    Returns ``(m, g, True)``, a finished phase."""
    if m >= 2 * k:
        r = _farthest_from_centroid(dt, X, total, m, rel, cm, ws)
        m -= _one_group(kd, dt, X, r, k, out, dist, labels, g, total, ws)
        g += 1
    rest = _alive_rows(kd, rows)
    for i in range(rest):
        labels[rows[i]] = g
    return m, g, True


@njit
def mdav_indexed(X, k, total, two_groups, edges, codes, leaf_kd, leaf_dt):  # type: ignore[no-untyped-def]
    """MDAV (``two_groups=True``) or MDAV-single-group on the indexed engine.

    Same arguments and result as :func:`microagg._mdav_loops.mdav_loops`, plus the
    grid (:func:`_grid`) and the two leaf sizes. Runs in phases (:func:`_mdav_phase`).
    """
    n, p = X.shape
    labels = np.full(n, -1, np.int64)
    rows = np.arange(n)
    out = np.empty(k, np.int64)
    dist = np.empty(k)
    ws = _workspace(edges, p)
    m, g, finished = n, 0, False
    while not finished:
        m, g, finished = _mdav_phase(X, k, total, two_groups, codes, rows, m, labels, g,
                                     leaf_kd, leaf_dt, out, dist, ws)
    return labels


@njit
def _mdav_phase(X, k, total, two_groups, codes, rows, m, labels, g, leaf_kd, leaf_dt,  # type: ignore[no-untyped-def]
                out, dist, ws):
    """MDAV's rounds on indexes built over the ``m`` unassigned records ``rows[:m]``,
    until fewer than :data:`REBUILD` times that many are left (then ``rows[:m]`` lists
    them) or the partition is finished. Returns ``(m, g, finished)``.

    The indexes are this function's own, so they are freed when it returns: the
    next phase builds its smaller ones without the old ones beside them.
    """
    rel, cm = _margins(X.shape[1])
    kd, dt = _build(X, codes, rows, m, leaf_kd, leaf_dt, cm)
    built = m
    while m >= 3 * k:
        if m < REBUILD * built and m >= 64:
            _alive_rows(kd, rows)
            return m, g, False
        r = _farthest_from_centroid(dt, X, total, m, rel, cm, ws)
        m -= _one_group(kd, dt, X, r, k, out, dist, labels, g, total, ws)
        g += 1
        if two_groups:  # x_s: farthest from x_r among the records left
            s = _dt_farthest(dt, X, X[r], rel, cm, ws)[0]
            m -= _one_group(kd, dt, X, s, k, out, dist, labels, g, total, ws)
            g += 1
    return _last_groups(kd, dt, X, k, m, out, dist, labels, g, total, rows, rel, cm, ws)


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
    ``e``. Returns labels with ``-1`` for the records left over. Runs in phases, as
    :func:`mdav_indexed` (:func:`_vmdav_phase`).
    """
    n, p = X.shape
    labels = np.full(n, -1, np.int64)
    done = np.zeros(n, np.bool_)
    rows = np.arange(n)
    work = (np.empty(2 * k, np.int64), np.empty(2 * k), np.empty(1), np.empty(1, np.int64),
            np.empty(2 * p))
    ws = _workspace(edges, p)
    m, g, at, finished = n, 0, 0, False
    while not finished:
        m, g, at, finished = _vmdav_phase(X, k, gamma, order, codes, rows, m, labels, done,
                                          g, at, leaf_kd, work, ws)
    return labels


@njit
def _vmdav_phase(X, k, gamma, order, codes, rows, m, labels, done, g, at, leaf_kd, work,  # type: ignore[no-untyped-def]
                 ws):
    """V-MDAV's rounds on a kd-tree over ``rows[:m]``; as :func:`_mdav_phase`.
    Returns ``(m, g, at, finished)``."""
    members, dist, one_d, one_i, gbox = work
    kd = _kd_build(X, codes, rows, m, leaf_kd)
    built = m
    while m >= k:
        if m < REBUILD * built and m >= 64:
            _alive_rows(kd, rows)
            return m, g, at, False
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
    return m, g, at, True


@njit
def ivmdav_indexed(X, k, gamma, n_candidates, self_neighbour, total, edges, codes,  # type: ignore[no-untyped-def] # long: one round per loop, as ivmdav_loops
                   leaf_kd, leaf_dt):
    """IV-MDAV on the indexed engine; see :func:`microagg._mdav_loops.ivmdav_loops`.

    Runs in phases, as :func:`mdav_indexed` (:func:`_ivmdav_phase`).
    """
    n, p = X.shape
    labels = np.full(n, -1, np.int64)
    rows = np.arange(n)
    ys = np.empty(max(n_candidates, k), np.int64)
    d_ys = np.empty(max(n_candidates, k))
    members = np.empty(2 * k, np.int64)
    heaps = (np.empty(k + 1), np.empty(k + 1, np.int64))
    ws = _workspace(edges, p)
    m, g, finished = n, 0, False
    while not finished:
        m, g, finished = _ivmdav_phase(X, k, gamma, n_candidates, self_neighbour, total,
                                       codes, rows, m, labels, g, leaf_kd, leaf_dt, ys, d_ys,
                                       members, heaps, ws)
    return labels


@njit
def _ivmdav_phase(X, k, gamma, n_candidates, self_neighbour, total, codes, rows, m,  # type: ignore[no-untyped-def] # long: one round per loop, as ivmdav_loops
                  labels, g, leaf_kd, leaf_dt, ys, d_ys, members, heaps, ws):
    """IV-MDAV's rounds on indexes over ``rows[:m]``; as :func:`_mdav_phase`."""
    rel, cm = _margins(X.shape[1])
    heap_d, heap_i = heaps
    kd, dt = _build(X, codes, rows, m, leaf_kd, leaf_dt, cm)
    built = m
    need = k - 1 if self_neighbour else k  # with z_1 = y itself, z_k is the (k-1)-th other
    while m >= 3 * k:
        if m < REBUILD * built and m >= 64:
            _alive_rows(kd, rows)
            return m, g, False
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
    return _last_groups(kd, dt, X, k, m, members, d_ys, labels, g, total, rows, rel, cm, ws)
