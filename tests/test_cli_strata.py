"""``microagg protect`` for large files: Parquet, --strata, --small-strata, --jobs, progress.

Issue "Strata, large files and a distributed engine", point 2. Runs in-process through
:func:`microagg._cli.main` (``--jobs 2`` starts two local processes). The ``--scheduler``
test is in ``tests/test_dask.py``, beside the cluster it uses.
"""

from __future__ import annotations

import concurrent.futures as cf
import csv
import os
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_helpers import one_line_error, run

import microagg as ma
from microagg import _cli_strata

pytest.importorskip("pyarrow")


def national(n: int = 1500, seed: int = 0, small: bool = False) -> pd.DataFrame:
    """A synthetic national file: an id, a region (stratum), a wave, three attributes."""
    rng = np.random.default_rng(seed)
    region = rng.choice([f"R{c}" for c in "ABCDEF"], n)  # (codes with digits are asked about)
    df = pd.DataFrame({"id": np.arange(n), "region": region, "wave": rng.integers(1, 3, n),
                       "income": rng.gamma(2.0, 1000.0, n).round(2),
                       "age": rng.integers(16, 90, n), "hours": rng.normal(38, 6, n)})
    if small:
        df.loc[[5, 9], "region"] = "RZ"  # a stratum of 2 records
    return df


def read(path: Path) -> pd.DataFrame:
    return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)


def same_as_in_memory(result: pd.DataFrame, df: pd.DataFrame, **kwargs) -> None:
    """``result`` (any row order) equals ``microaggregate(df, ...)`` row by row (by id)."""
    kwargs.setdefault("keep_rest", True)  # "wave" (when not a stratum) kept, as --keep wave
    expected = ma.microaggregate(df, **kwargs).set_index("id")
    got = result.astype({"id": int}).set_index("id").loc[expected.index]
    cols = ["income", "age", "hours"]
    np.testing.assert_array_equal(got[cols].to_numpy(), expected[cols].to_numpy())
    assert (got["region"].astype(str) == expected["region"].astype(str)).all()


COLS = ["--columns", "income,age,hours"]
#: "wave" is numeric and, when not a stratum, must be kept explicitly (release contract).
KEEP = ["--keep", "wave"]


def test_rows_added_to_the_input_during_the_run_stop_it(tmp_path, capsys, monkeypatch):
    """--strata reads the file more than once: rows appended after the first pass decided
    the columns' roles (an export still being written) were released unchecked, a text
    column holding an SSN among them. The run now stops, writing nothing."""
    df = national(300).drop(columns=["wave"]).assign(note="yes")
    src, out = tmp_path / "growing.csv", tmp_path / "out.csv"
    df.to_csv(src, index=False)
    stream = _cli_strata.protect_stream

    def appended(source, *args, **kwargs):
        with open(source, "a") as fh:
            fh.write("999,RA,50001.0,40,38.0,SSN 123-45-6789\n")
        return stream(source, *args, **kwargs)

    monkeypatch.setattr(_cli_strata, "protect_stream", appended)
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "region", "--keep", "id",
                      "-o", out], capsys)
    line = one_line_error(rc, err)
    assert "changed while it was being read" in line and "nothing was written" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["growing.csv"]


def test_a_rewrite_that_keeps_size_and_time_stops_the_run_too(tmp_path, capsys, monkeypatch):
    """Rewritten in place after the first pass, the same size, its time set back (touch -d,
    cp -p): a text column now holding numbers was released raw. The status change time,
    which no program sets back, tells."""
    df = national(300).drop(columns=["wave"]).assign(note="abcde")
    src, out = tmp_path / "same.csv", tmp_path / "out.csv"
    df.to_csv(src, index=False)
    stream = _cli_strata.protect_stream

    def rewritten(source, *args, **kwargs):
        before = os.stat(source)
        text = Path(source).read_text().replace("abcde", "52300", 1)
        with open(source, "r+") as fh:  # in place: the same inode and size
            fh.write(text)
        os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
        return stream(source, *args, **kwargs)

    monkeypatch.setattr(_cli_strata, "protect_stream", rewritten)
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "region", "--keep", "id",
                      "-o", out], capsys)
    assert "changed while it was being read" in one_line_error(rc, err)
    assert not out.exists()


