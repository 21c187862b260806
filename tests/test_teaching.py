"""Tests of :mod:`microagg.teaching`: the step-by-step re-runs agree with the algorithms."""

from __future__ import annotations

import numpy as np
import pytest

import microagg as ma
from microagg import datasets, teaching


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


class _Clock:
    """A CPU clock whose runs take the given seconds in turn (each run reads it twice)."""

    def __init__(self, durations):
        self.durations, self.now, self.reads = list(durations), 0.0, 0

    def __call__(self):
        if self.reads % 2:  # the end of a run
            self.now += self.durations[(self.reads // 2) % len(self.durations)]
        self.reads += 1
        return self.now


@pytest.mark.parametrize(("durations", "repeats", "budget", "runs", "seconds"), [
    ([0.3, 0.1, 0.2], 5, 1.0, 5, 0.1),  # quick: every repeat, the least reported
    ([0.6, 0.5], 5, 1.0, 2, 0.5),  # the budget is spent after two runs
    ([2.0, 0.1], 5, 1.0, 1, 2.0),  # costly: one run
    ([0.3, 0.1], 1, 1.0, 1, 0.3),  # the default: one run
])
def test_engine_timings_reports_the_least_of_its_runs(monkeypatch, durations, repeats,
                                                      budget, runs, seconds):
    clock = _Clock(durations)
    monkeypatch.setattr(teaching.time, "process_time", clock)
    table = teaching.engine_timings([60], engines=("loops",), repeats=repeats,
                                    budget=budget)
    assert clock.reads == 2 * runs
    assert table["seconds"].tolist() == [pytest.approx(seconds)]


def test_engine_timings_refuses_no_runs():
    with pytest.raises(ValueError, match="repeats must be at least 1, got 0"):
        teaching.engine_timings([60], repeats=0)
