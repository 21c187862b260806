r"""The direction buckets of the indexed engine: the record farthest from a point.

With an anchor :math:`\mathbf{a}` (the records' mean when built), each record is
:math:`\mathbf{a} + r\mathbf{u}` with :math:`\lVert\mathbf{u}\rVert = 1`. The leaves of a
kd-tree over the directions :math:`\mathbf{u}` (:func:`microagg._mdav.kdtree.split`) are
buckets of about 256 records, each a cone (axis :math:`\mathbf{w}`, half-angle
:math:`\alpha`) sorted by decreasing :math:`r`. The law of cosines bounds the distance
from a query to every record of a bucket (:func:`_cone_bound`); :func:`farthest` scans
the bucket with the largest bound first, then every bucket whose bound still reaches
the best distance. A removal shifts the records above the gap down by one, so each
bucket stays sorted. The exactness argument (margins on the cone bound) is in the
docstring of :mod:`microagg._mdav`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import njit
from .cells import code_sum, upper_table
from .kdtree import split
from .kernels import sqdist_row

__all__ = ["Buckets", "build", "remove", "farthest", "margins"]

#: Radii below this are treated as "no direction" (their unit vector could be
#: spoilt by underflow); the bound's absolute term covers them.
TINY = 1e-140


class Buckets(NamedTuple):
    """Direction buckets over some records; positions ``a`` index the per-record arrays.

    Bucket ``b`` holds its unassigned records at positions ``head[b]`` to ``end[b]``,
    by decreasing radius.
    """

    ids: np.ndarray  #: input index of the record at each position
    pos: np.ndarray  #: position of each input record (-1: not in a bucket)
    rr: np.ndarray  #: radius (distance to the anchor) by position
    codes: np.ndarray  #: cell codes by position, (m, p) uint8
    wT: np.ndarray  #: unit axis of each bucket's cone, (p, buckets)
    ca: np.ndarray  #: cosine of each cone's half-angle, lowered by ``cm``
    sa: np.ndarray  #: sine of each cone's half-angle
    rhi: np.ndarray  #: largest radius left in each bucket (-1: empty)
    rlo: np.ndarray  #: smallest radius in each bucket (as built)
    minid: np.ndarray  #: smallest input index in each bucket (as built)
    head: np.ndarray  #: first unassigned position of each bucket
    end: np.ndarray  #: end position of each bucket
    bucket_of: np.ndarray  #: bucket of each position
    anchor: np.ndarray  #: the point the radii and directions are measured from
    f: np.ndarray  #: work: each bucket's bound in the current query
    cbs: np.ndarray  #: work: each bucket's cosine in the current query
    rel: float  #: relative margin of the cone bound (on squared distances)
    cm: float  #: margin on the cosines


@njit
def margins(p):  # type: ignore[no-untyped-def]
    """Safety margins of the cone bound: relative (on squared distances) and on cosines."""
    eps = 2.3e-16
    return 1e-9 + 16.0 * (p + 8) * eps, 1e-7 + 8.0 * np.sqrt((p + 8) * eps)


@njit
def build(X, codes, rows, m, leaf_size):  # type: ignore[no-untyped-def]
    """The :class:`Buckets` over records ``rows[:m]``, anchored at their mean."""
    n, p = X.shape
    rel, cm = margins(p)
    perm, r, head, bend, wT, ca, sa, rhi, rlo, minid, anchor = _cones(X, rows, m,
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
    return Buckets(ids, pos, rr, dcodes, wT, ca, sa, rhi, rlo, minid, head, bend, bucket_of,
                   anchor, np.empty(nb), np.empty(nb), rel, cm)


@njit
def _cones(X, rows, m, leaf_size, cm):  # type: ignore[no-untyped-def]
    """The buckets of :func:`build` (records ``perm``, radii ``r`` by position)
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
        r[i] = np.sqrt(sqdist_row(X, rows[i], anchor))
        if r[i] >= TINY:
            for j in range(p):
                U[i, j] = (X[rows[i], j] - anchor[j]) / r[i]
    perm, start, end, first_leaf = split(U, np.arange(m), leaf_size)
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
            if r[perm[i]] >= TINY:
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
def remove(dt, i):  # type: ignore[no-untyped-def]
    """Remove record ``i`` (input index), keeping its bucket sorted by radius."""
    ids, rr, codes, pos = dt.ids, dt.rr, dt.codes, dt.pos  # (locals: no refcounts in the loop)
    a = pos[i]
    b = dt.bucket_of[a]
    h = dt.head[b]
    for t in range(a, h, -1):  # the records above the gap move down by one
        moved = ids[t - 1]
        ids[t] = moved
        rr[t] = rr[t - 1]
        codes[t] = codes[t - 1]
        pos[moved] = t
    pos[i] = -1
    dt.head[b] = h + 1
    dt.rhi[b] = rr[h + 1] if h + 1 < dt.end[b] else -1.0