def test_integers_beyond_2_to_the_53_are_protected_streamed_too(tmp_path, capsys):
    """A CSV column of integers beyond 2**53 was protected in memory, but stopped --strata
    with Arrow's refusal to round it (printing a raw value). Streamed, it is read as the
    nearest float, as in memory: the same release."""
    rng = np.random.default_rng(5)
    n = 60
    df = pd.DataFrame({"id": np.arange(n), "region": rng.choice(["RA", "RB"], n),
                       "income": rng.gamma(2.0, 1000.0, n).round(2),
                       "account": 2**53 + rng.integers(0, 10**9, n)})
    src, out = tmp_path / "big.csv", tmp_path / "out.csv"
    df.to_csv(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "region", "--keep", "id",
                      "-o", out], capsys)
    assert rc == 0, err
    expected = ma.microaggregate(pd.read_csv(src), 3, strata="region",
                                 keep=["id"]).set_index("id")
    got = read(out).set_index("id").loc[expected.index]
    for c in ("income", "account"):
        np.testing.assert_array_equal(got[c].to_numpy(float), expected[c].to_numpy(float))


def test_parquet_in_and_out_without_strata(tmp_path, capsys):
    df = national(200)
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    df.to_parquet(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", "-o", out, *COLS, *KEEP], capsys)
    assert rc == 0, err
    res = pd.read_parquet(out)
    assert list(res.columns) == list(df.columns) and res["id"].tolist() == df["id"].tolist()
    same_as_in_memory(res, df, k=3, columns=COLS[1].split(","))


@pytest.mark.parametrize("src_name, out_name", [("in.parquet", "out.parquet"),
                                                ("in.csv", "out.parquet"),
                                                ("in.parquet", "out.csv")])
def test_strata_streamed_equal_the_in_memory_function(tmp_path, capsys, src_name, out_name):
    df = national()
    src, out = tmp_path / src_name, tmp_path / out_name
    df.to_parquet(src, index=False) if src.suffix == ".parquet" else df.to_csv(src, index=False)
    rc, _, err = run(["protect", src, "-k", "4", "--strata", "region,wave", "-o", out, *COLS],
                     capsys)
    assert rc == 0, err
    res = read(out).astype({"id": int, "wave": int})  # from a CSV, copied as text
    same_as_in_memory(res, df, k=4, strata=["region", "wave"], columns=COLS[1].split(","))
    assert "12 strata by region, wave" in err and "IL =" in err
    # output order, as documented: grouped by stratum (sorted), input order within each
    keys = list(zip(res["region"], res["wave"], strict=True))
    assert keys == sorted(keys)
    assert all(g["id"].is_monotonic_increasing for _, g in res.groupby(["region", "wave"]))


def test_whole_table_il_on_stderr_equals_the_in_memory_il(tmp_path, capsys):
    df = national()
    src = tmp_path / "in.parquet"
    df.to_parquet(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "region", "-o",
                      tmp_path / "o.parquet", *COLS, *KEEP], capsys)
    assert rc == 0, err
    _, info = ma.microaggregate(df, 3, strata="region", columns=COLS[1].split(","),
                                keep="wave", return_info=True)
    assert f"IL = {info.information_loss:.4f}% of the whole table" in err


def test_jobs_2_gives_the_same_file_as_one_job(tmp_path, capsys):
    df = national(3000)
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    assert run(["protect", src, "-k", "3", "--strata", "region", "-o", one, *COLS, *KEEP],
               capsys)[0] == 0
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "region", "--jobs", "2", "-o", two,
                      *COLS, *KEEP], capsys)
    assert rc == 0, err
    assert one.read_bytes() == two.read_bytes()
    same_as_in_memory(read(two), df, k=3, strata="region", columns=COLS[1].split(","))


def test_small_strata_error_names_them_and_merge_says_which(tmp_path, capsys):
    df = national(small=True)
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    df.to_parquet(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "region", "-o", out], capsys)
    line = one_line_error(rc, err)
    assert "region='RZ' (2 records)" in line and "--small-strata merge" in line
    assert not out.exists()
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "region", "--small-strata",
                      "merge", "-o", out, *COLS, *KEEP], capsys)
    assert rc == 0, err
    _, info = ma.microaggregate(df, 3, strata="region", small_strata="merge", return_info=True,
                                columns=COLS[1].split(","), keep="wave")
    (target,) = info.merged.values()
    assert f"merged stratum region='RZ' (2 records) into region='{target}'" in err
    same_as_in_memory(read(out), df, k=3, strata="region", small_strata="merge",
                      columns=COLS[1].split(","))


