r"""Microaggregation within strata: the pieces shared by every engine.

Agencies protect a national file within *strata* (region, sector, survey wave): each
stratum is microaggregated on its own, so no group crosses a stratum. Three engines
use the pieces here and so give the same result: :func:`microagg.microaggregate`
(``strata=``, one table in memory), the command line (``microagg protect --strata``,
one stratum in memory at a time) and :func:`microagg.dask.microaggregate` (each stratum
whole in one task on a Dask cluster).

* **Strata** are the distinct combinations of the strata columns, in sorted order.
  Strata columns are released as their stratum's key (:func:`under_keys`: unchanged
  unless merged or written otherwise) and are never quasi-identifiers; a missing
  value in one is an error (fill it, e.g. with ``"unknown"``, to make it a stratum).
* **Statistics** (:func:`moments`, :func:`combine_moments`): per stratum, the number of
  records and each protected column's mean, sum of squared deviations, smallest and
  largest value, computed batch by batch (or partition by partition) and combined exactly
  (Chan, Golub and LeVeque's pairwise update). The extremes tell a constant column
  (:func:`check_not_constant`) from one whose squares underflow (values below about
  1e-154), which every path protects, as the in-memory function does.
* **Small strata** (:func:`plan_strata`): a stratum with fewer than ``k`` records is
  an error under ``small_strata="error"``, naming the strata. Under ``"merge"`` each
  such stratum is protected together with the *most similar* stratum that has at least
  ``k`` records: the one whose centroid is nearest in squared Euclidean distance, on
  the whole table's z-scores of the protected columns (raw values when
  ``standardize=False``); a tie goes to the first in stratum order. Centroids are those
  of the original strata, so the result does not depend on the order of the merges.
  The strata protected together form one *unit*; units are ordered by their (large)
  stratum. Every row is released under its unit's key (:func:`under_keys`): a merged
  stratum's rows under the key of the stratum it was merged into (a group may mix rows of
  both, and a released small key would single its rows out), and a value equal to its
  stratum's key but written otherwise (``-0.0`` for ``0.0``, ``True`` for ``1``, a time in
  another time zone) as the key, since written out each spelling would be a stratum of
  its own.
* **One unit** (:func:`protect_block`): standardised within the unit (population
  standard deviation; a column constant within the unit has z-score 0 there), the
  method run, the centroids published in original units. Group labels are numbered
  0..g-1 within the unit and offset by the groups of the units before it, so labels
  are unique over the table.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._core import Loss, constant_columns, group_centroids, loss_summary, zscores
from ._validate import as_matrix, column_labels, plain

__all__ = ["SMALL_STRATA", "strata_list", "under_keys", "released_categories", "check_policy",
           "check_strata_values", "moments", "combine_moments", "StrataPlan", "plan_strata",
           "BlockResult", "protect_block", "Stratified", "stratified", "overall_loss",
           "overall_sums",
           "describe_key", "check_not_constant", "global_spread", "strata_report",
           "plan_report", "merged_notes"]

#: The policies for a stratum with fewer than k records.
SMALL_STRATA = ("error", "merge")


def strata_list(strata: Any, table_columns: Sequence[Any]) -> list[Any]:
    """The strata columns as a list; an unknown, repeated or empty choice is an error, and
    so are values instead of names (a Series, an array)."""
    if strata is None:
        raise TypeError("strata is None: name the strata column(s), e.g. strata='region' "
                        "(for a table without strata call microagg.microaggregate on it)")
    if isinstance(strata, pd.Series | pd.Index | np.ndarray | pd.DataFrame):
        name = getattr(strata, "name", None)
        hint = f" (strata={name!r})" if isinstance(strata, pd.Series) and name is not None else ""
        raise TypeError(f"strata takes column names, got a {type(strata).__name__} of values; "
                        f"name the column(s) of the table instead{hint}")
    return column_labels(strata, table_columns, "strata")


def under_keys(frame: pd.DataFrame, keys: pd.DataFrame) -> pd.DataFrame:
    """The strata columns ``frame`` with each row's values replaced by its unit's key
    (``keys``: the same columns, one row per row of ``frame``) where they are not written
    as the key is: a merged stratum's rows, and values equal to the key but spelled
    otherwise (``-0.0`` and ``0.0``; ``1``, ``1.0`` and ``True`` in an object column;
    ``Decimal("1.00")``). Columns needing no change are not touched (nor their dtype).

    Examples
    --------
    >>> frame = pd.DataFrame({"s": [0.0, -0.0, 1.0]})
    >>> under_keys(frame, pd.DataFrame({"s": [0.0, 0.0, 1.0]}))["s"].map(repr).tolist()
    ['0.0', '0.0', '1.0']
    """
    out = frame
    for j, c in enumerate(frame.columns):
        values, key = frame.iloc[:, j].to_numpy(), keys.iloc[:, j].to_numpy()
        apart = _written_apart(values, key)
        if apart.any():
            if out is frame:
                out = frame.copy()
            # (a key is one of the column's values: its dtype holds it)
            out.loc[apart, c] = keys.iloc[:, j].astype(frame.dtypes.iloc[j]).to_numpy()[apart]
    return out


def released_categories(frame: pd.DataFrame, unit_keys: Sequence[Any]) -> pd.DataFrame:
    """The strata columns ``frame`` (as :func:`under_keys` releases them) with each
    categorical column's categories cut to the values of the units' keys (``unit_keys``,
    one per unit: a value, or a tuple with several strata columns), in their order.

    A merged small stratum's rows are released under its target's key, but a categorical
    column lists its categories with it (pandas categories, a Parquet dictionary): its own
    key would go out as a category that no row holds. Every path cuts them the same way,
    from the plan, whatever rows a batch or a partition holds.

    Examples
    --------
    >>> frame = pd.DataFrame({"s": pd.Categorical(["x", "x", "y"], ["rare", "x", "y"])})
    >>> released_categories(frame, ["x", "y"])["s"].cat.categories.tolist()
    ['x', 'y']
    """
    out = frame
    several = frame.shape[1] > 1  # (a key is a tuple then; with one column, a value,
    for j, c in enumerate(frame.columns):  # which may itself be a tuple)
        column = frame.iloc[:, j]
        if not isinstance(column.dtype, pd.CategoricalDtype):
            continue
        keep = {key[j] if several else key for key in unit_keys}
        cut = [v for v in column.cat.categories if v not in keep]
        if len(cut) == len(column.cat.categories):  # no key among them: categories not
            continue  # known here (Dask's metadata of unknown categories), left as they are
        if cut:
            if out is frame:
                out = frame.copy()
            out[c] = column.cat.remove_categories(cut)
    return out


def _written_apart(values: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Where ``values`` differ from ``key`` or equal it written otherwise."""
    if values.dtype != object and key.dtype != object:
        apart = ~np.asarray(values == key, dtype=bool)
        if values.dtype.kind == "f" and key.dtype.kind == "f":  # -0.0 == 0.0
            apart |= np.signbit(values) != np.signbit(key)
        return apart
    if pd.api.types.infer_dtype(values) == pd.api.types.infer_dtype(key) == "string":
        return ~np.asarray(values == key, dtype=bool)  # (equal text is written alike)
    return np.array([type(a) is not type(b) or repr(a) != repr(b)
                     for a, b in zip(values, key, strict=True)], dtype=bool)


