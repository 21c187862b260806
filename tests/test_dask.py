"""``microagg.dask.microaggregate`` on a ``LocalCluster``, and ``protect --scheduler``.

Issue "Strata, large files and a distributed engine", point 3 and acceptance "Dask": on a
``LocalCluster`` of two worker processes (loopback only), the Dask engine equals the
in-memory function on several data sets; the command line uses the same cluster.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import microagg as ma

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
import microagg.dask  # noqa: E402


def _national(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    region = rng.choice([f"R{i}" for i in range(5)], n)
    df = pd.DataFrame({"region": region, "wave": rng.integers(1, 4, n),
                       "income": rng.lognormal(8, 1, n), "age": rng.integers(16, 90, n),
                       "hours": rng.normal(38, 6, n)},
                      index=pd.Index(rng.permutation(n) * 7 + 3, name="person"))
    df.loc[df.index[:2], ["region", "wave"]] = ["R9", 9]  # a small stratum
    return df


def _census_by_derived_stratum() -> pd.DataFrame:
    """Census, stratified by a derived variable: the quartile of its first attribute."""
    census = ma.datasets.load("census")
    first = census.columns[0]
    return census.assign(band=pd.qcut(census[first], 4, labels=False, duplicates="drop"))


CASES = {
    "national, two strata columns, merge, 7 partitions": (
        lambda: _national(4000, 0), 7,
        {"strata": ["region", "wave"], "small_strata": "merge",
         "columns": ["income", "age", "hours"], "keep": "person"}),
    "categorical and int8 strata, merge (their dtypes kept), 3 partitions": (
        lambda: _national(1500, 4).astype({"region": "category", "wave": "int8"}), 3,
        {"strata": ["region", "wave"], "small_strata": "merge",
         "columns": ["income", "age", "hours"], "keep": "person"}),
    "national, vmdav with gamma, one partition": (
        lambda: _national(1500, 1).query("region != 'R9'"), 1,
        {"strata": "region", "method": "vmdav", "gamma": 1.1, "keep": "person"}),
    "ties and integers, strata over every partition": (
        lambda: pd.DataFrame({"s": np.arange(900) % 3, "a": np.arange(900) % 7,
                              "b": (np.arange(900) // 5) % 4}), 9,
        {"strata": "s", "method": "ivmdav", "columns": ["a", "b"]}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_dask_equals_the_in_memory_function(client, name):
    make, npartitions, kwargs = CASES[name]
    ddf = dd.from_pandas(make(), npartitions=npartitions)
    result = microagg.dask.microaggregate(ddf, 3, **kwargs)
    assert isinstance(result, dd.DataFrame)
    got = result.compute()
    expected = ma.microaggregate(ddf.compute(), 3, **kwargs)
    pd.testing.assert_frame_equal(got.loc[expected.index], expected)


@pytest.mark.data
def test_dask_equals_in_memory_on_census_by_a_derived_stratum(client):
    df = _census_by_derived_stratum()
    ddf = dd.from_pandas(df, npartitions=4)
    got = microagg.dask.microaggregate(ddf, 3, strata="band").compute()
    expected = ma.microaggregate(ddf.compute(), 3, strata="band")
    pd.testing.assert_frame_equal(got.loc[expected.index], expected)


def test_a_stratum_is_one_task_s_and_a_merged_one_its_target_s(client):
    ddf = dd.from_pandas(_national(2000, 2), npartitions=5)
    result = microagg.dask.microaggregate(ddf, 3, strata="region", small_strata="merge",
                                          keep="person")
    assert result.npartitions == 5  # five regions of about 400 records (the input's parts)
    parts = client.compute(result.to_delayed(), sync=True)
    # the merged small stratum R9 is released under its target's key (release contract)
    assert sorted(p["region"].nunique() for p in parts) == [1, 1, 1, 1, 1]
    assert "R9" not in set(pd.concat(parts)["region"])


def test_small_strata_share_partitions_and_no_stratum_is_split(client):
    """Many small strata are packed into partitions about the input's size (a task each
    took 7 s for 1,000 strata of 6 records, against 0.3 s in memory); a stratum larger
    than that has a partition of its own; none is cut."""
    rng = np.random.default_rng(3)
    sizes = [6] * 600 + [1500] + [4] * 300
    df = pd.DataFrame({"s": np.repeat(np.arange(len(sizes)), sizes),
                       "x": rng.normal(size=sum(sizes)), "y": rng.normal(size=sum(sizes))})
    df = df.sample(frac=1, random_state=0).reset_index(drop=True)
    lazy = microagg.dask.microaggregate(dd.from_pandas(df, npartitions=6), 3, strata="s")
    parts = client.compute(lazy.to_delayed(), sync=True)
    assert lazy.npartitions == len(parts) <= 8
    owners = pd.concat([p[["s"]].assign(part=i) for i, p in enumerate(parts)])
    assert owners.groupby("s")["part"].nunique().eq(1).all()  # no stratum split
    assert [p["s"].nunique() for p in parts].count(1) >= 1  # the large one alone
    rows = max(len(p) for p in parts if p["s"].nunique() > 1)
    assert rows <= -(-len(df) // 6)  # shared partitions no larger than the input's
    expected = ma.microaggregate(df, 3, strata="s")
    pd.testing.assert_frame_equal(pd.concat(parts).loc[expected.index], expected)


def test_the_release_works_with_dask_s_own_steps(client):
    """Partitions selected, tail, .loc and a join by index give the rows of the computed
    release: a task protects the unit its rows were gathered under, not the one at its
    position in a selection (rows came back under another stratum's key, or a false "source
    changed"), and the release claims no index ranges it does not have (.loc and joins
    silently lost rows)."""
    df = pd.DataFrame({"region": ["A"] * 4 + ["B"] * 3 + ["C"] * 5, "income": np.arange(12.0)})
    lazy = microagg.dask.microaggregate(dd.from_pandas(df, npartitions=3), 3, strata="region")
    full = lazy.compute()
    assert not lazy.known_divisions
    for i in range(lazy.npartitions):
        part = lazy.partitions[i].compute()
        pd.testing.assert_frame_equal(part, full.loc[part.index])
    pd.testing.assert_frame_equal(lazy.partitions[[2, 0]].compute().sort_index(),
                                  full.loc[lazy.partitions[[2, 0]].compute().index].sort_index())
    pd.testing.assert_frame_equal(lazy.tail(2), full.loc[lazy.tail(2).index])
    assert lazy.tail(2)["region"].tolist() == ["C", "C"]
    pd.testing.assert_frame_equal(lazy.loc[5].compute(), full.loc[[5]])
    assert sorted(lazy.loc[0:3].compute().index) == [0, 1, 2, 3]
    weights = dd.from_pandas(pd.DataFrame({"w": np.arange(12) * 2}), npartitions=2)
    joined = lazy.join(weights).compute().sort_index()
    assert len(joined) == 12 and (joined["w"] == np.arange(12) * 2).all()


def test_a_stratum_gone_from_the_source_is_an_error():
    """A stratum whose rows all left the source between the call and compute() leaves its
    task an empty partition: an error, not a release without those rows."""
    import dask

    df = pd.DataFrame({"region": ["A"] * 4 + ["B"] * 3 + ["C"] * 5, "x": np.arange(12.0)})
    source = {"df": df}
    cuts = [(0, 4), (4, 7), (7, 12)]
    parts = [dask.delayed(lambda a, b: source["df"].iloc[a:b])(a, b) for a, b in cuts]
    lazy = microagg.dask.microaggregate(dd.from_delayed(parts, meta=df.iloc[:0]), 3,
                                        strata="region")
    source["df"] = df.assign(region=df["region"].where(df["region"] != "B", None)).iloc[
        [0, 1, 2, 3, 7, 8, 9, 10, 11]].reset_index(drop=True)  # (the parts read 4, 3, 2 rows)
    with pytest.raises(ValueError, match="has no records when computed: the source changed"):
        lazy.compute()


def test_a_stratum_gone_from_a_shared_partition_is_an_error():
    """Strata packed into one partition: one of them gone from the source is named."""
    import dask

    df = pd.DataFrame({"region": ["A"] * 3 + ["B"] * 3 + ["C"] * 3, "x": np.arange(9.0)})
    source = {"df": df}
    lazy = microagg.dask.microaggregate(
        dd.from_delayed([dask.delayed(lambda: source["df"])()], meta=df.iloc[:0]), 3,
        strata="region")
    assert lazy.npartitions == 1
    source["df"] = df[df["region"] != "B"].reset_index(drop=True)
    with pytest.raises(ValueError, match="stratum 'B' planned .* has no records when computed"):
        lazy.compute()


def test_strata_of_unknown_categories_stay_unknown_in_the_metadata():
    """A categorical strata column whose categories Dask does not know (``as_unknown``)
    keeps them unknown in the release's metadata: its placeholder is not cut to no
    category at all, which would claim known, empty categories for data that has some."""
    df = pd.DataFrame({"s": pd.Categorical(["a", "b"] * 20),
                       "x": np.random.default_rng(0).normal(size=40)})
    ddf = dd.from_pandas(df, npartitions=2, sort=False)
    ddf["s"] = ddf["s"].cat.as_unknown()
    out = microagg.dask.microaggregate(ddf, 3, strata="s")  # (on the module's cluster, if up)
    assert not out["s"].cat.known
    result = out.compute()
    assert result["s"].cat.categories.tolist() == ["a", "b"]
    assert result["s"].value_counts().to_dict() == {"a": 20, "b": 20}


def _changing_source(df: pd.DataFrame):
    """A one-partition Dask frame read from ``source["df"]`` each time it is computed."""
    import dask

    source = {"df": df}
    ddf = dd.from_delayed([dask.delayed(lambda: source["df"])()], meta=df.iloc[:0])
    return source, ddf


def test_a_stratum_that_grew_since_the_plan_is_an_error():
    """Rows added to a stratum between the call and compute() (still k or more): the unit
    is not the one planned, an error, not a release of rows the plan never saw."""
    df = pd.DataFrame({"region": ["A"] * 3 + ["B"] * 3, "x": np.arange(6.0)})
    source, ddf = _changing_source(df)
    lazy = microagg.dask.microaggregate(ddf, 3, strata="region")
    source["df"] = pd.concat([df, pd.DataFrame({"region": ["A"], "x": [9.0]})],
                             ignore_index=True)
    with pytest.raises(ValueError, match=r"has 4 records when computed but 3 when planned"):
        lazy.compute()


def test_digits_in_a_passed_column_since_the_plan_are_an_error():
    """A text column passed through (no digit when planned) that holds numbers when
    computed (an SSN written in since) is refused by the task, not released raw."""
    df = pd.DataFrame({"region": ["A"] * 3 + ["B"] * 3, "x": np.arange(6.0),
                       "note": ["ok", "fine", "ok", "late", "ok", "fine"]})
    source, ddf = _changing_source(df)
    lazy = microagg.dask.microaggregate(ddf, 3, strata="region")
    source["df"] = df.assign(note=["ok", "078-05-1120", "ok", "late", "ok", "fine"])
    with pytest.raises(ValueError, match=r"\['note'\] .* do not have the role decided"):
        lazy.compute()


@pytest.mark.parametrize("strata", [[], ()])
def test_dask_without_strata_says_what_to_call(strata):
    """microagg.dask works within strata; the in-memory function's "leave strata out" does
    not apply here."""
    ddf = dd.from_pandas(pd.DataFrame({"s": list("ab") * 6, "x": np.arange(12.0)}), 2)
    with pytest.raises(ValueError, match=r"strata is empty: .*microagg\.microaggregate on "
                                         r"ddf\.compute\(\)"):
        microagg.dask.microaggregate(ddf, 3, strata=strata)


def test_dask_errors_are_those_of_the_in_memory_function(client):
    ddf = dd.from_pandas(_national(300, 3), npartitions=2)
    with pytest.raises(ValueError, match=r"the index 'person' is numeric \(300 numbers\)"):
        microagg.dask.microaggregate(ddf, 3, strata=["region", "wave"])  # an identifier
    with pytest.raises(ValueError, match=r"region='R9', wave=9 \(2 records\)"):
        microagg.dask.microaggregate(ddf, 3, strata=["region", "wave"], keep="person")
    with pytest.raises(ValueError, match="are strata and cannot also be protected"):
        microagg.dask.microaggregate(ddf, 3, strata="region", columns=["region", "age"])
    with pytest.raises(TypeError, match="call microagg.microaggregate"):
        microagg.dask.microaggregate(ddf.compute(), 3, strata="region")


def test_the_plan_says_what_the_in_memory_info_says(client):
    """``return_info=True``: the roles, notes and strata plan, before computing, equal the
    in-memory function's (a row index kept, dates passed through, a small stratum merged)."""
    df = _national(1200, 6).reset_index(drop=True)
    df.insert(0, "row", np.arange(len(df)))
    df["visit"] = pd.Timestamp("2020-01-01") + pd.to_timedelta(df["age"], unit="D")
    kwargs = {"strata": ["region", "wave"], "small_strata": "merge"}
    lazy, plan = microagg.dask.microaggregate(dd.from_pandas(df, npartitions=3), 3,
                                              return_info=True, **kwargs)
    _, info = ma.microaggregate(df, 3, return_info=True, **kwargs)
    assert isinstance(plan, microagg.dask.ReleasePlan) and isinstance(lazy, dd.DataFrame)
    assert plan.kept == info.kept == ["row"]
    assert len(plan.notes) == 3 and plan.notes == info.notes  # row index, dates, merged
    assert any("visit" in note for note in plan.notes)
    for name in ("columns", "method", "k", "params", "passed_through", "merged"):
        assert getattr(plan, name) == getattr(info, name), name
    pd.testing.assert_frame_equal(plan.strata, info.strata[list(plan.strata.columns)])
    assert list(plan.strata.columns) == ["records", "protected_with", "unit_records"]


