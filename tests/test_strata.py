"""Microaggregation within strata: properties (hypothesis), the small-strata policy, errors.

Issue "Strata, large files and a distributed engine", acceptance "Strata, properties": every
group lies inside one stratum; every released row appears at least k times within its
stratum; means are preserved per stratum; the small-strata policy behaves as documented
(``microagg._strata``: "error" names the strata; "merge" joins each to the stratum of at
least k records whose centroid on the whole table's z-scores is nearest, ties to the first).
"""

from __future__ import annotations

import io
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest
from helpers import letters
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import microagg as ma
from microagg._strata import combine_moments, moments, overall_loss

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def tables(draw, *, small: bool):
    """A shuffled table of 1..5 strata (one or two strata columns), integer-valued columns.

    ``small``: strata may have fewer than k records (at least one has k or more).
    """
    k = draw(st.integers(2, 4))  # (k = 1 is no release: test_release.py)
    n_strata = draw(st.integers(1, 5))
    low = 1 if small else k
    sizes = [draw(st.integers(low, 12)) for _ in range(n_strata)]
    assume(max(sizes) >= k)
    p = draw(st.integers(1, 3))
    n = sum(sizes)
    values = np.array(draw(st.lists(st.integers(-20, 20), min_size=n * p, max_size=n * p)),
                      dtype=float).reshape(n, p)
    assume(bool((np.ptp(values, axis=0) > 0).all()))
    stratum = np.repeat(np.arange(n_strata), sizes)
    order = np.array(draw(st.permutations(range(n))))
    df = pd.DataFrame(values[order], columns=[f"x{j}" for j in range(p)])
    assume(not np.array_equal(df["x0"], np.arange(n)))  # a first column 0..n-1: a row index
    two = draw(st.booleans())
    strata = ["region", "wave"] if two else ["region"]
    df["region"] = [f"r{s % 3}" if two else f"s{s}" for s in stratum[order]]
    if two:
        df["wave"] = stratum[order] // 3
    df["id"] = [letters("id", i) for i in range(n)]  # text passed (digits: asked about)
    # shuffled row labels, text (numbers in an index would be asked about: test_release.py)
    labels = [letters("row", i) for i in draw(st.permutations(range(100, 100 + n)))]
    return df.set_index(pd.Index(labels)), strata, k


def _key(df: pd.DataFrame, strata: list[str]) -> pd.Series:
    return df[strata].astype(str).agg("|".join, axis=1)


def _columns(df):
    return [c for c in df.columns if c.startswith("x")]


@SETTINGS
@given(tables(small=False))
def test_groups_stay_in_their_stratum_and_releases_repeat_k_times(case):
    df, strata, k = case
    cols = _columns(df)
    out, info = ma.microaggregate(df, k, strata=strata, return_info=True)
    key = _key(df, strata)
    assert info.columns == cols and set(strata) <= set(info.passed_through)
    assert pd.Series(key.to_numpy()).groupby(info.labels).nunique().max() == 1
    assert out.groupby([key, *[out[c] for c in cols]]).size().min() >= k
    assert ma.is_k_partition(info.labels, k)
    pd.testing.assert_frame_equal(out[strata + ["id"]], df[strata + ["id"]])
    assert out.index.equals(df.index)


@SETTINGS
@given(tables(small=False))
def test_means_are_preserved_per_stratum(case):
    df, strata, k = case
    cols = _columns(df)
    out = ma.microaggregate(df, k, strata=strata)
    np.testing.assert_allclose(out.groupby(strata)[cols].mean().to_numpy(),
                               df.groupby(strata)[cols].mean().to_numpy(), atol=1e-9)


@SETTINGS
@given(tables(small=False))
def test_each_stratum_is_protected_as_a_table_of_its_own(case):
    """Independent strata: a stratum's release is the unstratified release of that stratum
    (standardised within it), wherever no column is constant within it."""
    df, strata, k = case
    cols = _columns(df)
    out, info = ma.microaggregate(df, k, strata=strata, return_info=True)
    for key, part in df.groupby(strata):
        key = key if len(strata) > 1 else key[0]
        if (part[cols].nunique() < 2).any():
            continue
        alone = ma.microaggregate(part, k, columns=cols, keep_rest=True)  # wave: not a stratum here
        np.testing.assert_array_equal(out.loc[part.index, cols].to_numpy(),
                                      alone[cols].to_numpy())
        row = info.strata.loc[key]
        assert row["records"] == len(part) and row["protected_with"] == key


