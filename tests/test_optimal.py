"""Tests of microagg.optimal against a slow, independent brute-force oracle.

The oracle enumerates every partition of the records into groups of at least
``k`` (it does NOT use the "groups of at most 2k-1" fact that the fast solvers
rely on, so agreement also checks that fact on the examples).
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from fractions import Fraction

import numpy as np
import pytest
from helpers import random_k_partition
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import microagg as ma
from microagg import _optimal as optimal
from microagg import _univariate as kernels
from microagg._jit import HAVE_NUMBA
from microagg._optimal import MAX_N_PARTITION, optimal_partition, optimal_univariate

TOL = dict(rel=1e-9, abs=1e-9)


# --------------------------------------------------------------------------------------
# the oracle
# --------------------------------------------------------------------------------------

def _group_sse(X: np.ndarray, members: tuple[int, ...]) -> float:
    G = X[list(members)]
    return float(((G - G.mean(axis=0)) ** 2).sum())


def brute_force_partition(X: np.ndarray, k: int) -> tuple[float, np.ndarray]:
    """Minimum SSE over ALL partitions into groups of >= k records (exponential!).

    Recursion: the lowest remaining record joins some group of >= k remaining
    records (any size), provided what is left is empty or holds >= k records.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X.reshape(-1, 1)
    n = X.shape[0]
    best = [np.inf, None]
    cache: dict[tuple[int, ...], float] = {}

    def cost(g: tuple[int, ...]) -> float:
        if g not in cache:
            cache[g] = _group_sse(X, g)
        return cache[g]

    def rec(remaining: tuple[int, ...], acc: float, groups: list[tuple[int, ...]]) -> None:
        if not remaining:
            if acc < best[0]:
                best[0], best[1] = acc, list(groups)
            return
        first, rest = remaining[0], remaining[1:]
        for size in range(k, len(remaining) + 1):
            if 0 < len(remaining) - size < k:
                continue
            for others in itertools.combinations(rest, size - 1):
                g = (first, *others)
                left = tuple(r for r in rest if r not in others)
                rec(left, acc + cost(g), [*groups, g])

    rec(tuple(range(n)), 0.0, [])
    labels = np.empty(n, dtype=np.int64)
    for gi, g in enumerate(best[1]):
        labels[list(g)] = gi
    return float(best[0]), labels




def test_oracle_on_a_hand_example():
    # 1, 2, 3 | 10, 11, 12, 13 is clearly best for k = 3: SSE = 2 + 5 = 7
    value, labels = brute_force_partition(np.array([1.0, 2, 3, 10, 11, 12, 13]), 3)
    assert value == pytest.approx(7.0)
    assert ma.relabel(labels).tolist() == [0, 0, 0, 1, 1, 1, 1]


# --------------------------------------------------------------------------------------
# optimal_univariate
# --------------------------------------------------------------------------------------

def test_univariate_docstring_example():
    assert optimal_univariate([1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0], 3).tolist() == [
        0, 0, 0, 1, 1, 1, 1]


def test_univariate_hand_solved():
    # k = 2: pairs of nearby values; 20 must join its neighbour 9... or 8, 9
    x = [3, 1, 2, 8, 9, 7, 20]
    labels = optimal_univariate(x, 2)
    # sorted 1 2 3 | 7 8 | 9 20 costs 2 + 0.5 + 60.5 = 63; 1 2 | 3 7 | ... is worse
    assert ma.sse(np.reshape(x, (-1, 1)), labels) == pytest.approx(63.0)
    assert labels.tolist() == [0, 0, 0, 1, 2, 1, 2]


def test_univariate_labels_in_input_order_and_numbered_by_value():
    x = np.array([50.0, 1.0, 49.0, 2.0, 51.0, 3.0])
    labels = optimal_univariate(x, 3)
    assert labels.tolist() == [1, 0, 1, 0, 1, 0]


def test_univariate_accepts_column_series_and_list():
    import pandas as pd

    x = np.array([5.0, 1.0, 2.0, 6.0, 7.0, 1.5])
    expected = optimal_univariate(x, 2)
    assert optimal_univariate(x.reshape(-1, 1), 2).tolist() == expected.tolist()
    assert optimal_univariate(pd.Series(x), 2).tolist() == expected.tolist()
    assert optimal_univariate(pd.DataFrame({"v": x}), 2).tolist() == expected.tolist()
    assert optimal_univariate(x.tolist(), 2).tolist() == expected.tolist()
    assert optimal_univariate(x.astype(int), 2).dtype == np.int64


