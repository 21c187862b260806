r"""The disclosure-risk kernels: distance-linkage search and interval counts.

Used by the public measures of :mod:`microagg._risk` and by GOMM's memoised scorer
(:mod:`microagg._gomm_eval`). Inputs are already on the common (standardised) scale.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ._jit import HAVE_NUMBA, njit

__all__ = ["dld_standardized", "id_counts", "principal_axes", "distinct_rows", "distinct_keys",
           "release_rows", "rival_clusters", "rival_margin", "dld_grouped", "Released",
           "dld_assembled", "RELEASE_TABLE_CAP", "DLD_BLOCK_ENTRIES",
           "RIVAL_PAIRS_PER_RECORD", "EVERY_CLUSTER"]


@njit(inline="always")  # (a call in the hot loops would cost about 10 %)
def _sqdist(Z: np.ndarray, i: int, U: np.ndarray, j: int) -> float:
    """Squared distance from record ``Z[i]`` to row ``U[j]``, summed in column order."""
    s = 0.0
    for c in range(Z.shape[1]):
        t = Z[i, c] - U[j, c]
        s += t * t
    return s


@njit(inline="always")
def _versus_own(Z: np.ndarray, U: np.ndarray, Pz: np.ndarray, Pu: np.ndarray, i: int, j: int,
                d_own: float, bound: float) -> int:
    """Row ``U[j]`` against record ``i``'s own row (squared distance ``d_own``): -1 if it is
    nearer, 1 if exactly as far (a tie), 0 if farther or if its projections' bound already
    exceeds ``bound``. The exact distance is summed as :func:`_sqdist` does and abandoned once
    its partial sum exceeds ``d_own`` (partial sums of non-negative terms never decrease).
    """
    lb = 0.0
    for a in range(Pz.shape[1]):
        t = Pz[i, a] - Pu[j, a]
        lb += t * t
    if lb > bound:
        return 0
    s = 0.0
    for c in range(Z.shape[1]):
        t = Z[i, c] - U[j, c]
        s += t * t
        if s > d_own:
            return 0
    return -1 if s < d_own else 1


@njit
def _dld_kernel(Z: np.ndarray, U: np.ndarray, mult: np.ndarray, own: np.ndarray,
                Pz: np.ndarray, Pu: np.ndarray, slack: float) -> np.ndarray:
    """Each record's linked fraction (0, or 1/#tied).

    ``U`` holds the distinct released rows, ``mult`` how many records share each,
    ``own[i]`` the row of ``U`` that record ``i`` was released as. ``Pz`` and ``Pu``
    are the projections of the records and of the rows on ``r`` orthonormal axes,
    the rows sorted by their first projection. Projections never lengthen a
    difference, so the squared distance of the projections is at most the squared distance:

    * only rows whose first projection lies within ``sqrt(d_own)`` of the
      record's can tie or be closer; they form a run of the sorted rows, found by
      binary search;
    * a row whose ``r``-axis bound exceeds ``d_own`` is skipped.

    Both filters are widened (relative 1e-6, absolute ``slack``) far beyond the
    rounding error of the projections, so they only ever let more rows through.
    Every decision is then made on the exact distance, summed column by column in
    column order; a candidate is abandoned once its partial sum exceeds the own
    distance (partial sums of non-negative terms never decrease), and the record
    once a strictly closer row is found.
    """
    n = Z.shape[0]
    m = U.shape[0]
    out = np.zeros(n)
    for i in range(n):
        o = own[i]
        d_own = _sqdist(Z, i, U, o)
        bound = d_own * (1.0 + 1e-6) + slack
        radius = np.sqrt(bound)
        low = Pz[i, 0] - radius
        high = Pz[i, 0] + radius
        lo = 0
        hi = m
        while lo < hi:  # first row with first projection >= low
            mid = (lo + hi) // 2
            if Pu[mid, 0] < low:
                lo = mid + 1
            else:
                hi = mid
        tied = 0
        linked = True
        for j in range(lo, m):
            if Pu[j, 0] > high:
                break
            versus = _versus_own(Z, U, Pz, Pu, i, j, d_own, bound)
            if versus < 0:
                linked = False
                break
            tied += versus * mult[j]  # a tie counts its row's records
        if linked:
            out[i] = 1.0 / tied if tied > 0 else 1.0
    return out


#: Most distances (entries) a numpy DLD search holds per block of records: 8 MiB of float64
#: (a few such arrays at once), whatever the number of distinct rows. :func:`_dld_numpy`
#: sizes its blocks by it, :func:`_dld_kdtree` the batches of records it asks the tree for
#: their near rows (each found row is one entry).
DLD_BLOCK_ENTRIES = 1 << 20


def _dld_numpy(Z: np.ndarray, U: np.ndarray, mult: np.ndarray, own: np.ndarray,
               block: int = 256) -> np.ndarray:
    """Vectorised twin of :func:`_dld_kernel` (same arithmetic, same order, same answer).

    Every record against every distinct row: the slow, plain oracle that the tests hold
    :func:`_dld_kdtree` (the search without numba) and the kernels to. Records go
    ``block`` at a time, fewer when the ``m`` distinct rows are many (at most
    :data:`DLD_BLOCK_ENTRIES` distances per block): memory a few times ``block x m``,
    never ``n x n``; time ``O(n m p)``.
    """
    n, p = Z.shape
    block = max(1, min(block, DLD_BLOCK_ENTRIES // max(1, U.shape[0])))
    out = np.zeros(n)
    for start in range(0, n, block):
        Zb = Z[start:start + block]
        D = np.zeros((Zb.shape[0], U.shape[0]))
        for c in range(p):  # column by column: the kernel's summation order
            t = Zb[:, c, None] - U[None, :, c]
            D += t * t
        d_own = D[np.arange(Zb.shape[0]), own[start:start + block]]
        closer = (D < d_own[:, None]).any(axis=1)
        tied = ((D == d_own[:, None]) * mult[None, :]).sum(axis=1)
        out[start:start + block] = np.where(closer, 0.0, 1.0 / tied)
    return out


def _dld_slack(Z: np.ndarray, U: np.ndarray) -> float:
    """The margin, in squared distance, by which a DLD search's filter is widened:
    ``1e-9 * scale**2``, ``scale`` one plus the largest sums of absolute values of a record
    and of a row. The rounding of a squared distance or a projection is far below it, so
    a filter widened by it drops no row that the exact comparison would count."""
    scale = 1.0 + float(np.abs(Z).sum(axis=1).max()) + float(np.abs(U).sum(axis=1).max())
    return 1e-9 * scale * scale


def _sqdist_pairs(Z: np.ndarray, U: np.ndarray, rec: np.ndarray, row: np.ndarray
                  ) -> np.ndarray:
    """Squared distance from each record ``Z[rec[t]]`` to row ``U[row[t]]``, summed in
    column order (:func:`_sqdist`'s arithmetic, vectorised over the pairs)."""
    D = np.zeros(rec.size)
    for c in range(Z.shape[1]):
        t = Z[rec, c] - U[row, c]
        D += t * t
    return D


def _dld_kdtree(Z: np.ndarray, U: np.ndarray, mult: np.ndarray, own: np.ndarray
                ) -> np.ndarray:
    """Each record's linked fraction, :func:`_dld_numpy`'s answer, from a k-d tree of the
    distinct rows (:class:`scipy.spatial.cKDTree`): the search without numba.

    The tree only proposes rows; every decision compares squared distances summed as
    :func:`_sqdist` sums them, so the answer is the dense search's, ties included.

    1. The tree's nearest row of each record: if it is nearer than the record's own row
       (our arithmetic), the record is not linked.
    2. Otherwise only rows about as near as the own row can be nearer or tie. The tree
       lists every row within ``sqrt(d_own + slack)`` of the record; the slack
       (:func:`_dld_slack`) is far above the rounding of either distance computation, so
       no row nearer or tied by our arithmetic is missed. Those rows are compared
       exactly.

    Time about ``O(n log m)`` on data where few rows tie (against ``O(n m)``: at
    100,000 records and 33,000 rows, 0.6 s instead of about 30 s;
    ``tests/benchmarks/bench_risk.py``); memory ``O(n)`` plus at most
    :data:`DLD_BLOCK_ENTRIES` listed rows per batch of records.
    """
    from scipy.spatial import cKDTree  # (scipy's import costs; only this path needs it)

    n = Z.shape[0]
    tree = cKDTree(U)
    slack = _dld_slack(Z, U)
    every = np.arange(n)
    d_own = _sqdist_pairs(Z, U, every, own)
    _, nearest = tree.query(Z, k=1)
    out = np.zeros(n)
    todo = np.flatnonzero(_sqdist_pairs(Z, U, every, nearest) >= d_own)
    batch = max(1, DLD_BLOCK_ENTRIES // U.shape[0])  # (a batch lists at most all m rows each)
    for start in range(0, todo.size, batch):
        rec = todo[start:start + batch]
        near = tree.query_ball_point(Z[rec], np.sqrt(d_own[rec] + slack),
                                     return_sorted=False)
        sizes = np.fromiter(map(len, near), np.int64, rec.size)
        rows = np.fromiter((j for found in near for j in found), np.int64, int(sizes.sum()))
        at = np.repeat(np.arange(rec.size), sizes)
        D = _sqdist_pairs(Z, U, rec[at], rows)
        mine = d_own[rec][at]
        nearer = np.bincount(at, weights=D < mine, minlength=rec.size)
        tied = np.bincount(at, weights=(D == mine) * mult[rows], minlength=rec.size)
        out[rec] = np.where(nearer > 0, 0.0, 1.0 / tied)  # (tied counts the own row)
    return out


def distinct_rows(Q: np.ndarray, keys: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows of ``Q``, their multiplicities, and the distinct row of each record.

    ``keys`` optionally identifies the rows without looking at their values: a
    ``(G, n)`` integer array (e.g. each record's cluster in each of ``G`` attribute
    groups) such that equal columns mean equal rows. It is an optimisation only:
    rows that are equal but carry different keys are still counted as ties,
    because ties are decided by distance.
    """
    first, mult, own = distinct_keys(Q.T if keys is None else np.atleast_2d(keys))
    return np.ascontiguousarray(Q[first]), mult, own


def distinct_keys(L: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct columns of ``L`` (``(G, n)``), by sorting.

    Returns ``first`` (the first column of each distinct one, in sorted order),
    ``mult`` (how many columns equal each) and ``own`` (each column's number).
    """
    n = L.shape[1]
    order = np.lexsort(L[::-1])  # sort the records by their key (or row) tuples
    srt = L[:, order]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.any(srt[:, 1:] != srt[:, :-1], axis=0, out=new[1:])
    ids_sorted = np.cumsum(new) - 1
    own = np.empty(n, dtype=np.int64)
    own[order] = ids_sorted
    first = order[new]
    mult = np.bincount(own).astype(np.int64)
    return first, mult, own


#: Largest relabelling table (entries, int64) :func:`release_rows` allocates: 32 MiB. GOMM's
#: files (n <= 1,080) need at most n * n / k entries, under 1.2 million; above the cap (a file
#: of 100,000 records at k = 3 would need 3.3e9 entries, 26 GB) the rows are refined by buckets.
RELEASE_TABLE_CAP = 1 << 22


@njit
def _refine_by_table(L: np.ndarray, sizes: np.ndarray, own: np.ndarray) -> int:
    """Refine ``own`` (all 0) group after group through a table of (row so far, cluster)
    pairs, ``n * max(sizes)`` entries; rows numbered in order of first appearance.
    Returns the number of rows."""
    G, n = L.shape
    count = 1
    table = np.full(n * max(1, sizes.max()), -1, np.int64)
    key = np.empty(n, np.int64)
    for g in range(G):
        s = sizes[g]
        count = 0
        for i in range(n):
            key[i] = own[i] * s + L[g, i]  # < (rows so far) * s <= n * s
            if table[key[i]] < 0:
                table[key[i]] = count
                count += 1
            own[i] = table[key[i]]
        for i in range(n):
            table[key[i]] = -1  # clean for the next group
    return count


@njit
def _refine_by_buckets(L: np.ndarray, sizes: np.ndarray, own: np.ndarray) -> int:
    """Refine ``own`` (all 0) group after group in memory :math:`O(n + \\max s)`: the
    records are put in buckets by their row so far (a counting sort, in record order),
    and each bucket is split by cluster through a table of ``max(sizes)`` entries,
    cleaned after the bucket. The rows, numbered bucket by bucket, are finally
    renumbered in order of first appearance. Returns the number of rows."""
    G, n = L.shape
    table = np.full(max(1, sizes.max()), -1, np.int64)
    ends = np.zeros(n + 1, np.int64)  # bucket r is order[ends[r - 1]:ends[r]] (ends[-1] = 0)
    order = np.empty(n, np.int64)
    refined = np.empty(n, np.int64)
    count = 1
    for g in range(G):
        ends[: count + 1] = 0
        for i in range(n):
            ends[own[i] + 1] += 1
        for r in range(count):
            ends[r + 1] += ends[r]
        for i in range(n):  # afterwards ends[r] is where bucket r ends
            order[ends[own[i]]] = i
            ends[own[i]] += 1
        fresh = 0
        begin = 0
        for r in range(count):
            for x in range(begin, ends[r]):
                i = order[x]
                c = L[g, i]
                if table[c] < 0:
                    table[c] = fresh
                    fresh += 1
                refined[i] = table[c]
            for x in range(begin, ends[r]):
                table[L[g, order[x]]] = -1  # clean for the next bucket
            begin = ends[r]
        own[:] = refined
        count = fresh
    number = np.full(count, -1, np.int64)
    fresh = 0
    for i in range(n):
        if number[own[i]] < 0:
            number[own[i]] = fresh
            fresh += 1
        own[i] = number[own[i]]
    return fresh


@njit
def release_rows(L: np.ndarray, sizes: np.ndarray, table_cap: int = RELEASE_TABLE_CAP
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`distinct_keys` of cluster labels, by relabelling instead of sorting.

    ``L`` is ``(G, n)``: record ``i`` is in cluster ``L[g, i]`` (``0 .. sizes[g]-1``)
    of attribute group ``g``, so two records are released as the same row exactly
    when they share every cluster. The records' row numbers are refined group after
    group: through a table of (row so far, cluster) pairs when its ``n * max(sizes)``
    entries are at most ``table_cap`` (:data:`RELEASE_TABLE_CAP`; GOMM's files), else
    bucket by bucket in memory :math:`O(n + \\max s)`. Either way the rows are numbered
    in order of first appearance (``first`` increasing): the same partition as
    :func:`distinct_keys`, in another order, in :math:`O(Gn)` without a sort.
    """
    G, n = L.shape
    own = np.zeros(n, np.int64)
    count = 1
    if G > 0 and n * max(1, sizes.max()) <= table_cap:
        count = _refine_by_table(L, sizes, own)
    elif G > 0:
        count = _refine_by_buckets(L, sizes, own)
    first = np.full(count, -1, np.int64)
    mult = np.zeros(count, np.int64)
    for i in range(n):
        if first[own[i]] < 0:
            first[own[i]] = i
        mult[own[i]] += 1
    return first, mult, own


#: How many principal axes the DLD searches project on (:func:`principal_axes`): each
#: projection is one more bound on a row's distance.
AXES = 8


def principal_axes(Z: np.ndarray, r: int = AXES) -> np.ndarray:
    """``(p, r)`` orthonormal axes of largest spread of ``Z`` (principal components)."""
    centred = Z - Z.mean(axis=0)
    _, vecs = np.linalg.eigh(centred.T @ centred)
    W = vecs[:, ::-1][:, : min(r, Z.shape[1])]
    return np.ascontiguousarray(W)


def dld_standardized(Z: np.ndarray, Q: np.ndarray, keys: np.ndarray | None = None,
                      axes: np.ndarray | None = None) -> float:
    """DLD in % for data already on the common (standardised) scale.

    ``axes`` (orthonormal columns; default the principal axes of ``Z``) only
    order and filter the search; the answer does not depend on them.
    """
    U, mult, own = distinct_rows(Q, keys)
    if HAVE_NUMBA:
        W = principal_axes(Z) if axes is None else axes
        Pz = Z @ W
        Pu = U @ W
        order = np.argsort(Pu[:, 0], kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        linked = _dld_kernel(Z, np.ascontiguousarray(U[order]), mult[order], rank[own],
                             np.ascontiguousarray(Pz), np.ascontiguousarray(Pu[order]),
                             _dld_slack(Z, U))
    else:
        linked = _dld_kdtree(Z, U, mult, own)
    return 100.0 * math.fsum(linked) / Z.shape[0]


def id_counts(Z: np.ndarray, Q: np.ndarray, width: float) -> np.ndarray:
    """Per attribute: how many released values lie within ``width*|x|`` of the original."""
    return np.count_nonzero(np.abs(Q - Z) <= width * np.abs(Z), axis=0)


# -- DLD of a release made group by group (GOMM) -------------------------------------------
#
# When the release is assembled from attribute groups (each record released, in group g,
# as the centroid of its cluster there), the squared distance from record i to row j is
# the sum over the groups of the distance, on the group's columns, from record i to the
# centroid of row j's cluster. A row can be as close as record i's own row only if, in
# at least one group where it differs from it, its cluster is a *rival* of record i's
# own cluster: a centroid not clearly farther from the record. The rivals depend on the
# attribute group only, so they are found once per group, and each release's search
# visits only the rows holding a rival cluster. Compact clusters (MDAV's) have a few
# rivals per record; clusters spread over the data (a callable method's) can have a
# large share of all clusters as rivals, n * n / k pairs in all: past
# RIVAL_PAIRS_PER_RECORD * n pairs the group lists none, and its records' searches visit
# every row in reach, as the full search (_dld_kernel) does.

#: Most rival pairs (record, cluster) :func:`rival_clusters` lists per record of an
#: attribute group, on average: past ``64 * n`` pairs (16 bytes each, 1 KiB a record) the
#: group's list gives way to :data:`EVERY_CLUSTER`. GOMM's runs at the papers' settings
#: list at most about ``1.1 * n`` (some 13,000 attribute groups of Water-treatment and
#: Census at k = 3 and 5); clusters spread over the data can need thousands a record
#: (386 million pairs, 6.2 GB, at n = 100,000).
RIVAL_PAIRS_PER_RECORD = 64

#: A rival "cluster" standing for every cluster of its group (a list past the cap): the
#: record's search then visits every row within its reach.
EVERY_CLUSTER = -1


@njit
def _rivals_from(sub, labels, CT, margin, indptr, clusters, i, count):  # type: ignore[no-untyped-def]
    """:func:`rival_clusters`' search from record ``i`` on, ``count`` pairs listed so far,
    until every record is done or ``clusters`` is full; returns ``(next record, count)``.

    ``CT`` holds the centroids' columns as rows. (The list is grown by the caller: an
    array variable assigned anew inside this loop made numba's code for the whole loop
    up to five times slower, ``bench_gomm.py --rivals``.)
    """
    n, w = sub.shape
    s = CT.shape[1]
    d = np.empty(s)
    while i < n:
        for q in range(s):
            t = sub[i, 0] - CT[0, q]
            d[q] = t * t
        for c in range(1, w):
            for q in range(s):
                t = sub[i, c] - CT[c, q]
                d[q] += t * t
        o = labels[i]
        reach = d[o] + margin[i]
        within = 0  # counted first, without branches: most records have no rival
        for q in range(s):
            within += d[q] <= reach
        if within > 1:  # the own cluster is always within reach
            if count + within - 1 > clusters.size:
                return i, count
            for q in range(s):
                if d[q] <= reach and q != o:
                    clusters[count] = q
                    count += 1
        indptr[i + 1] = count
        i += 1
    return i, count


@njit
def rival_clusters(sub: np.ndarray, labels: np.ndarray, centroids: np.ndarray,
                   margin: np.ndarray, per_record: int = RIVAL_PAIRS_PER_RECORD
                   ) -> tuple[np.ndarray, np.ndarray]:
    r"""Each record's rival clusters in one attribute group, as ``(indptr, clusters)``.

    Record ``i``'s rivals are ``clusters[indptr[i]:indptr[i + 1]]`` (increasing): every
    cluster ``q`` other than its own (``o = labels[i]``) whose centroid (row ``q`` of
    ``centroids``) is at squared distance :math:`d_{iq} \le d_{io} + \mathrm{margin}_i`
    from row ``i`` of ``sub`` (the record on the group's columns), distances summed in
    column order (for all centroids at once, side by side). Most records have no rival:
    the clusters in reach are first counted (a loop without branches), and listed only
    when there are any besides the own one.

    The list holds at most ``per_record * n`` pairs (:data:`RIVAL_PAIRS_PER_RECORD`;
    memory :math:`O(\mathrm{per\_record} \cdot n)` instead of up to :math:`O(n^2/k)`
    for clusters spread over the data). Once it would hold more, the search stops and
    every record's list is ``[EVERY_CLUSTER]`` (:data:`EVERY_CLUSTER`: every cluster is
    its rival), which :func:`dld_assembled` answers with the full search: the same linked
    fractions.
    """
    n = sub.shape[0]
    s = centroids.shape[0]
    most = per_record * n
    CT = np.ascontiguousarray(centroids.T)
    indptr = np.zeros(n + 1, np.int64)
    clusters = np.empty(min(4 * n + 16, most), np.int64)
    i, count = _rivals_from(sub, labels, CT, margin, indptr, clusters, 0, 0)
    while i < n:  # the list is full: grow it, or past the cap every cluster is a rival
        if clusters.size >= most:
            return np.arange(n + 1), np.full(n, EVERY_CLUSTER, np.int64)
        grown = np.empty(min(2 * clusters.size + s, most), np.int64)
        grown[:count] = clusters[:count]
        clusters = grown
        i, count = _rivals_from(sub, labels, CT, margin, indptr, clusters, i, count)
    return indptr, clusters[:count].copy()


def rival_margin(Z: np.ndarray) -> np.ndarray:
    r"""Per record, the margin that makes :func:`rival_clusters` rigorous: :math:`10^{-9} B_i`.

    :math:`B_i = \sum_c (|z_{ic}| + \max_r |z_{rc}|)^2` bounds every squared
    distance from record ``i`` to a released row (centroids lie within each
    column's range), so it bounds the own distance :math:`d_o` of every release.
    Computed squared distances (column order) are within relative
    :math:`\gamma_{p+2} \approx (p + 2)\,2^{-53}` of the true ones. If, in every
    group where row ``j`` differs from the own row, its cluster is farther (computed)
    than the own cluster by more than the margin, the true difference of the
    distances exceeds :math:`10^{-9} B_i - 2\gamma B_i`, which is more than the
    :math:`2\gamma d_o` the computed distances can err by: row ``j`` is strictly
    farther in the computed distances as well, and neither closer nor tied.
    """
    M = np.abs(Z).max(axis=0)
    return 1e-9 * ((np.abs(Z) + M) ** 2).sum(axis=1)


class DistinctRows(NamedTuple):
    """The distinct rows of a release (:func:`release_rows`) and their projections."""

    U: np.ndarray  #: the rows, (m, p)
    mult: np.ndarray  #: how many records were released as each
    own: np.ndarray  #: the row of each record
    first: np.ndarray  #: the first record released as each row
    Pu: np.ndarray  #: the rows' projections on the axes, (m, r)


class Rivals(NamedTuple):
    """The attribute groups of a release and their records' rival clusters."""

    L: np.ndarray  #: (G, n) each record's cluster in each group
    cbase: np.ndarray  #: (G + 1,) the clusters of group g are numbered from cbase[g]
    r_ptr: np.ndarray  #: (G, n + 1) record i's rivals in group g: r_cl[r_ptr[g, i]:r_ptr[g, i+1]]
    r_cl: np.ndarray  #: the rival clusters, numbered across the groups, or EVERY_CLUSTER
    every: np.ndarray  #: (n,) whether record i's rivals in some group are EVERY_CLUSTER


@njit
def _linked_in_reach(Z, Pz, rel, i, d_own, bound):  # type: ignore[no-untyped-def]
    """Record ``i``'s linked fraction from every row of ``rel`` (:class:`DistinctRows`,
    sorted by the first projection) within its reach, as :func:`_dld_kernel` finds it
    (its own row counted once; ``bound`` the widened own distance ``d_own``)."""
    U, mult, own, _, Pu = rel
    o = own[i]
    radius = np.sqrt(bound)
    low = Pz[i, 0] - radius
    high = Pz[i, 0] + radius
    m = U.shape[0]
    lo = 0
    hi = m
    while lo < hi:  # the first row with first projection >= low
        mid = (lo + hi) // 2
        if Pu[mid, 0] < low:
            lo = mid + 1
        else:
            hi = mid
    tied = mult[o]
    for j in range(lo, m):
        if Pu[j, 0] > high:
            break
        if j != o:
            versus = _versus_own(Z, U, Pz, Pu, i, j, d_own, bound)
            if versus < 0:
                return 0.0
            tied += versus * mult[j]  # a tie counts its row's records
    return 1.0 / tied


@njit
def _dld_grouped_kernel(Z, Pz, rel, riv, slack):  # type: ignore[no-untyped-def]
    """Each record's linked fraction (0, or 1/#tied), visiting only rows with a rival.

    ``rel`` (:class:`DistinctRows`) holds the distinct rows, sorted by their first
    projection, ``riv`` (:class:`Rivals`) the groups. The rows holding a cluster are
    listed in that order, so only those whose first projection lies within
    ``sqrt(d_own)`` of the record's (widened as in :func:`_dld_kernel`) are visited,
    found by binary search; a visited row is then filtered by the bound of all its
    projections ``rel.Pu`` against the record's ``Pz``; decisions on the exact distances
    of :func:`_dld_kernel`. A record whose rivals in some group are
    :data:`EVERY_CLUSTER` (``riv.every``: a list past :data:`RIVAL_PAIRS_PER_RECORD`)
    visits every row within that reach instead (:func:`_linked_in_reach`), as
    :func:`_dld_kernel` does: a superset of the rows with a rival (the others are
    strictly farther), so the same fraction.
    """
    U, mult, own, first, Pu = rel
    L, cbase, r_ptr, r_cl, every = riv
    n = Z.shape[0]
    m = U.shape[0]
    G = L.shape[0]
    start = np.zeros(cbase[G] + 1, np.int64)  # the rows holding each cluster
    for g in range(G):
        for j in range(m):
            start[cbase[g] + L[g, first[j]] + 1] += 1
    for c in range(cbase[G]):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    rows_of = np.empty(G * m, np.int64)
    for g in range(G):
        for j in range(m):
            c = cbase[g] + L[g, first[j]]
            rows_of[fill[c]] = j
            fill[c] += 1
    seen = np.full(m, -1, np.int64)
    out = np.zeros(n)
    for i in range(n):
        o = own[i]
        d_own = _sqdist(Z, i, U, o)
        bound = d_own * (1.0 + 1e-6) + slack
        if every[i]:
            out[i] = _linked_in_reach(Z, Pz, rel, i, d_own, bound)
            continue
        seen[o] = i
        tied = mult[o]
        linked = True
        radius = np.sqrt(bound)
        low = Pz[i, 0] - radius
        high = Pz[i, 0] + radius
        for g in range(G):
            for q in range(r_ptr[g, i], r_ptr[g, i + 1]):
                c = r_cl[q]
                lo = start[c]
                hi = start[c + 1]
                while lo < hi:  # the cluster's first row with first projection >= low
                    mid = (lo + hi) // 2
                    if Pu[rows_of[mid], 0] < low:
                        lo = mid + 1
                    else:
                        hi = mid
                for x in range(lo, start[c + 1]):
                    j = rows_of[x]
                    if Pu[j, 0] > high:
                        break
                    if seen[j] == i:
                        continue
                    seen[j] = i
                    versus = _versus_own(Z, U, Pz, Pu, i, j, d_own, bound)
                    if versus < 0:
                        linked = False
                        break
                    tied += versus * mult[j]  # a tie counts its row's records
                if not linked:
                    break
            if not linked:
                break
        if linked:
            out[i] = 1.0 / tied
    return out


class Released(NamedTuple):
    """An arena of attribute groups' releases, one slot per group (GOMM's scorer fills it
    with :func:`microagg._gomm_kernels.group_parts`; offsets index the flat arrays)."""

    classes: np.ndarray  #: (slots, n) each record's value class (int32)
    holders: np.ndarray  #: the record of each (record, rival class) pair, by record
    rivals: np.ndarray  #: the rival class of each pair (or EVERY_CLUSTER), slot after slot
    rival_at: np.ndarray  #: (slots,) where each slot's pairs start
    n_rivals: np.ndarray  #: (slots,) how many pairs each slot has
    values: np.ndarray  #: the distinct values, (classes, w) per slot, flat
    value_at: np.ndarray  #: (slots,) where each slot's values start
    projected: np.ndarray  #: the values' projections on the axes, (classes, r) per slot, flat
    projected_at: np.ndarray  #: (slots,) where each slot's projections start
    n_values: np.ndarray  #: (slots,) number of value classes
    reach: np.ndarray  #: (slots,) largest sum of absolute values of a value class


@njit
def _row_projections(arena, slots, V, r):  # type: ignore[no-untyped-def]
    """``(m, r)``: each row's projections, the sum over the groups ``g`` (in order) of its
    value class ``V[j, g]``'s projections in slot ``slots[g]`` of ``arena``.

    With :data:`AXES` axes the eight running sums are kept in local variables (registers,
    once compiled) rather than in the output: the same additions in the same order, so the
    same bits, about four times faster at GOMM's sizes (``tests/benchmarks/bench_gomm.py``).
    """
    m, G = V.shape
    at = np.empty(G, np.int64)
    for g in range(G):
        at[g] = arena.projected_at[slots[g]]
    proj = arena.projected
    Pu = np.zeros((m, r))
    if r == AXES:
        for j in range(m):
            s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
            for g in range(G):
                pa = at[g] + V[j, g] * AXES
                s0 += proj[pa]
                s1 += proj[pa + 1]
                s2 += proj[pa + 2]
                s3 += proj[pa + 3]
                s4 += proj[pa + 4]
                s5 += proj[pa + 5]
                s6 += proj[pa + 6]
                s7 += proj[pa + 7]
            Pu[j, 0], Pu[j, 1], Pu[j, 2], Pu[j, 3] = s0, s1, s2, s3
            Pu[j, 4], Pu[j, 5], Pu[j, 6], Pu[j, 7] = s4, s5, s6, s7
        return Pu
    for j in range(m):  # fewer attributes than AXES: as many axes as attributes
        for g in range(G):
            pa = at[g] + V[j, g] * r
            for b in range(r):
                Pu[j, b] += proj[pa + b]
    return Pu


@njit
def dld_assembled(Z, Pz, scale, arena, slots, cols, gptr):  # type: ignore[no-untyped-def]
    """Each record's linked fraction for the release made of the groups in ``slots`` of
    ``arena`` (:class:`Released`), as :func:`dld_grouped` finds it.

    Group ``g`` holds the columns ``cols[gptr[g]:gptr[g + 1]]``; ``Pz`` is ``Z`` projected
    on the axes whose rows the arena's projections used; ``scale`` is one plus the
    largest sum of absolute values of a row of ``Z``. The distinct rows, their
    projections (summed group by group: rounding far below the filter's slack, as
    :func:`dld_standardized` argues; the rows sorted by the first) and the rivals are
    assembled from the arena; the slack uses the sum over the groups of their largest
    value sums, at least the largest row sum of the release (a wider filter: the same
    answer). A group whose rival list passed :data:`RIVAL_PAIRS_PER_RECORD` (its records'
    rivals :data:`EVERY_CLUSTER`) makes its records search every row within reach.
    """
    n, p = Z.shape
    G = slots.size
    r = Pz.shape[1]
    L = np.empty((G, n), np.int64)
    sizes = np.empty(G, np.int64)
    found = 0
    for g in range(G):
        L[g] = arena.classes[slots[g]]
        sizes[g] = arena.n_values[slots[g]]
        found += arena.n_rivals[slots[g]]
    first, mult, own = release_rows(L, sizes)
    m = first.size
    V = np.empty((m, G), np.int64)  # each row's value class in each group
    for g in range(G):
        for j in range(m):
            V[j, g] = L[g, first[j]]
    where = np.empty(p, np.int64)  # column c of a row: values[where[c] + class * width[c]]
    width = np.empty(p, np.int64)
    group_of = np.empty(p, np.int64)
    for g in range(G):
        w = gptr[g + 1] - gptr[g]
        for a in range(w):
            c = cols[gptr[g] + a]
            where[c] = arena.value_at[slots[g]] + a
            width[c] = w
            group_of[c] = g
    Pu = _row_projections(arena, slots, V, r)
    order = np.argsort(Pu[:, 0])  # the rows by first projection (any order of ties)
    U = np.empty((m, p))
    for x in range(m):
        j = order[x]
        for c in range(p):
            U[x, c] = arena.values[where[c] + V[j, group_of[c]] * width[c]]
    cbase = np.zeros(G + 1, np.int64)
    r_ptr = np.zeros((G, n + 1), np.int64)
    r_cl = np.empty(found, np.int64)
    every = np.zeros(n, np.bool_)
    found = 0
    for g in range(G):
        at = slots[g]
        scale += arena.reach[at]
        cbase[g + 1] = cbase[g] + sizes[g]
        r_ptr[g, 0] = found
        ra = arena.rival_at[at]
        for x in range(arena.n_rivals[at]):  # the pairs are by record: counts, then ends
            r_ptr[g, arena.holders[ra + x] + 1] += 1
            q = arena.rivals[ra + x]
            if q == EVERY_CLUSTER:
                every[arena.holders[ra + x]] = True
                r_cl[found + x] = q
            else:
                r_cl[found + x] = q + cbase[g]
        for i in range(n):
            r_ptr[g, i + 1] += r_ptr[g, i]
        found += arena.n_rivals[at]
    rank = np.empty(m, np.int64)
    rank[order] = np.arange(m)
    rows = DistinctRows(U, mult[order], rank[own], first[order], Pu[order])
    return _dld_grouped_kernel(Z, Pz, rows, Rivals(L, cbase, r_ptr, r_cl, every),
                               1e-9 * scale * scale)


def dld_grouped(Z: np.ndarray, groups: Sequence[Sequence[int]], labels: Sequence[np.ndarray],
                centroids: Sequence[np.ndarray]) -> float:
    """DLD in % of the release made group by group, :func:`dld_standardized`'s value,
    by the k-d tree search :func:`_dld_kdtree` (GOMM's scorer without numba; with numba it calls
    :func:`dld_assembled`, the same answer).

    Group ``g`` (columns ``groups[g]``) releases record ``i`` as
    ``centroids[g][labels[g][i]]``.
    """
    first, mult, own = distinct_keys(np.vstack(labels))
    U = np.empty((first.size, Z.shape[1]))
    for cols, lab, cen in zip(groups, labels, centroids, strict=True):
        U[:, list(cols)] = cen[lab[first]]
    return 100.0 * math.fsum(_dld_kdtree(Z, U, mult, own)) / Z.shape[0]