def test_units_read_from_many_record_batches_equal_the_in_memory_function(
        tmp_path, capsys, monkeypatch):
    """Batches of 97 rows: every stratum comes back from many record batches of the
    temporary file, and the merged small stratum's rows interleave with its target's."""
    import pyarrow as pa

    monkeypatch.setattr("microagg._stream.BATCH_ROWS", 97)
    df = national(small=True)
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    df.to_parquet(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "region", "--small-strata",
                      "merge", "-o", out, *COLS, *KEEP], capsys)
    assert rc == 0, err
    same_as_in_memory(read(out), df, k=3, strata="region", small_strata="merge",
                      columns=COLS[1].split(","))
    # the run gave freed memory back to the system (microagg._stream.lean_memory)
    assert pa.default_memory_pool().backend_name == "system"


@pytest.mark.parametrize("jobs", [[], ["--jobs", "2"]])
def test_rows_within_a_merged_unit_are_written_in_input_order(tmp_path, capsys, jobs):
    """Output order (as :mod:`microagg._stream` documents it): units in sorted stratum
    order, rows within a unit in input order, also where a merged small stratum's one row
    (id 10) sits just before its target's last row (id 11): read back from the temporary
    file they come one step out of order (11, 10), which must still be undone."""
    region = ["RA"] * 4 + ["RB"] * 3 + ["RA"] * 3 + ["RZ", "RA"]
    x = [1.0, 1.2, 0.9, 1.1, 9.0, 9.2, 8.9, 1.3, 0.8, 1.05, 1.15, 0.95]
    df = pd.DataFrame({"id": [chr(97 + i) for i in range(12)],  # (no digits: passed)
                       "region": region, "x": x, "y": np.arange(12.0) ** 1.5})
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    df.to_parquet(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "region", "--small-strata",
                      "merge", "-o", out, *jobs], capsys)
    assert rc == 0, err
    assert "merged stratum region='RZ' (1 record) into region='RA'" in err, err
    got = pd.read_parquet(out)
    ra = [i for i, r in enumerate(region) if r != "RB"]
    rb = [i for i, r in enumerate(region) if r == "RB"]
    assert got["id"].tolist() == df["id"].iloc[ra + rb].tolist()
    assert got["region"].tolist() == ["RA"] * len(ra) + ["RB"] * len(rb)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_progress_bar_with_a_stratum_counter_on_stderr(tmp_path, capsys, fmt):
    src = tmp_path / f"in.{fmt}"
    df = national()
    df.to_csv(src, index=False) if fmt == "csv" else df.to_parquet(src, index=False)
    rc, out, err = run(["protect", src, "-k", "3", "--strata", "region", "--progress", "-o",
                        tmp_path / f"o.{fmt}", *KEEP], capsys)
    assert rc == 0 and out == "", err
    assert "strata: 100%" in err and "6/6" in err and "stratum/s" in err
    # the pass before the strata (the columns' profile) counts the file's rows: out of a
    # Parquet file's number of rows, which its footer gives
    shown = "1.50k/1.50k" if fmt == "parquet" else "1.50k rows"
    assert re.search(rf"checking columns:[^\r\n]*{re.escape(shown)}", err), err
    assert stage_names(err) == ["auditing", "done"]  # (and the pass after: the audit)
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "region", "--no-progress", "-o",
                      tmp_path / f"p.{fmt}", *KEEP], capsys)
    assert rc == 0 and "strata:" not in err and "checking" not in err and not stage_names(err)


