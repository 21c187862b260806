"""``least_time``: the least CPU time of up to ``repeat`` runs within a budget."""

from __future__ import annotations

import math

import pytest

from microagg import _timing


class _Clock:
    """A CPU clock whose runs take the given seconds in turn (each run reads it twice)."""

    def __init__(self, durations):
        self.durations, self.now, self.reads = list(durations), 0.0, 0

    def __call__(self):
        if self.reads % 2:  # the end of a run
            self.now += self.durations[(self.reads // 2) % len(self.durations)]
        self.reads += 1
        return self.now


@pytest.mark.parametrize(("durations", "repeat", "budget", "runs", "seconds"), [
    ([0.3, 0.1, 0.2], 5, 1.0, 5, 0.1),  # quick: every repeat, the least reported
    ([0.6, 0.5], 5, 1.0, 2, 0.5),  # the budget is spent after two runs
    ([2.0, 0.1], 5, 1.0, 1, 2.0),  # costly: one run
    ([0.3, 0.1], 1, 1.0, 1, 0.3),  # one repeat: one run
    ([0.3, 0.1, 0.2], 3, math.inf, 3, 0.1),  # no budget: every repeat
    ([0.3, 0.1], 3, 0.0, 1, 0.3),  # a zero budget still makes one run
])
def test_least_time_reports_the_least_of_its_runs(monkeypatch, durations, repeat, budget,
                                                  runs, seconds):
    clock = _Clock(durations)
    monkeypatch.setattr(_timing.time, "process_time", clock)
    results = iter(range(100))
    t = _timing.least_time(lambda: next(results), repeat=repeat, budget=budget)
    assert clock.reads == 2 * runs
    assert (t.runs, t.result) == (runs, runs - 1)  # the last run's result
    assert t.seconds == pytest.approx(seconds)


@pytest.mark.parametrize(("repeat", "budget", "message"), [
    (0, 1.0, "repeat must be a whole number of at least 1, got 0"),
    (2.5, 1.0, "repeat must be a whole number of at least 1, got 2.5"),
    (True, 1.0, "repeat must be a whole number of at least 1, got True"),
    (2, -1.0, "budget must be a number of CPU seconds of at least 0, got -1.0"),
    (2, math.nan, "budget must be a number of CPU seconds of at least 0, got nan"),
])
def test_least_time_refuses_bad_options_before_running(repeat, budget, message):
    ran = []
    with pytest.raises(ValueError, match=message):
        _timing.least_time(lambda: ran.append(1), repeat=repeat, budget=budget)
    assert not ran