def check_policy(small_strata: Any) -> str:
    if not isinstance(small_strata, str) or small_strata not in SMALL_STRATA:
        raise ValueError(f"small_strata must be one of {list(SMALL_STRATA)}, "
                         f"got {small_strata!r}")
    return small_strata


def check_strata_values(frame: pd.DataFrame, strata: list[Any]) -> None:
    """A missing value in a strata column is an error naming the column."""
    bad = [c for c in strata if frame[c].isna().any()]
    if bad:
        raise ValueError(f"strata column(s) {bad} have missing values: a record must belong "
                         "to one stratum; fill them (e.g. with 'unknown') to make them a "
                         "stratum of their own")


def describe_key(strata: list[Any], key: Any) -> str:
    """``region='north'`` (or ``region='north', wave=2``) for messages."""
    values = key if len(strata) > 1 else (key,)
    return ", ".join(f"{c}={plain(v)!r}" for c, v in zip(strata, values, strict=True))


def merged_notes(strata: list[Any], merged: dict[Any, Any]) -> list[str]:
    """One note per merged small stratum, as :attr:`MicroaggregationInfo.notes` gives it."""
    return [f"stratum {describe_key(strata, small)} was merged into "
            f"{describe_key(strata, target)} and is released under its key"
            for small, target in merged.items()]


