"""The practitioner's entry point: protect the numeric columns of a table.

:func:`microaggregate` is what a statistician calls on a pandas DataFrame: it
chooses the columns, standardises them, runs one of the heuristics, and
returns a copy of the table in which the chosen columns hold group centroids in
their original units. Everything else in the table (other columns, index,
column order) is untouched. Chapter 2 (``chapters/02_mdav.md``) uses it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ._validate import as_matrix, check_k
from .core import aggregate, group_sizes, sse, sst
from .core import standardize as _standardize
from .mdav import ivmdav, mdav, mdav_single, vmdav

__all__ = ["microaggregate", "MicroaggregationInfo", "METHODS"]


def _hybrid(X: np.ndarray, k: int, **params: Any) -> np.ndarray:
    from .genetic import hybrid  # the GA is loaded only when asked for

    return hybrid(X, k, **params)


#: Heuristics accepted by ``method=``; each maps (X, k, **params) to labels.
METHODS: dict[str, Callable[..., np.ndarray]] = {
    "mdav": mdav,
    "mdav_single": mdav_single,
    "vmdav": vmdav,
    "ivmdav": ivmdav,
    "hybrid": _hybrid,
}


@dataclass(frozen=True)
class MicroaggregationInfo:
    """What :func:`microaggregate` did, besides the protected table.

    Attributes
    ----------
    labels : numpy.ndarray
        Group of each row, in the table's row order.
    columns : list
        The microaggregated columns.
    method, k, params
        The heuristic and its settings.
    sse, sst, information_loss : float
        Measured on the scale the partition was built on (z-scores when
        ``standardize=True``), so IL is comparable with the papers.
    group_sizes : numpy.ndarray
        Size of each group.
    """

    labels: np.ndarray
    columns: list[Any]
    method: str
    k: int
    params: dict[str, Any] = field(default_factory=dict)
    sse: float = 0.0
    sst: float = 0.0
    information_loss: float = 0.0
    group_sizes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def n_groups(self) -> int:
        return int(self.group_sizes.size)


def microaggregate(
    df: pd.DataFrame,
    k: int,
    method: str = "mdav",
    columns: Sequence[Any] | None = None,
    standardize: bool = True,
    return_info: bool = False,
    **params: Any,
) -> pd.DataFrame | tuple[pd.DataFrame, MicroaggregationInfo]:
    r"""Microaggregate columns of a table and return the protected copy.

    Parameters
    ----------
    df : pandas.DataFrame
        The microdata, one row per respondent.
    k : int
        Minimum group size: every released combination of the chosen columns
        is shared by at least ``k`` rows.
    method : {"mdav", "mdav_single", "vmdav", "ivmdav", "hybrid"}
        The heuristic (see :mod:`microagg.mdav` and :mod:`microagg.genetic`).
    columns : sequence of column labels, optional
        Columns to protect jointly. Default: every numeric column. The other
        columns are copied unchanged.
    standardize : bool, default True
        Build the partition on z-scores (population standard deviation), so
        that attributes in large units do not dominate the distances. The
        released centroids are always in the original units.
    return_info : bool, default False
        Also return a :class:`MicroaggregationInfo` (labels, SSE, IL, ...).
    **params
        Passed to the heuristic, e.g. ``gamma=1.1`` for V-MDAV.

    Returns
    -------
    pandas.DataFrame, or (pandas.DataFrame, MicroaggregationInfo)
        A new table with the same index and columns; the chosen columns hold
        the group means :math:`\bar{\mathbf{x}}_i` of each row's group.

    Raises
    ------
    TypeError
        If a chosen column is not numeric.
    ValueError
        On NaN/inf values, an unknown method or column, k outside ``1..n``,
        or (with ``standardize=True``) a constant column.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [23, 25, 24, 61, 64, 60], "town": list("abcdef")})
    >>> out = microaggregate(df, k=3)
    >>> out["age"].tolist()
    [24.0, 24.0, 24.0, 61.666666666666664, 61.666666666666664, 61.666666666666664]
    >>> out["town"].tolist()  # untouched
    ['a', 'b', 'c', 'd', 'e', 'f']
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}; "
                        "for arrays call a heuristic (e.g. microagg.mdav) and microagg.aggregate")
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {sorted(METHODS)}")
    if columns is None:
        columns = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])
                   and not pd.api.types.is_bool_dtype(df[c])]
        if not columns:
            raise TypeError("df has no numeric columns to microaggregate")
    else:
        columns = list(columns)
        missing = [c for c in columns if c not in df.columns]
        if missing:
            raise ValueError(f"column(s) {missing} are not in the table")
        if not columns:
            raise ValueError("columns is empty: choose at least one column")
    part = df[columns]
    X = as_matrix(part, name="the chosen columns")
    k = check_k(k, X.shape[0])
    Z = _standardize(X) if standardize else X
    labels = np.asarray(METHODS[method](Z, k, **params), dtype=np.int64)
    out = df.copy()
    out[columns] = aggregate(X, labels)
    if not return_info:
        return out
    total = sst(Z)
    within = sse(Z, labels)
    info = MicroaggregationInfo(
        labels=labels, columns=list(columns), method=method, k=k, params=dict(params),
        sse=within, sst=total, information_loss=100.0 * within / total if total else 0.0,
        group_sizes=group_sizes(labels),
    )
    return out, info
