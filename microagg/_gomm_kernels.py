r"""GOMM's compiled per-attribute-group work: centroids, interval counts, what DLD needs.

:mod:`microagg._gomm_eval` scores thousands of groupings made of a few thousand distinct
attribute groups; each new group is microaggregated once and then reduced here, in
compiled loops, to what scoring a grouping needs of it:

* :func:`cluster_means`: the centroid of each cluster and each record's difference to
  it (the within-group SSE is summed from those by the caller, as before);
* :func:`group_parts`: the group's interval-disclosure count, its value classes
  (clusters with bit-for-bit equal centroids release equal values), each record's
  rival value classes (:func:`~microagg._risk_kernels.rival_clusters`, at most
  :data:`~microagg._risk_kernels.RIVAL_PAIRS_PER_RECORD` pairs a record) and the
  projections of the values on the principal axes' rows of the group's columns,
  stored in a :class:`~microagg._risk_kernels.Released` arena, from which
  :func:`~microagg._risk_kernels.dld_assembled` assembles any release.

Every number is computed with the arithmetic of the readable path (``np.bincount``
sums in record order, the same element-wise operations), so the scores are the same bit
for bit (``tests/test_gomm_fast.py``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._jit import njit
from ._mdav.columns import mdav_columns
from ._risk_kernels import RIVAL_PAIRS_PER_RECORD, rival_clusters

__all__ = ["cluster_means", "mdav_means", "group_parts", "GroupParts"]


@njit
def cluster_means(sub: np.ndarray, labels: np.ndarray, s: int) -> tuple[np.ndarray, np.ndarray]:
    """Centroids ``(s, w)`` of the clusters ``labels`` (``0..s-1``, all used) of the rows of
    ``sub``, and ``sub`` minus each row's centroid.

    Each column's sums run in record order and are divided by the counts, as
    ``np.bincount(labels, weights=column) / np.bincount(labels)`` does.
    """
    n, w = sub.shape
    counts = np.zeros(s, np.int64)
    for i in range(n):
        counts[labels[i]] += 1
    means = np.zeros((s, w))
    for c in range(w):
        for i in range(n):
            means[labels[i], c] += sub[i, c]
        for q in range(s):
            means[q, c] /= counts[q]
    diff = np.empty((n, w))
    for i in range(n):
        for c in range(w):
            diff[i, c] = sub[i, c] - means[labels[i], c]
    return means, diff


@njit
def mdav_means(sub: np.ndarray, k: int, total: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MDAV's labels of the rows of ``sub`` (``(n, w)``), then :func:`cluster_means` of them:
    ``(labels, centroids, differences)``, in one call.

    The labels are those :func:`microagg.mdav` finds with the compiled loops
    (:func:`~microagg._mdav.columns.mdav_columns` on the columns as rows), ``0..s-1``, all
    used; ``total`` is ``sub.sum(axis=0)`` as numpy sums it (the running total MDAV starts
    from; it is overwritten).
    """
    n, w = sub.shape
    W = np.empty((w, n))
    for i in range(n):
        for c in range(w):
            W[c, i] = sub[i, c]
    labels = mdav_columns(W, k, total)
    s = 0
    for i in range(n):
        s = max(s, labels[i] + 1)
    centroids, diff = cluster_means(sub, labels, s)
    return labels, centroids, diff


class GroupParts(NamedTuple):
    """What scoring needs of one microaggregated attribute group (:func:`group_parts`)."""

    id_count: int  #: released values within ``width * |z|`` of the original
    classes: np.ndarray  #: (n,) each record's value class (int32)
    values: np.ndarray  #: (classes, w) the distinct centroids
    holders: np.ndarray  #: the record of each (record, rival) pair, by record
    rivals: np.ndarray  #: the rival value class of each pair
    #: (:func:`~microagg._risk_kernels.rival_clusters`; past its cap, one ``EVERY_CLUSTER``
    #: a record)
    projected: np.ndarray  #: (classes, r) the values projected on the axes' rows
    reach: float  #: the largest sum of absolute values of a class's values


@njit
def _same_bits(a: float, b: float) -> bool:
    """Whether two (non-NaN) floats are the same value with the same sign (0.0 vs -0.0)."""
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


@njit
def _value_classes(centroids: np.ndarray) -> tuple[np.ndarray, int]:
    """Class of each centroid: rows bit-for-bit equal share one, numbered by first row."""
    s, w = centroids.shape
    order = np.argsort(centroids[:, 0], kind="mergesort")
    cls = np.full(s, -1, np.int64)
    for a in range(s):  # equal rows have equal first values: look back along that run
        q = order[a]
        b = a - 1
        while b >= 0 and centroids[order[b], 0] == centroids[q, 0] and cls[q] < 0:
            r = order[b]
            same = True
            for c in range(w):
                if not _same_bits(centroids[q, c], centroids[r, c]):
                    same = False
                    break
            if same:
                cls[q] = r if cls[r] < 0 else cls[r]  # the run's first such row
            b -= 1
    number = np.full(s, -1, np.int64)
    count = 0
    for q in range(s):
        rep = q if cls[q] < 0 else cls[q]
        if number[rep] < 0:
            number[rep] = count
            count += 1
        number[q] = number[rep]
    return number, count


@njit
def group_parts(sub, labels, centroids, margin, width, axes_rows,  # type: ignore[no-untyped-def]
                per_record=RIVAL_PAIRS_PER_RECORD):
    """The fields of :class:`GroupParts`, in order (a plain tuple: it leaves compiled
    code faster), of the attribute group ``sub`` (``(n, w)``, standardised) whose record
    ``i`` is released as ``centroids[labels[i]]``.

    ``margin`` is :func:`~microagg._risk_kernels.rival_margin` of the data, ``width``
    the interval's relative half-width, ``axes_rows`` the rows of the principal axes
    for the group's columns (``(w, r)``), ``per_record`` the cap of the rival list
    (:data:`~microagg._risk_kernels.RIVAL_PAIRS_PER_RECORD`, as
    :func:`~microagg._risk_kernels.rival_clusters` reads it).
    """
    n, w = sub.shape
    id_count = 0
    for i in range(n):
        for c in range(w):
            z = sub[i, c]
            if abs(centroids[labels[i], c] - z) <= width * abs(z):
                id_count += 1
    number, count = _value_classes(centroids)
    values = np.empty((count, w))
    for q in range(centroids.shape[0]):
        values[number[q]] = centroids[q]
    classes = np.empty(n, np.int64)
    for i in range(n):
        classes[i] = number[labels[i]]
    indptr, rivals = rival_clusters(sub, classes, values, margin, per_record)
    holders = np.empty(rivals.size, np.int64)
    for i in range(n):
        holders[indptr[i]:indptr[i + 1]] = i
    r = axes_rows.shape[1]
    projected = np.zeros((count, r))
    reach = 0.0
    for v in range(count):
        total = 0.0
        for c in range(w):
            total += abs(values[v, c])
            for b in range(r):
                projected[v, b] += values[v, c] * axes_rows[c, b]
        reach = max(reach, total)
    return id_count, classes.astype(np.int32), values, holders, rivals, projected, reach
