"""Behaviour of the MDAV family: partitions, properties, oracles and bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import microagg as ma
from microagg import datasets
from microagg._mdav.dispatch import ENGINES
from microagg._methods import MDAV_FAMILY, METHODS

FAST = {name: METHODS[name].function for name in MDAV_FAMILY}
ORACLE = {name: METHODS[name].oracle for name in MDAV_FAMILY}
PARAMS = {name: {"gamma": 1.1} if name == "vmdav" else {} for name in MDAV_FAMILY}


@st.composite
def data_and_k(draw, max_n=40, integers=True):
    """Small data sets with many ties and duplicate rows (small integer values)."""
    n = draw(st.integers(1, max_n))
    p = draw(st.integers(1, 4))
    if integers:
        elements = st.integers(-3, 3).map(float)
    else:
        elements = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=64)
    X = draw(arrays(np.float64, (n, p), elements=elements))
    k = draw(st.integers(1, min(n, 6)))
    return X, k


COMMON = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", FAST)
@COMMON
@given(case=data_and_k())
def test_every_record_labelled_once_and_groups_at_least_k(name, case):
    X, k = case
    labels = FAST[name](X, k, **PARAMS[name])
    assert labels.shape == (X.shape[0],)
    assert labels.dtype == np.int64
    assert (labels >= 0).all()
    assert ma.is_k_partition(labels, k)
    # determinism
    assert np.array_equal(labels, FAST[name](X, k, **PARAMS[name]))


@COMMON
@given(case=data_and_k())
def test_mdav_sizes_are_k_except_one_group(case):
    X, k = case
    sizes = ma.group_sizes(ma.mdav(X, k))
    assert (sizes == k).sum() >= sizes.size - 1
    assert sizes.max() <= 2 * k - 1 or sizes.size == 1 and X.shape[0] < 2 * k


@COMMON
@given(case=data_and_k())
def test_mdav_single_sizes_are_k_except_one_group(case):
    X, k = case
    sizes = ma.group_sizes(ma.mdav_single(X, k))
    assert (sizes == k).sum() >= sizes.size - 1
    assert sizes.max() <= 2 * k - 1


@COMMON
@given(case=data_and_k(), gamma=st.floats(0, 3))
def test_ivmdav_groups_at_most_2k_minus_1(case, gamma):
    X, k = case
    labels = ma.ivmdav(X, k, gamma=gamma)
    assert ma.is_k_partition(labels, k, max_size=2 * k - 1)


@COMMON
@given(case=data_and_k(), gamma=st.floats(0, 3))
def test_vmdav_only_leftovers_exceed_2k_minus_1(case, gamma):
    X, k = case
    labels = ma.vmdav(X, k, gamma=gamma)
    sizes = ma.group_sizes(labels)
    assert sizes.min() >= k
    # the main loop builds groups of k..2k-1; fewer than k leftovers are then spread
    leftovers = int(np.sum(np.maximum(sizes - (2 * k - 1), 0)))
    assert leftovers <= k - 1


@pytest.mark.parametrize("name", FAST)
@COMMON
@given(case=data_and_k())
def test_fast_equals_reference_on_tied_integer_data(name, case):
    """Exact arithmetic on small integers: identical labels, tie rules included."""
    X, k = case
    assert np.array_equal(FAST[name](X, k, **PARAMS[name]), ORACLE[name](X, k, **PARAMS[name]))


@pytest.mark.parametrize("name", FAST)
def test_fast_equals_reference_on_continuous_data(name):
    rng = np.random.default_rng(7)
    for _ in range(30):
        n = int(rng.integers(2, 120))
        X = rng.normal(size=(n, int(rng.integers(1, 6))))
        k = int(rng.integers(2, min(n, 7) + 1))
        a = FAST[name](X, k, **PARAMS[name])
        b = ORACLE[name](X, k, **PARAMS[name])
        assert np.array_equal(ma.relabel(a), ma.relabel(b))


# -- the engines: compiled loops (numba), vectorised numpy; the indexed one: test_mdav_indexed --

from types import SimpleNamespace  # noqa: E402

from helpers import engine_labels  # noqa: E402

from microagg._mdav import columns as _COLUMNS  # noqa: E402
from microagg._mdav import loops as _LOOPS  # noqa: E402
from microagg._mdav import vector as _VECTOR  # noqa: E402


def _numpy_engine(name, X, k, **params):
    """Run ``name`` on the vectorised numpy engine, whatever is installed."""
    return engine_labels(_VECTOR, name, X, k, **params)


def _uncompiled(f):
    return getattr(f, "py_func", f)


#: the loops with their drivers run as plain Python (as without numba)
_PY_LOOPS = SimpleNamespace(
    mdav=lambda X, k, t: _uncompiled(_COLUMNS.mdav_columns)(X.T.copy(), k, t),
    mdav_single=lambda X, k, t: _uncompiled(_LOOPS.mdav_rounds)(X, k, t, False),
    vmdav=_uncompiled(_LOOPS.vmdav_rounds), ivmdav=_uncompiled(_LOOPS.ivmdav_rounds))


def _loops_engine(name, X, k, python=False, **params):
    """Run ``name`` on the loops; ``python=True`` runs them uncompiled (as without numba)."""
    return engine_labels(_PY_LOOPS if python else _LOOPS, name, X, k, **params)


def _awkward_data(rng, n, p):
    """Gaussian data, or the same with duplicated rows, or coarse values with many ties."""
    X = rng.normal(size=(n, p))
    kind = rng.integers(3)
    if kind == 1:
        X = X[rng.integers(0, n, size=n)]
    elif kind == 2:
        X = np.round(X * 2) / 2 + 0.1  # many different records at equal distances
    return X


@pytest.mark.parametrize("name", FAST)
def test_compiled_loops_and_numpy_engine_agree(name):
    """Both engines do the same arithmetic, so even ties and duplicates come out the same."""
    rng = np.random.default_rng(11)
    for trial in range(40):
        n = int(rng.integers(2, 400))
        X = _awkward_data(rng, n, int(rng.integers(1, 8)))
        k = int(rng.integers(1, min(n, 9) + 1))
        params = dict(PARAMS[name])
        if name == "ivmdav" and trial % 4 == 0:
            params.update(candidates=3 * k, self_neighbour=False)
        a = _loops_engine(name, X, k, **params)
        b = _numpy_engine(name, X, k, **params)
        assert np.array_equal(a, b), (trial, n, k)
        assert np.array_equal(FAST[name](X, k, **params), a)


@pytest.mark.parametrize("name", FAST)
def test_loops_run_uncompiled_with_the_same_answers(name):
    """Without numba the loops are plain Python (Pyodide): same labels as compiled."""
    rng = np.random.default_rng(12)
    for _ in range(4):
        n = int(rng.integers(5, 60))
        X = _awkward_data(rng, n, 3)
        k = int(rng.integers(1, 5))
        assert np.array_equal(_loops_engine(name, X, k, python=True, **PARAMS[name]),
                              _loops_engine(name, X, k, **PARAMS[name]))


def test_column_kernel_decides_as_the_readable_rounds():
    """``mdav_columns`` (what the loops engine runs for MDAV) claims the decisions of the
    readable ``loops.mdav_rounds`` with two groups a round, a branch no engine runs: the same
    labels on awkward data (ties, duplicates), compiled and as plain Python."""
    rng = np.random.default_rng(14)
    for trial in range(40):
        n = int(rng.integers(2, 300))
        X = _awkward_data(rng, n, int(rng.integers(1, 8)))
        k = int(rng.integers(1, min(n, 9) + 1))
        want = _LOOPS.mdav_rounds(X, k, X.sum(axis=0), True)
        assert np.array_equal(_COLUMNS.mdav_columns(X.T.copy(), k, X.sum(axis=0)), want), trial
        if trial < 4:
            plain = _uncompiled(_LOOPS.mdav_rounds)(X, k, X.sum(axis=0), True)
            assert np.array_equal(plain, want), trial


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2 * _COLUMNS.INSERTION_SORT_MAX), st.integers(0, 2**32 - 1))
def test_group_positions_are_sorted_compiled_and_plain(size, seed):
    """MDAV's loops sort a group's positions (distinct) by insertion up to
    INSERTION_SORT_MAX of them and with ndarray.sort beyond: ascending either way."""
    a = np.random.default_rng(seed).permutation(4 * size + 1)[:size].astype(np.int64)
    for sort in (_COLUMNS._sort_positions, _uncompiled(_COLUMNS._sort_positions)):
        b = a.copy()
        sort(b)
        assert np.array_equal(b, np.sort(a))


def test_mdav_loops_agree_with_numpy_for_groups_past_the_insertion_sort():
    """Groups of more than INSERTION_SORT_MAX records (the other sort) leave the running
    total in the same order as the numpy engine."""
    rng = np.random.default_rng(13)
    big = _COLUMNS.INSERTION_SORT_MAX + 1
    for k in (big - 1, big, big + 7):
        for _ in range(3):
            X = _awkward_data(rng, int(rng.integers(3 * k, 8 * k)), int(rng.integers(1, 5)))
            assert np.array_equal(_loops_engine("mdav", X, k), _numpy_engine("mdav", X, k))
            assert np.array_equal(_loops_engine("mdav", X, k, python=True),
                                  _numpy_engine("mdav", X, k))


@pytest.mark.data
@pytest.mark.parametrize("name", FAST)
def test_engines_agree_on_the_paper_data(name):

    gamma = {"vmdav": {"census": 0.2, "eia": 1.1}, "ivmdav": {"census": 1.16, "eia": 1.16}}
    for data in ("census", "eia"):
        Z = datasets.standardized(data)
        for k in (3, 5):
            params = {"gamma": gamma[name][data]} if name in gamma else {}
            assert np.array_equal(_loops_engine(name, Z, k, **params),
                                  _numpy_engine(name, Z, k, **params)), (data, k)


@pytest.mark.data
def test_engines_agree_on_gomm_attribute_groups():
    """GOMM microaggregates thousands of column subsets of standardised data with MDAV."""
    from microagg.reproductions import gomm_data
    rng = np.random.default_rng(0)
    for data in ("census", "water-treatment"):
        Z = np.asarray(ma.standardize(gomm_data(data).to_numpy()))
        for k in (5, 25, 100):
            for _ in range(3):
                cols = np.sort(rng.choice(Z.shape[1], size=int(rng.integers(1, Z.shape[1])),
                                          replace=False))
                A = np.ascontiguousarray(Z[:, cols])
                assert np.array_equal(_loops_engine("mdav", A, k), _numpy_engine("mdav", A, k))


@pytest.mark.parametrize("name", FAST)
@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 30), data=st.data())
def test_fewer_than_2k_records_form_one_group(name, n, data):
    k = data.draw(st.integers(max(1, n // 2 + 1), n))  # n in [k, 2k)
    X = np.random.default_rng(n).normal(size=(n, 2))
    assert np.unique(FAST[name](X, k, **PARAMS[name])).size == 1


@COMMON
@given(case=data_and_k())
def test_aggregate_is_k_anonymous_and_keeps_means(case):
    X, k = case
    labels = ma.mdav(X, k)
    released = ma.aggregate(X, labels)
    _, counts = np.unique(released, axis=0, return_counts=True)
    assert counts.min() >= k
    np.testing.assert_allclose(released.mean(axis=0), X.mean(axis=0), atol=1e-9)


def test_mdav_hand_example():
    # three tight clusters of three on a line; k = 3 recovers them
    X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2], [9.0], [9.1], [9.3]])
    assert ma.relabel(ma.mdav(X, 3)).tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    # the centroid is 4.77: the record farthest from it (0.0) starts group 0,
    # and the record farthest from 0.0 (9.3) starts group 1
    labels = ma.mdav(X, 3)
    assert labels[0] == 0 and labels[8] == 1


def test_vmdav_gamma_zero_never_extends():
    X = np.random.default_rng(3).normal(size=(50, 2))
    sizes = ma.group_sizes(ma.vmdav(X, 3, gamma=0.0))
    # groups of exactly k, plus at most k-1 leftovers spread over groups
    assert sizes.sum() == 50 and (sizes >= 3).all() and (sizes - 3).sum() <= 2


@pytest.mark.parametrize("engine", ["reference", *ENGINES])
def test_vmdav_last_free_record_joins_for_any_positive_gamma_only(engine):
    """The last free record has no d_out (taken as infinite): it joins the group for any
    gamma > 0, however far it is, while gamma = 0 turns the extension off (0 * inf read as
    0) and it goes with the leftovers, to its closest group (the docstring's Notes)."""
    from microagg.reference import vmdav_reference

    x = np.array([9.0, 10, 15, 19, 0, 2, 16])[:, None]
    run = (vmdav_reference if engine == "reference"
           else lambda *a, **o: ma.vmdav(*a, engine=engine, **o))
    # the first group is {0, 2, 9}; 10 is then 5 from {15, 16, 19}'s centroid-seeded group
    assert run(x, 3, gamma=1e-9).tolist() == [0, 1, 1, 1, 0, 0, 1]   # 10 joins {15, 16, 19}
    assert run(x, 3, gamma=0.0).tolist() == [0, 0, 1, 1, 0, 0, 1]    # 10 joins {0, 2, 9}


def test_vmdav_extends_on_the_example_clusters():
    X = ma.datasets.vmdav_example()
    labels = ma.vmdav(X, 3, gamma=1.1)
    assert ma.sse(X, labels) < ma.sse(X, ma.mdav(X, 3))


def test_ivmdav_without_extension_is_mdav_single():
    X = np.random.default_rng(5).normal(size=(200, 3))
    # gamma so large that d2 > gamma d1 never holds (d1 > 0 off duplicates)
    assert np.array_equal(ma.ivmdav(X, 4, gamma=1e12), ma.mdav_single(X, 4))


def test_ivmdav_more_candidates_is_a_valid_partition():
    X = np.random.default_rng(6).normal(size=(300, 3))
    labels = ma.ivmdav(X, 3, candidates=9)
    assert ma.is_k_partition(labels, 3, max_size=5)
    # more candidates than records: all remaining records are candidates, nothing breaks
    assert np.array_equal(ma.ivmdav(X[:40], 3, candidates=10**12),
                          ma.ivmdav(X[:40], 3, candidates=40))


def test_no_quadratic_memory():
    """A 20,000 x 2 input must not allocate an n x n matrix (3.2 GB)."""
    import tracemalloc

    X = np.random.default_rng(0).normal(size=(20_000, 2))
    for f in (ma.mdav, ma.vmdav, ma.ivmdav):  # a first call loads numba's typing machinery
        f(X[2000:4000], 5)                   # (about 26 MB, whatever n): not measured here
    tracemalloc.start()
    ma.mdav(X[:2000], 5)
    ma.vmdav(X[:2000], 5)
    ma.ivmdav(X[:2000], 5)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 100 * 2000 * 8 * 2  # far below 2000^2 * 8 bytes = 32 MB


# -- bad input -------------------------------------------------------------------------

@pytest.mark.parametrize("name", FAST)
def test_bad_input_raises_clear_errors(name):
    f = FAST[name]
    good = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match="NaN"):
        f(np.where(np.eye(10, 2) == 1, np.nan, good), 3)
    with pytest.raises(ValueError, match="NaN or infinite"):
        f(np.where(np.eye(10, 2) == 1, np.inf, good), 3)
    with pytest.raises(ValueError, match="at least 1"):
        f(good, 0)
    with pytest.raises(ValueError, match="larger than the number of records"):
        f(good, 11)
    with pytest.raises(ValueError, match="2-D"):
        f(good[:, 0], 3)
    with pytest.raises(ValueError, match="empty"):
        f(np.zeros((0, 2)), 1)
    with pytest.raises(TypeError, match="numeric"):
        f(np.array([["a", "b"], ["c", "d"]]), 1)
    with pytest.raises(TypeError, match="non-numeric"):
        f(pd.DataFrame({"x": [1.0, 2.0], "y": ["a", "b"]}), 1)
    with pytest.raises(TypeError, match="integer"):
        f(good, 2.5)


