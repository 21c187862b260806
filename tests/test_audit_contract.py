"""Protect and audit read the release contract alike (an architecture review's findings).

The command line's in-memory path decides the columns' roles once, from the file as read
with ``--na``; ``microagg audit`` takes the flags ``protect`` took (``--na``,
``--keep-rest`` with or without ``--columns``) and passes what ``protect`` released with
them; the audit starts from the same checks of names and roles as ``protect``; a
categorical column never lists a category that no released row holds (a merged small
stratum's key, in every path), and the audit fails a release whose column does; a random
method given no seed gets one drawn and recorded in every path, as on the command line.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from cli_helpers import run

import microagg as ma

pa = pytest.importorskip("pyarrow")


def _table(n: int = 30, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": rng.normal(size=n).round(3), "y": rng.gamma(2.0, 9.0, n).round(2),
                         "g": ["a", "b"] * (n // 2),
                         "note": [["yes", "no", "-99"][i % 3] for i in range(n)]})


@pytest.mark.parametrize("strata", [[], ["--strata", "g"]])
def test_na_holds_in_memory_as_by_strata_and_the_audit_takes_it(tmp_path, capsys, strata):
    """``--na -99`` makes ``note`` text without digits: passed through in memory (whose
    second decision, without --na, stopped the run) as by strata; ``microagg audit``
    without ``--na`` fails the release, with it the release passes."""
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    _table().to_csv(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", "--na", "-99", "-o", out, *strata], capsys)
    assert rc == 0, err
    passed = next(line for line in err.splitlines() if "passed through unchanged" in line)
    assert passed.endswith("note"), err
    released = pd.read_csv(out, keep_default_na=False)
    assert sorted(released["note"]) == sorted(_table()["note"])  # (by strata: in their order)
    audit = ["audit", src, out, "-k", "3", *strata]
    rc, _, err = run(audit, capsys)
    assert rc == 2 and "k-anonymity" in err, err  # note (with a digit) audited as protected
    rc, _, err = run([*audit, "--na", "-99"], capsys)
    assert rc == 0 and "passes the audit" in err, err


def test_the_audit_takes_keep_rest_without_columns_as_protect(tmp_path, capsys):
    """``protect --keep-rest`` without ``--columns`` protects the numbers and keeps every
    other column; ``audit --keep-rest`` reads the same roles (it refused the flag)."""
    df = _table().assign(code=[f"Z{i % 5}" for i in range(30)])
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    df.to_csv(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", "--keep-rest", "-o", out], capsys)
    assert rc == 0, err
    rc, _, err = run(["audit", src, out, "-k", "3", "--keep-rest"], capsys)
    assert rc == 0 and "protected x, y;" in err and "code" in err, err
    assert not ma.audit(df, df, 3, keep_rest=True).passed  # x, y raw


def test_the_audit_applies_keep_rest_to_the_index_as_protect():
    """An index of identifiers is returned under ``keep_rest`` by ``microaggregate``; the
    audit with the same arguments passes it (it failed it as a numeric index)."""
    df = _table().drop(columns="note").set_index(pd.Index(np.arange(30) * 7 + 3, name="pid"))
    released = ma.microaggregate(df, 3, columns=["x", "y"], keep_rest=True)
    assert ma.audit(df, released, 3, columns=["x", "y"], keep_rest=True).passed
    failed = ma.audit(df, released, 3, columns=["x", "y"], keep=["g"])
    assert not failed.passed and failed.failures[0].startswith("index:")


def test_the_audit_checks_names_and_roles_as_protect():
    """Duplicate column names and a column named as protected and as a stratum: the same
    errors from the audit as from protect (the audit crashed, or passed)."""
    df = _table().drop(columns="note")
    twice = df.set_axis(["x", "y", "x"], axis=1)
    for call in (lambda: ma.microaggregate(twice, 3), lambda: ma.audit(twice, twice, 3)):
        with pytest.raises(ValueError, match="duplicate column names"):
            call()
    for call in (lambda: ma.microaggregate(df, 3, columns=["x", "g"], strata="g"),
                 lambda: ma.audit(df, df, 3, columns=["x", "g"], strata="g")):
        with pytest.raises(ValueError, match=r"\['g'\] are strata and cannot also be"):
            call()


def test_k_is_checked_before_the_columns_in_every_path(tmp_path, capsys):
    """``k = 1`` is the error, whatever the table holds: the API profiled the table first
    and named a refused column instead, as the command line does not."""
    df = _table()  # (note holds -99: refused without --na)
    with pytest.raises(ValueError, match="k=1 releases each record as it is"):
        ma.microaggregate(df, 1)
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    rc, _, err = run(["protect", src, "-k", "1", "-o", tmp_path / "out.csv"], capsys)
    assert rc == 2 and "k=1 releases each record as it is" in err, err


def _with_rare_stratum(n: int = 31) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    half = (n - 1) // 2
    return pd.DataFrame({"x": rng.normal(size=n), "y": rng.normal(size=n),
                         "r": pd.Categorical(["north"] * half + ["south"] * half + ["isle"]),
                         "w": pd.Categorical(["p", "q"] * half + ["p"])})


def test_a_merged_strata_key_is_not_among_the_released_categories(tmp_path, capsys):
    """A small stratum merged into its nearest is released under that stratum's key; its
    own key went out as a category of the strata column that no row holds (pandas
    categories, a Parquet dictionary). Every path now cuts it, from the plan."""
    import dask.dataframe as dd

    import microagg.dask

    df = _with_rare_stratum()
    options = {"columns": ["x", "y"], "strata": ["r", "w"], "small_strata": "merge"}
    api = ma.microaggregate(df, 3, **options)
    lazy = microagg.dask.microaggregate(dd.from_pandas(df, npartitions=3), 3, **options)
    assert lazy["r"].dtype.categories.tolist() == ["north", "south"]  # (the metadata too)
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    df.to_parquet(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", "--columns", "x,y", "--strata", "r,w",
                      "--small-strata", "merge", "-o", out], capsys)
    assert rc == 0, err
    cli = pd.read_parquet(out)
    for released in (api, lazy.compute(), cli):
        assert released["r"].cat.categories.tolist() == ["north", "south"]
        assert released["w"].cat.categories.tolist() == ["p", "q"]  # (both keys keep p)
        assert "isle" not in released["r"].tolist()
        assert ma.audit(df, released.sort_index(), 3, **{k: v for k, v in options.items()
                                            if k != "small_strata"}).passed


def test_the_audit_fails_a_release_listing_categories_no_row_holds(tmp_path, capsys):
    """A release made elsewhere (R factors keep their levels after a subset, and write them
    as a Parquet dictionary) whose column lists a category no released row holds fails
    the audit, in a table and in a file; the input's own categories are not the audit's
    business (protect asks about them)."""
    df = _with_rare_stratum().drop(columns="w").iloc[:30]
    df["r"] = df["r"].cat.remove_unused_categories()
    released = ma.microaggregate(df, 3, columns=["x", "y"])
    padded = released.assign(r=released["r"].cat.add_categories(["Smalltown resident"]))
    for table in (released, padded):
        result = ma.audit(df, table, 3, columns=["x", "y"])
        assert result.passed is (table is released)
    failure = ma.audit(df, padded, 3, columns=["x", "y"]).failures
    assert len(failure) == 1 and failure[0].startswith("categories: column(s) ['r']")
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    df.to_parquet(src, index=False)
    padded.to_parquet(out, index=False)
    rc, _, err = run(["audit", src, out, "-k", "3", "--columns", "x,y"], capsys)
    assert rc == 2 and "categories: column(s) ['r'] are categorical, with 1 categor" in err


def test_a_seed_is_drawn_and_recorded_in_the_api_and_on_dask():
    """The hybrid is random: the API and Dask without ``seed`` gave another release on
    every call and recorded nothing. They now draw one, as the command line does, record
    it (``params``, ``notes``; a warning without ``return_info``), and that seed makes the
    same release again."""
    import warnings

    import dask.dataframe as dd

    import microagg.dask

    df = _table(40).drop(columns="note")
    options = {"columns": ["x", "y"], "method": "hybrid", "iterations": 20}
    with pytest.warns(UserWarning, match=r"hybrid takes a random seed .* seed=(\d+)") as got:
        first = ma.microaggregate(df, 3, **options)
    seed = int(str(got[0].message).split("seed=")[1].split(";")[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (a seed given: nothing to say)
        assert ma.microaggregate(df, 3, seed=seed, **options).equals(first)
    _, info = ma.microaggregate(df, 3, return_info=True, **options)
    assert isinstance(info.params["seed"], int) and f"seed={info.params['seed']}" in info.notes[-1]
    lazy, plan = microagg.dask.microaggregate(dd.from_pandas(df, npartitions=2), 3,
                                              strata="g", return_info=True, **options)
    again = microagg.dask.microaggregate(dd.from_pandas(df, npartitions=2), 3, strata="g",
                                         seed=plan.params["seed"], **options)
    assert lazy.compute().equals(again.compute())
    assert ma.microaggregate(df, 3, columns=["x", "y"], return_info=True)[1].params == {}


def test_categories_are_cut_by_key_not_by_shape():
    """One strata column whose categories are tuples: each value is a key (the cut read a
    tuple as a key of several columns, and released every stratum as missing); a Dask
    strata column of unknown categories keeps unknown metadata (not 'known, none')."""
    import dask.dataframe as dd

    import microagg.dask

    rng = np.random.default_rng(13)
    df = pd.DataFrame({"s": pd.Categorical(pd.Series([("x", 1)] * 10 + [("y", 2)] * 10,
                                                     dtype=object)),
                       "v": rng.normal(size=20), "w": rng.normal(size=20)})
    out = ma.microaggregate(df, 3, strata="s")
    assert out["s"].tolist() == df["s"].tolist()
    lazy = dd.from_pandas(df.assign(s=df["s"].map(str).astype("category")), npartitions=2)
    lazy["s"] = lazy["s"].cat.as_unknown()
    released = microagg.dask.microaggregate(lazy, 3, strata="s")
    assert not released["s"].cat.known
    assert sorted(released.compute()["s"].cat.categories) == ["('x', 1)", "('y', 2)"]


def test_the_audit_types_a_parquet_input_as_protect_does(tmp_path, capsys):
    """A Parquet text column of numbers (``"49.83"``) is text to ``protect --keep-rest``,
    which passes it through; the audit read it as numbers, protected it, and failed
    protect's own release with the same flags ("raw column")."""
    import pyarrow.parquet as pq

    rng = np.random.default_rng(20)
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"v": rng.normal(size=24),
                             "txt": pa.array([f"{x:.2f}" for x in rng.normal(50, 5, 24)])}),
                   src)
    for strata in ([], ["--strata", "g"]):
        if strata:
            pq.write_table(pq.read_table(src).append_column("g", pa.array(["a", "b"] * 12)),
                           src)
        rc, _, err = run(["protect", src, "-k", "3", "--keep-rest", "-o", out, "--force",
                          *strata], capsys)
        assert rc == 0 and "passed through unchanged: txt" in err, err
        rc, _, err = run(["audit", src, out, "-k", "3", "--keep-rest", *strata], capsys)
        assert rc == 0 and "passes the audit" in err, err


