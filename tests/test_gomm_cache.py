"""GOMM's memory budget: the process-wide group cache and each run's arena are bounded by
bytes (``microagg._defaults.GOMM_CACHE_BYTES``, ``$MICROAGG_GOMM_CACHE_MB``), forget the
least recently used groups first, and forgetting never changes a result."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import correlated_blocks
from hypothesis import given, settings
from hypothesis import strategies as st

import microagg
from microagg import _defaults, _gomm_eval, _risk_kernels
from microagg._gomm_ops import random_chromosome

KW = dict(population=8, generations=4, crossovers=2, mutations_per_operator=1,
          progress=False)


pytestmark = pytest.mark.usefixtures("fresh_gomm_cache")  # (tests/conftest.py)


def _budget(monkeypatch, nbytes):
    monkeypatch.setattr(_defaults, "GOMM_CACHE_BYTES", nbytes)


def _held_recounted():
    """Bytes the registry holds, counted from its arrays (not from its own tally)."""
    total = 0
    for cache in _gomm_eval._REGISTRY.values():
        total += cache.Z.nbytes
        total += sum(e.labels.nbytes + e.centroids.nbytes for e in cache.entries.values())
    return total


def test_budget_is_respected_over_many_groupings(monkeypatch):
    budget = 12_000
    _budget(monkeypatch, budget)
    rng = np.random.default_rng(0)
    datasets = [correlated_blocks(40, 6, seed=s) for s in range(3)]
    seen = set()
    for i in range(60):
        X = datasets[i % 3]
        grouping = _gomm_eval.canonical(random_chromosome(6, rng))
        microagg.score_grouping(X, grouping, 3 + i % 2)
        seen.update((i % 6, cols) for cols in grouping)
        info = microagg.gomm_cache_info()
        assert info["bytes"].sum() == _held_recounted()
        assert info["bytes"].sum() <= budget, (i, info)
    # the budget made the cache forget groups (and whole data sets)
    assert info["groups"].sum() < len(seen) // 4


def test_default_budget_forgets_nothing(monkeypatch):
    """Distinct groupings of one data set: every group computed once, all of them held."""
    rng = np.random.default_rng(1)
    X = correlated_blocks(60, 6, seed=1)
    groups = set()
    for _ in range(40):
        grouping = _gomm_eval.canonical(random_chromosome(6, rng))
        microagg.score_grouping(X, grouping, 3)
        groups.update(grouping)
    info = microagg.gomm_cache_info()
    assert info["groups"].tolist() == info["computed"].tolist() == [len(groups)]
    assert 0 < info["bytes"].sum() <= _defaults.GOMM_CACHE_BYTES


def test_least_recently_used_groups_go_first(monkeypatch):
    X = correlated_blocks(30, 4, seed=2)
    cache = _gomm_eval._cache_for(microagg.standardize(X), 3, "mdav")
    base = cache.nbytes  # the data it keeps
    one = cache.get((3,)).nbytes  # every single column: 30 labels, 10 centroids
    cache.entries.clear()
    cache.nbytes = base
    _budget(monkeypatch, base + 2 * one + one // 2)  # room for two groups, not three
    for cols in [(0,), (1,), (0,), (2,)]:  # (0,) used again after (1,): (1,) is the oldest
        cache.get(cols)
    assert list(cache.entries) == [(0,), (2,)]
    cache.get((1,))  # computed again; (0,) is now the oldest
    assert list(cache.entries) == [(2,), (1,)]
    assert cache.n_computed == 5  # (3,), then (0,), (1,), (2,), (1,) again


def test_least_recently_used_data_go_first(monkeypatch):
    """Groups of another (data, k) used less recently are forgotten before this one's."""
    A, B = correlated_blocks(30, 4, seed=3), correlated_blocks(30, 4, seed=4)
    microagg.multivariate(A, [[0], [1], [2], [3]], 3)
    microagg.multivariate(B, [[0], [1], [2], [3]], 3)
    microagg.multivariate(A, [[0, 1, 2, 3]], 3)  # A is now the most recently used
    info = microagg.gomm_cache_info()
    assert info["groups"].tolist() == [4, 5]  # B first: least recently used
    _budget(monkeypatch, int(info["bytes"].sum()) - 1)
    microagg.multivariate(A, [[0, 1], [2, 3]], 3)  # two more of A's groups
    after = microagg.gomm_cache_info()
    assert after["groups"].tolist()[-1] == 7  # A kept all it had, and the new ones
    assert after["groups"].tolist()[0] < 4 or len(after) == 1  # B gave way
    assert after["bytes"].sum() <= _defaults.GOMM_CACHE_BYTES


