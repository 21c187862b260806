"""Input checks shared by every public function.

Every algorithm in :mod:`microagg` accepts "a 2-D float array" (or a pandas
DataFrame of numeric columns). The helpers here turn the input into a C-ordered
``float64`` array and refuse, with a message that names the problem, anything
that would otherwise give a silently wrong answer: NaN or infinite values,
non-numeric columns, empty data, 1-D input, a ``k`` outside ``1..n``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_matrix", "check_k", "check_count", "as_labels"]


def as_matrix(X: Any, name: str = "X", *, min_rows: int = 1) -> np.ndarray:
    """Return ``X`` as a finite, C-contiguous ``(n, p)`` float64 array.

    Raises
    ------
    TypeError
        If ``X`` has non-numeric columns (strings, objects, datetimes).
    ValueError
        If ``X`` is not 2-D, has no rows or columns, or holds NaN/inf.
    """
    columns = None
    if hasattr(X, "dtypes") and hasattr(X, "columns"):  # a pandas DataFrame
        bad = [str(c) for c, t in X.dtypes.items() if not _is_numeric_dtype(t)]
        if bad:
            raise TypeError(
                f"{name} has non-numeric column(s) {bad}; microaggregation needs numbers "
                "(select numeric columns, or encode categories first)"
            )
        columns = list(X.columns)
        X = X.to_numpy(dtype=float)
    arr = np.asarray(X)
    if arr.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must be numeric, got dtype {arr.dtype}"
            + (" (it holds strings or objects)" if arr.dtype.kind in "OUS" else "")
        )
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D (n records x p attributes), got shape {arr.shape}; "
            "use X.reshape(-1, 1) for a single attribute"
        )
    n, p = arr.shape
    if n < min_rows or p == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); nothing to microaggregate")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.isfinite(arr).all():
        bad_rows = np.flatnonzero(~np.isfinite(arr).all(axis=1))
        cols = np.flatnonzero(~np.isfinite(arr).all(axis=0))
        where = [columns[c] for c in cols] if columns is not None else cols.tolist()
        raise ValueError(
            f"{name} contains NaN or infinite values in {bad_rows.size} row(s) "
            f"(first rows {bad_rows[:5].tolist()}, columns {where[:5]}); "
            "drop or impute them before microaggregating"
        )
    return arr


def _is_numeric_dtype(t: Any) -> bool:
    kind = getattr(t, "kind", "O")
    return kind in "biuf"


def check_k(k: Any, n: int, name: str = "k") -> int:
    """Check that ``k`` is an integer with ``1 <= k <= n`` and return it as ``int``."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {k!r}")
    k = int(k)
    if k < 1:
        raise ValueError(f"{name} must be at least 1, got {k}")
    if k > n:
        raise ValueError(
            f"{name}={k} is larger than the number of records n={n}: no {name}-partition exists"
        )
    return k


def check_count(value: Any, name: str, minimum: int) -> int:
    """Check that ``value`` is an integer (not a bool) of at least ``minimum``; return it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return int(value)


def as_labels(labels: Any, n: int | None = None) -> np.ndarray:
    """Return ``labels`` as an ``(n,)`` integer array, checking its length."""
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise TypeError(f"labels must be integers, got dtype {arr.dtype}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"labels has {arr.shape[0]} entries but the data has {n} records")
    return arr.astype(np.int64, copy=False)
