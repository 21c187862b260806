r"""Partitions, centroids and the information-loss measures.

A *k-partition* of ``n`` records is an ``(n,)`` integer array of group labels
(like scikit-learn's ``labels_``) in which every group holds at least ``k``
records. Publishing a k-partition means replacing each record by its group's
centroid (:func:`aggregate`); the price of doing so is measured by the
within-group sum of squares (:func:`sse`) relative to the total sum of squares
(:func:`sst`):

.. math::

    \mathrm{SSE} = \sum_{i=1}^{s}\sum_{j=1}^{n_i}
        (\mathbf{x}_{ij}-\bar{\mathbf{x}}_i)^\top(\mathbf{x}_{ij}-\bar{\mathbf{x}}_i),
    \qquad
    \mathrm{IL} = 100\,\frac{\mathrm{SSE}}{\mathrm{SST}}.

The formulas are those of Domingo-Ferrer & Mateo-Sanz (2002), used by every
paper in the book; :ref:`chap-foundations` explains them.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ._validate import (
    as_labels,
    as_matrix,
    check_count,
    lined_up_labels,
    scale_exponent,
    unscale_square,
)

__all__ = [
    "standardize",
    "sse",
    "sst",
    "information_loss",
    "aggregate",
    "group_sizes",
    "is_k_partition",
    "relabel",
]


def standardize(X: Any) -> Any:
    r"""Centre each attribute and divide it by its population standard deviation.

    .. math:: z_{ij} = \frac{x_{ij} - \bar{x}_j}{\sigma_j},\qquad
              \sigma_j^2 = \frac{1}{n}\sum_{i=1}^n (x_{ij}-\bar{x}_j)^2

    The population convention (``ddof=0``) is the one under which the published
    MDAV results reproduce; with it every attribute contributes exactly ``n`` to
    the SST, so ``sst(standardize(X)) == n * p`` (14040 for Census).

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    X : array_like or pandas.DataFrame, shape (n, p)
        Numeric data. A DataFrame comes back as a DataFrame with the same index
        and column names.

    Returns
    -------
    numpy.ndarray or pandas.DataFrame
        The z-scores.

    Raises
    ------
    ValueError
        If a column has zero variance (it cannot be standardised; the message
        names it), or on NaN/inf/empty input.
    TypeError
        On non-numeric columns.

    Notes
    -----
    A column whose values are beyond about ``1e30`` (or all below ``1e-30``) is
    first multiplied by a power of two, which is exact, so its z-scores are those
    of exact arithmetic instead of zeros from an overflowing variance.

    See Also
    --------
    sst : equals ``n * p`` on standardised data.

    Examples
    --------
    >>> standardize([[1.0, 10.0], [3.0, 30.0]]).tolist()
    [[-1.0, -1.0], [1.0, 1.0]]
    """
    arr = as_matrix(X)
    names = list(X.columns) if isinstance(X, pd.DataFrame) else list(range(arr.shape[1]))
    Z = zscores(arr, names)
    if isinstance(X, pd.DataFrame):
        return pd.DataFrame(Z, index=X.index, columns=X.columns)
    return Z


def constant_columns(names: list[Any]) -> ValueError:
    """The error for columns with zero variance (as float64 holds them), naming them."""
    return ValueError(
        f"column(s) {names} have zero variance (a constant value) and cannot be "
        "standardised; drop them: they carry no information to protect. (Integers beyond "
        "2**53 that differ by less than a float64 can tell apart count as equal: such a "
        "column is usually an identifier; keep it unchanged on purpose or drop it.)"
    )


def zscores(arr: np.ndarray, names: list[Any]) -> np.ndarray:
    """:func:`standardize` of a checked array; errors name the columns by ``names``."""
    # Columns beyond ~1e30 or below ~1e-30 are first multiplied by a power of two (exact):
    # their squares would overflow or underflow, and z-scores do not depend on the unit.
    e = scale_exponent(arr, axis=0)
    if e.any():
        arr = np.ldexp(arr, e)
    mean = arr.mean(axis=0)
    std = arr.std(axis=0)  # ddof=0: population standard deviation
    # constant: one value throughout (told exactly; a mean that rounds, as that of sixty
    # 0.1s does, would leave a spread of 1e-17 and z-scores of -1)
    zero = np.flatnonzero((std == 0) | ((arr == arr[:1]).all(axis=0) & (len(arr) > 0)))
    if zero.size:
        raise constant_columns([names[j] for j in zero])
    Z = arr - mean
    Z /= std  # (in place: the values of (arr - mean) / std, without a second array)
    bad = np.flatnonzero(~np.isfinite(Z).all(axis=0))
    if bad.size:  # not expected after rescaling; never return a silently wrong z-score
        raise ValueError(f"column(s) {[names[j] for j in bad]} cannot be standardised in "
                         "float64 (their spread is too small relative to their values)")
    return Z


def sst(X: Any) -> float:
    r"""Total sum of squares: squared distances of all records to the global centroid.

    .. math:: \mathrm{SST} = \sum_{i=1}^{n} (\mathbf{x}_i-\bar{\mathbf{x}})^\top
              (\mathbf{x}_i-\bar{\mathbf{x}})

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    X : array_like, shape (n, p)
        The records (finite numbers).

    Returns
    -------
    float

    Examples
    --------
    >>> sst([[0.0], [2.0]])
    2.0

    Raises
    ------
    ValueError
        If the sum exceeds the float64 range (values beyond about ``1e150``).
    """
    arr = as_matrix(X)
    e = scale_exponent(arr)
    return unscale_square(_sst(np.ldexp(arr, e) if e else arr), e, "SST")


def _sst(arr: np.ndarray) -> float:
    centred = arr - arr.mean(axis=0)
    return float(np.einsum("ij,ij->", centred, centred))


def sse_any_scale(arr: np.ndarray, labels: np.ndarray) -> float:
    """SSE of checked data in their own units, for result objects: ``inf`` beyond float64.

    (Public :func:`sse` raises instead.) Computed on the data rescaled by a power of
    two where squares would overflow or underflow.
    """
    e = scale_exponent(arr)
    if not e:
        return _sse(arr, labels)
    return _ldexp_or_inf(_sse(np.ldexp(arr, e), labels), -2 * e)


class Loss(NamedTuple):
    """A partition's within-group and total sums of squares, and the information loss
    ``100 * sse / sst`` (in percent; 0 when ``sst`` is 0)."""

    sse: float
    sst: float
    information_loss: float


def loss_summary(arr: np.ndarray, labels: np.ndarray) -> Loss:
    """The :class:`Loss` of checked data, for result objects.

    IL is measured scale-free (finite for any finite data); SSE and SST are in the
    data's units, ``inf`` where float64 cannot hold them; IL is 0 when SST is 0.
    """
    e = scale_exponent(arr)
    scaled = np.ldexp(arr, e) if e else arr
    within, total = _sse(scaled, labels), _sst(scaled)
    il = 100.0 * within / total if total else 0.0
    if e:
        within, total = (_ldexp_or_inf(v, -2 * e) for v in (within, total))
    return Loss(within, total, il)


def _ldexp_or_inf(value: float, e: int) -> float:
    try:
        return math.ldexp(value, e)
    except OverflowError:
        return math.inf


def _sse(arr: np.ndarray, lab: np.ndarray) -> float:
    inverse, counts = _group_index(lab)
    diff = arr - _centroids(arr, inverse, counts)[inverse]
    return float(np.einsum("ij,ij->", diff, diff))


def _group_index(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(inverse, counts)``: each record's group as 0..s-1, and group sizes."""
    _, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    return inverse.reshape(-1), counts


