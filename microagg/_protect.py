"""The practitioner's entry point: protect the numeric columns of a table.

:func:`microaggregate` is what a statistician calls on a pandas DataFrame: it
chooses the columns, standardises them, runs one of the heuristics, and
returns a copy of the table in which the chosen columns hold group centroids in
their original units. Everything else in the table (other columns, index,
column order) is untouched. :ref:`chap-mdav` uses it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ._core import aggregate, group_sizes, sse, sst
from ._core import standardize as _standardize
from ._methods import get_method
from ._validate import as_matrix, check_k

__all__ = ["microaggregate", "MicroaggregationInfo"]


@dataclass(frozen=True)
class MicroaggregationInfo:
    """What :func:`microaggregate` did, besides the protected table.

    Book: :ref:`chap-mdav`.

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
    *,
    method: str = "mdav",
    columns: Sequence[Any] | None = None,
    standardize: bool = True,
    return_info: bool = False,
    **params: Any,
) -> pd.DataFrame | tuple[pd.DataFrame, MicroaggregationInfo]:
    r"""Microaggregate columns of a table and return the protected copy.

    Book: :ref:`chap-mdav`.

    Parameters
    ----------
    df : pandas.DataFrame
        The microdata, one row per respondent.
    k : int
        Minimum group size: every released combination of the chosen columns
        is shared by at least ``k`` rows.
    method : str, default "mdav"
        A registered method (:func:`microagg.list_methods`).
    columns : sequence of column labels, optional
        Columns to protect jointly. Default: every numeric column. The other
        columns are copied unchanged.
    standardize : bool, default True
        Build the partition on z-scores (population standard deviation), so that
        large units do not dominate; the released centroids are in original units.
    return_info : bool, default False
        Also return a :class:`MicroaggregationInfo`.
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
        On NaN/inf, an unknown method, option or column, ``k`` outside ``1..n``,
        or (``standardize=True``) a constant column.

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
    spec = get_method(method)
    unknown = sorted(set(params) - set(spec.options))
    if unknown:
        raise ValueError(f"option(s) {unknown} do not apply to method {method!r}; "
                         f"it accepts {list(spec.options) or 'no options'}")
    columns = _choose_columns(df, columns)
    X = as_matrix(df[columns], name="the chosen columns")
    k = check_k(k, X.shape[0])
    Z = _standardize(X) if standardize else X
    labels = np.asarray(spec.function(Z, k, **params), dtype=np.int64)
    out = df.copy()
    out[columns] = aggregate(X, labels)
    if not return_info:
        return out
    total, within = sst(Z), sse(Z, labels)
    return out, MicroaggregationInfo(
        labels=labels, columns=list(columns), method=method, k=k, params=dict(params),
        sse=within, sst=total, information_loss=100.0 * within / total if total else 0.0,
        group_sizes=group_sizes(labels))


def _choose_columns(df: pd.DataFrame, columns: Sequence[Any] | None) -> list[Any]:
    """The columns to protect: those named, or by default every numeric column."""
    if columns is None:
        chosen = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])
                  and not pd.api.types.is_bool_dtype(df[c])]
        if not chosen:
            raise TypeError("df has no numeric columns to microaggregate")
        return chosen
    chosen = list(columns)
    missing = [c for c in chosen if c not in df.columns]
    if missing:
        raise ValueError(f"column(s) {missing} are not in the table")
    if not chosen:
        raise ValueError("columns is empty: choose at least one column")
    return chosen
