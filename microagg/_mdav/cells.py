"""The cell grid of the indexed engine: one byte per attribute and record (the VA-file idea).

Every record gets a **cell code** per attribute (:func:`grid`: 256 cells per attribute,
edges half uniform, half at quantiles). Per query, a table of squared gaps from the
query to every cell turns a record's codes into a bound on its distance that reads ``p``
bytes instead of ``8p`` (:func:`gap_tables` for lower bounds, :func:`upper_table` for
upper bounds, summed by :func:`code_sum`). The package docstring
(:mod:`microagg._mdav`) says why the bounds are safe.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import njit

__all__ = ["VA_CELLS", "Grid", "Workspace", "grid", "workspace", "gap_tables", "upper_table",
           "code_sum"]

#: Cells per attribute of the one-byte record codes.
VA_CELLS = 256


class Grid(NamedTuple):
    """Cell edges per attribute, ``(p, cells + 1)``, and each record's codes, ``(n, p)`` uint8.

    Record ``i`` lies in ``edges[j, codes[i, j]] <= X[i, j] <= edges[j, codes[i, j] + 1]``.
    """

    edges: np.ndarray
    codes: np.ndarray


class Workspace(NamedTuple):
    """Work arrays of one query at a time: a node stack with bounds, two ``p``-vectors (the
    query's direction, a centroid), the grid's edges and three ``(p, cells)`` tables."""

    stack_n: np.ndarray
    stack_b: np.ndarray
    uq: np.ndarray
    cvec: np.ndarray
    edges: np.ndarray
    TL: np.ndarray
    TH: np.ndarray
    T: np.ndarray


def grid(X: np.ndarray) -> Grid:
    """Cell edges per attribute and each record's cell codes (one byte per attribute).

    The edges of attribute ``j`` are sorted, start at its minimum and end at its
    maximum: half uniformly spaced (resolution in the sparse tails, where MDAV
    starts), half at quantiles of a sample (resolution where records crowd).
    Record ``i`` lies in its cells, which is all the bounds rely on; how the edges
    are placed only affects speed.

    Examples
    --------
    >>> import numpy as np
    >>> g = grid(np.array([[0.0], [1.0], [3.0]]))
    >>> g.edges.shape, g.codes[:, 0].tolist()
    ((1, 257), [0, 85, 255])
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
    return Grid(edges, codes)


@njit
def workspace(edges, p):  # type: ignore[no-untyped-def]
    """A :class:`Workspace` for queries in ``p`` dimensions on the grid ``edges``."""
    cells = edges.shape[1] - 1
    return Workspace(np.empty(256, np.int64), np.empty(256), np.empty(p), np.empty(p), edges,
                     np.empty((p, cells)), np.empty((p, cells)), np.empty((p, cells)))


@njit
def gap_tables(edges, q, TL, TH, T):  # type: ignore[no-untyped-def]
    """Squared gaps from ``q`` to the cells: ``TL`` below a cell's lower edge, ``TH`` above
    its upper edge, ``T`` to the cell (``TL + TH``, one of which is 0).

    A record's ``T`` entries (or a box's ``TL`` of its lowest and ``TH`` of its
    highest cells), summed over the attributes in column order, are at most the
    computed squared distance of every record inside: the gaps are computed
    from edges on the far side of the record, rounding is monotone, and the
    additions come in the order of ``sqdist_row``. No safety margin is needed.
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
def upper_table(edges, q, T):  # type: ignore[no-untyped-def]
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
def code_sum(T, codes, a):  # type: ignore[no-untyped-def]
    """Sum of ``T[j, codes[a, j]]`` in column order."""
    s = 0.0
    for j in range(codes.shape[1]):
        s += T[j, codes[a, j]]
    return s