def test_univariate_k1_and_k_equal_n():
    x = np.array([4.0, 2.0, 9.0])
    assert ma.group_sizes(optimal_univariate(x, 1)).tolist() == [1, 1, 1]
    assert optimal_univariate(x, 3).tolist() == [0, 0, 0]


def test_univariate_tie_rule_shortest_last_group():
    # all values equal: every partition costs 0; the documented tie rule takes
    # the shortest last group at each node, i.e. as many groups of k as possible
    labels = optimal_univariate(np.zeros(7), 2)
    # (node 3 cannot be reached by a last group of 2 from the unreachable node 1)
    assert ma.group_sizes(labels).tolist() == [3, 2, 2]
    # stable: equal values keep input order, so labels are non-decreasing here
    assert np.all(np.diff(labels) >= 0)


def test_univariate_groups_are_runs_of_sorted_values_of_size_k_to_2k_minus_1():
    rng = np.random.default_rng(3)
    x = rng.normal(size=500)
    for k in (2, 3, 5, 10):
        labels = optimal_univariate(x, k)
        sizes = ma.group_sizes(labels)
        assert sizes.min() >= k and sizes.max() <= 2 * k - 1
        assert np.all(np.diff(labels[np.argsort(x)]) >= 0)  # runs in sorted order


def test_univariate_graph_matches_solver():
    x = [3, 1, 2, 8, 9, 7, 20]
    g = optimal.univariate_graph(x, 2)
    assert g.path[0] == 0 and g.path[-1] == 7
    assert np.all((np.diff(g.arcs, axis=1) >= 2) & (np.diff(g.arcs, axis=1) <= 3))
    assert len(g.arcs) == len(g.costs) == 11
    assert g.sse == pytest.approx(63.0)
    np.testing.assert_array_equal(g.values, np.sort(x))
    # each arc's cost is the SSE of its run of sorted values
    for (i, j), c in zip(g.arcs, g.costs, strict=True):
        assert c == pytest.approx(float(np.var(g.values[i:j]) * (j - i)), abs=1e-12)


def test_univariate_large_n_is_fast_and_accurate_with_big_offsets():
    rng = np.random.default_rng(0)
    x = 1e9 + rng.normal(size=20_000)  # centring keeps the prefix sums accurate
    t = time.perf_counter()
    labels = optimal_univariate(x, 3)
    assert time.perf_counter() - t < 10
    assert ma.is_k_partition(labels, 3, max_size=5)


@settings(max_examples=40, deadline=None)
@given(
    x=arrays(np.float64, st.integers(1, 9),
             elements=st.floats(-100, 100, allow_nan=False, allow_infinity=False)),
    k=st.integers(1, 4),
)
def test_univariate_equals_brute_force(x, k):
    k = min(k, x.size)
    if k == 1:
        x = x[:7]  # all partitions of 9 records: Bell(9) = 21147, too slow for the oracle
    value, _ = brute_force_partition(x, k)
    labels = optimal_univariate(x, k)
    assert ma.is_k_partition(labels, k)
    assert ma.sse(x.reshape(-1, 1), labels) == pytest.approx(value, **TOL)


@settings(max_examples=40, deadline=None)
@given(
    x=arrays(np.float64, st.integers(2, 12),
             elements=st.integers(-20, 20).map(float)),
    k=st.integers(1, 4),
)
def test_univariate_equals_optimal_partition_on_1d(x, k):
    k = min(k, x.size)
    a = ma.sse(x.reshape(-1, 1), optimal_univariate(x, k))
    b = ma.sse(x.reshape(-1, 1), optimal_partition(x.reshape(-1, 1), k))
    assert a == pytest.approx(b, **TOL)


# --------------------------------------------------------------------------------------
# optimal_univariate: exactness against rational arithmetic, both passes, tie rule
# --------------------------------------------------------------------------------------

ALGORITHMS = ("shortest-path", "linear")


