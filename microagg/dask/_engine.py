"""The Dask engine: statistics per partition, a plan, each unit whole in one partition.

1. A pass over the partitions computes each stratum's statistics (records, means, sums
   of squares: :func:`microagg._strata.moments`) and each partition's length (after the
   pass that profiles the columns, below).
2. The client combines them and applies the small-strata policy
   (:func:`microagg._strata.plan_strata`): every stratum gets its *unit* (itself, or
   the stratum a small one is merged into), numbered 0..u-1 in stratum order.
3. Each row is tagged with its unit and its position in the table, and
   ``set_index(unit, divisions=...)`` gathers the units into partitions (a shuffle):
   consecutive units share one up to about the input's partition size, a larger unit has
   its own, none is split (:func:`_packed`; a task per small stratum cost more than
   protecting it).
4. One task per partition restores the input order and the index, checks its units
   (all there, each of the planned size, its columns with the roles decided, so a source
   that changed after the plan fails clearly) and protects each with
   :func:`microagg._strata.protect_block`, as the in-memory engine does; a unit with
   merged small strata is released under its own stratum's key.

The columns' roles (:mod:`microagg._release`) are decided on the whole frame: its
metadata (column names and types) and the profiles of every partition, computed in a
first pass; never on a sample.
"""

from __future__ import annotations

import bisect
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from .._defaults import METHOD, SMALL_STRATA_POLICY
from .._methods import get_method, seeded
from .._protect import check_call
from .._release import (
    ColumnProfile,
    IndexProfile,
    Roles,
    check_names,
    check_release_k,
    combine_index_profiles,
    combine_profiles,
    profile_frame,
    profile_index,
    protectable,
)
from .._strata import (
    check_not_constant,
    check_policy,
    combine_moments,
    merged_notes,
    moments,
    plan_report,
    plan_strata,
    protect_block,
    released_categories,
    strata_list,
    under_keys,
)
from .._validate import NonFinite, as_matrix, check_flags, check_k

__all__ = ["microaggregate", "ReleasePlan"]


@dataclass(frozen=True)
class ReleasePlan:
    """What :func:`microaggregate` decided before any group is formed, from the whole frame.

    The fields share their names and meaning with :class:`microagg.MicroaggregationInfo`;
    the measures of the release (labels, SSE, IL, group sizes) are not here, because the
    groups are formed only when the lazy result is computed: measure the computed release
    (e.g. :func:`microagg.information_loss`) if you need them.

    Book: :ref:`sec-scale-dask`.

    Attributes
    ----------
    columns : list
        The protected columns.
    method, k, params
        The heuristic and its settings.
    passed_through : list
        The columns copied unchanged: strata, kept and text columns.
    kept : list
        What is released exactly as it was on purpose: the columns named in ``keep`` and a
        row index, then the index levels named in ``keep``.
    notes : list of str
        As in memory: why a numeric column was not chosen by default (a row index), a
        column of dates passed through, and each small stratum merged.
    strata : pandas.DataFrame
        One row per stratum (indexed by its key, in sorted order): ``records``,
        ``protected_with`` (itself, or the stratum a small one was merged into) and
        ``unit_records``.
    merged : dict
        Each small stratum's key and the key of the stratum it was merged into.

    Examples
    --------
    >>> import dask.dataframe as dd, pandas as pd
    >>> import microagg.dask
    >>> df = pd.DataFrame({"age": [23, 25, 24, 61, 64, 60, 33],
    ...                    "region": ["N", "N", "S", "S", "S", "N", "W"]})
    >>> _, plan = microagg.dask.microaggregate(dd.from_pandas(df, npartitions=2), 3,
    ...                                       strata="region", small_strata="merge",
    ...                                       return_info=True)
    >>> plan.merged, plan.strata["protected_with"].tolist()
    ({'W': 'N'}, ['N', 'S', 'N'])
    """

    columns: list[Any]
    method: str
    k: int
    params: dict[str, Any]
    passed_through: list[Any]
    kept: list[Any]
    notes: list[str]
    strata: pd.DataFrame
    merged: dict[Any, Any] = field(default_factory=dict)


_UNIT, _POS, _INDEX = "__microagg_unit__", "__microagg_pos__", "__microagg_index__"


