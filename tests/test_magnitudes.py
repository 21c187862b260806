"""Magnitude safety and termination (issue "Reliability", points 4 and 5).

* Every partitioner gives the partition of ``X`` for ``c * X``, for powers of two across the
  whole float range (exact rescaling) and for powers of ten on generic data.
* ``standardize``, ``sse``, ``sst``, ``information_loss``, ``aggregate`` and the disclosure
  measures never return inf/nan or zeros from an overflow: they give the right number or a
  clear ``ValueError``.
* Property test: random magnitudes from 1e-300 to 1e300, ties and duplicate rows, fed to every
  public algorithm; each call returns a valid k-partition (or a finite measure) or raises a
  clear ``ValueError``/``TypeError``, within a time limit. A hang kills the run (faulthandler)
  instead of blocking it.
"""

from __future__ import annotations

import faulthandler
import functools
import time
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import microagg as ma
from microagg._mdav.dispatch import ENGINES
from microagg._methods import MDAV_FAMILY, METHODS

#: Seconds one call may take (generous: a shared 2-core machine, first-call compilation).
CALL_LIMIT = 20.0


@pytest.fixture(autouse=True)
def _no_hang():
    """A call that never returns ends the test run with a traceback instead of blocking it."""
    faulthandler.dump_traceback_later(600, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture(params=list(ENGINES))  # every engine the package has
def engine(request):
    """Each engine of the MDAV family (``numpy`` is what runs without numba)."""
    return request.param


def _generic(n: int = 40, p: int = 3, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, p))


PARTITIONERS = {name: METHODS[name].function for name in MDAV_FAMILY}


# -- the same partition at every scale ---------------------------------------------------------

@pytest.mark.parametrize("name", sorted(PARTITIONERS))
@pytest.mark.parametrize("scale", [2.0**j for j in (-1000, -700, -520, -300, -120, 120, 300,
                                                      520, 700, 1000)])
def test_mdav_family_partition_is_scale_free_powers_of_two(engine, name, scale):
    X = _generic()
    f = functools.partial(PARTITIONERS[name], engine=engine)
    assert np.array_equal(f(X * scale, 3), f(X, 3))


@pytest.mark.parametrize("name", sorted(PARTITIONERS))
@pytest.mark.parametrize("e", [-300, -200, -160, -100, 100, 154, 160, 200, 300])
def test_mdav_family_partition_is_scale_free_powers_of_ten(engine, name, e):
    X = _generic(seed=1)
    f = functools.partial(PARTITIONERS[name], engine=engine)
    assert np.array_equal(f(X * 10.0**e, 3), f(X, 3))


@pytest.mark.parametrize("e", [-300, -160, 154, 200, 300])
def test_exact_solvers_are_scale_free(e):
    X = _generic(n=8, p=2, seed=2)
    assert np.array_equal(ma.optimal_partition(X * 10.0**e, 3), ma.optimal_partition(X, 3))
    x = _generic(n=40, p=1, seed=3)[:, 0]
    assert np.array_equal(ma.optimal_univariate(x * 10.0**e, 3), ma.optimal_univariate(x, 3))


def test_optimal_partition_of_1e154_returns_the_optimum_quickly():
    X = np.random.default_rng(0).normal(size=(8, 2))
    t0 = time.perf_counter()
    labels = ma.optimal_partition(X * 1e154, 3)
    assert time.perf_counter() - t0 < CALL_LIMIT
    assert np.array_equal(labels, ma.optimal_partition(X, 3))


def test_univariate_graph_costs_in_the_data_units():
    x = _generic(n=30, p=1, seed=4)[:, 0]
    g, big = ma.univariate_graph(x, 3), ma.univariate_graph(x * 2.0**300, 3)
    assert big.sse == g.sse * 2.0**600
    assert np.array_equal(big.costs, g.costs * 2.0**600)
    with pytest.raises(ValueError, match="float64 range"):
        ma.univariate_graph(x * 1e200, 3)


def test_genetic_search_of_huge_data_is_the_search_of_the_data():
    X = np.random.default_rng(5).uniform(-0.9, 0.9, size=(12, 2))
    X[0, 0] = 0.95  # largest |value| in [0.5, 1): the rescaled copy of 2**700 X is X itself
    a = ma.ga_partition(X, 3, iterations=200, seed=1)
    b = ma.ga_partition(X * 2.0**700, 3, iterations=200, seed=1)
    assert np.array_equal(a.labels, b.labels)
    assert np.isinf(b.sse)  # beyond float64, documented; sse() raises instead
    h = ma.hybrid(X * 1e300, 3, K=6, iterations=50, seed=0, return_details=True)
    assert ma.is_k_partition(h.labels, 3)