@njit(inline="always")
def _cone_bound(r, R, cb, rel):  # type: ignore[no-untyped-def]
    """Upper bound on the squared distance from the query to a record at radius ``r``.

    ``R`` is the query's radius and ``cb`` a safe lower value of the cosine of the
    largest angle between the query's and the record's directions.
    """
    s = r + R
    return r * r + R * R - 2.0 * r * R * cb + rel * s * s + 4e-140 * s + 1e-279


@njit
def _bucket_bounds(dt, uq, R, directional):  # type: ignore[no-untyped-def]
    r"""Each bucket's bound into ``f`` (-1 if empty) and its cosine into ``cbs``.

    With :math:`\theta` the angle between the query's direction and the axis,
    the largest angle to a record is :math:`\min(\pi, \theta + \alpha)`; its cosine
    is :math:`\cos\theta\cos\alpha - \sin\theta\sin\alpha` (or -1), lowered by ``cm``.
    One pass without branches over all buckets (it vectorises).
    """
    f, wT, ca, sa, rel, cm = dt.f, dt.wT, dt.ca, dt.sa, dt.rel, dt.cm
    cbs, rhi, rlo, head, end = dt.cbs, dt.rhi, dt.rlo, dt.head, dt.end
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
def _scan_bucket(dt, X, b, q, R, best, best_i, T):  # type: ignore[no-untyped-def]
    """Update (``best``, ``best_i``) with bucket ``b``'s records, by decreasing radius.

    A record is skipped if its cone bound, or its code bound (``T``, an
    ``upper_table``), is below ``best``: it can neither win nor tie.
    """
    rel, rr, codes, ids = dt.rel, dt.rr, dt.codes, dt.ids
    cb = dt.cbs[b]
    f_low = _cone_bound(dt.rlo[b], R, cb, rel)
    for a in range(dt.head[b], dt.end[b]):
        if _cone_bound(rr[a], R, cb, rel) < best:
            if f_low < best:  # convex in r: no later (smaller) radius can reach best
                break
            continue
        if code_sum(T, codes, a) < best:
            continue
        i = ids[a]
        s = sqdist_row(X, i, q)
        if s > best or (s == best and i < best_i):
            best = s
            best_i = i
    return best, best_i


@njit
def farthest(dt, X, q, ws):  # type: ignore[no-untyped-def]
    """The unassigned record farthest from ``q``; the earliest in the input on ties.

    Returns its input index and its squared distance (computed by
    ``sqdist_row``). ``ws`` is a :class:`~microagg._mdav.cells.Workspace`.
    """
    minid = dt.minid
    anchor = dt.anchor
    f = dt.f
    uq = ws.uq
    T = ws.T
    upper_table(ws.edges, q, T)
    R = 0.0
    for j in range(q.size):
        t = q[j] - anchor[j]
        R += t * t
    R = np.sqrt(R)
    directional = R >= TINY
    if directional:
        for j in range(q.size):
            uq[j] = (q[j] - anchor[j]) / R
    _bucket_bounds(dt, uq, R, directional)
    b0 = 0
    for b in range(1, f.size):
        if f[b] > f[b0]:
            b0 = b
    best, best_i = _scan_bucket(dt, X, b0, q, R, -1.0, -1, T)
    for b in range(f.size):
        fb = f[b]
        if b == b0 or fb < best or (fb <= best and minid[b] > best_i):
            continue
        best, best_i = _scan_bucket(dt, X, b, q, R, best, best_i, T)
    return best_i, best