def test_gamma_must_be_non_negative():
    X = np.zeros((6, 1)) + np.arange(6)[:, None]
    with pytest.raises(ValueError, match="gamma"):
        ma.vmdav(X, 2, gamma=-1)
    with pytest.raises(ValueError, match="gamma"):
        ma.ivmdav(X, 2, gamma=np.nan)
    with pytest.raises(ValueError, match="leftover"):
        ma.vmdav(X, 2, leftover="nearest")


# -- microaggregate() --------------------------------------------------------------------

def test_microaggregate_keeps_table_shape_and_other_columns():
    rng = np.random.default_rng(1)
    df = pd.DataFrame(
        {
            "income": rng.lognormal(10, 1, 50),
            "town": list("ab" * 25),
            "age": rng.integers(18, 90, 50),
        },
        index=pd.Index(range(100, 150), name="id"),
    )
    with pytest.raises(ValueError, match="the index 'id' is numeric"):  # asked about
        ma.microaggregate(df, 5)
    out, info = ma.microaggregate(df, 5, keep="id", return_info=True)  # kept on purpose
    assert list(out.columns) == list(df.columns)
    assert out.index.equals(df.index)
    assert (out["town"] == df["town"]).all()
    assert info.columns == ["income", "age"]
    _, counts = np.unique(out[["income", "age"]].to_numpy(), axis=0, return_counts=True)
    assert counts.min() >= 5
    np.testing.assert_allclose(out[["income", "age"]].mean(), df[["income", "age"]].mean())
    assert 0 < info.information_loss < 100
    assert info.group_sizes.sum() == 50
    assert df["income"].iloc[0] != out["income"].iloc[0]  # input not modified in place


