"""microaggregate's choice of columns: explicit, reported, and never a numeric column by accident.

Issue "Reliability", points 2 (duplicate names) and 3 (numbers read as text, index columns,
the report of protected and passed-through columns), and the ``columns="age"`` case of point 9.
"""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest
from cli_helpers import one_line_error, run

import microagg as ma

N = 30


@pytest.fixture()
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def _released_unchanged(df: pd.DataFrame, out: pd.DataFrame, col: str) -> bool:
    return bool((df[col].to_numpy() == out[col].to_numpy()).all())


def test_duplicate_column_names_are_an_error_naming_them(rng):
    a, b, w = rng.normal(size=(3, N))
    df = pd.DataFrame(np.c_[a, b, w], columns=["age", "age", "w"])
    with pytest.raises(ValueError, match=r"duplicate column names \['age'\]"):
        ma.microaggregate(df, k=3)
    with pytest.raises(ValueError, match="duplicate"):
        ma.microaggregate(df, k=3, columns=["w"])


@pytest.mark.parametrize("labels", [[True, False], [np.True_, "w"]])
def test_boolean_column_names_are_an_error_naming_them(rng, labels):
    """pandas reads a list of True/False as a row mask (before: "Item wrong length", or
    with as many rows as labels, rows picked instead of columns): refused by name, with
    the fix, in memory and on Dask."""
    df = pd.DataFrame(rng.normal(size=(N, 2)), columns=labels)
    for columns in (None, [labels[0]]):
        with pytest.raises(ValueError, match=r"are True/False.*df.columns.map\(str\)"):
            ma.microaggregate(df, k=3, columns=columns)
    two = pd.DataFrame(rng.normal(size=(2, 2)), columns=labels)  # rows = labels: a mask
    with pytest.raises(ValueError, match="True/False"):
        ma.microaggregate(two, k=2)
    renamed = df.set_axis(df.columns.map(str), axis=1)
    assert ma.microaggregate(renamed, k=3).shape == df.shape
    dd = pytest.importorskip("dask.dataframe")
    with pytest.raises(ValueError, match="True/False"):
        ma.dask.microaggregate(dd.from_pandas(df.assign(s=1), npartitions=2), 3,
                               strata=["s"])


@pytest.mark.parametrize("kind, values, sample", [
    ("thousands separator", [f"{1000 + 37 * i:,}" for i in range(N)], "'#,###'"),
    ("currency", [f"${i}" for i in range(N)], "'$#'"),
    ("stray x", [str(i) for i in range(N - 1)] + ["x"], "x"),
    ("stray dash", [str(i) for i in range(N - 1)] + ["-"], "-"),
    ("percent", [f"{i}%" for i in range(N)], "'#%'"),
    ("object dtype", pd.Series([str(i) for i in range(N)], dtype=object), "0"),
])
def test_numbers_stored_as_text_are_an_error_naming_column_and_sample(rng, kind, values,
                                                                      sample):
    df = pd.DataFrame({"a": rng.normal(size=N), "v": values, "town": ["t"] * N})
    with pytest.raises(ValueError) as info:
        ma.microaggregate(df, k=3)
    msg = str(info.value)
    assert "'v'" in msg and sample in msg and "text" in msg
    assert "'town'" not in msg  # a true text column is not numeric-looking
    # naming the columns to protect is not enough (release contract: "v" looks numeric)
    with pytest.raises(ValueError, match=r"'v'.*--keep v"):
        ma.microaggregate(df, k=3, columns=["a"])
    # keeping "v" is the explicit way out: it then passes through, reported
    out, rep = ma.microaggregate(df, k=3, columns=["a"], keep="v", return_info=True)
    assert rep.columns == ["a"] and rep.passed_through == ["v", "town"] and rep.kept == ["v"]
    assert _released_unchanged(df, out, "v")


def test_text_read_from_a_csv_with_a_stray_entry(rng):
    text = "a,b\n" + "".join(f"{x:.3f},{i}\n" for i, x in enumerate(rng.normal(size=N)))
    text = text.replace(",7\n", ",n/a?\n")
    df = pd.read_csv(io.StringIO(text))
    with pytest.raises(ValueError, match=r"'b' \(e\.g\. '#', digits shown as #\) .* other "
                       r"values such as 'n/a\?'"):
        ma.microaggregate(df, k=3)


