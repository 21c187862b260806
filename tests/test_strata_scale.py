"""``microagg protect --strata`` with many strata (a review with files of millions of rows).

The spill file lists every record batch (one per stratum and input batch) in its footer,
so opening it takes time growing with the number of strata: a run that opened it for
every unit (seven times) took time growing with their square (10,000 strata of 10 rows:
34 of 62 s). Each process opens it once, and the release is the same.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from cli_helpers import run

import microagg as ma

pa = pytest.importorskip("pyarrow")
import pyarrow.ipc  # noqa: E402
import pyarrow.parquet  # noqa: E402


def _areas(n: int = 1200, size: int = 6) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({"id": np.arange(n), "area": [f"A{i // size}" for i in range(n)],
                         "income": rng.gamma(2.0, 1000.0, n).round(2),
                         "age": rng.integers(16, 90, n).astype(float)})


def test_the_spill_file_is_opened_once_not_once_a_stratum(tmp_path, capsys, monkeypatch):
    df = _areas()  # 200 strata
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    df.to_parquet(src, index=False)
    opened: list[str] = []
    real = pyarrow.ipc.open_file

    def counted(source, *args, **kwargs):
        opened.append(str(getattr(source, "path", source)))
        return real(source, *args, **kwargs)

    monkeypatch.setattr(pyarrow.ipc, "open_file", counted)
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "area", "--keep", "id",
                      "--no-progress", "-o", out], capsys)
    assert rc == 0, err
    assert len(opened) <= 5, f"{len(opened)} opens for 200 strata"
    got = pd.read_parquet(out).set_index("id").sort_index()
    expected = ma.microaggregate(df, 3, strata=["area"], keep=["id"]).set_index("id")
    np.testing.assert_array_equal(got[["income", "age"]].to_numpy(),
                                  expected[["income", "age"]].to_numpy())


def test_a_new_spill_at_the_same_path_is_read_anew(tmp_path):
    from microagg import _stream

    spill = str(tmp_path / "strata.arrow")
    for rows in (3, 4):  # (another size: a file rewritten within a clock tick)
        table = pa.table({"x": [float(rows)] * rows})
        with pa.OSFile(spill, "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
            w.write_table(table)
        assert _stream._read(spill, [0], ["x"]).column(0).to_pylist() == [float(rows)] * rows
    _stream.close_spill()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_small_strata_share_parquet_row_groups(tmp_path, capsys, jobs):
    """200 strata of 6 rows: one row group (a row group each made the file 6.7 times larger
    and 20 times slower to read at 10,000 strata); the rows and their order unchanged."""
    df = _areas()
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    df.to_parquet(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "area", "--keep", "id",
                      "--jobs", jobs, "--no-progress", "-o", out], capsys)
    assert rc == 0, err
    assert pa.parquet.ParquetFile(out).num_row_groups == 1
    got = pd.read_parquet(out)
    assert got["area"].tolist() == sorted(df["area"])  # grouped by stratum, in its order
    expected = ma.microaggregate(df, 3, strata=["area"], keep=["id"]).set_index("id")
    np.testing.assert_array_equal(got.set_index("id").loc[expected.index, ["income", "age"]],
                                  expected[["income", "age"]])
