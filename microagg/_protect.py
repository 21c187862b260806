"""The practitioner's entry point: protect the numeric columns of a table.

:func:`microaggregate` is what a statistician calls on a pandas DataFrame: it
chooses the columns, standardises them, runs one of the heuristics, and
returns a copy of the table in which the chosen columns hold group centroids in
their original units. Everything else in the table (other columns, index,
column order) is untouched. :ref:`chap-mdav` uses it.

A column released unprotected by accident is the worst failure here, so the
columns' roles follow the release contract of :mod:`microagg._release`, decided on
the whole table: a column that is numeric or looks numeric (text holding a digit in any
share of its rows, such as ``"1,000"``, ``"$5"``, ``"170 cm"`` or ``"ID 123"``; timedeltas;
nested numbers) must be protected or named in ``keep``, else it is an error naming it; an
index written into the file (a first column counting 0, 1, ..., n-1, or 1, ..., n
under an empty header) is kept, not used as a quasi-identifier, and a first column
under an empty header (``Unnamed: 0``) holding other numbers is an error asking
whether to keep or protect it. The index, returned with the release, is judged as a
column: one that numbers the rows (pandas' default) or holds text without digits passes,
one holding
other numbers (a filtered frame's original row numbers, ``set_index("income")``) is an
error unless named in ``keep``. The result reports which columns were protected, kept
and passed through unchanged.

With ``strata=[...]`` each stratum is microaggregated on its own (no group crosses a
stratum); the strata logic, shared with the command line and :mod:`microagg.dask`,
is in :mod:`microagg._strata`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from ._core import aggregate, group_sizes, loss_summary, zscores
from ._defaults import METHOD, SMALL_STRATA_POLICY
from ._methods import check_options, get_method, seeded
from ._release import (
    IndexProfile,
    Roles,
    check_release_k,
    decide_index,
    decide_roles,
    profile_frame,
    profile_index,
    protectable,
    split_keep,
)
from ._strata import check_policy, merged_notes, strata_list, stratified
from ._validate import as_matrix, check_flags, check_k

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
        z-scores, so they compare with an unstratified run. Where SST is 0 (every
        record the same, possible only with ``standardize=False``) nothing can be
        lost and IL is reported as 0, where :func:`microagg.information_loss`, asked
        for the ratio itself, refuses 0/0.
    group_sizes : numpy.ndarray
        Size of each group.
    passed_through : list
        The columns copied unchanged (not protected): strata, kept and text columns.
    notes : list of str
        Why a numeric column was not chosen by default (e.g. a row index), and how
        merged strata were released.
    strata : pandas.DataFrame or None
        With ``strata=`` (group labels are then numbered stratum after stratum, unique
        over the table): one row per stratum (indexed by its key, in sorted order):
        ``records``, ``protected_with`` (the stratum it was protected with: itself,
        or the stratum a small one was merged into), and the figures of that unit:
        ``unit_records``, ``groups``, ``information_loss`` (on the unit's own z-scores),
        ``sse``, ``sst`` and ``seconds`` (time to partition and aggregate it).
    merged : dict
        Each small stratum's key and the key of the stratum it was merged into; its rows
        are released under that key (so each released combination of strata keys and
        protected columns is shared by ``k`` rows or more).
    kept : list
        What was released exactly as it was on purpose: the columns named in ``keep`` and a
        row index, then the index levels named in ``keep``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [23, 25, 24, 61, 64, 60], "town": list("abcdef")})
    >>> out, info = microaggregate(df, k=3, return_info=True)
    >>> info.columns, info.passed_through, info.group_sizes.tolist()
    (['age'], ['town'], [3, 3])
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
    kept: list[Any] = field(default_factory=list)

    @property
    def n_groups(self) -> int:
        return int(self.group_sizes.size)


def microaggregate(df: pd.DataFrame, k: int, *, method: str = METHOD, columns: Any = None,
                   standardize: bool = True, strata: Any = None,
                   small_strata: str = SMALL_STRATA_POLICY,
                   keep: Any = None, keep_rest: bool = False, return_info: bool = False,
                   progress: bool = False, **params: Any
                   ) -> pd.DataFrame | tuple[pd.DataFrame, MicroaggregationInfo]:
    r"""Microaggregate columns of a table and return the protected copy.

    Book: :ref:`chap-mdav`.

    Parameters
    ----------
    df : pandas.DataFrame
        The microdata, one row per respondent; unique column names.
    k : int
        Minimum group size: each released combination is shared by ``k`` rows or more;
        at least 2 (at ``k = 1`` each record would be released as it is).
    method : str, default "mdav"
        A registered method (:func:`microagg.list_methods`).
    columns : column label or sequence of column labels, optional
        Columns to protect jointly (``"age"`` means that one column). Default:
        every numeric (non-boolean) column except strata, kept columns and a first
        column that is a row index (``0..n-1``, or ``1..n`` under an empty header, as
        ``Unnamed: 0``; kept unchanged). A first column ``Unnamed: 0`` holding other
        numbers is an error: name it here or in ``keep``.
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
        z-scores (ties: the first in sorted order), reported in ``info.merged``; its
        rows are released under that stratum's key.
    keep, keep_rest : column or index level label(s) (optional), bool (default False)
        Columns (and named index levels) released exactly as they are although they look
        numeric (an id, a weight), as the release contract asks; ``keep_rest=True`` keeps
        every column that is not protected or a stratum, and the index. Text holding no
        number needs neither.
    return_info : bool, default False
        Also return a :class:`MicroaggregationInfo` (columns, IL, groups, strata).
    progress : bool, default False
        Show the progress of a method that reports it (the hybrid counts its
        macrogroups: minutes on a large table); the others run as one call.
    **params
        Passed to the heuristic, e.g. ``gamma=1.1`` for V-MDAV. A method that draws
        random numbers (the hybrid) and gets no ``seed`` runs with one drawn here, which
        ``info.params`` and ``info.notes`` record (without ``return_info``, a
        ``UserWarning`` names it): give it again to make the same release.

    Returns
    -------
    pandas.DataFrame, or (pandas.DataFrame, MicroaggregationInfo)
        A new table with the same index, columns and row order; the chosen columns
        hold the group means :math:`\bar{\mathbf{x}}_i` of each row's group. The index
        is part of the release: one that does not number the rows ``0..n-1`` (or, unnamed,
        ``1..n``) and holds numbers is refused unless kept; dates get a note.

    Raises
    ------
    TypeError
        If a chosen column is not numeric, or ``method`` is not a string.
    ValueError
        On NaN/inf, an unknown method, option or column, ``k`` outside ``2..n`` (at
        ``k = 1`` every record would be released as it is), a
        constant column (if standardising), duplicate or reserved names, a column (or
        an index) that looks numeric but is neither protected nor kept; an unknown,
        protected or incomplete strata column, a stratum under ``k`` with ``"error"``.

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

    A filtered table's index holds its rows' numbers in the original file, which link each
    released row to its record: asked about, as a numeric column is.

    >>> over_24 = df[df["age"] > 24]
    >>> over_24.index.tolist()
    [1, 3, 4, 5]
    >>> try:
    ...     microaggregate(over_24, k=2)
    ... except ValueError as err:
    ...     print(str(err)[:64])
    the index is numeric (4 numbers), not the row numbers 0, 1, ...,
    >>> microaggregate(over_24.reset_index(drop=True), k=2).index.tolist()
    [0, 1, 2, 3]
    """
    return _protect_table(df, k, method=method, columns=columns, standardize=standardize,
                          strata=strata, small_strata=small_strata, keep=keep,
                          keep_rest=keep_rest, return_info=return_info, progress=progress,
                          params=params)


def _protect_table(df: Any, k: Any, *, method: Any, columns: Any, standardize: bool,
                   strata: Any, small_strata: Any, keep: Any, keep_rest: bool,
                   return_info: bool, params: dict[str, Any], progress: bool = False) -> Any:
    """:func:`microaggregate`'s work, once its arguments are named."""
    check_flags(standardize=standardize, keep_rest=keep_rest, return_info=return_info,
                progress=progress)
    k = check_release_k(k)  # (before the table is profiled, as in every path)
    spec, roles = check_call(df, method, columns, params, strata, keep=keep,
                             keep_rest=keep_rest)
    params, drawn = seeded(method, params)
    if drawn is not None:
        roles = replace(roles, notes=[*roles.notes, drawn])
        if not return_info:  # (else info.notes and info.params say it)
            warnings.warn(drawn, UserWarning, stacklevel=3)
    return protect_decided(df, k, spec, roles, method=method, standardize=standardize,
                           small_strata=small_strata, return_info=return_info,
                           params=params, progress=progress)


