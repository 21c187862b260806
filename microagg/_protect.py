"""The practitioner's entry point: protect the numeric columns of a table.

:func:`microaggregate` is what a statistician calls on a pandas DataFrame: it
chooses the columns, standardises them, runs one of the heuristics, and
returns a copy of the table in which the chosen columns hold group centroids in
their original units. Everything else in the table (other columns, index,
column order) is untouched. :ref:`chap-mdav` uses it.

A column released unprotected by accident is the worst failure here, so the
default choice of columns (every numeric column) refuses to guess: duplicate
column names, and numbers stored as text (``"1,000"``, ``"$5"``, a stray ``"x"``),
are errors naming the columns; an index written into the file (``Unnamed: 0``, or
a first column counting 0, 1, ..., n-1) is not used as a quasi-identifier. The
result reports which columns were protected and which passed through unchanged.

With ``strata=[...]`` each stratum is microaggregated on its own (no group crosses a
stratum); the strata logic, shared with the command line and :mod:`microagg.dask`,
is in :mod:`microagg._strata`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ._core import aggregate, group_sizes, loss_summary, zscores
from ._methods import get_method
from ._strata import check_policy, strata_list, stratified
from ._validate import as_matrix, check_k, column_labels

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
        The microaggregated (protected) columns.
    method, k, params
        The heuristic and its settings.
    sse, sst, information_loss : float
        Measured on the scale the partition was built on (z-scores when
        ``standardize=True``), so IL is comparable with the papers (SSE and SST
        are ``inf`` if they exceed the float64 range; IL is always finite). With
        strata, they measure the whole released table on the whole table's
        z-scores, so they compare with an unstratified run.
    group_sizes : numpy.ndarray
        Size of each group.
    passed_through : list
        The columns copied unchanged (not protected).
    notes : list of str
        Why a numeric column was not chosen by default (e.g. a row index).
    strata : pandas.DataFrame or None
        With ``strata=`` (group labels are then numbered stratum after stratum, unique
        over the table): one row per stratum (indexed by its key, in sorted order):
        ``records``, ``protected_with`` (the stratum it was protected with: itself,
        or the stratum a small one was merged into), and the figures of that unit:
        ``unit_records``, ``groups``, ``information_loss`` (on the unit's own z-scores),
        ``sse``, ``sst`` and ``seconds`` (time to partition and aggregate it).
    merged : dict
        Each small stratum's key and the key of the stratum it was merged into.
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
    passed_through: list[Any] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    strata: pd.DataFrame | None = None
    merged: dict[Any, Any] = field(default_factory=dict)

    @property
    def n_groups(self) -> int:
        return int(self.group_sizes.size)


def microaggregate(df: pd.DataFrame, k: int, *, method: str = "mdav", columns: Any = None,
                   standardize: bool = True, strata: Any = None, small_strata: str = "error",
                   return_info: bool = False, **params: Any
                   ) -> pd.DataFrame | tuple[pd.DataFrame, MicroaggregationInfo]:
    r"""Microaggregate columns of a table and return the protected copy.

    Book: :ref:`chap-mdav`.

    Parameters
    ----------
    df : pandas.DataFrame
        The microdata, one row per respondent; unique column names.
    k : int
        Minimum group size: each released combination is shared by ``k`` rows or more.
    method : str, default "mdav"
        A registered method (:func:`microagg.list_methods`).
    columns : column label or sequence of column labels, optional
        Columns to protect jointly (``"age"`` means that one column). Default:
        every numeric (non-boolean) column except a first column that is a row
        index (``Unnamed: 0``, or ``0..n-1``). Others are copied unchanged.
    standardize : bool, default True
        Build the partition on z-scores (population standard deviation), so that
        large units do not dominate; the released centroids are in original units.
        With strata, each stratum is standardised on its own.
    strata : column label or sequence of column labels, optional
        Protect each stratum (combination of these columns' values) on its own: no
        group crosses a stratum. Strata columns are copied, never protected.
    small_strata : {"error", "merge"}, default "error"
        A stratum of fewer than ``k`` records is an error naming it, or is protected
        with the stratum of ``k`` or more whose centroid is nearest on the whole table's
        z-scores (ties: the first in sorted order), reported in ``info.merged``.
    return_info : bool, default False
        Also return a :class:`MicroaggregationInfo` (columns, IL, groups, strata).
    **params
        Passed to the heuristic, e.g. ``gamma=1.1`` for V-MDAV.

    Returns
    -------
    pandas.DataFrame, or (pandas.DataFrame, MicroaggregationInfo)
        A new table with the same index, columns and row order; the chosen columns
        hold the group means :math:`\bar{\mathbf{x}}_i` of each row's group.

    Raises
    ------
    TypeError
        If a chosen column is not numeric, or ``method`` is not a string.
    ValueError
        On NaN/inf, an unknown method, option or column, ``k`` outside ``1..n``, a
        constant column (if standardising), duplicate column names, or (default
        choice) numbers stored as text. Strata: an unknown or protected strata
        column, a missing stratum value, a stratum under ``k`` with ``"error"``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [23, 25, 24, 61, 64, 60], "town": list("abcdef")})
    >>> out = microaggregate(df, k=3)
    >>> out["age"].tolist()
    [24.0, 24.0, 24.0, 61.666666666666664, 61.666666666666664, 61.666666666666664]
    >>> out["town"].tolist()  # untouched
    ['a', 'b', 'c', 'd', 'e', 'f']

    Within strata (groups never mix two regions):

    >>> df["region"] = ["N", "N", "S", "S", "S", "N"]
    >>> out, info = microaggregate(df, k=3, strata="region", return_info=True)
    >>> out["age"].tolist()
    [36.0, 36.0, 49.666666666666664, 49.666666666666664, 49.666666666666664, 36.0]
    >>> info.strata[["records", "groups"]].to_dict("index")
    {'N': {'records': 3, 'groups': 1}, 'S': {'records': 3, 'groups': 1}}
    """
    spec, columns, notes = _check_call(df, method, columns, params, strata)
    strata = None if strata is None else strata_list(strata, df.columns)
    X = as_matrix(df[columns], name="the chosen columns")
    k = check_k(k, X.shape[0])
    out, info = _run(df, X, k, spec, columns, standardize=standardize, strata=strata,
                     small_strata=small_strata, params=params, return_info=return_info)
    passed = [c for c in df.columns if c not in set(columns)]
    return (out, MicroaggregationInfo(method=method, k=k, params=dict(params), notes=notes,
                                      passed_through=passed, **info)) if return_info else out


def _run(df: pd.DataFrame, X: np.ndarray, k: int, spec: Any, columns: list[Any], *,
         standardize: bool, strata: list[Any] | None, small_strata: Any,
         params: dict[str, Any], return_info: bool) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The protected table, and (if asked) the measured fields of the info object."""
    Z = zscores(X, columns) if standardize else X
    report, merged = None, {}
    if strata is None:
        labels = np.asarray(spec.function(Z, k, **params), dtype=np.int64)
        released = aggregate(X, labels)
    else:
        released, labels, report, merged = stratified(
            df, X, k, spec.function, params, strata=strata, policy=check_policy(small_strata),
            standardize=standardize, columns=columns)
    out = df.copy()
    out[columns] = released
    if not return_info:
        return out, {}
    within, total, il = loss_summary(Z, labels)
    return out, {"labels": labels, "columns": list(columns), "sse": within, "sst": total,
                 "information_loss": il, "group_sizes": group_sizes(labels),
                 "strata": report, "merged": merged}