def exact_univariate_optimum(x: np.ndarray, k: int) -> Fraction:
    """Least SSE of a k-partition of ``x`` in exact rational arithmetic (an O(nk) DP).

    Independent of the package: Python ``fractions`` on the exact values of the floats,
    whole-array prefix sums (exact here), groups of k .. 2k-1 consecutive sorted values.
    """
    z = [Fraction(float(v)) for v in np.sort(np.asarray(x, dtype=float))]
    n = len(z)
    s1, s2 = [Fraction(0)], [Fraction(0)]
    for v in z:
        s1.append(s1[-1] + v)
        s2.append(s2[-1] + v * v)
    best: list[Fraction | None] = [Fraction(0)] + [None] * n
    for j in range(k, n + 1):
        for d in range(k, min(2 * k - 1, j) + 1):
            i = j - d
            if best[i] is None:
                continue
            a = s1[j] - s1[i]
            cand = best[i] + (s2[j] - s2[i]) - a * a / d
            if best[j] is None or cand < best[j]:
                best[j] = cand
    assert best[n] is not None
    return best[n]


def exact_sse(x: np.ndarray, labels: np.ndarray) -> Fraction:
    """SSE of a partition in exact rational arithmetic."""
    total = Fraction(0)
    for g in np.unique(labels):
        vals = [Fraction(float(v)) for v in np.asarray(x, dtype=float)[labels == g]]
        mean = sum(vals, Fraction(0)) / len(vals)
        total += sum(((v - mean) ** 2 for v in vals), Fraction(0))
    return total


