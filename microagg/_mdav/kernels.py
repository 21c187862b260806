"""Kernels every engine shares: the squared distance, and the heap of the nearest records.

One definition of the arithmetic is what makes the engines agree bit for bit: squared
distances are summed attribute by attribute in column order (:func:`sqdist_row` per
record, :func:`sqdist` with one numpy operation per column), and the nearest records
are kept ordered by (distance, input position), so ties go to the earlier record.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit

__all__ = ["sqdist", "sqdist_row", "after", "offer", "sort_pairs"]


def sqdist(A: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Squared Euclidean distance from each row of ``A`` to the vector ``v`` (direct).

    Summed one attribute at a time, in column order: the same additions, in the
    same order, as :func:`sqdist_row`, so every engine sees bit-identical distances.

    Examples
    --------
    >>> import numpy as np
    >>> sqdist(np.array([[0.0, 0.0], [3.0, 4.0]]), np.zeros(2)).tolist()
    [0.0, 25.0]
    """
    diff = A - v
    out = diff[:, 0] * diff[:, 0]
    for j in range(1, diff.shape[1]):
        out += diff[:, j] * diff[:, j]
    return out


@njit
def sqdist_row(X, i, v):  # type: ignore[no-untyped-def]
    """Squared Euclidean distance from record ``i`` of ``X`` to the vector ``v``."""
    s = 0.0
    for j in range(X.shape[1]):
        t = X[i, j] - v[j]
        s += t * t
    return s


@njit(inline="always")
def after(d1, a1, d2, a2):  # type: ignore[no-untyped-def]
    """Whether (distance ``d1``, position ``a1``) comes after (``d2``, ``a2``): farther, or
    equally far and later in the input."""
    return d1 > d2 or (d1 == d2 and a1 > a2)


@njit
def offer(heap_d, heap_a, count, size, s, a):  # type: ignore[no-untyped-def]
    """Offer record position ``a`` at squared distance ``s`` to a max-heap of the best ``size``.

    The heap is ordered by (distance, position), so among equal distances the
    later record is the first to go: the kept set is exactly the first ``size``
    of a stable sort. Returns the new number of entries.
    """
    if count == size:
        if after(s, a, heap_d[0], heap_a[0]):
            return count  # not better than the worst kept: the usual, cheap case
        i = 0  # replace the worst (the root) and sift down
        while True:
            child = 2 * i + 1
            if child >= count:
                break
            if child + 1 < count and after(heap_d[child + 1], heap_a[child + 1],
                                           heap_d[child], heap_a[child]):
                child += 1
            if after(heap_d[child], heap_a[child], s, a):
                heap_d[i] = heap_d[child]
                heap_a[i] = heap_a[child]
                i = child
            else:
                break
        heap_d[i] = s
        heap_a[i] = a
        return count
    i = count  # not yet full: append and sift up
    while i > 0:
        parent = (i - 1) // 2
        if after(s, a, heap_d[parent], heap_a[parent]):
            heap_d[i] = heap_d[parent]
            heap_a[i] = heap_a[parent]
            i = parent
        else:
            break
    heap_d[i] = s
    heap_a[i] = a
    return count + 1


@njit
def sort_pairs(dist, out, count):  # type: ignore[no-untyped-def]
    """Sort ``out[:count]`` (positions) and ``dist[:count]`` by (distance, position)."""
    for i in range(1, count):
        s = dist[i]
        a = out[i]
        j = i
        while j > 0 and after(dist[j - 1], out[j - 1], s, a):
            dist[j] = dist[j - 1]
            out[j] = out[j - 1]
            j -= 1
        dist[j] = s
        out[j] = a