def stage_names(err: str) -> list[str]:
    """The stages a run's progress bars named on stderr, in order, each once."""
    named = [line.split(":")[0] for line in err.replace("\r", "\n").splitlines()
             if "stages done" in line]
    return [name for i, name in enumerate(named) if i == 0 or named[i - 1] != name]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_progress_names_the_stages_of_a_run_in_memory(tmp_path, capsys, fmt):
    """Without --strata the run is a few long calls: the bar says which one is running."""
    src = tmp_path / f"in.{fmt}"
    df = national(300)
    df.to_csv(src, index=False) if fmt == "csv" else df.to_parquet(src, index=False)
    rc, out, err = run(["protect", src, "-k", "3", "--progress", *KEEP, "-o",
                        tmp_path / f"o.{fmt}"], capsys)
    assert rc == 0 and out == "", err
    assert stage_names(err) == ["reading", "checking columns", "microaggregating (mdav, k=3)",
                                "writing", "auditing", "done"]
    assert "5/5 stages done" in err and "microagg: protected" in err
    # by default only on a terminal (stderr here is not one), and never with --no-progress
    for flag in ([], ["--no-progress"]):
        rc, _, err = run(["protect", src, "-k", "3", *flag, *KEEP, "-o", "-"], capsys)
        assert rc == 0 and not stage_names(err) and "stages" not in err


def test_progress_of_the_hybrid_counts_its_macrogroups(tmp_path, capsys):
    """The hybrid runs minutes on a large table (a GA per macrogroup): with progress on,
    its own bar counts the macrogroups, in the API and on the command line."""
    df = national(300)[["income", "age", "hours"]]
    ga = {"iterations": 5, "seed": 0}
    out, info = ma.microaggregate(df, 3, method="hybrid", progress=True, return_info=True,
                                  **ga)
    err = capsys.readouterr().err
    assert "hybrid two-step K=21" in err and "0/14" in err  # 300 records: 14 macrogroups
    assert info.params == ga  # progress is not a parameter of the method
    same = ma.microaggregate(df, 3, method="hybrid", **ga)
    assert capsys.readouterr().err == ""
    pd.testing.assert_frame_equal(out, same)
    ma.microaggregate(df, 3, progress=True)  # a method that runs as one call: no bar
    assert capsys.readouterr().err == ""
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", "--method", "hybrid", "--iterations", "5",
                      "--seed", "0", "--progress", "-o", tmp_path / "o.csv"], capsys)
    assert rc == 0 and "hybrid two-step K=21" in err, err


@pytest.mark.parametrize("extra", [[], ["--strata", "region"]])
def test_a_seed_is_drawn_and_named_so_a_release_can_be_made_again(tmp_path, capsys, extra):
    """The hybrid is random: without --seed the command draws one and names it, and that
    seed makes the same release again."""
    src = tmp_path / "in.csv"
    national(200).to_csv(src, index=False)
    common = ["protect", src, "-k", "3", "--method", "hybrid", "--iterations", "20",
              "--columns", "income,age,hours", *KEEP, *extra]
    rc, _, err = run([*common, "-o", tmp_path / "a.csv"], capsys)
    assert rc == 0, err
    found = re.search(r"microagg: note: no --seed given, so hybrid ran with --seed (\d+): "
                      r"give it again to make this release again", err)
    assert found, err
    rc, _, err = run([*common, "--seed", found[1], "-o", tmp_path / "b.csv"], capsys)
    assert rc == 0 and "--seed" not in err, err
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    rc, _, err = run(["protect", src, "-k", "3", *KEEP, "--columns", "income,age,hours",
                      "-o", tmp_path / "c.csv"], capsys)  # MDAV is not random: no seed
    assert rc == 0 and "seed" not in err, err


