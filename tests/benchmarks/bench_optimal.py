"""Benchmark optimal_univariate against the exact univariate solvers on PyPI.

Run as a script (not collected by pytest). The peers live only in the benchmark's own
virtual environment, never in the package's dependencies; make it once (Python 3.11)::

    uv venv --python 3.11 ../peers-venv
    uv pip install --python ../peers-venv/bin/python \\
        microagg1d==0.4.0 microaggregation==0.1.9 numba numpy -e .

then run it there (``-e .`` installs this working tree with its dependencies)::

    ../peers-venv/bin/python tests/benchmarks/bench_optimal.py          # n = 1e6, 1e7
    ../peers-venv/bin/python tests/benchmarks/bench_optimal.py --sizes 100000 --k 3,100

or from the project's own environment with ``--peers-python ../peers-venv/bin/python``
(the script then runs itself there). Without the peers it says how to install them.

For every n and k (standard normal data, seed 0, the same array for everyone), one row,
every number measured in this run (CPU seconds, best of ``--repeat`` runs; a warm-up call
first, so no compilation is timed):

* ``ours``: :func:`microagg.optimal_univariate` (``algorithm="auto"``), input unsorted,
  labels returned;
* ``m1d best``: the fastest of microagg1d 0.4.0's exact methods (``simple``, ``wilber``,
  ``galil_park``, ``staggered``, all with ``stable=2``; its default ``auto`` is not exact),
  input unsorted, labels returned; ``m1d`` names it;
* ``C++``: ``microaggregation`` 0.1.9's ``calculate_sse_dynamic`` (C++ dynamic programme,
  optimal SSE only), timed with the ``np.sort`` it needs (its DP alone in ``C++ DP``);
* ``ours SSE``: the same task as the C++ DP, the optimal SSE only (``np.sort`` and our
  pass, no argsort, no labels);
* ``ratio m1d``: ours over microagg1d; ``ratio C++``: ours SSE over C++, like for like;
  ``labels/C++``: ours with labels over C++ (our stable radix sort and labels against
  ``np.sort`` and the DP); below 1: ours faster. The last line counts the rows where ours,
  labels included, is no slower than both peers (``ratio m1d`` and ``labels/C++`` at most
  1) and its SSE no worse;
* ``rel. SSE``: (our SSE - the best SSE of microagg1d's partitions) / that SSE, both
  recomputed in long double: at most 1e-9 means ours is no worse;
* ``peak MiB``: peak memory allocated by a separate run of ours (tracemalloc, which sees
  numba's arrays), input excluded, and per record in bytes.

The machine may be shared: run twice and compare; CPU-bound numbers move together.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
M1D_METHODS = ("simple", "wilber", "galil_park", "staggered")
INSTALL = (
    "the peers are not installed in this Python. Make their environment once:\n"
    "  uv venv --python 3.11 ../peers-venv\n"
    "  uv pip install --python ../peers-venv/bin/python microagg1d==0.4.0 "
    "microaggregation==0.1.9 numba numpy -e .\n"
    "and run: ../peers-venv/bin/python tests/benchmarks/bench_optimal.py\n"
    "(or pass --peers-python ../peers-venv/bin/python)"
)


def long_double_sse(x: np.ndarray, labels: np.ndarray) -> np.longdouble:
    """SSE of a partition, summed in long double (groups by label)."""
    order = np.argsort(labels, kind="stable")
    lab, xs = labels[order], x[order].astype(np.longdouble)
    starts = np.flatnonzero(np.r_[True, lab[1:] != lab[:-1]])
    counts = np.diff(np.r_[starts, lab.size])
    means = np.add.reduceat(xs, starts) / counts
    dev = xs - np.repeat(means, counts)
    return (dev * dev).sum()


def best_time(f: Callable[[], object], repeat: int) -> tuple[float, object]:
    """Best CPU seconds of ``repeat`` calls (every solver here runs on one thread, and CPU
    time moves less than wall-clock time when other jobs share the machine)."""
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.process_time()
        out = f()
        best = min(best, time.process_time() - t0)
    return best, out


def optimal_sse(x: np.ndarray, k: int) -> float:
    """The optimal SSE only, as the C++ DP computes it: ``np.sort``, then our pass.

    Like for like with ``calculate_sse_dynamic`` (no labels, so no argsort). Data of
    ordinary magnitude only (no rescaling here).
    """
    from microagg import _optimal, _univariate

    z = np.sort(x)
    if k >= _optimal.LINEAR_FROM_K:
        dist, _ = _univariate.linear_path(z, k, _univariate.SCAN_PER_TARGET * k)
    else:
        dist, _ = _univariate.shortest_path(z, k)
    return float(dist[-1])


def peak_mib(f: Callable[[], object]) -> float:
    tracemalloc.start()
    f()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def row(n: int, k: int, repeat: int) -> dict[str, object]:
    from microagg1d import univariate_microaggregation
    from microaggregation import calculate_sse_dynamic

    import microagg as ma

    x = np.random.default_rng(0).standard_normal(n)
    ours_s, ours = best_time(lambda: ma.optimal_univariate(x, k), repeat)
    m1d: dict[str, tuple[float, np.ndarray]] = {}
    for method in M1D_METHODS:
        m1d[method] = best_time(
            lambda m=method: univariate_microaggregation(x, k, method=m, stable=2), repeat)
    fastest = min(m1d, key=lambda m: m1d[m][0])
    cpp_s, cpp_sse = best_time(lambda: calculate_sse_dynamic(np.sort(x)[:, None], k), repeat)
    sse_s, _ = best_time(lambda: optimal_sse(x, k), repeat)
    xs = np.sort(x)[:, None]
    dp_s, _ = best_time(lambda: calculate_sse_dynamic(xs, k), repeat)
    our_sse = long_double_sse(x, ours)
    peer_sse = min(long_double_sse(x, labels) for _, labels in m1d.values())
    peak = peak_mib(lambda: ma.optimal_univariate(x, k))
    return {"n": n, "k": k, "ours": ours_s, "m1d best": m1d[fastest][0], "m1d": fastest,
            "C++": cpp_s, "C++ DP": dp_s, "ours SSE": sse_s,
            "ratio m1d": ours_s / m1d[fastest][0],
            "ratio C++": sse_s / cpp_s, "labels/C++": ours_s / cpp_s,
            "rel. SSE": float((our_sse - peer_sse) / peer_sse),
            "C++ SSE rel.": float((np.longdouble(cpp_sse) - our_sse) / our_sse),
            "peak MiB": peak, "B/record": peak * 2**20 / n}


def warm_up() -> None:
    """Load (or compile) every kernel once, outside the timings."""
    from microagg1d import univariate_microaggregation
    from microaggregation import calculate_sse_dynamic

    import microagg as ma

    x = np.random.default_rng(1).standard_normal(5000)
    for k in (3, 100):
        ma.optimal_univariate(x, k)
        for method in M1D_METHODS:
            univariate_microaggregation(x, k, method=method, stable=2)
        calculate_sse_dynamic(np.sort(x)[:, None], k)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000000,10000000")
    parser.add_argument("--k", default="3,10,100")
    parser.add_argument("--repeat", type=int, default=2, help="runs per timing (best of)")
    parser.add_argument("--peers-python", help="a Python with the peers: rerun there")
    args = parser.parse_args(argv)
    try:
        import microagg1d  # noqa: F401
        import microaggregation  # noqa: F401
    except ImportError:
        if args.peers_python:
            argv_rest = [a for a in (argv if argv is not None else sys.argv[1:])]
            i = argv_rest.index("--peers-python")
            del argv_rest[i:i + 2]
            env = {**os.environ, "PYTHONPATH": str(REPO)}
            return subprocess.call([args.peers_python, __file__, *argv_rest], env=env)
        print(INSTALL, file=sys.stderr)
        return 2
    import pandas as pd

    import microagg as ma

    print(f"numba in use: {ma.numba_enabled()}; auto runs the linear pass from k = "
          f"{ma._optimal.LINEAR_FROM_K}", flush=True)
    warm_up()
    rows = []
    for n in (int(float(s)) for s in args.sizes.split(",")):
        for k in (int(s) for s in args.k.split(",")):
            rows.append(row(n, k, args.repeat))
            print(pd.DataFrame(rows[-1:]).to_string(index=False, float_format="%.3g"),
                  flush=True)
    table = pd.DataFrame(rows)
    print("\nall rows (seconds; ratio = ours / peer):")
    print(table.to_string(index=False, float_format="%.3g"))
    ok = ((table["ratio m1d"] <= 1) & (table["labels/C++"] <= 1)
          & (table["rel. SSE"] <= 1e-9))
    print(f"\nours, labels included, no slower than microagg1d's fastest exact method and "
          f"than np.sort + the C++ DP, SSE no worse: {int(ok.sum())} of {len(ok)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