def moments(frame: pd.DataFrame, strata: list[Any], columns: list[Any]) -> pd.DataFrame:
    """Per stratum (sorted): records ``n``, and per protected column its mean and M2.

    Columns ``n``, ``mean0..``, ``m2_0..`` (M2: sum of squared deviations from the
    stratum mean), ``lo0..`` and ``hi0..`` (smallest and largest value); the index holds
    the strata keys (named by the strata columns).
    """
    check_strata_values(frame, strata)
    return _moments(frame[strata], as_matrix(frame[columns], name="the protected columns",
                                             min_rows=0))


def _moments(keys: pd.DataFrame, X: np.ndarray) -> pd.DataFrame:
    """:func:`moments` of the rows of ``X`` by the strata columns ``keys`` (in row order;
    kept apart from ``X``, so that no strata column's label can meet a protected one's)."""
    strata = list(keys.columns)
    vals = pd.DataFrame(X, columns=[f"mean{j}" for j in range(X.shape[1])])
    g = vals.groupby([keys.iloc[:, i].reset_index(drop=True) for i in range(keys.shape[1])],
                     sort=True, observed=True)
    n = g.size()
    mean = g.mean()
    m2 = (g.var(ddof=0).fillna(0.0) * n.to_numpy()[:, None]).set_axis(
        [f"m2_{j}" for j in range(X.shape[1])], axis=1)
    lo = g.min().set_axis([f"lo{j}" for j in range(X.shape[1])], axis=1)
    hi = g.max().set_axis([f"hi{j}" for j in range(X.shape[1])], axis=1)
    out = pd.concat([n.rename("n").to_frame(), mean, m2, lo, hi], axis=1)
    out.index.names = strata
    return out


def _width(stats: pd.DataFrame) -> int:
    """The number of protected columns :func:`moments` describes."""
    return (stats.shape[1] - 1) // 4