@SETTINGS
@given(tables(small=True))
def test_small_strata_policy(case):
    df, strata, k = case
    sizes = df.groupby(strata).size()
    small = sizes[sizes < k]
    if len(small):
        with pytest.raises(ValueError, match="fewer than k") as err:
            ma.microaggregate(df, k, strata=strata)
        for key in list(small.index)[:10]:
            values = key if isinstance(key, tuple) else (key,)
            named = ", ".join(f"{c}={v!r}" for c, v in zip(strata, values, strict=True))
            assert named in str(err.value)
    out, info = ma.microaggregate(df, k, strata=strata, small_strata="merge", return_info=True)
    assert set(info.merged) == set(small.index)
    _check_merge_targets(df, strata, k, info)
    unit = pd.Series([info.strata.loc[key, "protected_with"] for key in
                      df.set_index(strata).index], index=df.index).astype(str)
    cols = _columns(df)
    assert unit.groupby(info.labels).nunique().max() == 1  # no group crosses a unit
    assert out.groupby([unit, *[out[c] for c in cols]]).size().min() >= k
    np.testing.assert_allclose(out[cols].groupby(unit).mean().to_numpy(),
                               df[cols].groupby(unit).mean().to_numpy(), atol=1e-9)
    assert info.strata["records"].sum() == len(df)


def _check_merge_targets(df, strata, k, info):
    """Each target is a stratum of >= k records at the least centroid distance (z-scores)."""
    cols = _columns(df)
    z = (df[cols] - df[cols].mean()) / df[cols].std(ddof=0)
    centre = z.groupby([df[c] for c in strata]).mean()
    sizes = df.groupby(strata).size()
    large = sizes[sizes >= k].index
    for small, target in info.merged.items():
        assert target in large
        d = ((centre.loc[large] - centre.loc[small]) ** 2).sum(axis=1)
        assert d.loc[target] <= d.min() + 1e-9
        assert info.strata.loc[small, "protected_with"] == target


def test_merge_ties_go_to_the_first_stratum_and_are_reported():
    # stratum "m" (2 records) sits exactly between "a" and "z": equal distances, "a" first
    df = pd.DataFrame({"x": [-2.0, -1.0, -3.0, 2.0, 1.0, 3.0, 0.5, -0.5],
                       "s": ["z", "z", "z", "a", "a", "a", "m", "m"]})
    df.loc[df.s == "a", "x"] *= -1
    df.loc[df.s == "z", "x"] *= -1
    out, info = ma.microaggregate(df, 3, strata="s", small_strata="merge", return_info=True)
    assert info.merged == {"m": "a"}
    assert info.strata.loc["m", "protected_with"] == "a"
    assert info.strata.loc["a", "unit_records"] == 5
    assert list(info.strata.index) == ["a", "m", "z"]


def test_merge_picks_the_nearest_centroid_not_the_largest_stratum():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": np.r_[rng.normal(0, 1, 50), rng.normal(10, 1, 5), [9.5, 10.5]],
                       "s": ["big"] * 50 + ["near"] * 5 + ["tiny"] * 2})
    _, info = ma.microaggregate(df, 3, strata="s", small_strata="merge", return_info=True)
    assert info.merged == {"tiny": "near"}


def test_report_per_stratum_and_global_labels():
    df = _synthetic()
    out, info = ma.microaggregate(df, 3, strata=["region"], return_info=True)
    rep = info.strata
    assert list(rep.columns) == ["records", "protected_with", "unit_records", "groups",
                                 "information_loss", "sse", "sst", "seconds"]
    assert rep["records"].sum() == len(df) and rep["groups"].sum() == info.n_groups
    assert (rep["seconds"] >= 0).all() and (rep["information_loss"] > 0).all()
    assert len(np.unique(info.labels)) == info.n_groups  # labels unique over the table
    assert info.information_loss > 0 and info.strata.index.name == "region"