def _centroids(arr: np.ndarray, inverse: np.ndarray, counts: np.ndarray) -> np.ndarray:
    sums = np.zeros((counts.size, arr.shape[1]))
    np.add.at(sums, inverse, arr)
    return sums / counts[:, None]


def sse(X: Any, labels: Any) -> float:
    r"""Within-group sum of squared errors of a partition.

    .. math:: \mathrm{SSE} = \sum_{i=1}^{s}\sum_{j=1}^{n_i}
              \lVert\mathbf{x}_{ij}-\bar{\mathbf{x}}_i\rVert^2

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    X : array_like, shape (n, p)
    labels : array_like of int, shape (n,)
        Group label of each record (a Series is matched to a DataFrame ``X`` by row
        label, as pandas matches them; labels it cannot match are an error).

    Examples
    --------
    >>> sse([[0.0], [2.0], [10.0], [12.0]], [0, 0, 1, 1])
    4.0

    Raises
    ------
    ValueError
        If the labels are not integers or do not match the data, or if the sum
        exceeds the float64 range (values beyond about ``1e150``;
        :func:`information_loss`, a ratio, has no such limit).

    Notes
    -----
    Computed on the data times a power of two where squares would overflow or
    underflow (exact); a sum below the float64 range (values below about
    ``1e-160``) is returned as the nearest float, possibly 0.0.
    """
    arr = as_matrix(X)
    lab = as_labels(lined_up_labels(labels, X), arr.shape[0])
    e = scale_exponent(arr)
    return unscale_square(_sse(np.ldexp(arr, e) if e else arr, lab), e, "SSE")


