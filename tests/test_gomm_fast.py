"""GOMM's fast scorer against the slow, readable path: the same numbers, bit for bit.

The fast DLD of a release made attribute group by attribute group
(:func:`microagg._risk_kernels.dld_grouped`: distinct rows by relabelling, value
classes, rival clusters) must give exactly the value of the full search over the
assembled release (:func:`microagg._risk_kernels._dld_numpy`, the vectorised
definition), on tie-heavy data above all: duplicated rows, duplicated columns, a
few distinct values.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import tie_heavy
from hypothesis import given, settings
from hypothesis import strategies as st

import microagg
from microagg import _gomm_eval, _gomm_kernels, _risk_kernels
from microagg._gomm_ops import random_chromosome
from microagg._risk_kernels import distinct_keys, distinct_rows, release_rows


@st.composite
def tie_heavy_groupings(draw):
    """Small data with many ties, a k and a random grouping of its columns."""
    X, k, rng = tie_heavy(draw)
    return X, k, random_chromosome(X.shape[1], rng)


def _slow_dld(Z, canon, k):
    """Assemble the release on the standardised scale, then search all of it."""
    Q = np.empty_like(Z)
    for cols in canon:
        sub = np.ascontiguousarray(Z[:, list(cols)])
        labels = microagg.mdav(sub, k)
        Q[:, list(cols)] = microagg.aggregate(sub, labels)
    U, mult, own = distinct_rows(Q)
    return 100.0 * math.fsum(_risk_kernels._dld_numpy(Z, U, mult, own, block=7)) / len(Z)


@settings(max_examples=80, deadline=None)
@given(tie_heavy_groupings())
def test_fast_dld_equals_the_full_search(case):
    Z, k, grouping = case  # any scale will do (GOMM standardises first)
    canon = _gomm_eval.canonical(grouping)
    fast = _gomm_eval.Evaluator(Z, k, shared_cache=False)(canon).dld
    assert fast == _slow_dld(Z, canon, k)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4).flatmap(lambda G: st.tuples(
    st.lists(st.integers(1, 5), min_size=G, max_size=G), st.integers(1, 30),
    st.integers(0, 99))))
def test_release_rows_are_the_distinct_rows(case):
    sizes, n, seed = case
    rng = np.random.default_rng(seed)
    L = np.vstack([rng.integers(0, s, size=n) for s in sizes]).astype(np.int64)
    first, mult, own = release_rows(L, np.array(sizes, dtype=np.int64))
    first_ref, mult_ref, own_ref = distinct_keys(L)
    # the same partition of the records into rows, numbered in another order
    assert len(first) == len(first_ref)
    assert (L[:, first[own]] == L).all()
    assert np.array_equal(own[first], np.arange(len(first)))
    assert np.array_equal(mult, np.bincount(own))
    assert sorted(mult.tolist()) == sorted(mult_ref.tolist())
    assert len(set(zip(own.tolist(), own_ref.tolist(), strict=True))) == len(first)


def test_rivals_hold_every_cluster_in_reach():
    """The rivals are exactly the other clusters within the own distance plus the margin."""
    rng = np.random.default_rng(4)
    Z = np.round(rng.normal(size=(60, 3)) * 2) / 2
    labels = microagg.mdav(Z, 3)
    cen = microagg.aggregate(Z, labels)[np.unique(labels, return_index=True)[1]]
    margin = _risk_kernels.rival_margin(Z)
    ptr, clusters = _risk_kernels.rival_clusters(Z, labels, cen, margin)
    D = ((Z[:, None, :] - cen[None, :, :]) ** 2).sum(axis=2)
    for i in range(len(Z)):
        want = {c for c in range(len(cen))
                if c != labels[i] and D[i, c] <= D[i, labels[i]] + margin[i]}
        assert set(clusters[ptr[i]:ptr[i + 1]].tolist()) == want


def test_gomm_run_is_the_same_without_numba(monkeypatch):
    """The numpy search replaces the compiled one without numba: the same run."""
    X = np.random.default_rng(5).integers(0, 5, size=(70, 5)).astype(float)
    kw = dict(population=8, generations=3, crossovers=2, mutations_per_operator=1, seed=1,
              progress=False, shared_cache=False)
    fast = microagg.gomm(X, 3, **kw)
    monkeypatch.setattr(_gomm_eval, "HAVE_NUMBA", False)
    monkeypatch.setattr(_risk_kernels, "HAVE_NUMBA", False)
    slow = microagg.gomm(X, 3, **kw)
    assert fast.groups == slow.groups
    assert (fast.il, fast.id, fast.dld, fast.score) == (slow.il, slow.id, slow.dld, slow.score)
    assert np.array_equal(fast.population_scores, slow.population_scores)


@pytest.mark.parametrize("kind", ["normal", "rounded", "near ties"])
def test_dld_and_gomm_are_the_same_without_numba_on_real_valued_data(monkeypatch, kind):
    """Without numba DLD takes another route (a k-d tree, not the compiled projection
    search) and GOMM numpy code: the same answers on real-valued data too, with exact
    ties (rounded values) and near ties (values 0.001 apart), not only small integers."""
    rng = np.random.default_rng(["normal", "rounded", "near ties"].index(kind))
    if kind == "normal":
        X = rng.normal(size=(150, 4))
    elif kind == "rounded":
        X = np.round(rng.normal(size=(150, 4)) * 3) / 3 * 0.1
    else:
        X = rng.integers(0, 4, size=(150, 4)) * 0.1 + 1e-3 * rng.integers(0, 2, size=(150, 4))
    Z = microagg.standardize(X)
    Q = microagg.aggregate(Z, microagg.mdav(Z, 3))
    kw = dict(population=6, generations=2, crossovers=2, mutations_per_operator=1, seed=3,
              progress=False, shared_cache=False)
    dld, fast = _risk_kernels.dld_standardized(Z, Q), microagg.gomm(X, 3, **kw)
    monkeypatch.setattr(_gomm_eval, "HAVE_NUMBA", False)
    monkeypatch.setattr(_risk_kernels, "HAVE_NUMBA", False)
    assert _risk_kernels.dld_standardized(Z, Q) == dld
    slow = microagg.gomm(X, 3, **kw)
    assert fast.groups == slow.groups
    assert (fast.il, fast.id, fast.dld, fast.score) == (slow.il, slow.id, slow.dld, slow.score)
    assert np.array_equal(fast.population_scores, slow.population_scores)


def _compiled_and_plain(f):
    """The kernel as numba compiles it, and as plain Python (what runs without numba)."""
    return [f, getattr(f, "py_func", f)]


@settings(max_examples=60, deadline=None)
@given(tie_heavy_groupings())
def test_group_kernels_equal_the_readable_definitions(case):
    """Centroids, interval count, value classes, rivals and projections of each attribute
    group, compiled and plain, against numpy written from the definitions."""
    X, k, grouping = case
    Z = microagg.standardize(X)
    margin = _risk_kernels.rival_margin(Z)
    axes = _risk_kernels.principal_axes(Z)
    for cols in _gomm_eval.canonical(grouping):
        sub = np.ascontiguousarray(Z[:, list(cols)])
        labels = microagg.mdav(sub, k)
        s = int(labels.max()) + 1
        for means in _compiled_and_plain(_gomm_kernels.cluster_means):
            cen, diff = means(sub, labels, s)
            assert np.array_equal(cen, _gomm_eval._group_means(sub, labels, s))
            assert np.array_equal(diff, sub - cen[labels])
        for both in _compiled_and_plain(_gomm_kernels.mdav_means):  # MDAV, then the above
            got_labels, got_cen, got_diff = both(sub, k, sub.sum(axis=0))
            assert np.array_equal(got_labels, labels)
            assert np.array_equal(got_cen, cen) and np.array_equal(got_diff, diff)
        for parts in _compiled_and_plain(_gomm_kernels.group_parts):
            got = _gomm_kernels.GroupParts(*parts(sub, labels, cen, margin, 0.1,
                                                   np.ascontiguousarray(axes[list(cols)])))
            assert got.id_count == _risk_kernels.id_counts(sub, cen[labels], 0.1).sum()
            # each record's class holds its centroid bit for bit; the classes are distinct
            assert got.values[got.classes].tobytes() == cen[labels].tobytes()
            assert len({v.tobytes() for v in got.values}) == len(got.values)
            D = np.zeros((len(sub), len(got.values)))
            for c in range(sub.shape[1]):  # column order, as the kernels sum
                D += (sub[:, c, None] - got.values[None, :, c]) ** 2
            own = got.classes
            want = [(i, q) for i in range(len(sub)) for q in range(len(got.values))
                    if q != own[i] and D[i, q] <= D[i, own[i]] + margin[i]]
            assert list(zip(got.holders.tolist(), got.rivals.tolist(), strict=True)) == want
            assert np.allclose(got.projected, got.values @ axes[list(cols)])
            assert got.reach == np.abs(got.values).sum(axis=1).max()


@pytest.mark.skipif(not _gomm_eval.HAVE_NUMBA, reason="compares the compiled scorer with numpy")
def test_scores_are_the_same_without_numba_over_many_groups(monkeypatch):
    """Enough distinct attribute groups to grow the compiled scorer's arena several times:
    every score equals the numpy path's."""
    rng = np.random.default_rng(6)
    X = rng.integers(0, 4, size=(90, 8)).astype(float)
    X[:, 5] = X[:, 2]  # a duplicated attribute: ties between groups' releases
    Z = microagg.standardize(X)
    groupings = [_gomm_eval.canonical(random_chromosome(8, rng)) for _ in range(150)]
    fast = _gomm_eval.Evaluator(Z, 4, shared_cache=False)
    scores = [fast(g) for g in groupings]
    assert fast.arena.used[0] > 64  # the arena grew
    monkeypatch.setattr(_gomm_eval, "HAVE_NUMBA", False)
    slow = _gomm_eval.Evaluator(Z, 4, shared_cache=False)
    assert scores == [slow(g) for g in groupings]
