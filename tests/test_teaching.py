"""Tests of :mod:`microagg.teaching`: the step-by-step re-runs agree with the algorithms."""

from __future__ import annotations

import numpy as np
import pytest

import microagg as ma
from microagg import _timing, datasets, teaching


@pytest.mark.parametrize("gamma", [0.0, 0.2, 1.1, 3.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vmdav_first_group_is_vmdav_group_zero(gamma, seed):
    X = datasets.synthetic_clustered(25, 2, cluster_size=(2, 5), spread=0.05, seed=seed)
    for k in (2, 3, 4):
        group, tests = teaching.vmdav_first_group(X, k, gamma=gamma)
        expected = np.flatnonzero(ma.vmdav(X, k, gamma=gamma) == 0)
        assert sorted(group.tolist()) == expected.tolist()
        assert k <= group.size <= 2 * k - 1
        # every test row is consistent with the rule d_in < gamma * d_out
        assert (tests["added"] == (tests["d_in"] < gamma * tests["d_out"])).all()
        assert int(tests["added"].sum()) == group.size - k


def test_vmdav_first_group_example1():
    X = datasets.vmdav_example()
    group, tests = teaching.vmdav_first_group(X, 3, gamma=0.2)
    # the four records near the origin: e = (2.4, 3), two neighbours, then (5.32, 3.6)
    assert group.tolist() == [0, 1, 2, 3]
    assert tests["added"].tolist() == [True, False]
    with pytest.raises(ValueError, match="gamma"):
        teaching.vmdav_first_group(X, 3, gamma=-1)


def test_kernel_source_is_plain_python():
    src = teaching.kernel_source("ga_core")
    assert src.startswith("@njit") and "def ga_core(" in src
    with pytest.raises(ValueError, match="unknown kernel"):
        teaching.kernel_source("nope")


def test_engine_timings_times_each_engine_through_least_time(monkeypatch):
    calls = []

    def fake(run, *, repeat, budget):
        calls.append((repeat, budget))
        return _timing.Timing(0.25, repeat, run())

    monkeypatch.setattr(teaching, "least_time", fake)
    table = teaching.engine_timings([60], engines=("loops", "indexed"), repeat=4, budget=2.0)
    assert calls == [(4, 2.0), (4, 2.0)]
    assert table["seconds"].tolist() == [0.25, 0.25]
    assert table["same"].tolist() == [None, True]  # the labels are the runs' own


def test_engine_timings_refuses_no_runs():
    with pytest.raises(ValueError, match="repeat must be a whole number of at least 1, got 0"):
        teaching.engine_timings([60], repeat=0)
