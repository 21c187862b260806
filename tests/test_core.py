"""Tests of microagg.core (SSE, SST, IL, centroids, partitions) and its input checks.

Hand-computed example used throughout (chapter 1 uses the same kind of set):
records A = (0,0), (2,0), (1,3) and B = (10,10), (12,10), (11,13).
Each group's centroid is its first record + (1, 1); squared distances to it are
2, 2, 4, so SSE = 8 + 8 = 16. The global mean is (6, 6); the squared deviations
sum to 154 in x and 162 in y, so SST = 316 and IL = 1600 / 316 %.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import random_k_partition
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import microagg as ma

X6 = np.array([[0, 0], [2, 0], [1, 3], [10, 10], [12, 10], [11, 13]], dtype=float)
L6 = np.array([0, 0, 0, 1, 1, 1])


# --------------------------------------------------------------------------------------
# hand-computed values
# --------------------------------------------------------------------------------------

def test_sse_sst_il_by_hand():
    assert ma.sse(X6, L6) == pytest.approx(16.0)
    assert ma.sst(X6) == pytest.approx(316.0)
    assert ma.information_loss(X6, L6) == pytest.approx(1600.0 / 316.0)


@pytest.mark.parametrize("strata", [None, "s"])
def test_identical_records_lose_nothing_without_standardising(strata):
    """SST = 0 (every record the same, possible only with standardize=False): nothing can be
    lost, and the release reports IL = 0 (where information_loss refuses 0/0), with or
    without strata."""
    df = pd.DataFrame({"s": ["a"] * 3 + ["b"] * 3, "x": [7.0] * 6, "y": [-2.5] * 6})
    out, info = ma.microaggregate(df, 3, standardize=False, strata=strata, return_info=True)
    assert out[["x", "y"]].equals(df[["x", "y"]])
    assert (info.sse, info.sst, info.information_loss) == (0.0, 0.0, 0.0)
    if strata:
        assert info.strata["information_loss"].tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="SST is zero"):
        ma.information_loss(df[["x", "y"]], info.labels)
    # standardised within a stratum whose records are all the same: its IL is 0 too
    varied = df.assign(x=[7.0] * 3 + [1.0, 2.0, 4.0], y=[-2.5] * 3 + [0.0, 3.0, 1.0])
    _, info = ma.microaggregate(varied, 3, strata="s", return_info=True)
    assert info.strata.loc["a", "information_loss"] == 0.0
    assert info.strata.loc["b", "information_loss"] == pytest.approx(100.0)


def test_sse_of_singletons_is_zero_and_one_group_is_sst():
    assert ma.sse(X6, np.arange(6)) == 0.0
    assert ma.sse(X6, np.zeros(6, dtype=int)) == pytest.approx(ma.sst(X6))
    assert ma.information_loss(X6, np.zeros(6, dtype=int)) == pytest.approx(100.0)


def test_sse_ignores_label_values_and_order():
    assert ma.sse(X6, [7, 7, 7, -2, -2, -2]) == pytest.approx(16.0)
    perm = np.array([3, 0, 5, 1, 4, 2])
    assert ma.sse(X6[perm], L6[perm]) == pytest.approx(16.0)


def test_docstring_examples_values():
    assert ma.sst([[0.0], [2.0]]) == 2.0
    assert ma.sse([[0.0], [2.0], [10.0], [12.0]], [0, 0, 1, 1]) == 4.0
    # SST = 36 + 16 + 16 + 36 = 104, so IL = 100 * 4 / 104 (core's docstring said 4.0)
    assert ma.information_loss([[0.0], [2.0], [10.0], [12.0]], [0, 0, 1, 1]) == pytest.approx(
        400.0 / 104.0)


def test_aggregate_by_hand():
    out = ma.aggregate(X6, L6)
    expected = np.array([[1, 1]] * 3 + [[11, 11]] * 3, dtype=float)
    np.testing.assert_allclose(out, expected)


def test_aggregate_dataframe_keeps_index_and_names():
    df = pd.DataFrame(X6, columns=["income", "age"], index=list("abcdef"))
    out = ma.aggregate(df, L6)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == ["income", "age"]
    assert list(out.index) == list("abcdef")
    np.testing.assert_allclose(out.loc["e"].to_numpy(), [11.0, 11.0])


def test_group_sizes():
    assert ma.group_sizes([1, 0, 1, 1]).tolist() == [1, 3]
    assert ma.group_sizes([5, 5, 2, 7, 2]).tolist() == [2, 2, 1]
    assert ma.group_sizes([]).tolist() == []


def test_is_k_partition():
    assert ma.is_k_partition([0, 0, 0, 1, 1, 1], 3)
    assert not ma.is_k_partition([0, 0, 1, 1, 1], 3)
    assert ma.is_k_partition([0, 0, 1, 1, 1], 2)
    assert not ma.is_k_partition([0, 0, 0, 0, 0, 0, 1, 1, 1], 3, max_size=5)
    assert ma.is_k_partition([0, 0, 0, 0, 0, 1, 1, 1], 3, max_size=5)
    assert not ma.is_k_partition([], 1)


def test_is_k_partition_rejects_bad_k_and_answers_no_beyond_n():
    with pytest.raises(ValueError, match="at least 1"):
        ma.is_k_partition([0, 0], 0)
    # a predicate: fewer records than k is a plain "no" (it raised, unlike [] with k = 3)
    assert ma.is_k_partition([0, 0], 3) is False
    assert ma.is_k_partition([], 3) is False
    with pytest.raises(TypeError, match="integer"):
        ma.is_k_partition([0, 0], 1.5)


def test_relabel():
    assert ma.relabel([5, 5, 2, 7, 2]).tolist() == [0, 0, 1, 2, 1]
    assert ma.relabel([0, 1, 2]).tolist() == [0, 1, 2]
    assert ma.relabel([9, 9, 9]).tolist() == [0, 0, 0]
    a, b = [3, 3, 1, 1, 2], [0, 0, 4, 4, 1]
    assert ma.relabel(a).tolist() == ma.relabel(b).tolist()


def test_standardize_by_hand():
    np.testing.assert_allclose(ma.standardize([[1.0], [3.0]]), [[-1.0], [1.0]])
    Z = ma.standardize(X6)
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(Z.std(axis=0), 1.0)  # population std (ddof=0)
    assert ma.sst(Z) == pytest.approx(X6.shape[0] * X6.shape[1])


def test_standardize_dataframe_keeps_index_and_names():
    df = pd.DataFrame(X6, columns=["u", "v"], index=range(10, 16))
    Z = ma.standardize(df)
    assert isinstance(Z, pd.DataFrame)
    assert list(Z.columns) == ["u", "v"] and list(Z.index) == list(range(10, 16))


@pytest.mark.data
def test_sst_of_standardized_census_is_n_times_p():
    census = ma.datasets.load("census")
    assert ma.sst(ma.standardize(census)) == pytest.approx(14040.0, rel=1e-12)


# --------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("func", [ma.sst, ma.standardize, lambda X: ma.sse(X, [0, 0, 1])])
def test_nan_and_inf_rejected(func):
    for bad in (np.nan, np.inf, -np.inf):
        X = np.array([[1.0, 2.0], [3.0, bad], [5.0, 6.0]])
        with pytest.raises(ValueError, match="NaN or infinite"):
            func(X)


def test_nan_error_names_dataframe_column():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [1.0, np.nan, 3.0]})
    with pytest.raises(ValueError, match=r"\['b'\]"):
        ma.sst(df)


def test_non_numeric_rejected():
    with pytest.raises(TypeError, match="numeric"):
        ma.sst(np.array([["a", "b"], ["c", "d"]]))
    df = pd.DataFrame({"x": [1.0, 2.0], "city": ["Reus", "Valls"]})
    with pytest.raises(TypeError, match="city"):
        ma.sse(df, [0, 0])
    with pytest.raises(TypeError, match="numeric"):
        ma.aggregate(np.array([[object()], [object()]]), [0, 0])


def test_empty_rejected():
    with pytest.raises(ValueError, match="empty"):
        ma.sst(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="empty"):
        ma.standardize(np.zeros((4, 0)))


def test_one_dimensional_rejected():
    with pytest.raises(ValueError, match="2-D"):
        ma.sst(np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="reshape"):
        ma.sse(np.array([1.0, 2.0, 3.0]), [0, 0, 0])


@pytest.mark.parametrize("dtype", ["float64", "Int64"])
def test_a_series_is_told_to_become_a_frame(dtype):
    """A Series was told to use ``X.reshape(-1, 1)``, which a Series does not have (and a
    nullable one was refused as holding "strings or objects")."""
    column = pd.Series([1, 2, 3, 10, 11, 12], dtype=dtype, name="age")
    for call in (lambda: ma.mdav(column, 3), lambda: ma.sse(column, [0, 0, 0, 1, 1, 1])):
        with pytest.raises(ValueError, match=r"pandas Series of 6 values; use X\.to_frame\(\)"):
            call()
    assert ma.group_sizes(ma.mdav(column.to_frame(), 3)).tolist() == [3, 3]


def test_zero_variance_rejected():
    with pytest.raises(ValueError, match="zero variance"):
        ma.standardize(np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0]]))
    df = pd.DataFrame({"a": [1.0, 2.0], "const": [7.0, 7.0]})
    with pytest.raises(ValueError, match="const"):
        ma.standardize(df)


@pytest.mark.parametrize("value", [0.1, 3.3, 1e-170, -2.5e200])
def test_a_constant_column_is_told_exactly_not_by_a_rounded_spread(value):
    """The mean of sixty 0.1s rounds to 0.10000000000000002, which left a standard deviation
    of about 1e-17 and z-scores of -1: a constant column was standardised, not refused."""
    X = np.column_stack([np.full(60, value), np.arange(60.0)])
    if value in (0.1, 3.3):
        assert np.std(X[:, 0]) > 0  # what fooled the test std == 0
    with pytest.raises(ValueError, match=r"\[0\] have zero variance"):
        ma.standardize(X)
    with pytest.raises(ValueError, match=r"\['c'\] have zero variance"):
        ma.microaggregate(pd.DataFrame({"c": X[:, 0], "d": X[:, 1]}), 3)


def test_information_loss_undefined_when_sst_zero():
    with pytest.raises(ValueError, match="SST is zero"):
        ma.information_loss(np.ones((4, 2)), [0, 0, 1, 1])


def test_labels_checked():
    with pytest.raises(ValueError, match="3 entries but the data has 6"):
        ma.sse(X6, [0, 0, 1])
    with pytest.raises(TypeError, match="integers"):
        ma.sse(X6, [0.5] * 6)
    with pytest.raises(ValueError, match="1-D"):
        ma.aggregate(X6, L6.reshape(2, 3))


def test_labels_series_matched_to_dataframe_by_row_label():
    """A Series of labels kept beside a table that was then sorted was taken by position:
    records went to the wrong groups (aggregate released other groups' centroids, SSE and
    IL measured another partition), without a word."""
    df = pd.DataFrame(X6, columns=["income", "age"], index=list("abcdef"))
    labels = pd.Series(L6, index=df.index)
    order = [0, 3, 1, 4, 2, 5]  # (sorted otherwise: the groups interleave)
    shuffled = df.iloc[order]
    assert ma.sse(shuffled, labels) == ma.sse(df, L6) == 16.0
    assert ma.information_loss(shuffled, labels) == ma.information_loss(df, L6)
    released = ma.aggregate(shuffled, labels)
    assert list(released.index) == list(shuffled.index)
    pd.testing.assert_frame_equal(released.loc[df.index], ma.aggregate(df, L6))
    # by position on purpose, and a Series in the data's order, as before
    assert ma.sse(shuffled, labels.to_numpy()) > 16.0
    assert ma.sse(df, labels) == 16.0


@pytest.mark.parametrize("func", [ma.sse, ma.information_loss, ma.aggregate])
def test_labels_series_with_other_row_labels_refused(func):
    df = pd.DataFrame(X6, columns=["income", "age"], index=list("abcdef"))
    with pytest.raises(ValueError, match=r"index does not match.*labels\.to_numpy\(\)"):
        func(df, pd.Series(L6))  # (a default index 0..5: the data's rows are a..f)
    assert ma.sse(df, pd.Series(L6).to_numpy()) == 16.0


# --------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------

@st.composite
def data_and_partition(draw, max_n: int = 30, max_p: int = 4, min_k: int = 1):
    """A data matrix and a random k-partition of it (returned with k)."""
    n = draw(st.integers(2, max_n))
    p = draw(st.integers(1, max_p))
    X = draw(arrays(np.float64, (n, p),
                    elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)))
    k = draw(st.integers(min_k, n))
    seed = draw(st.integers(0, 2**32 - 1))
    return X, random_k_partition(n, k, np.random.default_rng(seed)), k


@settings(max_examples=60, deadline=None)
@given(data_and_partition())
def test_sse_at_most_sst(case):
    X, labels, _ = case
    total = ma.sst(X)
    assert 0.0 <= ma.sse(X, labels) <= total * (1 + 1e-9) + 1e-9


@settings(max_examples=40, deadline=None)
@given(data_and_partition())
def test_one_group_sse_equals_sst(case):
    X, _, _ = case
    assert ma.sse(X, np.zeros(X.shape[0], dtype=int)) == pytest.approx(
        ma.sst(X), rel=1e-9, abs=1e-6)


@settings(max_examples=60, deadline=None)
@given(data_and_partition())
def test_aggregate_preserves_means_and_k_anonymity(case):
    X, labels, k = case
    assert ma.is_k_partition(labels, k)
    out = ma.aggregate(X, labels)
    np.testing.assert_allclose(out.mean(axis=0), X.mean(axis=0), rtol=1e-9, atol=1e-9)
    # every released row is shared by at least k records
    _, counts = np.unique(out, axis=0, return_counts=True)
    assert counts.min() >= k
    # and the SSE is the squared distance between original and released data
    assert ma.sse(X, labels) == pytest.approx(float(((X - out) ** 2).sum()), rel=1e-9, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(data_and_partition())
def test_relabel_is_canonical(case):
    X, labels, _ = case
    r = ma.relabel(labels)
    assert r[0] == 0
    assert ma.relabel(r).tolist() == r.tolist()
    assert sorted(ma.group_sizes(r).tolist()) == sorted(ma.group_sizes(labels).tolist())
    assert ma.sse(X, r) == pytest.approx(ma.sse(X, labels))


def test_information_loss_same_under_sample_or_population_std():
    # chapter 1: ddof=1 scales SSE and SST by (n-1)/n, IL is unchanged
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)) * [1, 10, 100]
    labels = np.repeat(np.arange(10), 4)
    Z0 = ma.standardize(X)
    Z1 = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
    n, p = X.shape
    assert ma.sst(Z0) == pytest.approx(n * p)
    assert ma.sst(Z1) == pytest.approx((n - 1) * p)
    assert ma.sse(Z1, labels) == pytest.approx(ma.sse(Z0, labels) * (n - 1) / n)
    assert ma.information_loss(Z1, labels) == pytest.approx(ma.information_loss(Z0, labels))


@pytest.mark.data
def test_census_attributes_identify_records_and_afnlwgt_dominates_sst():
    # chapter 1: several attributes alone single out every record; AFNLWGT dominates SST
    census = ma.datasets.load("census")
    alone = [c for c in census.columns if not census[[c]].duplicated(keep=False).any()]
    assert len(alone) >= 5
    share = census.var(ddof=0) * len(census) / ma.sst(census)
    assert share.idxmax() == "AFNLWGT" and share["AFNLWGT"] > 0.5
