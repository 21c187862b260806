"""GOMM / D-GOMM and multivariate (attribute-group) microaggregation (microagg.gomm)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import GOMM_SMALL as SMALL
from helpers import correlated_blocks
from hypothesis import given, settings
from hypothesis import strategies as st

import microagg
from microagg import _gomm_eval, _gomm_ops, k_anonymity_level, mdav, score_breakdown, score_grouping  # noqa: E402  # noqa: E402
from microagg.reproductions import gomm_data  # noqa: E402

_data = correlated_blocks


# --------------------------------------------------------------------------------------
# multivariate microaggregation and its cache
# --------------------------------------------------------------------------------------


def test_multivariate_hand_example():
    X = np.array([[0.0, 0.0], [1.0, 9.0], [8.0, 1.0], [9.0, 8.0]])
    out = microagg.multivariate(X, [[0], [1]], 2)
    assert out.tolist() == [[0.5, 0.5], [0.5, 8.5], [8.5, 0.5], [8.5, 8.5]]
    # every released row is unique: 2-anonymity is lost although each group has 2 records
    assert k_anonymity_level(out) == 1
    # one group of both attributes is 2-anonymous
    assert k_anonymity_level(microagg.multivariate(X, [[0, 1]], 2)) == 2


def test_multivariate_equals_groupwise_mdav():
    X = _data()
    Z = microagg.standardize(X)
    groups = [[0, 3], [1, 2, 5], [4]]
    out = microagg.multivariate(X, groups, 4)
    for g in groups:
        expect = microagg.aggregate(X[:, g], mdav(Z[:, g], 4))
        np.testing.assert_allclose(out[:, g], expect, rtol=0, atol=1e-12)


def test_multivariate_breaks_k_anonymity():
    X = _data(120, 6, seed=1)
    k = 5
    single = microagg.multivariate(X, [list(range(6))], k)
    split = microagg.multivariate(X, [[0, 1, 2], [3, 4, 5]], k)
    assert k_anonymity_level(single) >= k
    assert len(np.unique(single, axis=0)) <= len(X) // k
    assert len(np.unique(split, axis=0)) > len(X) // k
    assert k_anonymity_level(split) < k


class CountingMDAV:
    """A method that counts how often it is asked to microaggregate."""

    def __init__(self):
        self.calls = 0

    def __call__(self, Z, k):
        self.calls += 1
        return mdav(Z, k)


def test_cache_never_recomputes_a_group():
    X = _data(seed=2)
    method = CountingMDAV()
    microagg.multivariate(X, [[0, 1], [2, 3], [4, 5]], 3, method=method)
    assert method.calls == 3
    microagg.multivariate(X, [[1, 0], [2, 3], [4], [5]], 3, method=method)  # 2 new groups
    assert method.calls == 5
    score_grouping(X, [[4], [5], [0, 1], [3, 2]], 3, method=method)  # nothing new
    assert method.calls == 5
    # a different k is a different cache
    microagg.multivariate(X, [[0, 1], [2, 3], [4, 5]], 4, method=method)
    assert method.calls == 8


def test_gomm_calls_the_method_once_per_distinct_group():
    X = _data(seed=3)
    method = CountingMDAV()
    r = microagg.gomm(X, 4, **SMALL, seed=1, progress=False, method=method)
    cache = _gomm_eval._cache_for(microagg.standardize(X), 4, method)
    assert method.calls == r.group_microaggregations == len(cache.entries)
    # the run evaluated far more children than it microaggregated groups
    assert r.operators["children"].sum() > r.group_microaggregations


def test_score_grouping_equals_score_of_release():
    X = _data(seed=4)
    groups = [[0, 4], [1, 2, 3], [5]]
    a = score_grouping(X, groups, 3)
    b = score_breakdown(X, microagg.multivariate(X, groups, 3))
    assert a.il == pytest.approx(b.il, rel=1e-9)
    assert a.id == pytest.approx(b.id, abs=1e-9)
    assert a.dld == pytest.approx(b.dld, abs=1e-9)


def test_multivariate_bad_input():
    X = _data()
    with pytest.raises(ValueError, match="more than one group"):
        microagg.multivariate(X, [[0, 1], [1, 2, 3, 4, 5]], 3)
    with pytest.raises(ValueError, match="in no group"):
        microagg.multivariate(X, [[0, 1]], 3)
    with pytest.raises(ValueError, match="out of range"):
        microagg.multivariate(X, [[0, 1, 2, 3, 4, 5, 6]], 3)
    with pytest.raises(ValueError, match="empty group"):
        microagg.multivariate(X, [[0, 1, 2, 3, 4, 5], []], 3)
    with pytest.raises(TypeError):
        microagg.multivariate(X, "012345", 3)
    with pytest.raises(TypeError):
        microagg.multivariate(X, [[0.5, 1]], 3)
    with pytest.raises(ValueError, match="larger than"):
        microagg.multivariate(X, [list(range(6))], 1000)
    with pytest.raises(ValueError, match="unknown method"):
        microagg.multivariate(X, [list(range(6))], 3, method="kmeans")
    with pytest.raises(ValueError, match="zero variance"):
        microagg.gomm(np.ones((10, 3)), 2, progress=False)


# --------------------------------------------------------------------------------------
# genetic operators
# --------------------------------------------------------------------------------------


def _is_partition(c, p):
    members = [a for g in c for a in g]
    return sorted(members) == list(range(p)) and all(len(g) > 0 for g in c)


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 12), st.integers(0, 10_000))
def test_operators_return_partitions(p, seed):
    rng = np.random.default_rng(seed)
    a = _gomm_ops.random_chromosome(p, rng)
    b = _gomm_ops.random_chromosome(p, rng)
    for child in _gomm_ops.gomm_crossover(a, b, rng):
        assert _is_partition(child, p)
    for op in _gomm_ops.MUTATIONS:
        child = _gomm_ops.gomm_mutate(op, a, p, rng)
        assert _is_partition(child, p)
        if op == "GE":
            assert len(child) == max(len(a) - 1, 1)
        if op == "GS":
            sizes_before = sorted(len(g) for g in a)
            assert len(child) in (len(a), len(a) + 1)
            if all(s == 1 for s in sizes_before):
                assert child == a
        if op == "ES":
            assert sorted(len(g) for g in child) == sorted(len(g) for g in a)
        if op == "EM":
            assert len(child) in (len(a), len(a) - 1) or len(a) == 1


def test_crossover_injects_donor_groups():
    rng = np.random.default_rng(0)
    p1 = ((0, 1), (2, 3), (4, 5))
    p2 = ((0, 2, 4), (1, 3, 5))
    for _ in range(20):
        c1, c2 = _gomm_ops.gomm_crossover(p1, p2, rng)
        # every child keeps at least one whole group of the donor parent
        assert any(g in c1 for g in p1)
        assert any(g in c2 for g in p2)


def test_efficiency_formulas():
    assert _gomm_ops.efficiency(90.0, 100.0) == pytest.approx(10.0)  # 10 % better
    assert _gomm_ops.efficiency(125.0, 100.0) == pytest.approx(-20.0)  # (100/125 - 1) * 100
    assert _gomm_ops.efficiency(100.0, 100.0) == 0.0


# --------------------------------------------------------------------------------------
# the GA
# --------------------------------------------------------------------------------------


def test_gomm_is_deterministic_and_consistent():
    X = _data(seed=5)
    a = microagg.gomm(X, 4, **SMALL, seed=11, progress=False)
    b = microagg.gomm(X, 4, **SMALL, seed=11, progress=False, shared_cache=False)
    assert a.groups == b.groups and a.score == b.score
    assert a.history.drop(columns="seconds").equals(b.history.drop(columns="seconds"))
    assert a.operators.equals(b.operators)
    # reported measures are those of the reported grouping
    s = score_grouping(X, a.groups, 4)
    assert (a.il, a.id, a.dld, a.score) == (s.il, s.id, s.dld, s.score)
    # elitism: the best score never gets worse
    assert np.all(np.diff(a.history["best"]) <= 0)
    assert a.history["best"].iloc[-1] == a.score
    assert a.population_scores.shape == (SMALL["generations"] + 1, SMALL["population"])
    # per generation: 2 children per crossover + the mutations
    per_gen = a.operators.groupby("generation")["children"].sum()
    assert (per_gen == 2 * SMALL["crossovers"] + 5 * SMALL["mutations_per_operator"]).all()
    ops = a.operators
    assert ((ops["improved"] + ops["worsened"] + ops["unchanged"]) == ops["children"]).all()
    assert ops["unused_pct"].dropna().between(0, 100).all()


def test_dgomm_switches_off_operators_and_stays_close():
    X = _data(120, 6, seed=6)
    settings_ = dict(population=30, generations=30, crossovers=5, mutations_per_operator=3)
    for seed in (0, 1, 2):
        g = microagg.gomm(X, 5, **settings_, seed=seed, progress=False)
        d = microagg.gomm(X, 5, **settings_, seed=seed, progress=False, dynamic=True,
                          patience=5)
        assert d.switched_off  # some operator was stopped
        assert d.operators["children"].sum() < g.operators["children"].sum()
        assert d.score <= g.score * 1.01


def test_gomm_bad_input():
    X = _data()
    with pytest.raises(ValueError, match="population"):
        microagg.gomm(X, 3, population=0, progress=False)
    with pytest.raises(TypeError, match="generations"):
        microagg.gomm(X, 3, generations=2.5, progress=False)
    with pytest.raises(ValueError, match="k="):
        microagg.gomm(X, 500, progress=False)
    with pytest.raises(ValueError, match="unknown GOMM data set"):
        gomm_data("tarragona")


# --------------------------------------------------------------------------------------
# the paper's claims, on the real data (reduced settings)
# --------------------------------------------------------------------------------------

DATA_SETTINGS = {"population": 60, "generations": 30, "crossovers": 10,
                 "mutations_per_operator": 4}


@pytest.fixture(scope="module")
def paper_runs():
    runs = {}
    for name in ("census", "water-treatment"):
        X = gomm_data(name)
        for k in (5, 10, 25, 50, 100):
            runs[name, k] = microagg.gomm(X, k, **DATA_SETTINGS, seed=0, progress=False)
    return runs


@pytest.mark.data
def test_gomm_data_census_without_ernval_and_every_water_day():
    X = gomm_data("census")
    assert X.shape == (1080, 12) and "ERNVAL" not in X.columns
    water = gomm_data("water-treatment")  # all 527 days, gaps filled (the adopted reading)
    assert water.shape == (527, 38) and not water.isna().any().any()


@pytest.mark.data
@pytest.mark.parametrize("name", ["census", "water-treatment"])
def test_gomm_beats_every_adhoc_grouping(paper_runs, name):
    X = gomm_data(name)
    for k in (5, 10, 25, 50, 100):
        best = paper_runs[name, k].score
        for label, groups in microagg.published.adhoc_groupings(name).items():
            assert best <= score_grouping(X, groups, k).score + 1e-9, (name, k, label)


@pytest.mark.data
@pytest.mark.parametrize("name", ["census", "water-treatment"])
def test_number_of_groups_rises_with_k(paper_runs, name):
    groups = [paper_runs[name, k].n_groups for k in (5, 10, 25, 50, 100)]
    assert groups[0] == 1  # small k: one group (k-anonymous release), as in the paper
    assert groups[-1] > groups[0]
    assert groups == sorted(groups)


# --------------------------------------------------------------------------------------
# chapter 6 views (pure functions returning figures)
# --------------------------------------------------------------------------------------




@pytest.mark.parametrize("answer, wanted", [
    (lambda Z, k: np.zeros(3, dtype=np.int64), "3 entries but the data has 40 records"),
    (lambda Z, k: np.arange(5), "5 entries but the data has 40 records"),
    (lambda Z, k: np.full(len(Z), 0.5), "non-integer value"),
    (lambda Z, k: np.arange(len(Z)), "a group of 1 record"),  # the original data released
    (lambda Z, k: np.arange(len(Z)) % 20, "a group of 2 record"),
])
def test_a_callable_method_must_return_a_k_partition(answer, wanted):
    """A callable's labels went straight to the compiled kernels: a wrong length crashed the
    process, and singletons released the data unchanged under "k = 3". Now each is an error
    naming the method, in every function that takes one."""
    Y = np.random.default_rng(0).normal(size=(40, 4))
    for call in (lambda: microagg.multivariate(Y, [[0, 1], [2, 3]], 3, method=answer),
                 lambda: microagg.score_grouping(Y, [[0, 1], [2, 3]], 3, method=answer),
                 lambda: microagg.gomm(Y, 3, method=answer, population=4, generations=1,
                                 progress=False, shared_cache=False)):
        with pytest.raises((ValueError, TypeError), match=f"method .*<lambda>.*{wanted}"):
            call()
    fine = microagg.multivariate(Y, [[0, 1], [2, 3]], 3, method=lambda Z, k: np.arange(len(Z)) % 13)
    assert microagg.k_anonymity_level(fine[:, :2]) >= 3


def test_the_operators_check_their_chromosomes_and_generator():
    """A mutation given a p that did not match the chromosome invented attributes (GC on
    ((0, 1),) with p = 5 gave ((0, 1, 2, 3, 4),)); an int for rng failed deep inside. The
    public operators check as multivariate checks a grouping; GOMM's loop, which makes its
    own chromosomes, calls the operators unchecked (the same draws)."""
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"column\(s\) \[2, 3, 4\] are in no group"):
        microagg.gomm_mutate("GC", ((0, 1),), 5, rng)
    with pytest.raises(ValueError, match=r"\[1\] appear in more than one group"):
        microagg.gomm_mutate("EM", ((0, 1), (1, 2)), 3, rng)
    with pytest.raises(ValueError, match=r"column\(s\) \[2\] are in no group"):
        microagg.gomm_crossover(((0, 1), (2,)), ((0,), (1,)), rng)
    with pytest.raises(TypeError, match="rng must be a numpy Generator"):
        microagg.gomm_crossover(((0, 1), (2,)), ((0,), (1, 2)), 0)
    with pytest.raises(ValueError, match="unknown mutation"):
        microagg.gomm_mutate("XX", ((0, 1),), 2, rng)
    c = ((0, 3), (1,), (2, 4))
    for op in _gomm_ops.MUTATIONS:
        assert (microagg.gomm_mutate(op, c, 5, np.random.default_rng(7))
                == _gomm_ops.mutate(op, c, 5, np.random.default_rng(7)))
    assert (microagg.gomm_crossover(c, ((0, 1, 2, 3, 4),), np.random.default_rng(7))
            == _gomm_ops.crossover(c, ((0, 1, 2, 3, 4),), np.random.default_rng(7)))
