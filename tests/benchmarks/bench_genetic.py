"""Benchmark: the GA at the paper's Table 1 parameters, numba vs plain Python, Table 2.

Run as a script (not collected by pytest)::

    .venv/bin/python tests/benchmarks/bench_genetic.py          # everything (~5 min)
    .venv/bin/python tests/benchmarks/bench_genetic.py --quick  # skip the full Table 2

Targets (chapter 5): one GA run on a 27-record set with 10 chromosomes and 10^4
generations in <= 0.1 s (the paper: 2 s in C++ on a 3 GHz Pentium 4); the full
Table 2 (4 data sets, K = 12/18/27, both partitionings, 3 seeds for the synthetic
sets, 10^4 generations) in <= 5 minutes on two cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np

import microagg
from microagg import ga_partition, macrogroups
from microagg.reproductions import reproduce_table2, table2_data

PAPER = {"population": 10, "mutation_rate": 0.1, "crossover_rate": 0.5, "iterations": 10_000}


def best_of(f, repeat: int = 5) -> tuple[float, float]:
    """Fastest wall-clock and fastest CPU time of ``repeat`` calls.

    CPU time (``time.process_time``) is reported too because the machine is
    often shared: under load the wall time of a single-threaded run can be a
    multiple of its CPU time.
    """
    wall, cpu = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        f()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return min(wall), min(cpu)


def sets_27() -> dict[str, np.ndarray]:
    """Two 27-record sets: a Census two-step macrogroup (p = 13) and a clustered one (p = 2)."""
    out = {}
    for name in ("census", "clustered"):
        try:
            X = table2_data(name, seed=0)
        except FileNotFoundError:
            continue
        macro, _ = macrogroups(X, 3, K=27, partitioning="two-step")
        sizes = np.bincount(macro)
        g = int(np.flatnonzero(sizes == 27)[0])
        out[f"{name} macrogroup (27 x {X.shape[1]})"] = X[macro == g]
    return out


_PLAIN = """
import json, sys, time, numpy as np
from microagg import ga_partition
X = np.array(json.loads(sys.argv[1]))
ga_partition(X, 3, iterations=5, seed=0)
t = time.perf_counter(); ga_partition(X, 3, iterations=int(sys.argv[2]), seed=0)
print(time.perf_counter() - t)
"""


def plain_python_time(X: np.ndarray, iterations: int) -> float:
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    out = subprocess.run([sys.executable, "-c", _PLAIN, json.dumps(X.tolist()), str(iterations)],
                         env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(quick: bool = False) -> None:
    print(f"microagg {microagg.__version__}, {os.cpu_count()} CPUs, numba jit: "
          f"{microagg._jit.HAVE_NUMBA}, load average {os.getloadavg()[0]:.1f}")
    print("\nOne GA run at Table 1 parameters (10 chromosomes, 10^4 generations)")
    print(f"{'set':34s} {'wall (s)':>9s} {'CPU (s)':>8s} {'target':>7s} {'paper C++ / ours':>17s}")
    rows = sets_27()
    for name, X in rows.items():
        ga_partition(X, 3, iterations=5, seed=0)  # compile / load cache
        wall, cpu = best_of(lambda X=X: ga_partition(X, 3, seed=1, **PAPER))
        print(f"{name:34s} {wall:9.3f} {cpu:8.3f} {0.1:7.1f} {2.0 / cpu:16.0f}x")

    print("\nnumba vs plain Python (same code, NUMBA_DISABLE_JIT=1), 100 generations")
    print(f"{'set':34s} {'numba (s)':>10s} {'python (s)':>11s} {'ratio':>7s}")
    for name, X in rows.items():
        t_jit = best_of(lambda X=X: ga_partition(X, 3, iterations=100, seed=0))[0]
        t_py = plain_python_time(X, 100)
        print(f"{name:34s} {t_jit:10.4f} {t_py:11.3f} {t_py / t_jit:6.0f}x")

    if quick:
        return
    print("\nFull Table 2 (4 data sets x K = 12, 18, 27 x 2 partitionings; synthetic x 3 seeds;")
    print("10^4 generations; threads = CPUs)")
    t, c = time.perf_counter(), time.process_time()
    table = reproduce_table2(progress=True)
    dt, dc = time.perf_counter() - t, time.process_time() - c
    print(table[["dataset", "K", "SSE_MDAV", "one_step_SSE", "one_step_impr",
                 "two_step_SSE", "two_step_impr"]].round(2).to_string(index=False))
    print(f"\nfull Table 2: {dt:.1f} s wall, {dc:.1f} s CPU over all threads "
          f"(target 300 s wall; ratio target/ours {300 / dt:.2f}); "
          f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