def microaggregate(ddf: Any, k: int, *, strata: Any, method: str = METHOD,
                   columns: Any = None, standardize: bool = True,
                   small_strata: str = SMALL_STRATA_POLICY, keep: Any = None,
                   keep_rest: bool = False,
                   return_info: bool = False, **params: Any) -> Any:
    """Microaggregate a Dask DataFrame within strata, each stratum whole in one task.

    Book: :ref:`sec-scale-dask`.

    The same result as :func:`microagg.microaggregate` on the computed table with the
    same arguments (same groups, same released values, same index), computed on
    whatever Dask scheduler is active (a ``distributed.Client`` for a cluster).

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        The microdata, one row per respondent (unique index labels identify the rows).
    k : int
        Minimum group size within each stratum, at least 2 (:func:`microagg.microaggregate`).
    strata : column label or sequence of column labels
        Each combination of their values is protected on its own; copied unchanged.
    method : str, default "mdav"
        A registered method (:func:`microagg.list_methods`).
    columns : column label or sequence of column labels, optional
        Columns to protect. Default: as :func:`microagg.microaggregate`, judged on
        every row of every partition.
    standardize : bool, default True
        Build each stratum's groups on its own z-scores.
    small_strata : {"error", "merge"}, default "error"
        A stratum under ``k`` records: an error, or merged (as in the in-memory function,
        released under the key of the stratum it joined).
    keep, keep_rest
        As :func:`microagg.microaggregate`: columns (and named index levels) released
        unchanged on purpose. The index is judged on every partition as in memory: one
        numbering the rows (each partition from 0, as ``read_csv`` makes it, or 0..n-1
        across them) passes; one holding other numbers is an error unless kept.
    return_info : bool, default False
        Also return a :class:`ReleasePlan`: the columns' roles, the notes and the strata
        plan (known before computing, as they are decided on the whole frame).
    **params
        Passed to the method. A method that draws random numbers (the hybrid) and gets
        no ``seed`` runs with one drawn here, which the plan's ``params`` and ``notes``
        record (without ``return_info``, a ``UserWarning`` names it).

    Returns
    -------
    dask.dataframe.DataFrame, or (dask.dataframe.DataFrame, ReleasePlan)
        Lazy: each unit (a stratum, with small strata merged into it) whole in one
        partition, in sorted stratum order; consecutive small units share a partition of
        about the input's partition size, a larger one has its own. Rows within a unit are
        in input order, with their index; protected columns
        are float64. An index that only numbered the rows (each partition from 0, as
        ``read_csv`` and ``read_parquet`` make it) numbers them over the whole input, so
        ``.compute().sort_index()`` is the in-memory release of the input in order.
        Grouped by stratum, that index holds each row's position in the input, which the
        release's order no longer shows: drop it before publishing unless the input's
        order may be published (``to_parquet(..., write_index=False)``,
        ``reset_index(drop=True)``; :func:`microagg.audit` asks about it otherwise).

    Raises
    ------
    TypeError
        If ``ddf`` is not a Dask DataFrame (for pandas, call
        :func:`microagg.microaggregate`).
    ValueError
        As :func:`microagg.microaggregate` (e.g. a stratum under ``k`` with "error", a
        numeric-looking column neither protected nor kept). When computed: a unit
        whose size or column roles differ from the plan (the source changed).

    Notes
    -----
    This call reads the input twice (the columns' profiles, then the strata statistics);
    the protection reads it once more when the result is computed, after a shuffle that
    gathers each unit whole into one partition. For an input that is costly to read (CSV, a
    remote store), ``ddf = ddf.persist()`` first reads it once. The release's index holds
    the input's labels (or row numbers), with unknown divisions: ``.loc`` and joins by
    index look at every partition. An input read from several files numbers each file's
    rows from 0; compare with the in-memory function after ``reset_index(drop=True)``.

    Examples
    --------
    >>> import dask.dataframe as dd, pandas as pd
    >>> import microagg, microagg.dask
    >>> df = pd.DataFrame({"age": [23, 25, 24, 61, 64, 60],
    ...                    "region": ["N", "N", "S", "S", "S", "N"]})
    >>> ddf = dd.from_pandas(df, npartitions=2)
    >>> out = microagg.dask.microaggregate(ddf, 3, strata="region").compute()
    >>> out.sort_index()["age"].tolist()
    [36.0, 36.0, 49.666666666666664, 49.666666666666664, 49.666666666666664, 36.0]
    >>> out.sort_index().equals(microagg.microaggregate(ddf.compute(), 3, strata="region"))
    True

    What was decided, before computing (the same notes as in memory):

    >>> df.insert(0, "row", range(6))  # a first column 0..n-1: a row index, kept
    >>> lazy, plan = microagg.dask.microaggregate(dd.from_pandas(df, npartitions=2), 3,
    ...                                          strata="region", return_info=True)
    >>> plan.columns, plan.kept, plan.strata["records"].to_dict()
    (['age'], ['row'], {'N': 3, 'S': 3})
    >>> plan.notes[0][:40]
    "'row' looks like a row index (the first "
    """
    _check_frame(ddf)
    if not isinstance(strata, str | bytes) and isinstance(strata, Iterable) and not list(strata):
        raise ValueError("strata is empty: microagg.dask protects within strata, each stratum "
                         "in one task; name at least one column, or for a table without strata "
                         "call microagg.microaggregate on ddf.compute()")
    check_release_k(k)  # (these checks before the pass over the data)
    check_flags(standardize=standardize, keep_rest=keep_rest, return_info=return_info)
    roles, rows = _roles(ddf, method, columns, params, strata, keep, keep_rest)
    params, drawn = seeded(method, params)
    if drawn is not None:
        roles = replace(roles, notes=[*roles.notes, drawn])
        if not return_info:  # (else the plan's notes and params say it)
            warnings.warn(drawn, UserWarning, stacklevel=2)
    k, plan, units, offsets = _plan(ddf, k, roles.strata, roles.protect,
                                    check_policy(small_strata), standardize)
    lazy = _released(ddf, plan, units, offsets, k, method=method, params=params, roles=roles,
                     standardize=standardize, numbered_from=rows.numbered_from())
    if not return_info:
        return lazy
    index = (pd.Index(plan.keys, name=roles.strata[0]) if len(roles.strata) == 1
             else pd.MultiIndex.from_tuples(plan.keys, names=roles.strata))
    passed = [c for c in ddf.columns if c not in set(roles.protect)]
    return lazy, ReleasePlan(
        columns=list(roles.protect), method=method, k=k, params=dict(params),
        passed_through=passed, kept=roles.kept,
        notes=[*roles.notes, *merged_notes(roles.strata, plan.merged)],
        strata=plan_report(plan, index), merged=dict(plan.merged))