def test_environment_sets_the_budget(monkeypatch):
    monkeypatch.setenv("MICROAGG_GOMM_CACHE_MB", "0.5")
    assert _gomm_eval.cache_budget() == 2**19
    monkeypatch.setenv("MICROAGG_GOMM_CACHE_MB", "lots")
    with pytest.raises(ValueError, match="MICROAGG_GOMM_CACHE_MB"):
        microagg.score_grouping(correlated_blocks(30, 3), [[0], [1, 2]], 3)


def _run(X, seed, numba):
    r = microagg.gomm(X, 3, seed=seed, **KW)
    assert numba == _gomm_eval.HAVE_NUMBA
    return (r.groups, r.il, r.id, r.dld, r.score, r.population_scores.tolist(),
            r.history["best"].tolist(), r.evaluations), r.group_microaggregations


@pytest.mark.parametrize("numba", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gomm_is_the_same_with_a_tiny_budget(monkeypatch, seed, numba):
    """A budget of a few groups (the cache and the arena forget and recompute all the
    time) gives the very same run as the default."""
    if numba and not _gomm_eval.HAVE_NUMBA:
        pytest.skip("numba is not installed")
    if not numba:
        monkeypatch.setattr(_gomm_eval, "HAVE_NUMBA", False)
        monkeypatch.setattr(_risk_kernels, "HAVE_NUMBA", False)
    X = correlated_blocks(50, 6, seed=10 + seed)
    default, computed = _run(X, seed, numba)
    microagg.gomm_cache_clear()
    _budget(monkeypatch, 6_000)
    tiny, recomputed = _run(X, seed, numba)
    assert tiny == default
    assert recomputed > computed  # the budget did bite


@pytest.mark.skipif(not _gomm_eval.HAVE_NUMBA, reason="the arena is the compiled scorer's")
@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 40_000))
def test_arena_within_budget_and_scores_unchanged(seed, budget):
    """Scoring many groupings with a small budget: the arena holds at most the budget
    besides the grouping just scored, and every score is the one of an unbounded arena."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(60, 7)).astype(float)
    X[0] += 7.0
    Z = microagg.standardize(X)
    groupings = [_gomm_eval.canonical(random_chromosome(7, rng)) for _ in range(40)]
    groupings += groupings[::3]  # some come back (scores memoised, groups maybe not)
    free = _gomm_eval.Evaluator(Z, 3, shared_cache=False)
    want = [free(g) for g in groupings]
    with pytest.MonkeyPatch.context() as mp:
        _budget(mp, budget)
        bounded = _gomm_eval.Evaluator(Z, 3, shared_cache=False)
        current = 0
        for g, expect in zip(groupings, want, strict=True):
            new = g not in bounded.scores  # else a memoised score: the arena is not asked
            assert bounded(g) == expect
            arena = bounded.arena
            if new:
                current = sum(arena.sizes[cols][0] for cols in g)
            assert arena.nbytes <= max(budget, current + budget // 2)
            assert arena.nbytes == sum(arena.sizes[c][0] for c in arena.slot_of)
            assert sorted(arena.slot_of.values()) == list(range(arena.used[0]))
        if budget < free.arena.nbytes // 2:
            assert bounded.arena.rebuilds > 0


@pytest.mark.skipif(not _gomm_eval.HAVE_NUMBA, reason="the arena is the compiled scorer's")
def test_arena_rebuild_keeps_the_parts(monkeypatch):
    """After a rebuild each kept group's parts are bit for bit the ones first stored."""
    X = correlated_blocks(50, 5, seed=7)
    ev = _gomm_eval.Evaluator(microagg.standardize(X), 3, shared_cache=False)
    groups = [(0,), (1,), (2,), (0, 1), (3, 4), (2, 3, 4)]
    parts = {cols: ev._group_parts(cols, ev.groups.get(cols)) for cols in groups}
    size = {cols: _gomm_eval._parts_bytes(50, p) for cols, p in parts.items()}
    arena = ev.arena
    for cols in groups[:5]:
        arena.add(cols, parts[cols])
    arena.slot((0,))  # used again: the most recent of the old groups
    new = groups[5]
    # room for (0,) only besides the group to keep, (1,), and the new one
    budget = 2 * (size[(0,)] + size[new]) + 2
    assert arena.nbytes + size[new] > budget  # the new group does not fit
    _budget(monkeypatch, budget)
    arena.add(new, parts[new], keep=[(1,)])
    assert arena.rebuilds == 1
    kept = list(arena.slot_of)
    assert kept == [(1,), (0,), new]  # their order kept: least recently used first
    assert arena.nbytes == size[(1,)] + size[(0,)] + size[new]
    assert sorted(arena.slot_of.values()) == [0, 1, 2]
    for cols in kept:
        got = _gomm_eval._parts_at(arena.store, arena.slot_of[cols], len(cols),
                                   arena.sizes[cols][1])
        want = parts[cols]
        for name in ("classes", "values", "holders", "rivals", "projected"):
            assert np.array_equal(np.ravel(getattr(got, name)), np.ravel(getattr(want, name))), (
                cols, name)
        assert got.reach == want.reach