def _synthetic(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south", "east", "west"], n)
    shift = pd.Series(region).map({"north": 0, "south": 3, "east": 6, "west": 9}).to_numpy()
    return pd.DataFrame({"region": region, "income": rng.gamma(2, 10, n) + 5 * shift,
                         "age": rng.integers(18, 90, n), "hours": rng.normal(shift, 1, n)})


def test_whole_table_loss_from_strata_statistics_equals_the_in_memory_one():
    """The streaming engine's IL (strata statistics and per-column SSE, batch by batch)
    equals the in-memory ``info.information_loss`` (whole-table z-scores)."""
    df = _synthetic(1200)
    _, strat = ma.microaggregate(df, 5, strata="region", return_info=True)
    cols = strat.columns
    stats = combine_moments([moments(df.iloc[i::3], ["region"], cols) for i in range(3)])
    released = ma.microaggregate(df, 5, strata="region")
    column_sse = ((df[cols].to_numpy(float) - released[cols].to_numpy()) ** 2).sum(axis=0)
    assert overall_loss(stats, column_sse, standardize=True) == pytest.approx(
        strat.information_loss, rel=1e-9)


def test_moments_combine_exactly():
    df = _synthetic(500)
    cols = ["income", "age", "hours"]
    whole = moments(df, ["region"], cols)
    parts = combine_moments([moments(df.iloc[a:a + 70], ["region"], cols)
                             for a in range(0, 500, 70)])
    pd.testing.assert_frame_equal(parts, whole, rtol=1e-10)


def test_numeric_strata_column_is_not_protected_by_default():
    df = _synthetic().assign(wave=lambda d: np.arange(len(d)) % 2 + 1)
    out, info = ma.microaggregate(df, 3, strata=["region", "wave"], return_info=True)
    assert "wave" not in info.columns and "wave" in info.passed_through
    assert out["wave"].equals(df["wave"])
    assert len(info.strata) == 8


@pytest.mark.parametrize("kwargs, message", [
    ({"strata": "nowhere"}, r"strata column\(s\) \['nowhere'\] are not in the table"),
    ({"strata": "region", "columns": ["income", "region"]},
     r"\['region'\] are strata and cannot also be protected"),
    ({"strata": []}, "strata is empty"),
    ({"strata": ["region", "region"]}, "named more than once"),
    ({"strata": "region", "small_strata": "drop"}, "small_strata must be one of"),
])
def test_errors_name_the_problem(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ma.microaggregate(_synthetic(), 3, **kwargs)


def test_missing_stratum_value_and_no_large_stratum():
    df = _synthetic(40)
    df.loc[3, "region"] = None
    with pytest.raises(ValueError, match=r"strata column\(s\) \['region'\] have missing"):
        ma.microaggregate(df, 3, strata="region")
    tiny = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "s": ["a", "a", "b", "b"]})
    with pytest.raises(ValueError, match="no stratum has k=3 records"):
        ma.microaggregate(tiny, 3, strata="s", small_strata="merge")


def test_column_constant_within_a_stratum_is_allowed():
    df = pd.DataFrame({"x": [1.0, 1.0, 1.0, 2.0, 5.0, 9.0], "y": [1.0, 2.0, 3.0, 4, 5, 6],
                       "s": list("aaabbb")})
    out, info = ma.microaggregate(df, 3, strata="s", return_info=True)
    assert out.loc[:2, "x"].tolist() == [1.0, 1.0, 1.0]
    assert np.isfinite(info.information_loss)


def test_other_methods_and_options_run_within_strata():
    df = _synthetic(300)
    for method, params in [("vmdav", {"gamma": 1.1}), ("hybrid", {"iterations": 5, "seed": 1})]:
        _, info = ma.microaggregate(df, 3, strata="region", method=method, return_info=True,
                                    **params)
        assert ma.is_k_partition(info.labels, 3)
        key = df["region"].to_numpy()
        assert pd.Series(key).groupby(info.labels).nunique().max() == 1


