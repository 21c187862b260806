"""Tests of microagg.datasets: the real tables (marked ``data``), errors, generators."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microagg import datasets

COMPLETE = {
    "census": (1080, 13),
    "eia": (4092, 11),
    "tarragona": (834, 13),
    "water-treatment": (380, 38),
}


# --------------------------------------------------------------------------------------
# the real data sets
# --------------------------------------------------------------------------------------

@pytest.mark.data
@pytest.mark.parametrize("name, shape", sorted(COMPLETE.items()))
def test_complete_tables_shape_numeric_no_nan(name, shape):
    df = datasets.load(name)
    assert isinstance(df, pd.DataFrame)
    assert df.shape == shape
    assert all(t.kind in "biuf" for t in df.dtypes), df.dtypes
    assert not df.isna().any().any()
    assert np.isfinite(df.to_numpy(dtype=float)).all()
    assert df.columns.is_unique


@pytest.mark.data
def test_eia_columns_are_the_literatures_eleven():
    assert list(datasets.load("eia").columns) == datasets.EIA_ATTRIBUTES


@pytest.mark.data
def test_eia_full_has_15_columns_including_text():
    df = datasets.load("eia-full")
    assert df.shape == (4092, 15)
    assert set(datasets.EIA_ATTRIBUTES) <= set(df.columns)
    assert any(t.kind not in "biuf" for t in df.dtypes)  # UTILNAME, STATE


@pytest.mark.data
def test_water_treatment_full_has_527_days_with_missing_values():
    full = datasets.load("water-treatment-full")
    assert full.shape == (527, 38)
    assert full.isna().any(axis=1).sum() == 527 - 380
    assert list(full.columns) == datasets.WATER_ATTRIBUTES
    complete = datasets.load("water-treatment")
    pd.testing.assert_frame_equal(complete, full.dropna())


@pytest.mark.data
def test_load_returns_a_copy_and_accepts_spellings():
    a = datasets.load("census")
    a.iloc[0, 0] = -1
    assert datasets.load("census").iloc[0, 0] != -1
    assert datasets.load("WATER_TREATMENT").shape == (380, 38)


def test_standardized_accepts_spellings_and_caches_one_array():
    """``standardized`` reads a name as ``load`` does, and every spelling of a set shares
    the one read-only array it caches."""
    Z = datasets.standardized("water-treatment")
    assert datasets.standardized("Water_Treatment") is Z
    assert not Z.flags.writeable


@pytest.mark.data
def test_install_raw_copies_and_verifies(tmp_path):
    dest = datasets.install_raw(datasets.data_dir(), dest=tmp_path / "raw", names=["Tarragona.rda"])
    assert (dest / "Tarragona.rda").exists()
    df = datasets.load("tarragona", folder=dest)
    assert df.shape == (834, 13)


# --------------------------------------------------------------------------------------
# errors name the file and say how to get it
# --------------------------------------------------------------------------------------

def test_unknown_name():
    with pytest.raises(ValueError, match="unknown data set 'nope'.*census"):
        datasets.load("nope")


@pytest.mark.parametrize("name, fname", [(n, f) for n, (f, _) in datasets.NAMES.items()])
def test_missing_file_with_folder_argument(tmp_path, name, fname):
    with pytest.raises(FileNotFoundError) as info:
        datasets.load(name, folder=tmp_path)
    msg = str(info.value)
    assert fname in msg and str(tmp_path) in msg
    assert "make data" in msg and "MICROAGG_DATA" in msg
    assert datasets.FILES[fname]["source"] in msg


def test_missing_file_with_environment_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("MICROAGG_DATA", str(tmp_path))
    assert datasets.data_dir() == tmp_path
    with pytest.raises(FileNotFoundError, match="CASCrefmicrodata.rda"):
        datasets.load("census")


def test_bad_checksum_names_file_and_remedy(tmp_path, monkeypatch):
    (tmp_path / "EIA.rda").write_bytes(b"not the EIA file")
    monkeypatch.setenv("MICROAGG_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError) as info:
        datasets.load("eia")
    msg = str(info.value)
    assert "EIA.rda" in msg and "SHA-256" in msg
    assert datasets.FILES["EIA.rda"]["sha256"] in msg
    assert f"put it in {tmp_path}" in msg  # the folder read ($MICROAGG_DATA), not data/raw


def test_install_raw_missing_source(tmp_path):
    with pytest.raises(FileNotFoundError, match="water-treatment.data"):
        datasets.install_raw(tmp_path / "src", dest=tmp_path / "dst",
                             names=["water-treatment.data"])


# --------------------------------------------------------------------------------------
# synthetic generators: deterministic for a seed
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "make",
    [
        lambda seed: datasets.scattered(200, seed=seed),
        lambda seed: datasets.clustered(200, seed=seed),
        lambda seed: datasets.synthetic_clustered(200, 3, seed=seed),
    ],
)
def test_generators_are_deterministic(make):
    a, b, c = make(7), make(7), make(8)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.dtype == np.float64 and np.isfinite(a).all()


def test_generator_shapes_and_ranges():
    S = datasets.scattered(500, seed=0)
    assert S.shape == (500, 2)
    assert S.min() >= -10_000 and S.max() <= 10_000
    C = datasets.clustered(500, seed=0)
    assert C.shape == (500, 2)
    G = datasets.synthetic_clustered(123, 4, seed=0)
    assert G.shape == (123, 4)


def test_clustered_has_natural_groups_of_3_to_5():
    # records sit within 1% of the range of their block centre, centres far apart:
    # single-linkage at a small threshold recovers blocks of 3..5 records
    from scipy.cluster.hierarchy import fcluster, linkage

    C = datasets.clustered(300, seed=1)
    groups = fcluster(linkage(C, "single"), t=300.0, criterion="distance")
    sizes = np.bincount(groups)[1:]
    assert np.median(sizes) >= 3 and np.percentile(sizes, 90) <= 10


def test_vmdav_example():
    X = datasets.vmdav_example()
    assert X.shape == (13, 2) and X.dtype == np.float64
    np.testing.assert_array_equal(X, datasets.vmdav_example())


@pytest.mark.parametrize("call, error, wanted", [
    (lambda: datasets.scattered(-1), ValueError, "n must be at least 0"),
    (lambda: datasets.scattered(10, p=0), ValueError, "p must be at least 1"),
    (lambda: datasets.scattered(10, low=5, high=1), ValueError, "low must be below high"),
    (lambda: datasets.clustered(10, sizes=(5, 3)), ValueError, "smallest <= largest"),
    (lambda: datasets.clustered(10, sizes=(0, 3)), ValueError, "each of sizes"),
    (lambda: datasets.clustered(10, sizes=3), ValueError, r"\(smallest, largest\)"),
    (lambda: datasets.clustered(10, spread=-1.0), ValueError, "spread"),
    (lambda: datasets.clustered(10, seed=1.5), TypeError, "seed must be"),
])
def test_the_synthetic_sets_name_a_bad_argument(call, error, wanted):
    """numpy's own messages ("low >= high", "negative dimensions") named none."""
    with pytest.raises(error, match=wanted):
        call()