def information_loss(X: Any, labels: Any) -> float:
    r"""Information loss in percent, :math:`\mathrm{IL} = 100\,\mathrm{SSE}/\mathrm{SST}`.

    0 means nothing was lost (every group is a set of identical records); 100
    means every record was replaced by the global mean.

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    X : array_like, shape (n, p)
        The records, on the scale the loss is measured on (the book standardises first).
    labels : array_like of int, shape (n,)
        The group of each record (a Series is matched to a DataFrame ``X`` by row
        label, as pandas matches them; labels it cannot match are an error).

    Returns
    -------
    float
        IL in percent, between 0 and 100.

    Examples
    --------
    >>> round(information_loss([[0.0], [2.0], [10.0], [12.0]], [0, 0, 1, 1]), 3)
    3.846

    Notes
    -----
    The ratio does not depend on the unit of the data, so it is measured on the
    data rescaled by a power of two where their squares would overflow or
    underflow: it is finite for every finite input.
    """
    arr = as_matrix(X)
    lab = as_labels(lined_up_labels(labels, X), arr.shape[0])
    e = scale_exponent(arr)
    if e:
        arr = np.ldexp(arr, e)
    total = _sst(arr)
    if total == 0:
        raise ValueError("SST is zero (all records are identical): information loss is undefined")
    return 100.0 * _sse(arr, lab) / total


def aggregate(X: Any, labels: Any) -> Any:
    r"""Replace every record by the centroid of its group (the released data).

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    X : array_like or pandas.DataFrame, shape (n, p)
    labels : array_like of int, shape (n,)
        The group of each record (a Series is matched to a DataFrame ``X`` by row
        label, as pandas matches them; labels it cannot match are an error).

    Returns
    -------
    numpy.ndarray or pandas.DataFrame
        Same shape (and, for a DataFrame, same index and column names) as ``X``.
        Each column mean is preserved, and each released row is shared by all
        members of its group.

    Examples
    --------
    >>> aggregate([[0.0], [2.0], [10.0], [12.0]], [0, 0, 1, 1]).ravel().tolist()
    [1.0, 1.0, 11.0, 11.0]
    """
    arr = as_matrix(X)
    lab = as_labels(lined_up_labels(labels, X), arr.shape[0])
    centre, inverse = group_centroids(arr, lab)
    out = centre[inverse]
    if isinstance(X, pd.DataFrame):
        return pd.DataFrame(out, index=X.index, columns=X.columns)
    return out


def group_centroids(arr: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(centroids, inverse)`` of a checked array and labels: ``centroids[inverse]`` is
    :func:`aggregate`'s output, without an array of the data's size."""
    inverse, counts = _group_index(labels)
    e = scale_exponent(arr)  # sums of values near 1e308 would overflow: rescale (exact)
    centre = _centroids(np.ldexp(arr, e) if e else arr, inverse, counts)
    return (np.ldexp(centre, -e) if e else centre), inverse


def group_sizes(labels: Any) -> np.ndarray:
    """Sizes of the groups, in the order of their sorted labels.

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    labels : array_like of int, shape (n,)
        The group of each record.

    Returns
    -------
    numpy.ndarray of int64
        One size per distinct label.

    Examples
    --------
    >>> group_sizes([1, 0, 1, 1]).tolist()
    [1, 3]
    """
    lab = as_labels(labels)
    if lab.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.unique(lab, return_counts=True)[1]


def is_k_partition(labels: Any, k: int, *, max_size: int | None = None) -> bool:
    """True when every group holds at least ``k`` records (and at most ``max_size``).

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    labels : array_like of int, shape (n,)
        The group of each record.
    k : int
        Minimum group size, at least 1. With fewer than ``k`` records (or none) the answer
        is ``False``.
    max_size : int, optional
        Maximum group size (e.g. ``2 * k - 1``); no maximum if omitted.

    Returns
    -------
    bool

    Examples
    --------
    >>> is_k_partition([0, 0, 0, 1, 1, 1], 3)
    True
    >>> is_k_partition([0, 0, 1, 1, 1], 3)
    False
    >>> is_k_partition([0, 0], 3)  # fewer records than k: no group can hold k
    False
    """
    sizes = group_sizes(labels)
    k = check_count(k, "k", 1)
    if sizes.size == 0:
        return False
    ok = bool(sizes.min() >= k)
    if max_size is not None:
        ok = ok and bool(sizes.max() <= max_size)
    return ok


def relabel(labels: Any) -> np.ndarray:
    """Renumber groups 0..s-1 in order of first appearance (a canonical form).

    Two label arrays describe the same partition exactly when their
    ``relabel`` forms are equal.

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    labels : array_like of int, shape (n,)
        The group of each record.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)

    Examples
    --------
    >>> relabel([7, 7, 2, 5, 2]).tolist()
    [0, 0, 1, 2, 1]
    """
    lab = as_labels(labels)
    _, first, inverse = np.unique(lab, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    return order[inverse.reshape(-1)].astype(np.int64)