def test_an_index_is_judged_by_its_categories_and_by_whose_it_is(tmp_path, capsys):
    """A categorical index listing a value no row holds is asked about, as a column is
    (the API released it, and the audit passed it); an index kept on purpose (keep_rest)
    must be the input's: the audit passed raw incomes set as the release's index."""
    names = ["ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal", "ivy", "jo", "kim", "lu"]
    df = pd.DataFrame({"v": np.arange(12.0) ** 1.5, "w": np.arange(12.0) % 5},
                      index=pd.CategoricalIndex(names, name="who"))
    padded = df.set_axis(pd.CategoricalIndex(names, categories=[*names, "SECRET"], name="who"))
    with pytest.raises(ValueError, match=r"index level\(s\) .* 1 categories that no row holds"):
        ma.microaggregate(padded, 3)
    out = ma.microaggregate(df, 3)
    assert ma.audit(df, out, 3).passed
    failed = ma.audit(df, out.set_axis(padded.index), 3)
    assert not failed.passed and "1 categories that no row holds" in failed.failures[0]
    rng = np.random.default_rng(11)
    raw = pd.DataFrame({"income": rng.normal(50_000, 9_000, 12).round(2),
                        "age": rng.integers(20, 70, 12)})
    released = ma.microaggregate(raw, 3, keep_rest=True)
    assert ma.audit(raw, released, 3, keep_rest=True).passed
    leaky = released.set_axis(pd.Index(raw["income"].to_numpy(), name="income_raw"))
    for keep_rest in (False, True):
        result = ma.audit(raw, leaky, 3, keep_rest=keep_rest)
        assert not result.passed and result.failures[0].startswith("index:"), result