def test_numpy_scorer_within_budget(monkeypatch):
    """Without numba the scorer keeps each group's release (labels and distinct values):
    at most the budget of them, the same scores as with room for all."""
    monkeypatch.setattr(_gomm_eval, "HAVE_NUMBA", False)
    monkeypatch.setattr(_risk_kernels, "HAVE_NUMBA", False)
    rng = np.random.default_rng(8)
    Z = microagg.standardize(correlated_blocks(40, 6, seed=8))
    groupings = [_gomm_eval.canonical(random_chromosome(6, rng)) for _ in range(30)]
    free = _gomm_eval.Evaluator(Z, 3, shared_cache=False)
    want = [free(g) for g in groupings]
    _budget(monkeypatch, 3_000)
    bounded = _gomm_eval.Evaluator(Z, 3, shared_cache=False)
    for g, expect in zip(groupings, want, strict=True):
        assert bounded(g) == expect
        held = sum(r.labels.nbytes + r.values.nbytes for r in bounded.released.values())
        assert held == bounded.released_bytes <= 3_000
    assert len(bounded.released) < len(free.released)


def test_reproduction_workers_take_their_budget_unless_the_user_set_one(monkeypatch):
    """The book's GOMM reproduction runs its later seeds in worker processes whose shared
    cache may hold GOMM_REPRODUCTION_CACHE_BYTES; a budget the user set stays."""
    from microagg.reproductions import _gomm as reproduction

    monkeypatch.setenv(_gomm_eval.CACHE_ENV, "0")  # so that teardown removes what the
    monkeypatch.delenv(_gomm_eval.CACHE_ENV)  # worker's setup sets in this process
    reproduction._worker_budget()
    want = _defaults.GOMM_REPRODUCTION_CACHE_BYTES
    assert _gomm_eval.cache_budget() == want > _defaults.GOMM_CACHE_BYTES
    monkeypatch.setenv(_gomm_eval.CACHE_ENV, "64")
    reproduction._worker_budget()
    assert _gomm_eval.cache_budget() == 64 * 2**20