def test_microaggregate_and_gomm_of_huge_tables():
    X = _generic(n=40, p=3, seed=6)
    df = pd.DataFrame(X, columns=list("abc"))
    big = df * 2.0**900
    for standardize in (True, False):
        out, info = ma.microaggregate(big, 3, standardize=standardize, return_info=True)
        ref, rinfo = ma.microaggregate(df, 3, standardize=standardize, return_info=True)
        assert np.array_equal(info.labels, rinfo.labels)
        assert np.isfinite(out.to_numpy()).all()
        assert info.information_loss == pytest.approx(rinfo.information_loss, rel=1e-12)
    kw = dict(population=6, generations=2, crossovers=2, mutations_per_operator=1, seed=0,
              progress=False, shared_cache=False)
    assert ma.gomm(X * 1e300, 3, **kw).groups == ma.gomm(X, 3, **kw).groups


# -- the measures --------------------------------------------------------------------------------

def test_standardize_rescales_instead_of_returning_zeros():
    X = _generic(seed=7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for c in (1e300, 1e-300, 2.0**1000):
            Z = ma.standardize(X * c)
            np.testing.assert_allclose(Z, ma.standardize(X), rtol=1e-12, atol=1e-12)
    mixed = np.c_[X[:, 0] * 1e300, X[:, 1] * 1e-300, X[:, 2]]
    np.testing.assert_allclose(ma.standardize(mixed), ma.standardize(X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("e", [-300, -200, -100, 0, 100, 154, 200, 300])
def test_information_loss_is_finite_and_scale_free(e):
    X = _generic(seed=8)
    lab = ma.mdav(X, 3)
    assert ma.information_loss(X * 10.0**e, lab) == pytest.approx(
        ma.information_loss(X, lab), rel=1e-12)


def test_sse_and_sst_beyond_float64_raise_instead_of_inf():
    X = _generic(seed=9)
    lab = ma.mdav(X, 3)
    for f in (lambda A: ma.sse(A, lab), ma.sst):
        with pytest.raises(ValueError, match="beyond the range of float64"):
            f(X * 1e200)
        assert f(X * 2.0**400) == f(X) * 2.0**800  # exact below the limit
        assert np.isfinite(f(X * 1e-200))


def test_aggregate_near_the_largest_float():
    X = _generic(seed=10)
    lab = ma.mdav(X, 3)
    big = X / np.abs(X).max() * 1.5e308
    out = ma.aggregate(big, lab)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out / 1.5e308 * np.abs(X).max(), ma.aggregate(X, lab),
                               rtol=1e-12, atol=1e-300)


# -- property test: every public algorithm, random magnitudes, ties, duplicates -----------------

UNCLEAR = ("argmax of an empty sequence", "shape mismatch", "could not be broadcast",
           "larger sample than population", "unhashable", "unexpected keyword",
           "out of bounds", "division by zero", "SeedSequence expects", "not supported between",
           "object of type", "NoneType", "nan", "inf ")


def _assert_clear(err: BaseException) -> None:
    assert isinstance(err, ValueError | TypeError), f"{type(err).__name__}: {err}"
    assert type(err).__module__ in ("builtins", "microagg._datafiles"), (
        f"an internal error leaked: {type(err).__module__}.{type(err).__name__}: {err}")
    msg = str(err)
    assert msg and not any(u in msg for u in UNCLEAR), f"unclear message: {msg}"


@st.composite
def tables(draw, max_n: int = 14, max_p: int = 3):
    """Small integer grids (many ties), duplicate rows, times 10**e for e in -300..300."""
    n = draw(st.integers(2, max_n))
    p = draw(st.integers(1, max_p))
    grid = draw(st.integers(1, 6))
    base = np.array(draw(st.lists(st.integers(-grid, grid), min_size=n * p, max_size=n * p)),
                    dtype=float).reshape(n, p)
    if draw(st.booleans()):  # duplicate some rows
        picks = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n))
        base[: len(picks)] = base[picks]
    if draw(st.booleans()):  # or generic values
        base = base + np.random.default_rng(draw(st.integers(0, 2**32 - 1))).normal(size=(n, p))
    e = draw(st.integers(-300, 300))
    k = draw(st.integers(1, n))
    return base * 10.0**e, k