def _adversarial(name: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(21)
    if name == "evenly spaced":
        return np.arange(float(n))
    if name == "evenly spaced + 1e15":
        return 1e15 + np.arange(float(n))
    if name == "1e9 + steps of 1e-3":
        return 1e9 + 1e-3 * rng.permutation(n)
    if name == "1e-9 scale":
        return 1e-9 * rng.normal(size=n)
    if name == "heavy ties":
        return rng.integers(0, 7, size=n).astype(float)
    if name == "duplicates":
        return np.repeat(rng.normal(size=n // 3 + 1), 3)[:n]
    if name == "mixed magnitudes":
        parts = [1e-6 * rng.normal(size=n), rng.normal(size=n), 1e6 + rng.normal(size=n),
                 1e9 + 1e-3 * rng.normal(size=n), -1e12 * rng.random(n)]
        return rng.permutation(np.concatenate(parts))[:n]
    raise AssertionError(name)


ADVERSARIAL = ["evenly spaced", "evenly spaced + 1e15", "1e9 + steps of 1e-3", "1e-9 scale",
               "heavy ties", "duplicates", "mixed magnitudes"]


@pytest.mark.parametrize("name", ADVERSARIAL)
@pytest.mark.parametrize("n, k", [(3000, 2), (3000, 3), (1200, 7), (600, 20)])
def test_univariate_within_1e9_of_exact_rational_optimum(name, n, k):
    x = _adversarial(name, n)
    exact = exact_univariate_optimum(x, k)
    for algorithm in ALGORITHMS:
        labels = optimal_univariate(x, k, algorithm=algorithm)
        assert ma.is_k_partition(labels, k, max_size=2 * k - 1)
        ours = exact_sse(x, labels)
        assert ours >= exact  # the oracle is the optimum
        assert ours - exact <= Fraction(1, 10**9) * exact, (algorithm, float(ours / exact - 1))


@settings(max_examples=60, deadline=None)
@given(
    x=arrays(np.float64, st.integers(1, 40),
             elements=st.one_of(st.floats(-1e3, 1e3), st.floats(1e9, 1e9 + 1),
                                st.floats(-1e-9, 1e-9), st.sampled_from([0.0, 1.0, 2.5]))),
    k=st.integers(1, 6),
)
def test_univariate_equals_rational_dp_on_random_sets(x, k):
    k = min(k, x.size)
    exact = exact_univariate_optimum(x, k)
    for algorithm in ALGORITHMS:
        ours = exact_sse(x, optimal_univariate(x, k, algorithm=algorithm))
        assert exact <= ours <= exact * (1 + Fraction(1, 10**9))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_univariate_million_evenly_spaced_pairs_and_one_triple(algorithm):
    # microagg1d's test case: whole-array prefix sums of 0..1e6 lost 6 % here
    x = np.arange(1_000_001, dtype=float)
    labels = optimal_univariate(x, 2, algorithm=algorithm)
    assert ma.sse(x.reshape(-1, 1), labels) == 250_001.5
    sizes = ma.group_sizes(labels)
    # tie rule: the shortest last group at every node puts the one triple first
    assert sizes[0] == 3 and (sizes[1:] == 2).all()


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_univariate_tie_rule_is_the_shortest_last_group(algorithm):
    # exact arithmetic on small integers: 3 + 3 + 4 in any order costs 9; the rule
    # takes 3 last, then 3 (node 7 from 4, not from 3), leaving 4 first
    assert ma.group_sizes(optimal_univariate(np.arange(10.0), 3, algorithm=algorithm)
                          ).tolist() == [4, 3, 3]
    assert ma.group_sizes(optimal_univariate(np.zeros(7), 2, algorithm=algorithm)
                          ).tolist() == [3, 2, 2]
    # equal values keep their input order (stable sort): labels non-decreasing
    labels = optimal_univariate(np.zeros(50), 4, algorithm=algorithm)
    assert np.all(np.diff(labels) >= 0)


@pytest.mark.parametrize("seed", range(6))
def test_univariate_linear_and_shortest_path_agree_label_for_label(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 40, size=int(rng.integers(50, 700))).astype(float)  # exact sums
    for k in (1, 2, 3, 5, 16, 33):
        if k <= x.size:
            a = optimal_univariate(x, k, algorithm="shortest-path")
            b = optimal_univariate(x, k, algorithm="linear")
            assert a.tolist() == b.tolist()
    y = rng.normal(size=2000)
    for k in (4, 25):
        a = ma.sse(y.reshape(-1, 1), optimal_univariate(y, k, algorithm="shortest-path"))
        b = ma.sse(y.reshape(-1, 1), optimal_univariate(y, k, algorithm="linear"))
        assert a == pytest.approx(b, rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_univariate_smawk_blocks_equal_the_reference_bit_for_bit(seed):
    """Budget 0 sends every block of the linear pass to SMAWK (the scan rarely gives up)."""
    rng = np.random.default_rng(seed)
    for n, k in [(1, 1), (7, 2), (40, 3), (301, 7), (2000, 25), (999, 100), (60, 30)]:
        for z in (np.sort(rng.integers(0, 5, size=n).astype(float)),  # heavy exact ties
                  np.sort(rng.normal(size=n)), np.sort(1e9 + rng.random(n))):
            ref = kernels.shortest_path(z, k)
            for budget in (0, 2 * k, kernels.SCAN_PER_TARGET * k):
                dist, pred = kernels.linear_path(z, k, budget)
                np.testing.assert_array_equal(dist, ref[0])
                np.testing.assert_array_equal(pred, ref[1])


SPECIAL = [0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 2.2250738585072014e-308,
           -2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308,
           1e9, 1e9 + 1e-6, -1e9, 3.0, 3.0, 3.0]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(SPECIAL) | st.floats(allow_nan=False, allow_infinity=False),
                min_size=1, max_size=300))
def test_radix_order_is_the_stable_argsort(values):
    """Signs, zeros of both signs (equal, so input order), subnormals, extremes and ties."""
    x = np.array(values, dtype=np.float64)
    order, sorted_values = kernels.stable_order(x)
    expected = np.argsort(x, kind="stable")
    np.testing.assert_array_equal(order, expected)
    np.testing.assert_array_equal(sorted_values.view(np.uint64), x[expected].view(np.uint64))
    np.testing.assert_array_equal(kernels.radix_order(x), expected)


def test_radix_order_large_with_ties_and_a_constant_high_part():
    rng = np.random.default_rng(3)
    for x in (rng.normal(size=200_000), np.round(rng.normal(size=200_000), 1),
              1e9 + rng.integers(0, 50, size=200_000) * 1e-3, -np.zeros(1000)):
        np.testing.assert_array_equal(kernels.radix_order(x), np.argsort(x, kind="stable"))


def test_univariate_auto_picks_the_pass_by_k():
    assert optimal._algorithm("auto", optimal.LINEAR_FROM_K) == "linear"
    assert optimal._algorithm("auto", optimal.LINEAR_FROM_K - 1) == "shortest-path"
    with pytest.raises(ValueError, match="algorithm must be one of"):
        optimal_univariate([1.0, 2.0], 1, algorithm="wilber")


@pytest.mark.parametrize(
    "x, k, err, match",
    [
        ([], 1, ValueError, "empty"),
        ([1.0, np.nan, 2.0], 1, ValueError, "NaN"),
        ([1.0, np.inf, 2.0], 1, ValueError, "infinite"),
        (["a", "b"], 1, TypeError, "numeric"),
        ([1.0, 2.0], 0, ValueError, "at least 1"),
        ([1.0, 2.0], 3, ValueError, "larger than the number of records"),
        ([1.0, 2.0], 1.0, TypeError, "integer"),
        (np.ones((4, 2)), 2, ValueError, "single attribute"),
        (np.ones((2, 2, 2)), 1, ValueError, "2-D"),
        (3.0, 1, ValueError, "scalar"),
    ],
)
def test_univariate_bad_input(x, k, err, match):
    with pytest.raises(err, match=match):
        optimal_univariate(x, k)


# --------------------------------------------------------------------------------------
# optimal_partition
# --------------------------------------------------------------------------------------

def test_partition_docstring_example():
    X = [[0, 0], [0, 1], [5, 5], [5, 6], [0, 2], [5, 7]]
    assert optimal_partition(X, 3).tolist() == [0, 0, 1, 1, 0, 1]


def test_partition_beats_fixed_size_when_clusters_have_4_and_5():
    # two tight clusters of 5 and 4 records: with k = 3 the optimum keeps them
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(0, 0.1, (5, 2)), rng.normal(10, 0.1, (4, 2))])
    labels = optimal_partition(X, 3)
    assert ma.relabel(labels).tolist() == [0] * 5 + [1] * 4


