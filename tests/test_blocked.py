"""microagg.blocked: a k-partition made block by block, groups never crossing a block."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import microagg as ma
from microagg import _blocked as _BLOCKED  # noqa: E402
from microagg._methods import MDAV_FAMILY as METHODS  # noqa: E402


def _blocks(X, k, block_size, strategy):
    arr = np.ascontiguousarray(X, dtype=float)
    if strategy == "pca":
        return _BLOCKED.pca_blocks(arr, k, block_size)
    return _BLOCKED.tree_blocks(arr, k, block_size)


@pytest.mark.parametrize("strategy", ["pca", "tree"])
@pytest.mark.parametrize("method", METHODS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 300), p=st.integers(1, 4), k=st.integers(1, 6),
       block=st.integers(1, 120), seed=st.integers(0, 2**32 - 1), ties=st.booleans())
def test_valid_k_partition_within_blocks(method, strategy, n, p, k, block, seed, ties):
    k = min(k, n)
    block = max(block, k)
    X = np.random.default_rng(seed).normal(size=(n, p))
    if ties:
        X = np.round(X)
    labels = ma.blocked(X, k, method=method, block_size=block, strategy=strategy)
    assert labels.shape == (n,) and labels.dtype == np.int64
    assert ma.is_k_partition(labels, k)
    blocks = _blocks(X, k, block, strategy)
    assert np.array_equal(np.sort(np.concatenate(blocks)), np.arange(n))  # a partition of records
    block_of = np.empty(n, dtype=np.int64)
    for b, idx in enumerate(blocks):
        block_of[idx] = b
        assert idx.size >= k
        if strategy == "tree" and idx.size > block:
            assert idx.size < 2 * k  # too small to split
    for g in np.unique(labels):  # every group inside one block
        assert np.unique(block_of[labels == g]).size == 1
    # numbered block after block, 0..G-1
    assert np.array_equal(np.unique(labels), np.arange(labels.max() + 1))


@pytest.mark.parametrize("strategy", ["pca", "tree"])
@pytest.mark.parametrize("method", METHODS)
def test_one_block_is_the_unblocked_method(method, strategy):
    X = np.random.default_rng(1).normal(size=(400, 3))
    f = getattr(ma, method)
    for block in (400, 10_000):
        assert np.array_equal(ma.blocked(X, 4, method=method, block_size=block,
                                         strategy=strategy), f(X, 4))


def test_pca_blocks_are_slabs_along_the_first_component():
    rng = np.random.default_rng(2)
    X = np.c_[rng.normal(size=1000), np.zeros(1000)]  # the first component is the first axis
    blocks = _blocks(X, 3, 250, "pca")
    assert [b.size for b in blocks] == [250] * 4
    highest = [X[b, 0].max() for b in blocks]
    lowest = [X[b, 0].min() for b in blocks]
    ordered = np.argsort([X[b, 0].mean() for b in blocks])
    for a, b in zip(ordered[:-1], ordered[1:], strict=True):  # disjoint, in order
        assert highest[a] <= lowest[b]


def test_block_count_never_leaves_a_block_below_k():
    X = np.random.default_rng(3).normal(size=(10, 2))
    blocks = _blocks(X, 3, 3, "pca")  # ceil(10/3) = 4 blocks would leave one of 2 records
    assert len(blocks) == 3 and min(b.size for b in blocks) >= 3


def test_options_reach_the_heuristic_and_results_are_deterministic():
    X = np.random.default_rng(4).normal(size=(900, 3))
    a = ma.blocked(X, 3, method="vmdav", block_size=300, gamma=1.1, engine="indexed")
    b = ma.blocked(X, 3, method="vmdav", block_size=300, gamma=1.1, engine="loops")
    assert np.array_equal(a, b)
    assert not np.array_equal(a, ma.blocked(X, 3, method="vmdav", block_size=300, gamma=0.0))
    assert np.array_equal(ma.blocked(X, 3, strategy="tree", block_size=100),
                          ma.blocked(X.copy(), 3, strategy="tree", block_size=100))


def test_blocking_costs_some_quality():
    X = np.random.default_rng(5).normal(size=(2000, 2))
    whole = ma.sse(X, ma.mdav(X, 3))
    tree = ma.sse(X, ma.blocked(X, 3, block_size=100))
    slabs = ma.sse(X, ma.blocked(X, 3, block_size=100, strategy="pca"))
    assert whole < tree < 1.5 * whole  # groups cannot cross the 32 block boundaries
    assert whole < slabs < 2.5 * whole  # 20 thin slabs: compact only when blocks are large
    assert tree < slabs


def test_bad_arguments():
    X = np.random.default_rng(6).normal(size=(20, 2))
    with pytest.raises(ValueError, match="unknown method 'kmeans'"):
        ma.blocked(X, 3, method="kmeans")
    with pytest.raises(ValueError, match="strategy must be one of 'tree', 'pca'"):
        ma.blocked(X, 3, strategy="grid")
    with pytest.raises(ValueError, match="smaller than k"):
        ma.blocked(X, 5, block_size=4)
    with pytest.raises(TypeError, match="block_size must be an integer"):
        ma.blocked(X, 3, block_size=10.0)
    with pytest.raises(TypeError, match="block_size must be an integer"):
        ma.blocked(X, 3, block_size=True)
    with pytest.raises(ValueError, match="larger than the number of records"):
        ma.blocked(X, 21)
    with pytest.raises(ValueError, match="NaN"):
        ma.blocked(np.where(np.eye(20, 2) == 1, np.nan, X), 3)
    with pytest.raises(ValueError, match="engine must be one of"):
        ma.blocked(X, 3, engine="fast")


def test_docstring_example_runs():
    result = doctest.testmod(_BLOCKED, verbose=False)
    assert result.attempted >= 5 and result.failed == 0