def _labels_of(result):
    return getattr(result, "labels", result)


ALGORITHMS = {
    **{name: METHODS[name].function for name in MDAV_FAMILY},
    "optimal_partition": lambda X, k: ma.optimal_partition(X[:10], min(k, len(X[:10]))),
    "optimal_univariate": lambda X, k: ma.optimal_univariate(X[:, 0], k),
    "ga_partition": lambda X, k: ma.ga_partition(X, k, iterations=20, seed=0),
    "hybrid": lambda X, k: ma.hybrid(X, k, iterations=10, seed=0),
    "hybrid one-step": lambda X, k: ma.hybrid(X, k, partitioning="one-step", iterations=10,
                                              seed=0),
    "microaggregate": lambda X, k: ma.microaggregate(
        pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])]), k,
        return_info=True)[1].labels,
    "microaggregate raw": lambda X, k: ma.microaggregate(
        pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])]), k, standardize=False,
        return_info=True)[1].labels,
}


def _k_of(name: str, X: np.ndarray, k: int) -> int:
    return min(k, 10) if name == "optimal_partition" else k


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=tables())
def test_every_algorithm_returns_a_k_partition_or_a_clear_error(name, case):
    X, k = case
    t0 = time.perf_counter()
    try:
        labels = np.asarray(_labels_of(ALGORITHMS[name](X, k)))
    except (ValueError, TypeError) as err:
        _assert_clear(err)
        return
    finally:
        assert time.perf_counter() - t0 < CALL_LIMIT, f"{name} took too long"
    n = 10 if name == "optimal_partition" else len(X)
    assert labels.shape == (min(n, len(X)),) and labels.dtype.kind == "i"
    assert ma.is_k_partition(labels, _k_of(name, X, k))


@pytest.mark.parametrize("name", sorted(PARTITIONERS))
@settings(max_examples=20, deadline=None)
@given(case=tables(), j=st.integers(-900, 900))
def test_mdav_family_is_exactly_scale_free_on_tied_data(name, case, j):
    X, k = case
    X = X / 10.0 ** np.floor(np.log10(np.abs(X).max() or 1.0))  # back to ordinary values
    X = np.round(X * 8) / 8  # exactly representable after any power-of-two scaling
    f = PARTITIONERS[name]
    assert np.array_equal(f(X * 2.0**j, k), f(X, k))


MEASURES = {
    "standardize": lambda X, lab: ma.standardize(X),
    "sse": lambda X, lab: ma.sse(X, lab),
    "sst": lambda X, lab: ma.sst(X),
    "information_loss": lambda X, lab: ma.information_loss(X, lab),
    "aggregate": lambda X, lab: ma.aggregate(X, lab),
    "distance_linkage_disclosure": lambda X, lab: ma.distance_linkage_disclosure(
        X, ma.aggregate(X, lab)),
    "interval_disclosure raw": lambda X, lab: ma.interval_disclosure(
        X, ma.aggregate(X, lab), standardize=False),
    "score": lambda X, lab: ma.score(X, ma.aggregate(X, lab)),
    "multivariate": lambda X, lab: ma.multivariate(X, [list(range(X.shape[1]))], 2),
}


@pytest.mark.parametrize("name", sorted(MEASURES))
@settings(max_examples=25, deadline=None)
@given(case=tables())
def test_every_measure_is_finite_or_a_clear_error(name, case):
    X, k = case
    lab = np.arange(len(X)) // 2
    try:
        value = np.asarray(MEASURES[name](X, lab), dtype=float)
    except (ValueError, TypeError) as err:
        _assert_clear(err)
        return
    assert np.isfinite(value).all(), f"{name} returned a non-finite value"


@settings(max_examples=8, deadline=None)
@given(case=tables(max_n=12, max_p=3))
def test_gomm_on_small_settings(case):
    X, k = case
    t0 = time.perf_counter()
    try:
        res = ma.gomm(X, k, population=4, generations=2, crossovers=1,
                      mutations_per_operator=1, seed=0, progress=False, shared_cache=False)
    except (ValueError, TypeError) as err:
        _assert_clear(err)
        return
    assert time.perf_counter() - t0 < CALL_LIMIT
    assert sorted(a for g in res.groups for a in g) == list(range(X.shape[1]))
    assert np.isfinite([res.il, res.id, res.dld, res.score]).all()