def test_values_beyond_the_strata_sums_range_are_refused_not_merged_blind(tmp_path, capsys):
    """Beyond about 1e154 the strata's sums of squares overflow. Choosing where a small
    stratum goes would then be blind (every distance 0 or infinite, the first stratum
    "nearest"): an error says so in every path. Without a small stratum the release is made
    (the units are standardised on their own) and the streamed report says the whole-table
    IL was not computed, rather than printing nan."""
    from cli_helpers import one_line_error, run

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"s": rng.choice(["a", "b"], 60), "x": rng.normal(size=60) * 4e307,
                       "y": rng.normal(size=60)})
    tiny = df.copy()
    tiny.loc[[3, 7], "s"] = "tiny"
    for standardize in (True, False):
        with pytest.raises(ValueError, match="too large .*beyond about 1e154"):
            ma.microaggregate(tiny, 3, strata="s", small_strata="merge",
                              standardize=standardize)
    src = tmp_path / "tiny.csv"
    tiny.to_csv(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "s", "--small-strata", "merge",
                      "-o", tmp_path / "o.csv"], capsys)
    assert "too large" in one_line_error(rc, err)
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "s", "-o", tmp_path / "p.csv"],
                     capsys)
    assert rc == 0 and "IL of the whole table not computed" in err and "nan" not in err, err
    released = pd.read_csv(tmp_path / "p.csv")
    expected = ma.microaggregate(df, 3, strata="s")
    for c in ("x", "y"):
        np.testing.assert_allclose(np.sort(released[c]), np.sort(expected[c]), rtol=1e-12)


def test_values_below_the_strata_sums_range_are_protected_in_every_path(tmp_path, capsys):
    """Below about 1e-154 the squares in the strata statistics underflow to 0. Such a column
    is not constant: the in-memory function protects it (it rescales before standardising),
    and so do the streamed CLI and Dask. Only where the whole table's spread is needed, to
    choose where a small stratum goes, is the run refused, with an error that says why (not
    "zero variance"). A constant column is still refused as constant in every path."""
    from cli_helpers import one_line_error, run

    dd = pytest.importorskip("dask.dataframe")
    import microagg.dask as mdd

    rng = np.random.default_rng(1)
    df = pd.DataFrame({"s": np.repeat(["a", "b"], 30), "x": rng.normal(size=60) * 1e-170,
                       "y": rng.normal(size=60)})
    src = tmp_path / "tiny.csv"
    df.to_csv(src, index=False)
    expected = ma.microaggregate(df, 3, strata="s")
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "s", "-o", tmp_path / "o.csv"],
                     capsys)
    assert rc == 0 and "below about 1e-154" in err, err
    by_dask = mdd.microaggregate(dd.from_pandas(df, npartitions=3, sort=False), 3,
                                 strata="s").compute(scheduler="sync")
    for released in (pd.read_csv(tmp_path / "o.csv"), by_dask):
        for c in ("x", "y"):
            np.testing.assert_allclose(np.sort(released[c]), np.sort(expected[c]), rtol=1e-12)
    assert expected["x"].nunique() == 20 and expected["x"].abs().max() < 1e-169

    small = df.copy()
    small.loc[[3, 40], "s"] = "tiny"
    small.to_csv(src, index=False)
    wanted = "'x'.* too small .*below about 1e-154"
    with pytest.raises(ValueError, match=wanted):
        ma.microaggregate(small, 3, strata="s", small_strata="merge")
    with pytest.raises(ValueError, match=wanted):
        mdd.microaggregate(dd.from_pandas(small, npartitions=3, sort=False), 3, strata="s",
                           small_strata="merge")
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "s", "--small-strata", "merge",
                      "-o", tmp_path / "p.csv"], capsys)
    assert "too small" in one_line_error(rc, err)
    assert ma.microaggregate(small, 3, strata="s", small_strata="merge", standardize=False
                             ).shape == small.shape  # raw values need no spread

    constant = df.assign(x=1e-170)
    constant.to_csv(src, index=False)
    with pytest.raises(ValueError, match="'x'.* zero variance"):
        ma.microaggregate(constant, 3, strata="s")
    with pytest.raises(ValueError, match="'x'.* zero variance"):
        mdd.microaggregate(dd.from_pandas(constant, npartitions=3, sort=False), 3, strata="s")
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "s", "-o", tmp_path / "q.csv"],
                     capsys)
    assert "zero variance" in one_line_error(rc, err)


