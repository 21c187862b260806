"""Memory of the disclosure-risk paths on large files: linear in n, never n x clusters.

:func:`microagg._risk_kernels.release_rows` (reached from ``score_grouping`` and ``gomm``
through ``dld_assembled``) refines the records' released rows through a table of
``n * max(sizes)`` entries up to ``RELEASE_TABLE_CAP`` (GOMM's files) and bucket by bucket
above it. Both paths, compiled and as plain Python, must give the rows of
:func:`~microagg._risk_kernels.distinct_keys`, numbered in order of first appearance (what
``release_rows`` always returned); on a practitioner's file (n = 100,000, k = 3: 33,334
clusters per attribute group, a 26 GB table before) it must run in a few MB.

The DLD search without numba (:func:`~microagg._risk_kernels._dld_kdtree`) on such a file
must not fall back on every record against every row (time ``n x m``).
"""

from __future__ import annotations

import os
import tracemalloc

import numpy as np
import pytest
from helpers import run_json_script
from hypothesis import given, settings
from hypothesis import strategies as st

from microagg import _risk_kernels
from microagg._risk_kernels import RELEASE_TABLE_CAP, distinct_keys, release_rows


def first_appearance_rows(L: np.ndarray) -> tuple[list[int], list[int], list[int]]:
    """``distinct_keys(L)`` with the rows renumbered in order of their first record."""
    first, mult, own = distinct_keys(L)
    by_first = np.argsort(first)
    rank = np.empty_like(by_first)
    rank[by_first] = np.arange(by_first.size)
    return first[by_first].tolist(), mult[by_first].tolist(), rank[own].tolist()