def test_partition_labels_numbered_by_first_appearance():
    rng = np.random.default_rng(2)
    labels = optimal_partition(rng.normal(size=(11, 3)), 2)
    assert labels.tolist() == ma.relabel(labels).tolist()


@settings(max_examples=30, deadline=None)
@given(
    X=st.integers(1, 9).flatmap(lambda n: st.integers(1, 3).flatmap(
        lambda p: arrays(np.float64, (n, p),
                         elements=st.floats(-50, 50, allow_nan=False, allow_infinity=False)))),
    k=st.integers(1, 4),
)
def test_partition_equals_brute_force(X, k):
    k = min(k, X.shape[0])
    if k == 1:
        X = X[:7]
    value, _ = brute_force_partition(X, k)
    labels = optimal_partition(X, k)
    assert ma.is_k_partition(labels, k, max_size=2 * k - 1)
    assert ma.sse(X, labels) == pytest.approx(value, **TOL)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 14), k=st.integers(1, 5),
       p=st.integers(1, 4))
def test_partition_at_most_any_random_k_partition(seed, n, k, p):
    k = min(k, n)
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    best = ma.sse(X, optimal_partition(X, k))
    for _ in range(20):
        assert best <= ma.sse(X, random_k_partition(n, k, rng)) + 1e-9


def test_partition_time_n15_well_under_a_second():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(15, 2))
    optimal_partition(X[:5], 2)  # warm-up (numba loads or compiles the kernel)
    t = time.perf_counter()
    labels = optimal_partition(X, 3)
    elapsed = time.perf_counter() - t
    assert ma.is_k_partition(labels, 3)
    if HAVE_NUMBA:
        assert elapsed < 1.0


def test_partition_same_answer_without_numba():
    """The jitted kernels (this process) and the pure-Python path (a subprocess) agree."""
    code = (
        "import numpy as np; from microagg import optimal_partition, optimal_univariate;"
        "from microagg import _univariate;"
        "rng = np.random.default_rng(5); X = rng.normal(size=(11, 2));"
        "x = rng.normal(size=300);"
        "print(optimal_partition(X, 3).tolist(), optimal_univariate(x, 4).tolist(),"
        " optimal_univariate(x, 20, algorithm='linear').tolist(),"
        " optimal_univariate(np.round(x), 3, algorithm='linear').tolist(),"
        " _univariate.linear_path(np.sort(x), 7, 0)[1].tolist(),"
        " _univariate.radix_order(np.round(x, 1)).tolist())"
    )
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True, timeout=300)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(11, 2))
    x = rng.normal(size=300)
    here = (f"{optimal_partition(X, 3).tolist()} {optimal_univariate(x, 4).tolist()} "
            f"{optimal_univariate(x, 20, algorithm='linear').tolist()} "
            f"{optimal_univariate(np.round(x), 3, algorithm='linear').tolist()} "
            f"{kernels.linear_path(np.sort(x), 7, 0)[1].tolist()} "
            f"{np.argsort(np.round(x, 1), kind='stable').tolist()}\n")
    assert res.stdout == here