def _roles(ddf: Any, method: Any, columns: Any, params: dict[str, Any], strata: Any,
           keep: Any, keep_rest: bool) -> tuple[Roles, IndexProfile]:
    """The columns' roles and the index's profile, on the whole frame: its metadata and
    every partition's profile."""
    check_names(list(ddf.columns))
    strata = strata_list(strata, list(ddf.columns))
    parts = dask.compute([dask.delayed(_profiles)(p) for p in ddf.to_delayed()])[0]
    index = combine_index_profiles(i for _, i in parts)
    _, roles = check_call(ddf._meta, method, columns, params, strata, keep=keep,
                          keep_rest=keep_rest, profiles=combine_profiles(c for c, _ in parts),
                          index=index)
    return roles, index


def _profiles(part: pd.DataFrame) -> tuple[list[ColumnProfile], IndexProfile]:
    """One partition's column profiles and index profile."""
    return profile_frame(part), profile_index(part.index)


def _released(ddf: Any, plan: Any, units: pd.DataFrame, offsets: list[int], k: int, *,
              method: str, params: dict[str, Any], roles: Roles, standardize: bool,
              numbered_from: int | None) -> Any:
    """The lazy release: rows tagged with their unit, gathered into partitions of whole
    units (:func:`_packed`), one task per partition.
    ``numbered_from``: the input's index only numbers its rows, from 0 or 1
    (:meth:`~microagg._release.IndexProfile.numbered_from`): the release's index numbers
    them over the whole input (``None``: the release keeps the input's index)."""
    strata, columns = roles.strata, roles.protect
    meta = ddf._meta.assign(**{_POS: np.int64(0), _INDEX: ddf._meta.index.to_numpy(),
                               _UNIT: np.int64(0)})
    tagged = ddf.map_partitions(_tag, units, strata, offsets, meta=meta,
                                partition_info=True)
    sizes = [int(plan.sizes[u].sum()) for u in plan.units]
    divisions = _packed(sizes, -(-sum(sizes) // ddf.npartitions))  # (the input's size)
    gathered = tagged.set_index(_UNIT, divisions=divisions)
    keys = [plan.keys[u[0]] for u in plan.units]
    out_meta = ddf._meta.astype({c: np.float64 for c in columns})
    out_meta[strata] = released_categories(out_meta[strata], keys)
    # (the release is indexed by the input's labels or row numbers, not by unit: its
    # partitions' index ranges are unknown, so that .loc and joins look at every row)
    return gathered.map_partitions(_protect_partition, k, method=method, params=params, roles=roles,
                                   standardize=standardize, index_name=ddf._meta.index.name,
                                   numbered_from=numbered_from, sizes=sizes, keys=keys,
                                   divisions=divisions, meta=out_meta, clear_divisions=True,
                                   partition_info=True)


def _packed(sizes: list[int], rows: int) -> list[int]:
    """Divisions that cut the units 0..u-1 (of ``sizes`` records) into consecutive runs of
    about ``rows`` records: a unit is never split, one larger than ``rows`` has a partition
    of its own, and many small strata share one (a task each would cost more than
    protecting them).

    >>> _packed([5, 5, 5, 20, 5], 10)
    [0, 2, 3, 4, 5]
    """
    divisions, filled = [0], 0
    for unit, size in enumerate(sizes):
        if filled and filled + size > rows:
            divisions.append(unit)
            filled = 0
        filled += size
    return [*divisions, len(sizes)]


def _check_frame(ddf: Any) -> None:
    if not isinstance(ddf, dd.DataFrame):
        raise TypeError(f"ddf must be a Dask DataFrame, got {type(ddf).__name__}; for a pandas "
                        "DataFrame call microagg.microaggregate")
    if isinstance(ddf.columns, pd.MultiIndex):  # (Dask's merges and shuffles need one level)
        raise ValueError("ddf has column names on several levels (a MultiIndex); "
                         "microagg.dask needs one level: join them first, e.g. ddf.columns = "
                         "['_'.join(map(str, c)) for c in ddf.columns]")


def _plan(ddf: Any, k: int, strata: list[Any], columns: list[Any], policy: str,
          standardize: bool) -> tuple[int, Any, pd.DataFrame, list[int]]:
    """One pass: the strata statistics, the plan, each stratum's unit and partition offsets."""
    parts = ddf.to_delayed()
    found, lengths = dask.compute(
        [dask.delayed(_checked_moments)(p, strata, columns) for p in parts],
        [dask.delayed(len)(p) for p in parts])
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64).tolist()
    bad = sum((rows.shifted(start) for (_, rows), start in zip(found, offsets, strict=True)),
              NonFinite())
    if bad.count:  # (the rows in the whole frame, as the in-memory function names them)
        raise bad.error("the protected columns", columns)
    stats = combine_moments([part for part, _ in found])
    k = check_k(k, int(stats["n"].sum()))
    if standardize:
        check_not_constant(stats, columns)
    plan = plan_strata(stats, k, policy, standardize=standardize, columns=columns)
    units = stats.index.to_frame(index=False).assign(**{_UNIT: plan.unit_of})
    return k, plan, units, offsets


def _checked_moments(part: pd.DataFrame, strata: list[Any], columns: list[Any]
                     ) -> tuple[pd.DataFrame | None, NonFinite]:
    """A partition's :func:`moments`, or its rows holding NaN or infinite values (counted
    from the partition's start) instead."""
    frame = protectable(part[[*strata, *columns]], columns)  # (plain numbers as text too)
    X = as_matrix(frame[columns], name="the protected columns", min_rows=0, finite=False)
    bad = NonFinite.of(X)
    return (None if bad.count else moments(frame, strata, columns)), bad


def _tag(part: pd.DataFrame, units: pd.DataFrame, strata: list[Any], offsets: list[int],
         partition_info: dict[str, Any] | None = None) -> pd.DataFrame:
    """Each row's unit, its position in the whole table and its index label."""
    number = partition_info["number"] if partition_info else 0
    unit = part[strata].merge(units, how="left", on=strata)[_UNIT]
    if unit.isna().any():
        row = part[strata].iloc[int(np.flatnonzero(unit.isna().to_numpy())[0])]
        raise ValueError(f"stratum {dict(row)} was not in the data when "
                         "microagg.dask.microaggregate planned the strata: the source changed "
                         "since; call it again on the current data")
    unit = unit.to_numpy(dtype=np.int64)
    start = offsets[number]
    return part.assign(**{_POS: np.arange(start, start + len(part), dtype=np.int64),
                          _INDEX: part.index.to_numpy(), _UNIT: unit})


def _protect_partition(part: pd.DataFrame, k: int, *, method: str, params: dict[str, Any],
             roles: Roles, standardize: bool, index_name: Any, numbered_from: int | None,
             sizes: list[int], keys: list[Any], divisions: list[int],
             partition_info: dict[str, Any] | None = None) -> pd.DataFrame:
    """Protect each unit of a partition (the task), unit after unit, each unit's rows in
    input order, after checking that the units are the ones planned (all there, each of its
    planned size, the columns with the roles decided).

    The units are the ones the rows were gathered under (their index), not those at the
    partition's position: a selection of partitions (``.partitions[i]``, ``tail``) numbers
    them anew. Every planned unit holds at least k rows, so a unit without rows (outside
    Dask's metadata pass, which gives no ``partition_info``) is one the source lost."""
    columns = roles.protect
    if partition_info is not None and not len(part):
        raise ValueError("a stratum planned by microagg.dask.microaggregate has no records "
                         "when computed: the source changed since; call it again on the "
                         "current data")
    units = part.index.to_numpy(dtype=np.int64)
    order = np.lexsort((part[_POS].to_numpy(), units))
    part, units = part.iloc[order], units[order]
    if numbered_from is None:
        out = part.set_index(_INDEX).drop(columns=[_POS])
    else:  # (each partition read from a file numbers its rows from 0: over the whole input)
        out = part.drop(columns=[_INDEX]).set_index(_POS)
        out.index += numbered_from
    out.index.name = index_name
    if not len(out):  # Dask's metadata pass
        out = out.astype({c: np.float64 for c in columns})
        out[roles.strata] = released_categories(out[roles.strata], keys)
        return out
    present, starts, counts = np.unique(units, return_index=True, return_counts=True)
    _check_units(out, present.tolist(), counts.tolist(), sizes, keys, divisions, k, roles)
    X = as_matrix(protectable(out[columns], columns), name="the protected columns")
    released = np.empty(X.shape)
    function = get_method(method).function
    for start, count in zip(starts.tolist(), counts.tolist(), strict=True):
        rows = slice(start, start + count)
        released[rows] = protect_block(X[rows], k, function, params, standardize=standardize,
                                       names=columns).released
    out[columns] = released
    values = [keys[u] if len(roles.strata) > 1 else (keys[u],) for u in present.tolist()]
    key = pd.DataFrame({j: pd.Series([v[j] for v in values]).repeat(counts)
                        .reset_index(drop=True) for j in range(len(roles.strata))})
    out[roles.strata] = released_categories(  # (every row under its unit's key)
        under_keys(out[roles.strata], key), keys)
    return out


def _check_units(out: pd.DataFrame, present: list[int], counts: list[int], sizes: list[int],
                 keys: list[Any], divisions: list[int], k: int, roles: Roles) -> None:
    """The task's own check: the partition holds every unit planned for it, each of the
    planned size (at least k), and every column has the role decided on the whole frame."""
    at = bisect.bisect_right(divisions, present[0]) - 1
    planned = range(divisions[at], divisions[at + 1])
    lost = sorted(set(planned) - set(present))
    if lost:
        raise ValueError(f"stratum {keys[lost[0]]!r} planned by microagg.dask.microaggregate "
                         "has no records when computed: the source changed since; call it "
                         "again on the current data")
    for unit, count in zip(present, counts, strict=True):
        if count != sizes[unit] or count < k:
            raise ValueError(f"unit {unit} (stratum {keys[unit]!r}) has {count} records when "
                             f"computed but {sizes[unit]} when planned (k={k}): the source "
                             "changed after microagg.dask.microaggregate was called; call it "
                             "again on the current data")
    names = list(out.columns)
    profiles = dict(zip(names, profile_frame(out), strict=True))
    bad = [c for c in roles.protect if not profiles[c].plain_numbers]
    bad += [c for c in roles.passed if profiles[c].numeric_like and not roles.keep_rest]
    if bad:
        raise ValueError(f"column(s) {bad} of units {present[0]}..{present[-1]} do not have "
                         "the role decided when microagg.dask.microaggregate was called "
                         "(protected columns must be numbers, passed-through ones hold no "
                         "digit): the source changed since; call it again on the current data")