def combine_moments(parts: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The :func:`moments` of the union of the parts' records, per stratum (sorted)."""
    parts = [p for p in parts if len(p)]
    if not parts:
        raise ValueError("the table is empty: nothing to microaggregate")
    if len(parts) == 1:
        return parts[0].sort_index()
    both = pd.concat(parts)
    levels = list(range(both.index.nlevels))
    p = _width(both)
    mean_cols = [f"mean{j}" for j in range(p)]
    m2_cols = [f"m2_{j}" for j in range(p)]
    by = both.groupby(level=levels, sort=True)
    n = by["n"].sum()
    weighted = both[mean_cols].mul(both["n"], axis=0).groupby(level=levels, sort=True).sum()
    mean = weighted.div(n, axis=0)
    dev = (both[mean_cols] - mean.reindex(both.index).to_numpy()) ** 2
    spread = dev.mul(both["n"], axis=0).set_axis(m2_cols, axis=1)
    m2 = both[m2_cols].groupby(level=levels, sort=True).sum() + spread.groupby(
        level=levels, sort=True).sum()
    lo = both[[f"lo{j}" for j in range(p)]].groupby(level=levels, sort=True).min()
    hi = both[[f"hi{j}" for j in range(p)]].groupby(level=levels, sort=True).max()
    out = pd.concat([n.rename("n").to_frame(), mean, m2, lo, hi], axis=1)
    out.index.names = parts[0].index.names
    return out


def _pooled(stats: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, int]:
    """Whole-table mean and M2 per protected column, and the number of records."""
    p = _width(stats)
    n = stats["n"].to_numpy(dtype=float)
    mean = stats[[f"mean{j}" for j in range(p)]].to_numpy()
    m2 = stats[[f"m2_{j}" for j in range(p)]].to_numpy()
    total = n.sum()
    grand = (n[:, None] * mean).sum(axis=0) / total
    pooled = m2.sum(axis=0) + (n[:, None] * (mean - grand) ** 2).sum(axis=0)
    return grand, pooled, int(total)


@dataclass(frozen=True)
class StrataPlan:
    """Which strata are protected together: ``units[u]`` lists stratum positions,
    its (large) stratum first; ``merged`` maps each small stratum's key to its target's."""

    keys: list[Any]
    sizes: np.ndarray
    units: list[list[int]]
    unit_of: np.ndarray
    merged: dict[Any, Any]


def plan_strata(stats: pd.DataFrame, k: int, policy: str, *, standardize: bool,
                columns: list[Any]) -> StrataPlan:
    """The units to protect, by the small-strata ``policy`` (see the module docstring)."""
    keys = list(stats.index)
    strata = list(stats.index.names)
    sizes = stats["n"].to_numpy(dtype=np.int64)
    small = np.flatnonzero(sizes < k)
    if small.size and policy == "error":
        shown = "; ".join(f"{describe_key(strata, keys[i])} ({sizes[i]} "
                          f"record{'s' if sizes[i] != 1 else ''})"
                          for i in small[:10])
        more = f" and {small.size - 10} more" if small.size > 10 else ""
        raise ValueError(f"{small.size} stratum(s) have fewer than k={k} records: {shown}{more}; "
                         "coarsen the strata, or merge each with its most similar stratum "
                         "(small_strata='merge', --small-strata merge on the command line)")
    large = np.flatnonzero(sizes >= k)
    if not large.size:
        raise ValueError(f"no stratum has k={k} records (the largest has {sizes.max()}): "
                         "there is nothing to merge the small strata into; coarsen the strata")
    unit_of = np.full(len(keys), -1, dtype=np.int64)
    unit_of[large] = np.arange(large.size)
    units = [[int(i)] for i in large]
    merged: dict[Any, Any] = {}
    if small.size:
        centre = _centroids(stats, standardize, columns)
        for i in small:
            with np.errstate(over="ignore", invalid="ignore"):
                d = ((centre[large] - centre[i]) ** 2).sum(axis=1)
            if not np.isfinite(d).all():  # the sums overflowed: no nearest stratum to find
                raise _too_large()
            target = int(large[int(np.argmin(d))])  # argmin: the first of equal distances
            unit_of[i] = unit_of[target]
            units[unit_of[target]].append(int(i))
            merged[keys[i]] = keys[target]
    return StrataPlan(keys=keys, sizes=sizes, units=units, unit_of=unit_of, merged=merged)


def _centroids(stats: pd.DataFrame, standardize: bool, columns: list[Any]) -> np.ndarray:
    p = _width(stats)
    mean = stats[[f"mean{j}" for j in range(p)]].to_numpy()
    if not standardize:
        return mean
    with np.errstate(over="ignore", invalid="ignore"):
        grand, _, _ = _pooled(stats)
        spread = global_spread(stats, columns)
    if not (np.isfinite(grand).all() and np.isfinite(spread).all()):
        raise _too_large()
    return (mean - grand) / spread


def _too_large() -> ValueError:
    """The error for strata statistics that overflowed (values beyond about 1e154): the
    nearest stratum of a small one cannot be told."""
    return ValueError("the protected columns hold values too large (beyond about 1e154) for "
                      "the strata statistics that choose where a small stratum goes: rescale "
                      "them first (e.g. divide by 1e150, and multiply the release back), or "
                      "coarsen the strata")


def check_not_constant(stats: pd.DataFrame, columns: list[Any]) -> None:
    """Raise the in-memory function's error if a protected column holds one value in the
    whole table (its smallest equals its largest): it cannot be standardised."""
    p = _width(stats)
    lo = stats[[f"lo{j}" for j in range(p)]].to_numpy().min(axis=0)
    hi = stats[[f"hi{j}" for j in range(p)]].to_numpy().max(axis=0)
    same = np.flatnonzero(lo == hi)
    if same.size:
        raise constant_columns([columns[j] for j in same])


def global_spread(stats: pd.DataFrame, columns: list[Any]) -> np.ndarray:
    """The whole table's population standard deviation of each protected column; a
    constant column is an error (as for an unstratified run), and so is one whose spread
    underflows (values below about 1e-154: the strata cannot be compared by it)."""
    check_not_constant(stats, columns)
    _, pooled, n = _pooled(stats)
    # not constant, yet an M2 below the smallest normal float64 (0 or subnormal, too coarse
    # to compare strata by): the squares of the values underflowed
    small = np.flatnonzero(pooled < np.finfo(float).tiny)
    if small.size:
        raise _too_small([columns[j] for j in small])
    return np.sqrt(pooled / n)


def _too_small(names: list[Any]) -> ValueError:
    """The error for columns whose strata statistics underflowed (values below about
    1e-154): their spread, which compares the strata, cannot be told in float64."""
    return ValueError(f"column(s) {names} hold values too small (below about 1e-154) for the "
                      "strata statistics that choose where a small stratum goes: rescale them "
                      "first (e.g. multiply by 1e150, and divide the release back), or coarsen "
                      "the strata")


@dataclass(frozen=True)
class BlockResult:
    """One unit protected: local labels 0..g-1, the groups' centroids (original units),
    losses and time. The released values are ``centroids[labels]``."""

    labels: np.ndarray
    centroids: np.ndarray
    groups: int
    sse: float
    sst: float
    information_loss: float
    seconds: float
    column_sse: np.ndarray

    @property
    def released(self) -> np.ndarray:
        """Each record replaced by its group's centroid (a new array)."""
        return self.centroids[self.labels]


def protect_block(X: np.ndarray | Callable[[], np.ndarray], k: int, function: Any,
                  params: dict[str, Any], *, standardize: bool, names: list[Any]
                  ) -> BlockResult:
    """Microaggregate one unit (checked ``X``): z-scores within it, method, centroids.

    ``X`` may be a function returning the unit's matrix: it is then called twice, for
    the z-scores and for the centroids, and no matrix of the original values is held
    while the method runs on the z-scores. Memory, one stage after the other: the values
    and their z-scores; the z-scores and the method's working arrays; the values and the
    centroids (one row per group); and temporaries of :data:`CHUNK` rows.
    """
    start = time.perf_counter()
    load = X if callable(X) else lambda: X
    Z = _block_zscores(load(), names) if standardize else load()
    raw = np.asarray(function(Z, k, **params), dtype=np.int64)
    _, labels = np.unique(raw, return_inverse=True)
    labels = labels.reshape(-1).astype(np.int64)
    groups = int(labels.max()) + 1
    loss = _unit_loss(Z, labels, groups, safe=standardize)
    del raw
    if standardize:  # the z-scores go before the values come back
        del Z
        arr = load()
    else:
        arr = Z
    centroids, _ = group_centroids(arr, labels)
    column_sse = np.zeros(arr.shape[1])
    with np.errstate(over="ignore"):  # beyond ~1e154: inf, and the whole-table IL says so
        for lo in range(0, arr.shape[0], CHUNK):
            rows = arr[lo:lo + CHUNK] - centroids[labels[lo:lo + CHUNK]]
            column_sse += (rows ** 2).sum(axis=0)
    return BlockResult(labels=labels, centroids=centroids, groups=groups, sse=loss.sse,
                       sst=loss.sst, information_loss=loss.information_loss,
                       seconds=time.perf_counter() - start,
                       column_sse=column_sse)


#: Rows per temporary array in the per-unit sums of squares (a few of them exist at once,
#: beside the unit: 2,048 rows of 10 attributes are 160 kB).
CHUNK = 2048


def _unit_loss(arr: np.ndarray, labels: np.ndarray, groups: int, *, safe: bool) -> Loss:
    """The :class:`~microagg._core.Loss` as :func:`microagg._core.loss_summary` gives it,
    in chunks of rows.

    ``safe``: z-scores, which need no rescaling (their squares cannot overflow).
    """
    if not safe:
        return loss_summary(arr, labels)
    counts = np.bincount(labels, minlength=groups)
    centre = np.empty((groups, arr.shape[1]))  # the groups' sums, then their centroids
    for j in range(arr.shape[1]):
        centre[:, j] = np.bincount(labels, weights=arr[:, j], minlength=groups)
    centre /= counts[:, None]
    mean = arr.mean(axis=0)
    within = total = 0.0
    for lo in range(0, arr.shape[0], CHUNK):
        rows = arr[lo:lo + CHUNK]
        d = rows - centre[labels[lo:lo + CHUNK]]
        c = rows - mean
        within += float(np.einsum("ij,ij->", d, d))
        total += float(np.einsum("ij,ij->", c, c))
    return Loss(within, total, 100.0 * within / total if total else 0.0)


def _block_zscores(X: np.ndarray, names: list[Any]) -> np.ndarray:
    """z-scores within a unit; a column constant there (no spread to scale) gets 0."""
    constant = (X == X[0]).all(axis=0)
    if not constant.any():
        return zscores(X, names)
    Z = np.zeros_like(X)
    keep = np.flatnonzero(~constant)
    if keep.size:
        Z[:, keep] = zscores(X[:, keep], [names[j] for j in keep])
    return Z


def overall_loss(stats: pd.DataFrame, column_sse: np.ndarray, *, standardize: bool) -> float:
    """IL of the whole released table (the whole table's z-scores when standardising)
    from the strata statistics and each column's within-group SSE (raw units): 100 SSE /
    SST of :func:`overall_sums`."""
    sse, sst = overall_sums(stats, column_sse, standardize=standardize)
    with np.errstate(over="ignore", invalid="ignore"):  # overflowed sums: nan, reported so
        return 100.0 * sse / sst if sst else 0.0


def overall_sums(stats: pd.DataFrame, column_sse: np.ndarray, *, standardize: bool
                 ) -> tuple[float, float]:
    """SSE and SST of the whole released table, on the scale :func:`overall_loss` measures
    (the whole table's z-scores when standardising, where SST is the number of values), as
    :class:`microagg.MicroaggregationInfo` gives them for a run in memory; ``nan`` where
    the sums overflow."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        _, pooled, n = _pooled(stats)
        if standardize:
            return float(n * np.sum(column_sse / pooled)), float(n * pooled.size)
        return float(np.sum(column_sse)), float(pooled.sum())


@dataclass(frozen=True)
class Stratified:
    """What the in-memory engine (:func:`stratified`) returns, in the table's row order."""

    released: np.ndarray  #: the protected columns' released values
    labels: np.ndarray  #: each row's group, unique over the table
    report: pd.DataFrame  #: the per-stratum table of ``MicroaggregationInfo.strata``
    merged: dict[Any, Any]  #: each merged small stratum's key and its target's
    strata: pd.DataFrame  #: the strata columns as released (:func:`under_keys`)


def stratified(df: pd.DataFrame, X: np.ndarray, k: int, function: Any, params: dict[str, Any],
               *, strata: list[Any], policy: str, standardize: bool, columns: list[Any]
               ) -> Stratified:
    """The in-memory engine: each unit protected on its own, every row under its unit's
    key."""
    check_strata_values(df, strata)
    stats = _moments(df[strata], X)
    plan = plan_strata(stats, k, policy, standardize=standardize, columns=columns)
    codes = _stratum_codes(df, strata, stats.index)
    rows = _rows_by_unit(codes, plan)
    released = np.empty_like(X)
    labels = np.empty(X.shape[0], dtype=np.int64)
    results, offset = [], 0
    for idx in rows:
        res = protect_block(X[idx], k, function, params, standardize=standardize, names=columns)
        released[idx] = res.released
        labels[idx] = res.labels + offset
        offset += res.groups
        results.append(res)
    key_at = np.array([plan.units[int(u)][0] for u in plan.unit_of], dtype=np.int64)
    keys = stats.index[key_at[codes]].to_frame(index=False)
    unit_keys = [stats.index[unit[0]] for unit in plan.units]
    return Stratified(released, labels, strata_report(plan, results, stats.index),
                      plan.merged,
                      released_categories(under_keys(df[strata], keys), unit_keys))


def _stratum_codes(df: pd.DataFrame, strata: list[Any], index: pd.Index) -> np.ndarray:
    """Position (in sorted stratum order) of each row's stratum."""
    if len(strata) == 1:
        return index.get_indexer(df[strata[0]])
    return index.get_indexer(pd.MultiIndex.from_frame(df[strata]))


def _rows_by_unit(codes: np.ndarray, plan: StrataPlan) -> list[np.ndarray]:
    """Row positions of each unit, in the table's order."""
    unit = plan.unit_of[codes]
    order = np.argsort(unit, kind="stable")
    bounds = np.searchsorted(unit[order], np.arange(len(plan.units) + 1))
    return [order[bounds[u]:bounds[u + 1]] for u in range(len(plan.units))]


#: The columns of :func:`plan_report`: what the plan says of each stratum.
PLAN_COLUMNS = ["records", "protected_with", "unit_records"]
REPORT_COLUMNS = [*PLAN_COLUMNS, "groups", "information_loss", "sse", "sst", "seconds"]


def plan_report(plan: StrataPlan, index: pd.Index) -> pd.DataFrame:
    """One row per stratum (``index``: the strata keys in sorted order): its records, the
    stratum it is protected with (itself unless merged) and that unit's records."""
    rows = []
    for i in range(len(plan.keys)):
        unit = plan.units[int(plan.unit_of[i])]
        rows.append((int(plan.sizes[i]), plan.keys[unit[0]], int(plan.sizes[unit].sum())))
    return pd.DataFrame(rows, columns=PLAN_COLUMNS, index=index.copy())


def strata_report(plan: StrataPlan, results: Sequence[BlockResult], index: pd.Index
                  ) -> pd.DataFrame:
    """:func:`plan_report` and the figures of each stratum's unit (groups, IL, SSE, SST,
    seconds)."""
    report = plan_report(plan, index)
    figures = [results[int(u)] for u in plan.unit_of]
    for name in REPORT_COLUMNS[len(PLAN_COLUMNS):]:
        report[name] = [getattr(res, name) for res in figures]
    return report