def protect_decided(df: pd.DataFrame, k: int, spec: Any, roles: Roles, *, method: Any,
                    standardize: bool, small_strata: Any, return_info: bool,
                    params: dict[str, Any], progress: bool = False) -> Any:
    """:func:`microaggregate` once the method (``spec``, its registry entry) and the
    columns' roles are decided (:func:`check_call`), once: the command line's in-memory
    path decides them from its own reading of the file (``--na``) and protects here."""
    columns, notes = roles.protect, list(roles.notes)
    strata = roles.strata or None
    X = as_matrix(protectable(df[columns], columns), name="the protected columns")
    k = check_k(k, X.shape[0])
    function = (partial(spec.function, progress=True) if progress and spec.reports_progress
                else spec.function)
    out, info = _run(df, X, k, function, columns, standardize=standardize, strata=strata,
                     small_strata=small_strata, params=params, return_info=return_info)
    passed = [c for c in df.columns if c not in set(columns)]
    notes += merged_notes(strata or [], info.get("merged", {}))
    return (out, MicroaggregationInfo(method=method, k=k, params=dict(params), notes=notes,
                                      passed_through=passed, kept=roles.kept,
                                      **info)) if return_info else out


def _run(df: pd.DataFrame, X: np.ndarray, k: int, function: Callable[..., Any],
         columns: list[Any], *,
         standardize: bool, strata: list[Any] | None, small_strata: Any,
         params: dict[str, Any], return_info: bool) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The protected table, and (if asked) the measured fields of the info object."""
    Z = zscores(X, columns) if standardize else X
    report: pd.DataFrame | None = None
    merged: dict[Any, Any] = {}
    if strata is None:
        labels = np.asarray(function(Z, k, **params), dtype=np.int64)
        released = aggregate(X, labels)
    else:
        done = stratified(
            df, X, k, function, params, strata=strata, policy=check_policy(small_strata),
            standardize=standardize, columns=columns)
        released, labels, report, merged = done.released, done.labels, done.report, done.merged
    out = df.copy()
    out[columns] = released
    if strata is not None:  # every row under its unit's key
        out[strata] = done.strata
    if not return_info:
        return out, {}
    return out, {"labels": labels, "columns": list(columns), **loss_summary(Z, labels)._asdict(),
                 "group_sizes": group_sizes(labels), "strata": report, "merged": merged}


def check_call(df: Any, method: Any, columns: Any, params: dict[str, Any], strata: Any = None,
               *, keep: Any = None, keep_rest: bool = False, profiles: Any = None,
               index: IndexProfile | None = None, stored_index: Sequence[Any] = ()
               ) -> tuple[Any, Roles]:
    """The method's registry entry and the columns' roles (:func:`microagg._release.decide_roles`),
    the index judged too (:func:`microagg._release.decide_index`: it is returned with the
    release).

    ``profiles`` and ``index``: the whole input's column and index profiles, when ``df``
    holds only its columns' types (a Dask frame's metadata, the first batch of a file:
    :data:`microagg._release.FILE_ROWS`); by default ``df`` is the whole table and is
    profiled here. ``stored_index``: the columns holding an index stored with a Parquet
    file (:func:`microagg._stream.stored_index`).
    """
    if isinstance(df, pd.Series):
        raise TypeError("df must be a pandas DataFrame, got a Series; for one column use "
                        "df.to_frame() (or pass the whole table and name the column)")
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}; "
                        "for arrays call a heuristic (e.g. microagg.mdav) and microagg.aggregate")
    spec = get_method(method)
    check_options(method, params)
    from ._release import check_names

    check_names(list(df.columns))
    names = [] if strata is None else strata_list(strata, df.columns)
    if profiles is None:
        profiles, index = profile_frame(df), profile_index(df.index)
    elif index is None:
        raise TypeError("check_call: with the profiles of the whole input, give its index's "
                        "too (FILE_ROWS for a file)")
    keep, on_index = split_keep(keep, list(df.columns), index)
    roles = decide_roles(list(df.columns), profiles, columns=columns, strata=names, keep=keep,
                         keep_rest=keep_rest, stored_index=stored_index)
    notes = decide_index(index, keep=on_index, keep_rest=roles.keep_rest)
    return spec, replace(roles, notes=[*roles.notes, *notes], kept_index=on_index)