_SPELLINGS = {  # a stratum's values: equal to one another, written apart
    "signed zeros": ([0.0, -0.0, 0.0, -0.0, 1.0, 1.0, 1.0], None),
    "1, 1.0, True": ([1, 1.0, True, 1, "a", "a", "a"], object),
    "decimals": ([Decimal("1"), Decimal("1.00"), Decimal("1.0"), Decimal("1"), Decimal(2),
                  Decimal(2), Decimal(2)], None),
    "time zones": ([pd.Timestamp("2020-01-01 00:00", tz="UTC"),
                    pd.Timestamp("2020-01-01 01:00", tz="Europe/Paris")] * 2
                   + [pd.Timestamp("2021-01-01", tz="UTC")] * 3, object),
}


@pytest.mark.parametrize("kind", sorted(_SPELLINGS))
def test_a_stratum_is_released_under_one_spelling(tmp_path, capsys, kind):
    """Found in review: values that compare equal group into one stratum, but each row was
    released as written, so ``to_csv`` showed ``-0.0`` (or ``True``, ``1.00``, ``+01:00``)
    on fewer than k rows: a combination of strata key and protected values singled out.
    Every row is now released under its stratum's key, in memory, on Dask and from a
    Parquet file; written out, every combination repeats k times."""
    from cli_helpers import run

    values, dtype = _SPELLINGS[kind]
    df = pd.DataFrame({"x": np.arange(7.0) ** 2, "s": pd.Series(values, dtype=dtype)})
    out = ma.microaggregate(df, 3, strata="s")
    written = pd.read_csv(io.StringIO(out.to_csv(index=False)), dtype=str)
    assert written.value_counts().min() >= 3, written
    assert (out["s"] == df["s"]).all() and out["s"].dtype == df["s"].dtype
    assert ma.audit(df, out, 3, strata="s").passed
    if kind == "signed zeros":  # (Dask holds objects as text: only typed columns compare)
        dd = pytest.importorskip("dask.dataframe")
        import dask

        import microagg.dask

        with dask.config.set(scheduler="synchronous"):
            lazy = microagg.dask.microaggregate(dd.from_pandas(df, npartitions=3, sort=False),
                                                3, strata="s")
            pd.testing.assert_frame_equal(lazy.compute().sort_index(), out)
        pytest.importorskip("pyarrow")
        df.to_parquet(tmp_path / "in.parquet", index=False)
        rc, _, err = run(["protect", tmp_path / "in.parquet", "-k", 3, "--strata", "s", "-o",
                          tmp_path / "out.csv"], capsys)
        assert rc == 0, err
        released = pd.read_csv(tmp_path / "out.csv", dtype=str)
        assert released.value_counts().min() >= 3 and set(released["s"]) == {"0.0", "1.0"}


@pytest.mark.parametrize("names", [[0, 1, 2], ["mean0", "n", "m2_0"]])
def test_strata_columns_named_like_internal_ones(names):
    """Found in review: a strata column labelled ``0`` (as in ``pd.DataFrame(array)``) met
    the in-memory engine's own positional column names, and pandas failed with "the truth
    value of a Series is ambiguous". Any labels work, as on Dask."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({names[0]: ["u", "v"] * 6, names[1]: rng.normal(size=12),
                       names[2]: rng.normal(size=12)})
    out, info = ma.microaggregate(df, 3, strata=names[0], return_info=True)
    assert info.strata["records"].to_dict() == {"u": 6, "v": 6}
    plain = ma.microaggregate(df.set_axis(["s", "a", "b"], axis=1), 3, strata="s")
    np.testing.assert_array_equal(out.to_numpy(), plain.to_numpy())