@pytest.mark.parametrize("strata", [[], ["--strata", "s"]])
def test_keep_rest_keeps_a_stored_index_in_every_path(tmp_path, capsys, strata):
    """A Parquet file's stored index of identifiers under keep_rest: the API and Dask keep
    a DataFrame's index, and ``protect --keep-rest`` refused the same index stored in the
    file; it keeps it now (with a note), and the audit with keep_rest passes the release."""
    rng = np.random.default_rng(12)
    df = pd.DataFrame({"s": ["a", "b"] * 12, "v": rng.normal(size=24), "w": rng.normal(size=24)},
                      index=pd.Index(rng.permutation(np.arange(1000, 1024)), name="patient_id"))
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    df.to_parquet(src)
    rc, _, err = run(["protect", src, "-k", "3", "--keep-rest", "-o", out, *strata], capsys)
    assert rc == 0 and "'patient_id' is the index pandas stored" in err, err
    released = pd.read_parquet(out)
    assert sorted(released["patient_id"]) == sorted(df.index)
    rc, _, err = run(["audit", src, out, "-k", "3", "--keep-rest", *strata], capsys)
    assert rc == 0 and "passes the audit" in err, err
    rc, _, err = run(["protect", src, "-k", "3", "-o", tmp_path / "o2.parquet", *strata],
                     capsys)
    assert rc == 2 and "the index pandas stored in the Parquet file" in err, err
    assert ma.audit(df, ma.microaggregate(df, 3, keep_rest=True), 3, keep_rest=True).passed