#: Characters that make a number text: thousands separators, currency, percent, blanks.
_DECORATION = r"[\s,$\u20ac\u00a3\u00a5%_']"


def _check_call(df: Any, method: Any, columns: Any, params: dict[str, Any], strata: Any = None
                ) -> tuple[Any, list[Any], list[str]]:
    """The method's registry entry, the columns to protect and the notes on the choice.

    Strata columns are never protected: by default they are left out of the choice,
    and naming one in ``columns`` is an error.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}; "
                        "for arrays call a heuristic (e.g. microagg.mdav) and microagg.aggregate")
    spec = get_method(method)
    unknown = sorted(set(params) - set(spec.options))
    if unknown:
        raise ValueError(f"option(s) {unknown} do not apply to method {method!r}; "
                         f"it accepts {list(spec.options) or 'no options'}")
    if strata is None:
        columns, notes = _choose_columns(df, columns)
        return spec, columns, notes
    names = strata_list(strata, df.columns)
    if columns is not None:
        both = [c for c in _named_columns(df, columns) if c in names]
        if both:
            raise ValueError(f"column(s) {both} are strata and cannot also be protected: a "
                             "strata column is released unchanged; leave it out of columns")
    columns, notes = _choose_columns(df.drop(columns=names), columns)
    return spec, columns, notes


def _choose_columns(df: pd.DataFrame, columns: Any) -> tuple[list[Any], list[str]]:
    """The columns to protect (those named, or the default choice) and notes on the choice."""
    dup = list(dict.fromkeys(c for c in df.columns[df.columns.duplicated()]))
    if dup:
        raise ValueError(f"the table has duplicate column names {dup}: a repeated name cannot "
                         "be protected or reported unambiguously; rename the columns first")
    if columns is not None:
        return _named_columns(df, columns), []
    notes: list[str] = []
    chosen = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])
              and not pd.api.types.is_bool_dtype(df[c])]
    textual = {c: v for c in df.columns if c not in chosen
               and (v := _numeric_text_sample(df[c])) is not None}
    if textual:
        shown = ", ".join(f"{c!r} (e.g. {v!r})" for c, v in textual.items())
        raise ValueError(
            f"column(s) {shown} hold numbers stored as text (or objects), so they would be "
            "released unprotected; convert them (e.g. pd.to_numeric after removing ',' and "
            "'$'), or name the columns to protect (columns=[...], --columns on the command line)")
    if chosen and chosen[0] == df.columns[0] and _is_row_index(df, chosen[0]):
        notes.append(f"{chosen[0]!r} looks like a row index (the first column, "
                     f"{'named by pandas' if str(chosen[0]).startswith('Unnamed') else '0..n-1'}"
                     "): not protected; name it in columns to protect it")
        chosen = chosen[1:]
    if not chosen:
        raise TypeError("df has no numeric columns to microaggregate")
    return chosen, notes


def _named_columns(df: pd.DataFrame, columns: Any) -> list[Any]:
    return column_labels(columns, df.columns, "columns")


def _numeric_text_sample(col: pd.Series) -> Any:
    """A telling value if ``col`` (not of a numeric dtype) mostly holds numbers, else None.

    "Mostly": at least half of its non-missing values read as numbers once thousands
    separators, currency and percent signs are removed. The sample is the first value
    that does not read as a plain number (``"1,000"``, ``"x"``), else the first value.
    """
    if pd.api.types.is_bool_dtype(col) or pd.api.types.is_datetime64_any_dtype(col):
        return None
    values = col.dropna()
    if values.empty:
        return None
    text = values.astype(str)
    cleaned = pd.to_numeric(text.str.replace(_DECORATION, "", regex=True), errors="coerce")
    if cleaned.notna().mean() < 0.5:
        return None
    plain = pd.to_numeric(text, errors="coerce")
    odd = values[plain.isna().to_numpy()]
    return (odd.iloc[0] if len(odd) else values.iloc[0])


def _is_row_index(df: pd.DataFrame, c: Any) -> bool:
    """True for an index written into the file: ``Unnamed: 0``, or the integers 0..n-1."""
    if str(c).startswith("Unnamed: 0"):
        return True
    col = df[c]
    return (len(col) > 1 and pd.api.types.is_integer_dtype(col)
            and bool((col.to_numpy() == np.arange(len(col))).all()))