def test_csv_strata_to_stdout_keeps_other_columns_as_text(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text("zip,region,x,y\n01234,a,1,5\n00020,a,2,4\n00300,a,3,9\n"
                   "04000,b,4,1\n05000,b,8,2\n06000,b,6,0\n")
    rc, out, err = run(["protect", src, "-k", "3", "--strata", "region", "--columns", "x,y",
                        "--keep", "zip"], capsys)
    assert rc == 0, err
    assert out.splitlines()[0] == "zip,region,x,y"
    assert [ln.split(",")[0] for ln in out.splitlines()[1:]] == [
        "01234", "00020", "00300", "04000", "05000", "06000"]
    assert "kept unchanged: zip" in err and "passed through unchanged: none" in err
    # (a merged small stratum's rows are released under another key: not "unchanged")
    assert "strata, released as their unit's key" in err and "joined): region" in err
    assert "read both indexed by an identifier column" in err


@pytest.mark.parametrize("argv, needle", [
    (["--jobs", "2"], "add --strata"),
    (["--small-strata", "merge"], "add --strata"),
    (["--strata", "region", "--jobs", "0"], "--jobs must be at least 1"),
    (["--strata", "region", "--jobs", "2", "--scheduler", "tcp://127.0.0.1:1"],
     "exclude each other"),
    (["--strata", "nowhere"], "strata column(s) ['nowhere'] are not in the table"),
    (["--strata", "region", "--columns", "income,region"], "are strata and cannot also be"),
    (["--strata", ""], "--strata '' names an empty column"),
    (["--format", "parquet"], "Parquet is not written to standard output"),
])
def test_option_errors_are_one_line(tmp_path, capsys, argv, needle):
    src = tmp_path / "in.csv"
    national(100).to_csv(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", *argv], capsys)
    assert needle in one_line_error(rc, err)


def test_parquet_without_pyarrow_is_a_clear_error(tmp_path, capsys, monkeypatch):
    src = tmp_path / "in.parquet"
    national(50).to_parquet(src, index=False)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    rc, _, err = run(["protect", src, "-k", "3", "-o", tmp_path / "o.csv"], capsys)
    assert "needs pyarrow" in one_line_error(rc, err) and "pip install pyarrow" in err


def test_a_failing_stratum_leaves_the_old_output_and_no_temporary_files(tmp_path, capsys,
                                                                         monkeypatch):
    import microagg._stream as stream

    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    national().to_parquet(src, index=False)
    out.write_bytes(b"previous result")
    calls = []
    real = stream.protect_block

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(stream, "protect_block", failing)
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "region", "-o", out, "--force"],
                     capsys)
    assert "No space left" in one_line_error(rc, err)
    assert out.read_bytes() == b"previous result"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet", "out.parquet"]


def test_help_shows_strata_parquet_and_dask(capsys):
    rc, out, _ = run(["protect", "--help"], capsys)
    assert rc == 0
    for needle in ("--strata", "--small-strata", "--jobs", "--scheduler", "Parquet",
                   "--progress", "Dask"):
        assert needle in out
    rc, out, _ = run(["--help"], capsys)
    assert "--strata region" in out and "--scheduler tcp://" in out and ".parquet" in out


@pytest.mark.parametrize("strata", [[], ["--strata", '"region, coded"']])
def test_names_with_commas_quotes_and_blanks_are_written_as_in_a_csv_line(tmp_path, capsys,
                                                                          strata):
    """A column name holding a comma, a quote or blanks at its ends can be named in every
    list of names, in double quotes; the same columns are protected, in memory and
    streamed, as the in-memory function protects them."""
    df = national(300).rename(columns={"region": "region, coded", "income": "income, gross",
                                       "hours": ' hours "paid" '})
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    df.to_csv(src, index=False)
    names = '"income, gross", age ," hours ""paid"" "'
    rc, _, err = run(["protect", src, "-k", "3", "-o", out, "--columns", names,
                      "--keep", '"wave", id', *strata], capsys)
    assert rc == 0, err
    cols = ["income, gross", "age", ' hours "paid" ']
    expected = ma.microaggregate(df, 3, columns=cols, keep=["wave", "id"],
                                 strata=["region, coded"] if strata else None)
    got = read(out).set_index("id").loc[expected["id"]]
    assert list(read(out).columns) == list(df.columns)
    np.testing.assert_array_equal(got[cols].to_numpy(), expected[cols].to_numpy())


