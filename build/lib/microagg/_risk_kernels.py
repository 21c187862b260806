r"""The disclosure-risk kernels: distance-linkage search and interval counts.

Used by the public measures of :mod:`microagg._risk` and by GOMM's memoised scorer
(:mod:`microagg._gomm_eval`). Inputs are already on the common (standardised) scale.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import HAVE_NUMBA, njit

__all__ = ["dld_standardized", "id_counts", "principal_axes", "distinct_rows"]


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
    n, p = Z.shape
    m = U.shape[0]
    r = Pz.shape[1]
    out = np.zeros(n)
    for i in range(n):
        o = own[i]
        d_own = 0.0
        for c in range(p):
            t = Z[i, c] - U[o, c]
            d_own += t * t
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
            lb = 0.0
            for a in range(r):
                t = Pz[i, a] - Pu[j, a]
                lb += t * t
            if lb > bound:
                continue
            s = 0.0
            over = False
            for c in range(p):
                t = Z[i, c] - U[j, c]
                s += t * t
                if s > d_own:
                    over = True
                    break
            if over:
                continue
            if s < d_own:
                linked = False
                break
            tied += mult[j]
        if linked:
            out[i] = 1.0 / tied if tied > 0 else 1.0
    return out


def _dld_numpy(Z: np.ndarray, U: np.ndarray, mult: np.ndarray, own: np.ndarray,
               block: int = 256) -> np.ndarray:
    """Vectorised twin of :func:`_dld_kernel` (same arithmetic, same order, same answer).

    Used when numba is absent; memory ``block x m``, never ``n x n``.
    """
    n, p = Z.shape
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


def distinct_rows(Q: np.ndarray, keys: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows of ``Q``, their multiplicities, and the distinct row of each record.

    ``keys`` optionally identifies the rows without looking at their values: a
    ``(G, n)`` integer array (e.g. each record's cluster in each of ``G`` attribute
    groups) such that equal columns mean equal rows. It is an optimisation only:
    rows that are equal but carry different keys are still counted as ties,
    because ties are decided by distance.
    """
    L = Q.T if keys is None else np.atleast_2d(keys)
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
    return np.ascontiguousarray(Q[first]), mult, own


def principal_axes(Z: np.ndarray, r: int = 8) -> np.ndarray:
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
        # the rounding error of a projection is far below 1e-9 * (1 + largest |coordinate| sum)
        scale = 1.0 + float(np.abs(Z).sum(axis=1).max()) + float(np.abs(U).sum(axis=1).max())
        slack = 1e-9 * scale * scale
        linked = _dld_kernel(Z, np.ascontiguousarray(U[order]), mult[order], rank[own],
                             np.ascontiguousarray(Pz), np.ascontiguousarray(Pu[order]), slack)
    else:
        linked = _dld_numpy(Z, U, mult, own)
    return 100.0 * math.fsum(linked) / Z.shape[0]


def id_counts(Z: np.ndarray, Q: np.ndarray, width: float) -> np.ndarray:
    """Per attribute: how many released values lie within ``width*|x|`` of the original."""
    return np.count_nonzero(np.abs(Q - Z) <= width * np.abs(Z), axis=0)
