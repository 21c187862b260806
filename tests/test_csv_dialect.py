"""CSV files in another dialect: ``;`` between fields and ``,`` as the decimal mark.

A spreadsheet saved as CSV under a European locale writes ``2074,91;26``. With
``--delimiter ';' --decimal ,`` such a file is read, protected and written back in its own
dialect by every path (in memory, streamed by strata, the audit), with the same numbers as
the file written with commas and points. Without them the run stops with a hint that names
the options; and a value the decimal comma makes ambiguous (``3.5``, ``1.234,5``) is
refused, never read as some number.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_helpers import one_line_error, run
from hypothesis import given
from hypothesis import strategies as st

import microagg
from microagg._csv import CsvDialect
from microagg._release import text_to_numbers

STRATA = ["--strata", "region"]
EU = ["--delimiter", ";", "--decimal", ","]


def _rows(n: int = 40, seed: int = 3) -> list[list]:
    rng = np.random.default_rng(seed)
    return [[i, "NS"[i % 2], f"{rng.uniform(1000, 9000):.2f}", int(rng.integers(18, 90)),
             f"x,y {chr(97 + i % 26)}"] for i in range(n)]  # (text: no digit)


def _write(path: Path, rows: list[list], delimiter: str, decimal: str,
           odd: dict[int, str] | None = None) -> Path:
    """``rows`` as CSV, incomes with the mark ``decimal`` (``odd``: incomes written as
    given, by row)."""
    odd = odd or {}
    with open(path, "w", newline="") as fh:
        out = csv.writer(fh, delimiter=delimiter)
        out.writerow(["id", "region", "income", "age", "note"])
        out.writerows([[*r[:2], odd.get(i, r[2].replace(".", decimal)), *r[3:]]
                       for i, r in enumerate(rows)])
    return path


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    rows = _rows()
    return (_write(tmp_path / "eu.csv", rows, ";", ","),
            _write(tmp_path / "us.csv", rows, ",", "."))


def _read_eu(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep=";", decimal=",", dtype={"note": str})


@pytest.mark.parametrize("strata", [[], STRATA])
def test_a_semicolon_file_with_decimal_commas_is_protected_in_its_own_dialect(
        files, tmp_path, capsys, strata):
    eu, us = files
    rc, _, err = run(["protect", eu, "-k", 3, "--keep", "id", *EU, *strata,
                      "-o", tmp_path / "eu-out.csv"], capsys)
    assert rc == 0, err
    rc, _, err = run(["protect", us, "-k", 3, "--keep", "id", *strata,
                      "-o", tmp_path / "us-out.csv"], capsys)
    assert rc == 0, err
    text = (tmp_path / "eu-out.csv").read_text()
    assert text.splitlines()[0] == "id;region;income;age;note"
    assert "x,y a" in text and '"' not in text  # a comma needs no quotes between semicolons
    ours, theirs = _read_eu(tmp_path / "eu-out.csv"), pd.read_csv(tmp_path / "us-out.csv")
    assert ours["income"].dtype == float and ours["age"].dtype == float
    pd.testing.assert_frame_equal(ours, theirs)  # the same numbers, written the other way
    assert ours.groupby(["income", "age"]).size().min() >= 3
    # and the audit, told the dialect, passes the release
    rc, _, err = run(["audit", eu, tmp_path / "eu-out.csv", "-k", 3, "--keep", "id", *EU,
                      *(["--strata", "region"] if strata else [])], capsys)
    assert rc == 0 and "passes the audit" in err, err


def test_a_tab_separated_file(tmp_path, capsys):
    src = _write(tmp_path / "in.tsv", _rows(), "\t", ".")
    for name in ("tab", "\\t", "\t"):
        rc, out, err = run(["protect", src, "-k", 3, "--keep", "id", "--delimiter", name],
                           capsys)
        assert rc == 0, err
        assert out.splitlines()[0] == "id\tregion\tincome\tage\tnote"


@pytest.mark.parametrize("strata", [[], STRATA])
@pytest.mark.parametrize("suffix", [".tsv", ".TSV", ".tsv.gz"])
def test_a_file_named_tsv_is_read_and_written_with_tabs(tmp_path, capsys, strata, suffix):
    """Found in review: ``microagg protect survey.tsv`` read the file with commas (one
    text column: an error whose hint named ``--delimiter tab``). A ``.tsv`` name now says
    the delimiter unless ``--delimiter`` is given, for the input, the output and the
    audit, in memory and streamed."""
    plain = _write(tmp_path / "in.tsv", _rows(), "\t", ".")
    src = tmp_path / f"survey{suffix}"
    src.write_bytes(plain.read_bytes()) if suffix != ".tsv.gz" else pd.read_csv(
        plain, sep="\t", dtype=str, keep_default_na=False).to_csv(src, sep="\t", index=False)
    dst = tmp_path / f"protected{suffix}"
    rc, _, err = run(["protect", src, "-k", 3, "--keep", "id", "-o", dst, *strata], capsys)
    assert rc == 0, err
    released = pd.read_csv(dst, sep="\t")
    assert list(released.columns) == ["id", "region", "income", "age", "note"]
    assert released["income"].value_counts().min() >= 3
    rc, out, err = run(["audit", src, dst, "-k", 3, "--keep", "id"], capsys)
    assert rc == 0 and "the release passes the audit" in err, err
    assert microagg.audit(src, dst, 3, keep="id").passed
    rc, out, _ = run(["protect", src, "-k", 3, "--keep", "id"], capsys)  # to standard output
    assert rc == 0 and out.splitlines()[0] == "id\tregion\tincome\tage\tnote"
    rc, _, _ = run(["protect", src, "-k", 3, "--keep", "id", "--delimiter", ",", "-o",
                    tmp_path / "one-column.csv"], capsys)  # the option wins over the name
    assert rc == 2


def test_names_that_disagree_on_the_delimiter_are_asked_about(tmp_path, capsys):
    """A run reads and writes one dialect: ``in.tsv`` to ``out.csv`` would be a guess."""
    src = _write(tmp_path / "in.tsv", _rows(), "\t", ".")
    dst = tmp_path / "out.csv"
    rc, out, err = run(["protect", src, "-k", 3, "--keep", "id", "-o", dst], capsys)
    assert "in.tsv is tab-separated by its name, out.csv is not" in one_line_error(rc, err)
    assert not dst.exists() and not out
    rc, _, err = run(["protect", src, "-k", 3, "--keep", "id", "-o", dst, "--delimiter", "tab"],
                     capsys)
    assert rc == 0, err
    assert pd.read_csv(dst, sep="\t").shape == (40, 5)
    with pytest.raises(ValueError, match="tab-separated by its name"):
        microagg.audit(src, dst, 3, keep="id")
    assert microagg.audit(src, dst, 3, keep="id", delimiter="\t").passed


def test_the_audit_reads_decimal_commas_as_the_numbers_they_are(files):
    """Against a release of numbers (a table, Parquet), the raw decimal-comma column is
    found: read as text with its comma dropped, 2074,91 would be 207491, and the raw
    release would pass."""
    eu, us = files
    raw = pd.read_csv(us)
    bad = microagg.audit(eu, raw, k=3, keep="id", delimiter=";", decimal=",")
    assert not bad.passed
    assert any(f.startswith("raw column: released column 'income'") for f in bad.failures)
    good = microagg.audit(eu, microagg.microaggregate(raw, k=3, columns=["income", "age"],
                                                      keep_rest=True),
                          k=3, keep="id", delimiter=";", decimal=",")
    assert good.passed, good.failures


@pytest.mark.parametrize("strata", [[], STRATA])
@pytest.mark.parametrize("value", ["3.5", "1.234,5"])
def test_a_point_under_a_decimal_comma_is_refused_not_guessed(files, tmp_path, capsys,
                                                               strata, value):
    src = _write(tmp_path / "odd.csv", _rows(), ";", ",", odd={7: value})
    out = tmp_path / "out.csv"
    rc, _, err = run(["protect", src, "-k", 3, "--keep", "id", *EU, *strata, "-o", out],
                     capsys)
    line = one_line_error(rc, err)
    shape = re.sub(r"\d", "#", value)  # (the digits of a confidential value are not shown)
    assert f"'income' (e.g. {shape!r}, digits shown as #) holds numbers or digits" in line
    assert value not in line
    rc, _, err = run(["protect", src, "-k", 3, "--keep", "id", "--columns", "income,age",
                      "--keep-rest", *EU, *strata, "-o", out], capsys)
    line = one_line_error(rc, err)
    assert "'income' is to be protected" in line and "separators" in line, line
    assert not out.exists()


def test_without_the_options_the_error_names_them(files, tmp_path, capsys):
    eu, _ = files
    rc, _, err = run(["protect", eu, "-k", 3, "-o", tmp_path / "out.csv"], capsys)
    line = one_line_error(rc, err)
    assert "header has 1" in line and "--delimiter ';'" in line and "--decimal ," in line
    rc, _, err = run(["protect", eu, "-k", 3, "--keep", "id", "--delimiter", ";",
                      "-o", tmp_path / "out.csv"], capsys)
    line = one_line_error(rc, err)
    assert "'income' (e.g. '" in line and "--decimal ," in line
    plain = tmp_path / "plain.csv"  # no comma anywhere: one column named 'a;b'
    plain.write_text("a;b\n1;2\n3;4\n5;6\n")
    rc, _, err = run(["protect", plain, "-k", 3], capsys)
    assert "suggests the delimiter ';'" in one_line_error(rc, err)


@pytest.mark.parametrize("options, expect", [
    (["--delimiter", ";;"], "not one ASCII character"),
    (["--delimiter", "x"], "not one ASCII character"),
    (["--delimiter", '"'], "not one ASCII character"),
    (["--delimiter", "\u00a7"], "not one ASCII character"),
    (["--decimal", ","], "also the decimal mark"),
    (["--decimal", ";"], "invalid choice"),
])
@pytest.mark.parametrize("command", ["protect", "audit"])
def test_a_bad_dialect_is_one_clear_line(files, capsys, options, expect, command):
    eu, us = files
    args = ["protect", eu, "-k", 3] if command == "protect" else ["audit", eu, us, "-k", 3]
    rc, out, err = run([*args, *options], capsys)
    assert expect in err.splitlines()[-1] and rc == 2 and not out


def test_the_dialect_default_is_commas_and_points():
    assert (CsvDialect().delimiter, CsvDialect().decimal) == (",", ".")
    with pytest.raises(ValueError, match="neither '.' nor ','"):
        CsvDialect(";", "'")


@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_a_decimal_comma_reads_as_the_point_does(x):
    written = pd.Series([repr(x), f"{x:.3e}", f"{x:f}"])
    commas = written.str.replace(".", ",", regex=False)
    np.testing.assert_array_equal(text_to_numbers(commas, ","), text_to_numbers(written))
    # and a point under a decimal comma is no plain number (a thousands separator?)
    dotted = written[written.str.contains(".", regex=False)]
    assert np.isnan(text_to_numbers(dotted, ",")).all()


def test_written_output_reads_back_in_the_same_dialect(tmp_path):
    """What ``write_table`` writes in a dialect reads back, as text, unchanged."""
    from microagg._cli_io import read_input, write_table

    dialect = CsvDialect(";", ",")
    frame = pd.DataFrame({"a": [1.5, -2.25e-20, 3.0], "b": ["p;q", 'say "hi"', "x,y"]})
    write_table(frame, tmp_path / "t.csv", io.StringIO(), dialect=dialect)
    back = read_input(tmp_path / "t.csv", "csv", dialect).frame
    assert back["b"].tolist() == frame["b"].tolist()
    assert text_to_numbers(back["a"], ",").tolist() == frame["a"].tolist()


@pytest.mark.parametrize("strata", [[], ["--strata", "g"]])
def test_kept_parquet_numbers_are_written_in_the_dialect(tmp_path, capsys, strata):
    """Issue: a kept Parquet float was written ``0,5`` and the audit compared it with
    ``0.5``, so the run was refused; a kept Parquet decimal was written ``1.50`` in a file
    of decimal commas."""
    import decimal

    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table({"g": ["a", "b"] * 6, "age": [23, 25, 31, 47, 52, 61] * 2,
                      "w": [0.5, 1.5, 2.25, 0.5, 1.0, 3.5] * 2,
                      "d": pa.array([decimal.Decimal("1.50"), None] * 6, pa.decimal128(5, 2))})
    src, out = tmp_path / "in.parquet", tmp_path / "out.csv"
    pq.write_table(table, src)
    rc, _, err = run(["protect", src, "-k", 3, "--keep", "w,d", *EU, *strata, "-o", out],
                     capsys)
    assert rc == 0, err
    back = pd.read_csv(out, sep=";", dtype=str, keep_default_na=False)
    assert sorted(back["w"]) == sorted(["0,5", "1,5", "2,25", "0,5", "1,0", "3,5"] * 2)
    assert sorted(back["d"]) == [""] * 6 + ["1,50"] * 6
    rc, _, err = run(["audit", src, out, "-k", 3, "--keep", "w,d", *EU,
                      *(["--strata", "g"] if strata else [])], capsys)
    assert rc == 0 and "passes the audit" in err, err
    # and w released raw but not kept is found, though written with commas
    rc, _, err = run(["audit", src, out, "-k", 3, "--keep", "d", *EU,
                      *(["--strata", "g"] if strata else [])], capsys)
    assert rc == 2 and "raw column: released column 'w'" in err, err


def test_the_audit_refuses_a_table_with_nothing_numeric(files, tmp_path, capsys):
    """Issue: read with the wrong delimiter, every file is one text column, and the audit
    passed a raw release with nothing protected."""
    eu, us = files
    rc, _, err = run(["audit", us, us, "-k", 3, *EU], capsys)
    line = one_line_error(rc, err)
    assert "no numeric column to audit" in line and "suggests the delimiter ','" in line
    rc, _, err = run(["audit", eu, eu, "-k", 3], capsys)
    assert "header has 1" in one_line_error(rc, err)


@pytest.mark.parametrize("written", ["point", "comma"])
def test_the_audit_finds_a_raw_column_in_the_other_decimal_convention(tmp_path, written):
    """Issue: under a decimal comma, ``1000.5`` was read as 10005 (a thousands separator),
    so a raw income written with points passed; and the other way round."""
    incomes = ["1000.5", "2000.25", "1500.75", "3000.5", "2500.25", "1800.5"]
    ages = [26, 26, 26, 53, 53, 53]
    if written == "point":  # input with commas, release with points
        original = pd.DataFrame({"age": [23, 25, 31, 47, 52, 61],
                                 "income": [v.replace(".", ",") for v in incomes]})
        options = {"delimiter": ";", "decimal": ","}
    else:  # input with points, release with commas
        original = pd.DataFrame({"age": [23, 25, 31, 47, 52, 61], "income": incomes})
        options = {"delimiter": ";"}
    original.to_csv(tmp_path / "in.csv", sep=";", index=False)
    release = pd.DataFrame({"age": ages, "income": incomes if written == "point" else
                            [v.replace(".", ",") for v in incomes]})
    release.to_csv(tmp_path / "out.csv", sep=";", index=False)
    res = microagg.audit(tmp_path / "in.csv", tmp_path / "out.csv", 3, columns="age",
                         **options)
    assert [f.split(":")[0] for f in res.failures] == ["unprotected column", "raw column"]


@pytest.mark.parametrize("options", [[], EU])
def test_dotted_dates_are_dates_in_either_dialect(tmp_path, capsys, options):
    """Issue: under ``--decimal ,`` a date written 01.03.1980 was refused as a number."""
    src = tmp_path / "d.csv"
    src.write_text("born;age\n01.03.1980;23\n15.07.1975;25\n02.11.1990;31\n30.01.1960;47\n"
                   "09.09.1985;52\n11.05.1970;61\n")
    rc, _, err = run(["protect", src, "-k", 3, "--delimiter", ";", *options[2:]], capsys)
    assert rc == 0 and "'born' holds dates" in err, err


def test_the_hints_name_another_delimiter_than_the_one_given(tmp_path, capsys):
    src = tmp_path / "c.csv"
    src.write_text("age,income,note\n23,1000.5,a;b\n25,2000.25,c\n31,1500.75,d\n")
    rc, _, err = run(["protect", src, "-k", 3, *EU], capsys)
    assert "if it is not ';' (e.g. --delimiter ',')" in one_line_error(rc, err)
    src.write_text("id,region,income\n1,a,2\n2,b,3\n3,c,4\n")
    rc, _, err = run(["protect", src, "-k", 3, "--delimiter", ";"], capsys)
    assert "suggests the delimiter ','" in one_line_error(rc, err)


def test_text_in_a_parquet_file_keeps_its_point(tmp_path, capsys):
    """Issue: ``--decimal ,`` (the dialect of CSV files) changed how numbers held as text
    inside a Parquet input were read in memory (the streamed path read them with a
    point)."""
    src = tmp_path / "in.parquet"
    pd.DataFrame({"age": [23, 25, 31, 47, 52, 61],
                  "inc": ["1000.5", "2000.25", "1500.75", "3000.5", "2500.25", "1800.5"]}
                 ).to_parquet(src, index=False)
    for options in ([], EU):
        rc, _, err = run(["protect", src, "-k", 3, "--columns", "age,inc", *options,
                          "-o", tmp_path / f"o{len(options)}.csv"], capsys)
        assert rc == 0, err