@pytest.mark.parametrize("how", ["to_csv with index", "reset_index"])
def test_an_index_column_is_not_a_quasi_identifier(rng, how):
    df = pd.DataFrame({"a": rng.normal(size=N), "b": rng.normal(size=N)})
    if how == "to_csv with index":
        buf = io.StringIO()
        df.to_csv(buf)
        df = pd.read_csv(io.StringIO(buf.getvalue()))
        index = "Unnamed: 0"
    else:
        df = df.reset_index()
        index = "index"
    out, info = ma.microaggregate(df, k=3, return_info=True)
    assert info.columns == ["a", "b"] and info.passed_through == [index]
    assert any("row index" in note for note in info.notes)
    assert _released_unchanged(df, out, index)
    # the groups are not driven by row numbers: same partition as without the column
    assert np.array_equal(info.labels, ma.mdav(ma.standardize(df[["a", "b"]]), 3))
    # named explicitly, it is protected
    _, named = ma.microaggregate(df, k=3, columns=[index, "a"], keep="b", return_info=True)
    assert named.columns == [index, "a"]


def test_an_integer_column_that_is_not_a_row_index_is_protected(rng):
    df = pd.DataFrame({"age": rng.integers(18, 90, N), "b": rng.normal(size=N)})
    _, info = ma.microaggregate(df, k=3, return_info=True)
    assert info.columns == ["age", "b"] and info.notes == []


def test_info_reports_protected_and_passed_through_columns(rng):
    df = pd.DataFrame({"a": rng.normal(size=N), "town": ["t"] * N, "flag": [True] * N,
                       "b": rng.normal(size=N)})
    _, info = ma.microaggregate(df, k=3, return_info=True)
    assert info.columns == ["a", "b"]
    assert info.passed_through == ["town", "flag"]


def test_a_string_means_one_column(rng):
    df = pd.DataFrame({"age": rng.normal(size=N), "a": rng.normal(size=N),
                       "g": rng.normal(size=N), "e": rng.normal(size=N)})
    out, info = ma.microaggregate(df, k=3, columns="age", keep=list("age"[1:] + "a"),
                                  return_info=True)
    assert info.columns == ["age"]
    assert all(_released_unchanged(df, out, c) for c in "age"[1:] + "a")


def test_a_column_named_twice_is_an_error(rng):
    df = pd.DataFrame({"a": rng.normal(size=N), "b": rng.normal(size=N)})
    with pytest.raises(ValueError, match="more than once"):
        ma.microaggregate(df, k=3, columns=["a", "a"])


def test_zero_variance_error_names_the_column(rng):
    df = pd.DataFrame({"age": rng.normal(size=N), "const": np.ones(N)})
    with pytest.raises(ValueError, match=r"\['const'\] have zero variance"):
        ma.microaggregate(df, k=3)


def test_integers_equal_as_floats_are_named_as_such(rng, tmp_path, capsys):
    """An identifier beyond 2**53 (``2**60 + i``) is one float64 value: the zero-variance
    error says why a column that is not constant counts as one, and what to do, in memory
    and when streamed by strata (before: "a constant value" only)."""
    df = pd.DataFrame({"id": np.arange(N, dtype=np.int64) + 2**60, "x": rng.normal(size=N),
                       "s": np.arange(N) % 2})
    want = r"\['id'\] have zero variance.*beyond 2\*\*53.*identifier"
    with pytest.raises(ValueError, match=want):
        ma.microaggregate(df.drop(columns="s"), k=3)
    src = tmp_path / "ids.parquet"
    df.to_parquet(src)
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "s", "-o", tmp_path / "o.parquet"],
                     capsys)
    assert re.search(want, one_line_error(rc, err))


