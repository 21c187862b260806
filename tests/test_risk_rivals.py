"""Bounded rival lists: GOMM's DLD search past ``RIVAL_PAIRS_PER_RECORD``.

:func:`microagg._risk_kernels.rival_clusters` lists, per record of an attribute group, the
clusters not clearly farther than its own. Compact clusters (MDAV's) have a few; clusters
spread over the data (a callable ``method=``) have a large share of all of them, ``n * n /
k`` pairs in all (386 million, 6.2 GB, at n = 100,000). Past ``RIVAL_PAIRS_PER_RECORD * n``
pairs a group lists none (each record's rival is ``EVERY_CLUSTER``) and the search visits
every row within reach: the same linked fractions, bit for bit, compiled and as plain
Python, and a file of 100,000 records scores in a few hundred MB.
"""

from __future__ import annotations

import math
import os
import zlib

import numpy as np
import pytest
from helpers import run_json_script, tie_heavy
from hypothesis import given, settings
from hypothesis import strategies as st

import microagg
from microagg import _gomm_eval, _gomm_kernels, _risk_kernels
from microagg._gomm_ops import random_chromosome
from microagg._risk_kernels import EVERY_CLUSTER, RIVAL_PAIRS_PER_RECORD, rival_clusters


def scattered(Z: np.ndarray, k: int) -> np.ndarray:
    """Clusters of ``k`` records (the last of up to ``2k - 1``) drawn at random: spread
    over the data, as a callable ``method=`` may make them. Seeded by the data's bytes."""
    n = len(Z)
    rng = np.random.default_rng(zlib.crc32(np.ascontiguousarray(Z).tobytes()))
    return np.minimum(rng.permutation(n) // k, max(1, n // k) - 1)


def _compiled_and_plain(f):
    """The kernel as numba compiles it, and as plain Python (what runs without numba)."""
    return [f, getattr(f, "py_func", f)]


def _with_cap(per_record: int):
    """``group_parts`` with the rival list capped at ``per_record`` pairs a record."""

    def capped(sub, labels, centroids, margin, width, axes_rows):
        return _gomm_kernels.group_parts(sub, labels, centroids, margin, width, axes_rows,
                                         per_record)
    return capped


def _rival_case(seed: int, n: int, p: int, spread: bool):
    rng = np.random.default_rng(seed)
    Z = microagg.standardize(np.round(rng.normal(size=(n, p)) * 2) / 2 + np.eye(n, p))
    labels = scattered(Z, 3) if spread else microagg.mdav(Z, 3)
    s = int(labels.max()) + 1
    cen = _gomm_eval._group_means(Z, labels, s)
    return Z, labels, cen, _risk_kernels.rival_margin(Z)


@pytest.mark.parametrize("spread", [False, True], ids=["mdav", "scattered"])
def test_the_list_gives_way_exactly_past_the_cap(spread):
    """``per_record * n`` pairs are listed as before; one pair fewer of room and every
    record's list is ``[EVERY_CLUSTER]`` (compiled and plain)."""
    Z, labels, cen, margin = _rival_case(3, 60, 3, spread)
    n = len(Z)
    for rivals in _compiled_and_plain(rival_clusters):
        ptr, cl = rivals(Z, labels, cen, margin, n * n)  # no cap in effect
        pairs = cl.size
        assert pairs > 0 and EVERY_CLUSTER not in cl.tolist()
        D = np.zeros((n, len(cen)))
        for c in range(Z.shape[1]):  # column order, as the kernel sums
            D += (Z[:, c, None] - cen[None, :, c]) ** 2
        assert pairs == sum(int((D[i] <= D[i, labels[i]] + margin[i]).sum()) - 1
                            for i in range(n))
        per = pairs // n
        room = [(per, per * n >= pairs), (per + 1, True), (0, False)]
        if pairs % n == 0:
            room.append((per - 1, False))
        for per_record, listed in room:
            got_ptr, got = rivals(Z, labels, cen, margin, per_record)
            if listed:
                assert got_ptr.tolist() == ptr.tolist() and got.tolist() == cl.tolist()
            else:
                assert got_ptr.tolist() == list(range(n + 1))
                assert got.tolist() == [EVERY_CLUSTER] * n
        assert [a.tolist() for a in rivals(Z, labels, cen, margin)] == [ptr.tolist(),
                                                                         cl.tolist()]


def test_a_group_without_rivals_lists_none_at_any_cap():
    """No record with a rival (one cluster): nothing to list, whatever the cap."""
    Z = np.random.default_rng(1).normal(size=(9, 2))
    labels = np.zeros(9, np.int64)
    cen = Z.mean(axis=0, keepdims=True)
    for rivals in _compiled_and_plain(rival_clusters):
        ptr, cl = rivals(Z, labels, cen, _risk_kernels.rival_margin(Z), 0)
        assert ptr.tolist() == [0] * 10 and cl.size == 0


def test_default_cap_holds_gomm_files_and_stops_scattered_clusters():
    """The default lists every rival of MDAV's clusters (a few a record) and gives way on
    clusters spread over the data (a large share of all clusters a record)."""
    rng = np.random.default_rng(7)
    Z = microagg.standardize(rng.normal(size=(3000, 2)))
    margin = _risk_kernels.rival_margin(Z)
    for method, capped in ((microagg.mdav, False), (scattered, True)):
        labels = np.asarray(method(Z, 3), np.int64)
        cen = _gomm_eval._group_means(Z, labels, int(labels.max()) + 1)
        ptr, cl = rival_clusters(Z, labels, cen, margin)
        assert (cl.tolist() == [EVERY_CLUSTER] * len(Z)) is capped
        assert cl.size <= RIVAL_PAIRS_PER_RECORD * len(Z)


@st.composite
def groupings(draw):
    """Small tie-heavy data, a k, a grouping and a method (compact or scattered)."""
    X, k, rng = tie_heavy(draw, max_n=45, max_p=5, signs=True)
    return X, k, random_chromosome(X.shape[1], rng), draw(st.sampled_from(["mdav", scattered]))


def dense_rivals(sub, labels, centroids, margin):
    """The oracle: every distance summed in full (column order, as the kernel sums), each
    record's rivals listed in increasing order, no cap."""
    n, s = len(sub), len(centroids)
    D = np.zeros((n, s))
    for c in range(sub.shape[1]):
        D += (sub[:, c, None] - centroids[None, :, c]) ** 2
    lists = [[q for q in range(s) if q != labels[i] and D[i, q] <= D[i, labels[i]] + margin[i]]
             for i in range(n)]
    return [0, *np.cumsum([len(x) for x in lists]).tolist()], sum(lists, [])


@settings(max_examples=150, deadline=None)
@given(groupings(), st.sampled_from(["margin", "zero", "wide", "every"]))
def test_the_lists_are_those_of_the_definition(case, margin_kind):
    """The kernel against the definition (every distance in a matrix, column order): on
    tie-heavy data (repeated levels, duplicated records and attributes), with the data's
    margin, none (ties decided by exact equality), a wide one (many rivals a record) and one
    that makes every cluster a rival (the list grows several times while the search runs),
    the same clusters, compiled and as plain Python."""
    X, k, grouping, method = case
    Z = microagg.standardize(X)
    margin = {"margin": _risk_kernels.rival_margin(Z), "zero": np.zeros(len(Z)),
              "wide": np.full(len(Z), 0.5), "every": np.full(len(Z), 1e9)}[margin_kind]
    for g in grouping:
        sub = np.ascontiguousarray(Z[:, g])
        method_fn = microagg.mdav if method == "mdav" else method
        labels = np.unique(method_fn(sub, k), return_inverse=True)[1].reshape(-1)
        cen = _gomm_eval._group_means(sub, labels, int(labels.max()) + 1)
        want = dense_rivals(sub, labels, cen, margin)
        for rivals in _compiled_and_plain(rival_clusters):
            ptr, cl = rivals(sub, labels, cen, margin, len(Z) ** 2)
            assert (ptr.tolist(), cl.tolist()) == want


@settings(max_examples=80, deadline=None)
@given(groupings(), st.sampled_from([0, 1, 2]))
@pytest.mark.skipif(not _gomm_eval.HAVE_NUMBA, reason="the capped lists feed the compiled scorer")
def test_score_is_the_same_past_the_cap(case, per_record):
    """``score_grouping`` with the cap forced tiny (every group with a rival past it, or
    some) equals the default, the numpy search without rival lists, and the full search
    over the assembled release: IL, ID and DLD bit for bit."""
    X, k, grouping, method = case
    mp = pytest.MonkeyPatch()
    try:
        default = microagg.score_grouping(X, grouping, k, method=method)
        mp.setattr(_gomm_eval, "group_parts", _with_cap(per_record))
        capped = microagg.score_grouping(X, grouping, k, method=method)
        mp.setattr(_gomm_eval, "dld_assembled", _risk_kernels.dld_assembled.py_func)
        capped_plain_top = microagg.score_grouping(X, grouping, k, method=method)
        mp.setattr(_gomm_eval, "HAVE_NUMBA", False)
        numpy_path = microagg.score_grouping(X, grouping, k, method=method)
    finally:
        mp.undo()
    assert capped == default == numpy_path == capped_plain_top
    Z = microagg.standardize(X)
    Q = microagg.multivariate(Z, grouping, k, method=method, standardize=False)
    U, mult, own = _risk_kernels.distinct_rows(Q)
    full = 100.0 * math.fsum(_risk_kernels._dld_numpy(Z, U, mult, own)) / len(Z)
    assert default.dld == full


@pytest.mark.skipif(not _gomm_eval.HAVE_NUMBA, reason="the capped lists feed the compiled scorer")
def test_ties_past_the_cap():
    """Two equal attributes microaggregated apart: a record is as close to the row with
    its two centroids swapped as to its own, so the linked fractions are 1/2, 1/3...; the
    search past the cap counts the same ties."""
    x = np.repeat(np.arange(12.0), 2)
    X = np.column_stack([x, x, np.arange(24.0) % 5])
    for method in ("mdav", scattered):
        for grouping in ([[0], [1], [2]], [[0, 2], [1]]):
            default = microagg.score_grouping(X, grouping, 2, method=method)
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(_gomm_eval, "group_parts", _with_cap(0))
                capped = microagg.score_grouping(X, grouping, 2, method=method)
                mp.setattr(_gomm_eval, "HAVE_NUMBA", False)
                numpy_path = microagg.score_grouping(X, grouping, 2, method=method)
            assert capped == default == numpy_path


#: The arena path (group_parts + dld_assembled) as plain Python: numba disabled, the
#: scorer told to take the compiled path anyway.
_PLAIN = """
import json, sys
import numpy as np
import microagg
from microagg import _gomm_eval, _gomm_kernels
from microagg._jit import HAVE_NUMBA
sys.path.insert(0, sys.argv[1])
from test_risk_rivals import CASES, plain_case
out = {"jit": HAVE_NUMBA, "arena": [], "numpy": []}
for case in CASES:
    X, grouping, k, method = plain_case(*case)
    _gomm_eval.HAVE_NUMBA = True
    row = []
    for per_record in (0, 1, 10**6):
        def capped(*args, per_record=per_record):
            return _gomm_kernels.group_parts(*args, per_record)
        _gomm_eval.group_parts = capped
        b = microagg.score_grouping(X, grouping, k, method=method)
        row.append([b.il, b.id, b.dld])
    out["arena"].append(row)
    _gomm_eval.HAVE_NUMBA = False
    b = microagg.score_grouping(X, grouping, k, method=method)
    out["numpy"].append([b.il, b.id, b.dld])
print(json.dumps(out))
"""

#: (seed, n, p, k, scattered clusters, balanced sign columns) of the comparison without
#: numba; the sign columns sum exactly, so rows tie.
CASES = [(0, 40, 3, 3, True, False), (1, 40, 3, 3, True, False), (2, 30, 2, 2, False, False),
         (3, 36, 4, 3, False, False), (4, 25, 2, 5, True, False), (5, 32, 4, 2, True, True),
         (6, 30, 4, 2, False, True), (10, 40, 5, 4, True, True)]


def plain_case(seed: int, n: int, p: int, k: int, spread: bool, signs: bool):
    """The data, grouping, k and method of one of :data:`CASES`."""
    rng = np.random.default_rng(seed)
    if signs:
        X = np.column_stack([rng.permutation(np.repeat([-1.0, 1.0], n // 2))
                             for _ in range(p)])
        grouping = random_chromosome(p, rng)
    else:
        X = rng.normal(size=(n, p))
        grouping = [[c] for c in range(p)] if seed % 2 else [list(range(p))]
    return X, grouping, k, scattered if spread else "mdav"


def test_the_same_without_numba():
    """Plain Python (``NUMBA_DISABLE_JIT=1``, a subprocess): the rival search with the cap
    forced tiny, with some lists capped and with none, and the numpy search give what the
    compiled scorer gives."""
    pytest.importorskip("numba")
    plain = run_json_script(_PLAIN, os.path.dirname(__file__), jit=False, timeout=300)
    assert plain["jit"] is False
    for case, arena, numpy_path in zip(CASES, plain["arena"], plain["numpy"], strict=True):
        X, grouping, k, method = plain_case(*case)
        b = microagg.score_grouping(X, grouping, k, method=method)
        assert arena == [[b.il, b.id, b.dld]] * 3 == [numpy_path] * 3


#: A practitioner's file scored with clusters spread over the data: 100,000 records,
#: k = 3, under 4 GB of address space (before: 930 million rival pairs, MemoryError).
_LARGE = """
import json, resource, sys
LIMIT = 4 << 30
resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))
import numpy as np
import microagg
from microagg import _gomm_eval
from microagg._jit import HAVE_NUMBA
from microagg._risk_kernels import EVERY_CLUSTER, dld_standardized
sys.path.insert(0, sys.argv[1])
from test_risk_rivals import scattered
n, k, groups = 100_000, 3, [[0, 1], [2, 3]]
X = np.random.default_rng(0).normal(size=(n, 4))
Z = microagg.standardize(X)
score = _gomm_eval.Evaluator(Z, k, scattered, shared_cache=False)
got = score(_gomm_eval.canonical(groups))
pairs = score.arena.store.rivals[: score.arena.used[1]]
Q = microagg.multivariate(Z, groups, k, method=scattered, standardize=False)
print(json.dumps({"jit": HAVE_NUMBA, "dld": got.dld, "full": dld_standardized(Z, Q),
                  "pairs": int(pairs.size), "every": bool((pairs == EVERY_CLUSTER).all()),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def test_scattered_clusters_on_a_large_file_in_little_memory():
    """n = 100,000, clusters of 3 records drawn at random, two attribute groups, 4 GB of
    address space: the score comes out, equal to the full search's (before, the rival
    lists of one group asked for more than 4 GB and died)."""
    pytest.importorskip("numba")
    got = run_json_script(_LARGE, os.path.dirname(__file__), jit=True, timeout=300)
    assert got["jit"] is True
    assert got["dld"] == got["full"]
    assert got["every"] and got["pairs"] == 2 * 100_000  # one EVERY_CLUSTER a record