@pytest.mark.parametrize("argv, needle", [
    (["--columns", "income, gross"], "did you mean 'income, gross'? On the command line"),
    (["--keep", " hours "], "did you mean ' hours '?"),
    (["--columns", 'income"x'], "a double quote may only enclose a whole name"),
    (["--na", "a,,b"], "--na 'a,,b' names an empty missing-value text; give missing-value "
                       "texts separated by commas, or leave it out: an empty value is read "
                       "as missing without it"),
])
def test_a_name_the_list_split_or_trimmed_gets_a_hint(tmp_path, capsys, argv, needle):
    src = tmp_path / "in.csv"
    national(60).rename(columns={"income": "income, gross", "hours": " hours "}).to_csv(
        src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", "-o", tmp_path / "o.csv", *argv], capsys)
    assert needle in one_line_error(rc, err)


@pytest.mark.parametrize("strata", [[], ["--strata", "region"]])
def test_decimal_columns_are_numbers_and_kept_types_stay(tmp_path, capsys, strata):
    """A Parquet decimal column (a database's NUMERIC, Spark's DECIMAL) is a column of
    numbers: protected by default as its values as floats, kept exactly with its own type,
    in memory and streamed; the other kept columns keep their Arrow types too."""
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    df = national(240)
    table = pa.table({
        "id": pa.array(df["id"]), "region": pa.array(df["region"], pa.string()),
        "income": pa.array([decimal.Decimal(f"{v:.2f}") for v in df["income"]],
                           pa.decimal128(12, 2)),
        "weight": pa.array([decimal.Decimal(f"{1 + v / 1000:.4f}") for v in df["hours"]],
                           pa.decimal128(8, 4)),
        "age": pa.array(df["age"])})
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(table, src)
    rc, _, err = run(["protect", src, "-k", "3", "-o", out, "--keep", "id,weight", *strata],
                     capsys)
    assert rc == 0, err
    assert "protected 2 column(s): income, age" in err
    written = pq.read_schema(out)
    assert [written.field(c).type for c in ("id", "region", "weight")] == [
        pa.int64(), pa.string(), pa.decimal128(8, 4)]
    assert written.field("income").type == pa.float64()
    as_floats = table.to_pandas().astype({"income": float})
    expected = ma.microaggregate(as_floats, 3, keep=["id", "weight"],
                                 strata="region" if strata else None)
    got = pd.read_parquet(out).set_index("id").loc[expected["id"]]
    np.testing.assert_array_equal(got[["income", "age"]].to_numpy(),
                                  expected[["income", "age"]].to_numpy())
    assert (got["weight"].to_numpy() == table.column("weight").to_pandas()
            .to_numpy()[expected["id"]]).all()


@pytest.mark.parametrize("argv, needle", [
    (["IN.xlsx"], "IN.xlsx is an Excel workbook by its name"),
    (["IN.csv", "-o", "OUT.json"], "OUT.json is JSON by its name"),
    (["IN.csv", "-o", "OUT.sav.gz"], "OUT.sav.gz is an SPSS data file by its name"),
    (["IN.csv", "--strata", "region", "-o", "OUT.dta"], "OUT.dta is a Stata data file"),
])
def test_other_formats_are_named_not_read_as_csv(tmp_path, capsys, argv, needle):
    """A spreadsheet, JSON or a statistics package's file is not read (or written) as if it
    were CSV: the error names what its name says it is and the way out."""
    national(60).to_csv(tmp_path / "IN.csv", index=False)
    (tmp_path / "IN.xlsx").write_bytes(b"PK\x03\x04 not a CSV")
    argv = [str(tmp_path / a) if a.isupper() or a.startswith(("IN.", "OUT.")) else a
            for a in argv]
    rc, _, err = run(["protect", *argv, "-k", "3", *KEEP], capsys)
    assert needle in one_line_error(rc, err) and "CSV and Parquet only" in err
    assert not list(tmp_path.glob("OUT*"))


def test_a_zipped_csv_input_is_read_in_every_path(tmp_path, capsys):
    """``in.csv.zip`` (a CSV in a zip archive) is an input like ``in.csv.gz``: in memory,
    streamed and in the audit (it was refused as an output that is not written)."""
    import zipfile

    df = national(300)
    df.to_csv(tmp_path / "in.csv", index=False)
    src = tmp_path / "in.csv.zip"
    with zipfile.ZipFile(src, "w") as z:
        z.write(tmp_path / "in.csv", "in.csv")
    for extra in ([], ["--strata", "region"]):
        out = tmp_path / f"out{len(extra)}.csv"
        rc, _, err = run(["protect", src, "-k", "3", "-o", out, *COLS, *KEEP, *extra], capsys)
        assert rc == 0, err
        same_as_in_memory(read(out), df, k=3, columns=["income", "age", "hours"],
                          strata="region" if extra else None)
        rc, _, err = run(["audit", src, out, "-k", "3", *COLS, "--keep", "id,wave",
                          *(["--strata", "region"] if extra else [])], capsys)
        assert rc == 0 and "passes the audit" in err, err


@pytest.mark.parametrize("suffix, pack", [(".gz", "gzip"), (".xz", "lzma"), (".bz2", "bz2")])
def test_a_truncated_compressed_input_is_one_clear_line(tmp_path, capsys, suffix, pack):
    """Found in review: a compressed input cut short (an interrupted copy) ended in
    "internal error: EOFError ... please report it"; it is a damaged file, named."""
    import importlib

    data = national(300).to_csv(index=False).encode()
    src = tmp_path / f"in.csv{suffix}"
    packed = importlib.import_module(pack).compress(data)
    src.write_bytes(packed[:len(packed) // 2])
    for extra in ([], ["--strata", "region"]):
        rc, out, err = run(["protect", src, "-k", "3", "-o", tmp_path / "out.csv", *COLS,
                            *KEEP, *extra], capsys)
        line = one_line_error(rc, err)
        assert f"in.csv{suffix}: the compressed data is truncated or corrupt" in line, line
        assert not out and not (tmp_path / "out.csv").exists()
    national(300).to_csv(tmp_path / "plain.csv", index=False)
    rc, _, err = run(["audit", tmp_path / "plain.csv", src, "-k", "3", *COLS], capsys)
    assert "truncated or corrupt" in one_line_error(rc, err)


def test_read_errors_name_the_file_and_its_role(tmp_path, capsys):
    """Found in review: the audit called a missing release its "input file", and a file
    named .parquet that is none failed with pyarrow's words, without its name."""
    national(60).to_csv(tmp_path / "in.csv", index=False)
    rc, _, err = run(["audit", tmp_path / "in.csv", tmp_path / "nope.csv", "-k", "3"], capsys)
    assert "released file" in one_line_error(rc, err) and "nope.csv" in err
    (tmp_path / "bad.parquet").write_text("id,income\n1,2\n")
    for args in (["protect", tmp_path / "bad.parquet", "-k", "3", "-o", tmp_path / "o.parquet"],
                 ["protect", tmp_path / "bad.parquet", "-k", "3", "--strata", "id", "-o",
                  tmp_path / "o.parquet"],
                 ["audit", tmp_path / "in.csv", tmp_path / "bad.parquet", "-k", "3"]):
        rc, _, err = run(args, capsys)
        assert "bad.parquet: not a Parquet file, or a damaged one" in one_line_error(rc, err)


@pytest.mark.parametrize("strata", [[], ["--strata", "s"]])
def test_csv_to_parquet_says_the_unprotected_columns_are_text(tmp_path, capsys, strata):
    """A practitioner's review: a weight column kept from a CSV came back from the Parquet
    output as text ('26.0' + '79.5' concatenated in a sum), with no word of it."""
    pytest.importorskip("pyarrow")
    src, out = tmp_path / "in.csv", tmp_path / "out.parquet"
    src.write_text("s,weight,x,y\na,1.5,1,2\na,2.5,3,4\na,3.5,5,6\nb,1.0,7,8\nb,2,9,1\nb,3,2,2\n")
    rc, _, err = run(["protect", src, "-k", "3", "--columns", "x,y", "--keep", "weight",
                      *strata, "-o", out], capsys)
    assert rc == 0, err
    assert "stores the columns not protected as text" in err and "weight" in err
    assert pd.read_parquet(out)["weight"].tolist() == ["1.5", "2.5", "3.5", "1.0", "2", "3"]
    rc, _, err = run(["protect", src, "-k", "3", "--columns", "x,y", "--keep", "weight",
                      *strata, "-o", tmp_path / "out.csv"], capsys)
    assert rc == 0 and "as text" not in err, err


@pytest.mark.parametrize("options, said", [
    (["--keep", "region", "--strata", "region"], "named in keep and also"),
    (["--columns", "region,age", "--strata", "region"], "are strata and cannot also be"),
    (["--columns", "age,income", "--keep", "age"], "named in keep and also"),
])
def test_a_column_in_two_roles_is_refused_before_the_input_is_read(tmp_path, capsys,
                                                                    monkeypatch, options,
                                                                    said):
    """A scale review: ``--keep region --strata region`` was refused only after the input
    was read and its columns checked (33 s on five million rows); the options alone say
    it, so the run stops at once, with the message the API gives."""
    from microagg import _cli

    def read(*args, **kwargs):
        raise AssertionError("the input was read")

    monkeypatch.setattr(_cli, "_protect_in_memory", read)
    monkeypatch.setattr(_cli, "protect_by_strata", read)
    src = tmp_path / "in.csv"
    src.write_text("region,age,income\nA,1,2\nA,2,3\nA,3,4\n", encoding="utf-8")
    rc, _, err = run(["protect", src, "-k", "3", "-o", tmp_path / "out.csv", *options], capsys)
    assert said in one_line_error(rc, err)
    assert not (tmp_path / "out.csv").exists()


def test_small_strata_are_written_together_to_a_csv(tmp_path, capsys, monkeypatch):
    """A CSV release by strata was written unit by unit, each paying pandas' writer set-up
    (4,000 strata of 10 rows: 13 of a run's 21 s). Small units wait and are written together,
    as they are in Parquet; a value holding a carriage return still gets every field of its
    lines quoted, and the release is the in-memory function's."""
    n = 600
    df = national(n)
    df["region"] = np.repeat(np.arange(100), 6)
    df["note"] = "x"
    df.loc[7, "note"] = "two\rlines"
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    df.to_csv(src, index=False, quoting=csv.QUOTE_NONNUMERIC)  # (a lone \r quoted)
    calls = []
    real = pd.DataFrame.to_csv
    monkeypatch.setattr(pd.DataFrame, "to_csv",
                        lambda self, *a, **kw: calls.append(len(self)) or real(self, *a, **kw))
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "region", "-o", out, *COLS,
                      "--keep", "wave,note"], capsys)
    assert rc == 0, err
    assert calls == [n]  # (one call, not one per stratum)
    assert b'"two\rlines"' in out.read_bytes()
    res = pd.read_csv(out, keep_default_na=False)
    assert sorted(res["note"]) == sorted(df["note"])
    same_as_in_memory(res, df.drop(columns="note"), k=3, strata="region",
                      columns=COLS[1].split(","))


class _Counted(cf.ProcessPoolExecutor):
    """``protect --jobs``'s pool, listing the functions submitted to it."""

    submitted: list = []

    def submit(self, fn, /, *args, **kwargs) -> cf.Future:
        self.submitted.append(fn)
        return super().submit(fn, *args, **kwargs)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_tiny_strata_go_to_the_workers_many_to_a_task(tmp_path, capsys, monkeypatch, fmt):
    """``--jobs 2`` sent every unit to a worker as a task of its own: with thousands of
    tiny strata the tasks' round trips and files made it slower than one process (4,000
    strata of 10 rows: 14.6 s against 6.5 s). Consecutive small units go as one task;
    the release is ``--jobs 1``'s, byte for byte, its units in order (over tasks too), the
    progress bar counts strata, and a small stratum merged into another is one of its
    unit's rows."""
    from microagg import _stream

    df = national(1200)
    df["region"] = [f"R{i // 6:03d}" for i in range(len(df))]  # 200 strata of 6 records
    df.loc[[3, 4], "region"] = "RZZ"  # a small stratum, merged
    df["region"] = df["region"].astype("category")  # (Parquet: a dictionary a unit, its key)
    src = tmp_path / f"in.{fmt}"
    df.to_csv(src, index=False) if fmt == "csv" else df.to_parquet(src, index=False)
    argv = ["protect", src, "-k", "3", "--strata", "region", "--small-strata", "merge",
            *COLS, *KEEP]
    one = tmp_path / f"one.{fmt}"
    rc, _, err = run([*argv, "-o", one], capsys)
    assert rc == 0, err
    monkeypatch.setattr(_cli_strata.cf, "ProcessPoolExecutor", _Counted)
    for most in (1, 30):  # every unit in one task; then about 9 to a task
        if most > 1:
            monkeypatch.setattr(_stream, "TASK_ROWS", 50)
        monkeypatch.setattr(_Counted, "submitted", [])
        two = tmp_path / f"two-{most}.{fmt}"
        rc, _, err = run([*argv, "--jobs", "2", "--progress", "-o", two], capsys)
        assert rc == 0, err
        tasks = [fn for fn in _Counted.submitted if fn is not int]  # (int: starts a worker)
        assert 1 <= len(tasks) <= most, f"{len(tasks)} tasks for 200 units"
        assert "201/201" in err  # (strata counted, the merged one too)
        assert two.read_bytes() == one.read_bytes()
        assert not list(tmp_path.glob("*.arrow*")) and not list(tmp_path.glob(".microagg*"))