def test_protect_scheduler_uses_the_cluster(client, tmp_path, capsys):
    from microagg._cli import main

    df = _national(2000, 4).reset_index()
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    df.to_parquet(src, index=False)
    report = tmp_path / "release.json"
    rc = main(["protect", str(src), "-k", "3", "--strata", "region,wave", "--small-strata",
               "merge", "--columns", "income,age,hours", "--keep", "person", "--scheduler",
               client.scheduler.address, "-o", str(out), "--report", str(report)])
    err = capsys.readouterr().err
    assert rc == 0, err
    record = json.loads(report.read_text(encoding="utf-8"))  # (the same record as --jobs)
    assert record["output"]["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    assert record["result"]["strata"]["merged"] == 1 and record["audit"]["rows"] == 2000
    assert (record["run"]["jobs"], record["run"]["scheduler"]) == (None,
                                                                    client.scheduler.address)
    expected = ma.microaggregate(df, 3, strata=["region", "wave"], small_strata="merge",
                                 columns=["income", "age", "hours"],
                                 keep="person").set_index("person")
    got = pd.read_parquet(out).set_index("person").loc[expected.index]
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    # the units went to the cluster as tasks of several: the same file as one process's
    one = tmp_path / "one.parquet"
    rc = main(["protect", str(src), "-k", "3", "--strata", "region,wave", "--small-strata",
               "merge", "--columns", "income,age,hours", "--keep", "person", "-o", str(one)])
    assert rc == 0, capsys.readouterr().err
    assert one.read_bytes() == out.read_bytes()


def test_scheduler_that_is_not_there_is_a_one_line_error(tmp_path, capsys):
    import dask

    from microagg._cli import main

    src = tmp_path / "in.csv"
    _national(100, 5).to_csv(src)
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        rc = main(["protect", str(src), "-k", "3", "--strata", "region", "--small-strata",
                   "merge", "--scheduler", "tcp://127.0.0.1:9", "-o", str(tmp_path / "o.csv")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1, err


def test_import_without_dask_says_how_to_install():
    code = ("import sys; sys.modules['dask'] = None; sys.modules['dask.dataframe'] = None\n"
            "try:\n    import microagg.dask\nexcept ImportError as e:\n    print(e)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert "pip install microagg[dask]" in res.stdout, res.stderr


def test_column_names_on_several_levels_are_one_clear_error():
    """Found in review: a frame whose columns are a MultiIndex failed inside Dask's merge
    ("MergeError: Not allowed to merge between different levels")."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({("a", "x"): rng.normal(size=12), ("a", "y"): rng.normal(size=12),
                       ("g", "s"): ["u", "v"] * 6})
    with pytest.raises(ValueError, match=r"several levels .* ddf\.columns = \['_'\.join"):
        microagg.dask.microaggregate(dd.from_pandas(df, npartitions=2), 3, strata=[("g", "s")])
    flat = df.set_axis(["a_x", "a_y", "g_s"], axis=1)
    assert len(microagg.dask.microaggregate(dd.from_pandas(flat, npartitions=2), 3,
                                            strata="g_s").compute()) == 12


def test_a_unit_whose_rows_arrive_out_of_order_is_protected_in_input_order(monkeypatch):
    """The task sorts each unit's rows by input position before protecting them (MDAV's
    ties go to the first record in input order), so rows that a shuffle delivers in another
    order give the same release: here every partition reaches the task reversed."""
    import dask

    from microagg.dask import _engine

    df = pd.DataFrame({"s": np.arange(120) % 2, "a": np.arange(120) % 5,
                       "b": (np.arange(120) // 7) % 3})  # (ties everywhere)
    ddf = dd.from_pandas(df, npartitions=3, sort=False)
    protect = _engine._protect_partition
    # in this process (the patch reaches no worker), even when the module's cluster is up
    with dask.config.set({"scheduler": "sync", "dataframe.shuffle.method": "tasks"}):
        want = microagg.dask.microaggregate(ddf, 4, strata="s").compute()
        monkeypatch.setattr(_engine, "_protect_partition", lambda part, *args, **kwargs:
                            protect(part.iloc[::-1], *args, **kwargs))
        got = microagg.dask.microaggregate(ddf, 4, strata="s").compute()
    pd.testing.assert_frame_equal(got, want)
    assert want.sort_index().equals(ma.microaggregate(df, 4, strata="s"))