@pytest.mark.parametrize(
    "X, k, err, match",
    [
        (np.zeros((0, 2)), 1, ValueError, "empty"),
        ([[1.0, np.nan], [2.0, 3.0]], 1, ValueError, "NaN"),
        ([["a", "b"], ["c", "d"]], 1, TypeError, "numeric"),
        ([1.0, 2.0, 3.0], 1, ValueError, "2-D"),
        (np.ones((4, 2)), 0, ValueError, "at least 1"),
        (np.ones((4, 2)), 5, ValueError, "larger than"),
        (np.ones((4, 2)), "2", TypeError, "integer"),
        (np.ones((MAX_N_PARTITION + 1, 2)), 3, ValueError, "limited to n <= 16"),
    ],
)
def test_partition_bad_input(X, k, err, match):
    with pytest.raises(err, match=match):
        optimal_partition(X, k)


def test_public_names():
    assert ma.optimal_partition is optimal_partition
    assert ma.optimal_univariate is optimal_univariate
    assert {"optimal_partition", "optimal_univariate"} <= set(ma.__all__)


# --------------------------------------------------------------------------------------
# the foundations chapter's views and plotting helpers (no browser needed)
# --------------------------------------------------------------------------------------

# --------------------------------------------------------------------------------------
# claims made in the foundations chapter (chapters/foundations.md), mirrored here
# --------------------------------------------------------------------------------------

def test_foundations_exercise_graph_by_hand_numbers():
    x = np.array([1, 3, 4, 9, 10, 12], dtype=float)
    labels = optimal_univariate(x, 2)
    assert labels.tolist() == [0, 0, 0, 1, 1, 1]  # 3 + 3 beats 2 + 2 + 2
    assert ma.sse(x[:, None], labels) == pytest.approx(28 / 3)
    assert ma.sse(x[:, None], [0, 0, 1, 1, 2, 2]) == pytest.approx(16.5)
    assert ma.sst(x[:, None]) == pytest.approx(97.5)
    assert ma.information_loss(x[:, None], labels) == pytest.approx(100 * (28 / 3) / 97.5)


@pytest.mark.parametrize("n, k", [(9, 2), (20, 3), (50, 5), (11, 6), (100, 1)])
def test_foundations_number_of_arcs(n, k):
    arcs = optimal.univariate_graph(np.arange(float(n)), k).arcs
    assert len(arcs) == k * (n + 1) - k * (3 * k - 1) // 2


def test_foundations_splitting_never_increases_sse():
    rng = np.random.default_rng(0)
    for _ in range(200):
        G = rng.normal(size=(6, 2))
        halves = rng.permutation([0, 0, 0, 1, 1, 1])
        whole = ma.sse(G, np.zeros(6, dtype=int))
        parts = ma.sse(G, halves)
        assert parts <= whole + 1e-12
        assert whole - parts == pytest.approx(ma.sst(ma.aggregate(G, halves)))


@pytest.mark.data
def test_foundations_individual_ranking_leaves_rows_unique_mdav_does_not():
    Z = ma.standardize(ma.datasets.load("census"))
    ir = np.column_stack([ma.aggregate(Z[[c]], optimal_univariate(Z[c], 3)) for c in Z.columns])
    ir_il = 100 * float(((Z.to_numpy() - ir) ** 2).sum()) / ma.sst(Z)
    _, counts = np.unique(ir, axis=0, return_counts=True)
    assert (counts == 1).sum() == len(Z)
    labels = ma.mdav(Z.to_numpy(), 3)
    _, mcounts = np.unique(ma.aggregate(Z.to_numpy(), labels), axis=0, return_counts=True)
    assert mcounts.min() >= 3
    assert ir_il < ma.information_loss(Z, labels)
