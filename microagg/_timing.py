"""Timing a call as ``timeit`` advises: the least CPU time of a few runs.

On a shared machine a run also measures its neighbours, and only ever by slowing it down,
so the least of several runs is the best estimate of the call's own cost. The book's timing
tables (:func:`microagg.teaching.timings`, :func:`microagg.teaching.engine_timings`,
:func:`microagg.views.univariate_timings`) all measure through :func:`least_time`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = ["Timing", "least_time"]


class Timing(NamedTuple):
    """What :func:`least_time` measured."""

    seconds: float  #: the least CPU seconds of the runs
    runs: int  #: how many runs there were
    result: Any  #: what the last run returned


def least_time(run: Callable[[], Any], *, repeat: int = 1,
               budget: float = math.inf) -> Timing:
    """Call ``run()`` up to ``repeat`` times, stopping early once the runs have used
    ``budget`` CPU seconds, and report the least CPU time (:func:`time.process_time`).

    A quick call thus gets every repeat and a costly one a single run, whatever the
    machine. At least one run is made.

    Raises
    ------
    ValueError
        If ``repeat`` is not a whole number of at least 1, or ``budget`` is negative or NaN.

    Examples
    --------
    >>> t = least_time(lambda: sum(range(1000)), repeat=3)
    >>> t.runs, t.result, t.seconds >= 0
    (3, 499500, True)
    """
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be a whole number of at least 1, got {repeat!r}")
    if not budget >= 0:
        raise ValueError(f"budget must be a number of CPU seconds of at least 0, got {budget!r}")
    times: list[float] = []
    result = None
    while not times or (len(times) < repeat and sum(times) < budget):
        t0 = time.process_time()
        result = run()
        times.append(time.process_time() - t0)
    return Timing(min(times), len(times), result)