@pytest.mark.parametrize("values, what", [
    (pd.date_range("2020-01-01", periods=N), "dates"),
    (pd.date_range("2020-01-01", periods=N, tz="Europe/Zurich"), "dates"),
    (pd.period_range("2020-01", periods=N, freq="M"), "dates"),
    (pd.to_timedelta(np.arange(N), unit="h"), "timedeltas"),
])
def test_dates_named_to_protect_are_told_to_become_numbers(rng, values, what):
    """A date or timedelta column named in ``columns`` was refused as text that is not a
    number, with the advice to declare missing-value text with --na."""
    df = pd.DataFrame({"x": rng.normal(size=N), "d": values})
    with pytest.raises(TypeError, match=rf"column 'd' is to be protected but holds {what}, "
                                        "not numbers: convert it to numbers first") as err:
        ma.microaggregate(df, 3, columns=["x", "d"])
    assert "--na" not in str(err.value)


@pytest.mark.parametrize("strata", [[], ["--strata", "s"]])
def test_dates_in_a_file_named_to_protect_are_told_to_become_numbers(rng, tmp_path, capsys,
                                                                     strata):
    src = tmp_path / "in.csv"
    pd.DataFrame({"x": rng.normal(size=N), "d": pd.date_range("2020-01-01", periods=N),
                  "s": ["a", "b"] * (N // 2)}).to_csv(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", "--columns", "x,d", *strata,
                      "-o", tmp_path / "out.csv"], capsys)
    message = one_line_error(rc, err)
    assert "column 'd' is to be protected but holds dates, not numbers" in message
    assert "--na" not in message


def test_a_tuple_naming_a_column_of_multiindex_columns_is_that_column(rng):
    """With MultiIndex columns a column's label is a tuple, as ``df[("n", "age")]`` takes
    it; ``columns=("n", "age")`` (and ``keep``, ``strata``, the audit's) was read as the two
    columns ``n`` and ``age`` and refused as unknown."""
    df = pd.DataFrame({("n", "age"): rng.integers(20, 70, N), ("n", "inc"): rng.normal(size=N),
                       ("c", "region"): ["N", "S"] * (N // 2), ("c", "id"): np.arange(N)[::-1]})
    out, info = ma.microaggregate(df, 3, columns=("n", "age"), keep=[("c", "id"), ("n", "inc")],
                                  return_info=True)
    assert info.columns == [("n", "age")]
    out, info = ma.microaggregate(df, 3, strata=("c", "region"), keep=("c", "id"),
                                  return_info=True)
    assert info.columns == [("n", "age"), ("n", "inc")] and info.kept == [("c", "id")]
    assert ma.audit(df, out, 3, strata=("c", "region"), keep=("c", "id")).passed
    # a tuple of a flat table's names is still a list of them
    flat = pd.DataFrame({"age": df[("n", "age")], "inc": df[("n", "inc")]})
    assert ma.microaggregate(flat, 3, columns=("age", "inc"), return_info=True)[1].columns == [
        "age", "inc"]


def test_columns_given_as_a_set_come_in_the_tables_order(rng):
    """A set has no order of its own: ``columns={...}`` (e.g. ``set(df.columns) - {"id"}``)
    took the set's iteration order, which for text changes with Python's hash seed from one
    run to the next (and the attributes' order can decide a tie). The table's order now."""
    df = pd.DataFrame({3: rng.normal(size=N), 1: rng.normal(size=N), 2: rng.normal(size=N)})
    assert list({3, 1}) == [1, 3]  # (the set's own order differs from the table's)
    out, info = ma.microaggregate(df, 3, columns={3, 1}, keep=[2], return_info=True)
    assert info.columns == [3, 1]
    out2, info2 = ma.microaggregate(df, 3, columns=[3, 1], keep=[2], return_info=True)
    assert out.equals(out2)
    with pytest.raises(ValueError, match=r"\[7, 9\] are not in the table"):
        ma.microaggregate(df, 3, columns={9, 3, 7})


def test_columns_given_as_an_array_are_recorded_by_the_tables_labels(rng):
    """``columns=np.array([...])`` recorded ``np.str_`` names in ``info.columns`` (shown as
    ``np.str_('age')``, and not JSON): the table's own labels are recorded instead."""
    df = pd.DataFrame({"id": np.arange(N), "age": rng.normal(size=N), "inc": rng.normal(size=N)})
    _, info = ma.microaggregate(df, 3, columns=np.array(["age", "inc"]), keep=np.array(["id"]),
                                return_info=True)
    assert info.columns == ["age", "inc"]
    assert all(type(c) is str for c in info.columns)
    assert "np.str_" not in repr(info)