@pytest.mark.parametrize("method", MDAV_FAMILY)
def test_microaggregate_methods_and_params(method):
    df = pd.DataFrame(np.random.default_rng(2).normal(size=(40, 3)), columns=list("abc"))
    out, info = ma.microaggregate(df, 3, method=method, columns=["a", "b"], keep=["c"],
                                  return_info=True)
    assert (out["c"] == df["c"]).all()
    assert ma.is_k_partition(info.labels, 3)


def test_microaggregate_errors():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "s": list("wxyz"), "c": [1.0] * 4})
    with pytest.raises(ValueError, match="unknown method"):
        ma.microaggregate(df, 2, method="kmeans")
    with pytest.raises(ValueError, match="not in the table"):
        ma.microaggregate(df, 2, columns=["zzz"])
    with pytest.raises(TypeError, match="non-numeric"):
        ma.microaggregate(df, 2, columns=["a", "s"], keep=["c"])
    with pytest.raises(ValueError, match="zero variance"):
        ma.microaggregate(df, 2, columns=["a", "c"])
    with pytest.raises(TypeError, match="DataFrame"):
        ma.microaggregate(np.zeros((4, 2)), 2)


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, st.integers(1, 60),
              elements=st.sampled_from([0.0, 1.0, 2.5, 2.5, 7.0, np.inf])), st.data())