def labels(kind: str, G: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(G, n)`` cluster labels and the groups' cluster counts, random or tie-heavy."""
    rng = np.random.default_rng(seed)
    if kind == "random":
        sizes = rng.integers(1, n + 1, size=G)
        L = np.vstack([rng.integers(0, s, size=n) for s in sizes])
    elif kind == "few":  # one or two clusters per group: almost every record ties
        sizes = rng.integers(1, 3, size=G)
        L = np.vstack([rng.integers(0, s, size=n) for s in sizes])
    elif kind == "nested":  # each group refines the one before, or repeats it
        sizes = np.empty(G, np.int64)
        rows = [rng.integers(0, 3, size=n)]
        for _ in range(G - 1):
            rows.append(rows[-1] * 2 + rng.integers(0, 2, size=n) if rng.random() < 0.5
                        else rows[-1].copy())
        L = np.vstack(rows)
        sizes = L.max(axis=1) + 1 + rng.integers(0, 3, size=G)  # some clusters unused
    else:  # "k": MDAV-like clusters of k records, as GOMM's attribute groups have
        k = int(rng.integers(1, 4))
        sizes = np.full(G, -(-n // k))
        L = np.vstack([rng.permutation(n) // k for _ in range(G)])
    return np.ascontiguousarray(L, dtype=np.int64), np.asarray(sizes, dtype=np.int64)


KINDS = ["random", "few", "nested", "k"]


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(KINDS), st.integers(1, 4), st.integers(1, 60), st.integers(0, 2**32 - 1),
       st.sampled_from([RELEASE_TABLE_CAP, 0, 50]))
def test_release_rows_are_the_distinct_keys_in_order_of_appearance(kind, G, n, seed, cap):
    """Either path (cap 0: always buckets; 50: the table for small files only)."""
    L, sizes = labels(kind, G, n, seed)
    got = release_rows(L, sizes, cap)
    assert [a.tolist() for a in got] == list(first_appearance_rows(L))
    assert all(a.dtype == np.int64 for a in got)


def test_both_paths_agree_on_edge_cases():
    """No record, one group of one cluster, and the default cap taking the table."""
    for L, sizes in [(np.zeros((2, 0), np.int64), np.array([3, 1])),
                     (np.zeros((1, 5), np.int64), np.array([1])),
                     (np.array([[2, 0, 2, 1, 0]], np.int64), np.array([3]))]:
        table = release_rows(L, sizes)
        buckets = release_rows(L, sizes, 0)
        assert [a.tolist() for a in table] == [a.tolist() for a in buckets]
    assert [a.tolist() for a in release_rows(np.array([[2, 0, 2, 1, 0]]), np.array([3]))] == [
        [0, 1, 3], [2, 2, 1], [0, 1, 0, 2, 1]]


_PLAIN = """
import json, sys
import numpy as np
from microagg._jit import HAVE_NUMBA
from microagg._risk_kernels import release_rows
sys.path.insert(0, sys.argv[1])
from test_risk_memory import KINDS, labels
out = {"jit": HAVE_NUMBA, "rows": []}
for kind in KINDS:
    for seed, (G, n) in enumerate([(1, 7), (2, 40), (3, 60), (4, 25)]):
        L, sizes = labels(kind, G, n, seed)
        out["rows"].append([[a.tolist() for a in release_rows(L, sizes, cap)]
                            for cap in (1 << 22, 0)])
print(json.dumps(out))
"""


def test_release_rows_the_same_without_numba():
    """Both paths as plain Python (``NUMBA_DISABLE_JIT=1``, a subprocess) give the rows."""
    pytest.importorskip("numba")
    plain = run_json_script(_PLAIN, os.path.dirname(__file__), jit=False, timeout=120)
    assert plain["jit"] is False
    want = [list(first_appearance_rows(labels(kind, G, n, seed)[0]))
            for kind in KINDS for seed, (G, n) in enumerate([(1, 7), (2, 40), (3, 60), (4, 25)])]
    assert [table for table, _ in plain["rows"]] == [list(map(list, w)) for w in want]
    assert [buckets for _, buckets in plain["rows"]] == [list(map(list, w)) for w in want]


#: A practitioner's file: 100,000 records, three attribute groups microaggregated at k = 3.
_LARGE = """
import json, resource, sys
LIMIT = 4 << 30  # address space: the table of before would need 26 GB
resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))
import numpy as np
from microagg._jit import HAVE_NUMBA
from microagg._risk_kernels import distinct_keys, release_rows
n, k, G = 100_000, 3, 3
rng = np.random.default_rng(1)
L = np.vstack([rng.permutation(n) // k for _ in range(G)]).astype(np.int64)
L[1, : n // 2] = L[0, : n // 2]  # half the records share their clusters in two groups
sizes = np.full(G, -(-n // k), np.int64)  # 33,334 clusters per group
first, mult, own = release_rows(L, sizes)
f, m, o = distinct_keys(L)
by_first = np.argsort(f)
rank = np.empty_like(by_first)
rank[by_first] = np.arange(by_first.size)
same = (np.array_equal(first, f[by_first]) and np.array_equal(mult, m[by_first])
        and np.array_equal(own, rank[o]))
print(json.dumps({"jit": HAVE_NUMBA, "same": bool(same), "rows": int(first.size),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


@pytest.mark.parametrize("jit", [True, False], ids=["compiled", "plain"])
def test_release_rows_on_a_large_file_in_little_memory(jit):
    """n = 100,000, 33,334 clusters per group, 4 GB of address space: the rows come out
    (before, ``release_rows`` asked for a 26 GB table and died)."""
    if jit:
        pytest.importorskip("numba")
    got = run_json_script(_LARGE, jit=jit, timeout=120)
    assert got["jit"] is jit
    assert got["same"]
    assert got["rows"] > 60_000  # the release is far from k-anonymous: most rows are unique


def test_numpy_dld_blocks_stay_small(monkeypatch):
    """The numpy DLD search (no numba) holds a few MB of distances per block of records,
    however many distinct rows the release has (before: 256 rows x m), same answer."""
    rng = np.random.default_rng(2)
    n, m = 600, 40_000
    Z = rng.normal(size=(n, 2))
    U = np.vstack([Z, rng.normal(size=(m - n, 2))])
    mult = np.ones(m, np.int64)
    own = np.arange(n)
    tracemalloc.start()
    try:
        linked = _risk_kernels._dld_numpy(Z, U, mult, own)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, f"peak {peak / 2**20:.0f} MiB"  # 256 x 40,000 distances: 82 MB each
    monkeypatch.setattr(_risk_kernels, "DLD_BLOCK_ENTRIES", 10**9)
    assert np.array_equal(linked, _risk_kernels._dld_numpy(Z, U, mult, own))
    assert np.array_equal(linked, _risk_kernels._dld_numpy(Z, U, mult, own, block=3))


def test_dld_without_numba_on_a_large_file(monkeypatch):
    """A practitioner's file on a plain install (no numba): 100,000 records released as
    33,333 clusters. The k-d tree search answers without the dense one (every record
    against every row: about 30 s here), in a few tens of MB, and each record's linked
    fraction is the dense search's (checked on a sample of records against all rows)."""
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(100_000, 4))
    lab = np.empty(len(Z), np.int64)
    lab[np.argsort(Z[:, 0], kind="stable")] = np.arange(len(Z)) // 3  # clusters of 3 and 4
    lab[lab == lab.max()] = lab.max() - 1
    Q = np.zeros_like(Z)
    for c in range(Z.shape[1]):
        Q[:, c] = (np.bincount(lab, Z[:, c]) / np.bincount(lab))[lab]
    U, mult, own = _risk_kernels.distinct_rows(Q)
    assert U.shape[0] == 33_333

    def dense(*args, **kwargs):
        raise AssertionError("the dense search ran")

    monkeypatch.setattr(_risk_kernels, "HAVE_NUMBA", False)
    monkeypatch.setattr(_risk_kernels, "_dld_numpy", dense)
    tracemalloc.start()
    try:
        linked = _risk_kernels._dld_kdtree(Z, U, mult, own)
        dld = _risk_kernels.dld_standardized(Z, Q)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    monkeypatch.undo()
    assert peak < 96 << 20, f"peak {peak / 2**20:.0f} MiB"
    assert dld == pytest.approx(100 * linked.sum() / len(Z), abs=1e-9)
    sample = rng.choice(len(Z), 2_000, replace=False)
    assert np.array_equal(linked[sample],
                          _risk_kernels._dld_numpy(Z[sample], U, mult, own[sample]))
    assert 0 < linked.sum() < len(Z)