def test_numpy_engine_kth_smallest_is_argpartitions(d, data):
    """The numpy engine's m-th smallest distance (by repeated minima for small m, the
    engine's hot spot) is ``np.argpartition``'s, repeats and dead (inf) entries included,
    and leaves the distances as they were."""
    from microagg._mdav import vector

    m = data.draw(st.integers(1, d.size))
    few = data.draw(st.sampled_from([0, 3, vector._FEW_MINIMA]))
    before = d.copy()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(vector, "_FEW_MINIMA", few)
        assert vector._kth_smallest(d, m) == d[np.argpartition(d, m - 1)[m - 1]]
    assert np.array_equal(d, before)


@pytest.mark.parametrize(("oracle", "options", "message"), [
    ("ivmdav_reference", {"candidates": 1}, "candidates must be at least 3"),
    ("vmdav_reference", {"leftover": "centriod"}, "leftover must be 'centroid' or 'record'"),
    ("vmdav_reference", {"gamma": -1}, "gamma must be"),
    ("ivmdav_reference", {"gamma": float("nan")}, "gamma must be"),
])
def test_the_oracles_refuse_options_the_fast_functions_refuse(oracle, options, message):
    """A typo in an oracle's option read as another option (``leftover="centriod"`` as
    ``"record"``), and one candidate gave groups of one record."""
    import microagg.reference as reference
    from microagg.datasets import vmdav_example

    with pytest.raises(ValueError, match=message):
        getattr(reference, oracle)(vmdav_example(), 3, **options)
    with pytest.raises(ValueError, match=message):
        getattr(ma, oracle.removesuffix("_reference"))(vmdav_example(), 3, **options)


def test_the_oracle_refuses_a_self_neighbour_that_is_not_a_bool():
    import microagg.reference as reference
    from microagg.datasets import vmdav_example

    for f in (reference.ivmdav_reference, ma.ivmdav):
        with pytest.raises(TypeError, match="self_neighbour must be True or False"):
            f(vmdav_example(), 3, self_neighbour="no")


def test_the_engines_are_listed_without_docstrings():
    """``python -OO`` drops docstrings, where the summaries come from."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-OO", "-c", "import microagg as ma; "
                           "print(ma.list_engines()['name'].tolist())"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['indexed', 'loops', 'numpy']"
