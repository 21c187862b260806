"""Benchmark: the MDAV+GA hybrid of Table 2, this checkout against an older commit.

Run as a script (not collected by pytest)::

    .venv/bin/python tests/benchmarks/bench_ga.py                       # against 86a8b51
    .venv/bin/python tests/benchmarks/bench_ga.py --against REV
    .venv/bin/python tests/benchmarks/bench_ga.py --iterations 2000     # quicker, same check
    .venv/bin/python tests/benchmarks/bench_ga.py --threads             # wall vs CPU, n_jobs=-1

``--against REV`` (default :data:`BEFORE`) checks ``REV`` out in a temporary git
worktree and runs the same hybrid runs there (a subprocess importing that
``microagg``) and here, in turn: Census, EIA and one Scattered draw (seed 0) at
``K = 12, 18, 27``, one-step and two-step, ``k = 3``, the paper's GA settings
(population 10, 10,000 generations unless ``--iterations``), seed 0, one thread.
It prints the CPU seconds of each side and their ratio, measured in this one run,
and fails unless every run's labels are identical.

``--threads`` runs each data set's six runs here with ``n_jobs=-1`` and prints wall
and CPU seconds: with two idle cores the CPU time is about twice the wall time
(the GA kernel releases the GIL).

Targets: issue 25 (ten GA seeds and twenty re-draws in the strict build) costs
about eight times today's Table 2 unless the hybrid gets faster with identical
labels; this benchmark is the check that a change keeps the labels.

Where the time goes (measured at 86a8b51, issue 25): ``ga_core`` is 92-98 % of a
hybrid run's CPU at 2,000 generations (the rest, MDAV and the macrogroups, does not
grow with the generations). With ``n_jobs=2`` on two idle cores a run takes 0.52 of
its one-thread wall time (both cores busy). Per child, on a 27-record Census
macrogroup (p = 13), about 650 ns: selection, crossover and mutation about 110 ns,
repair about 450 ns (group sums 170, completing undersized groups 250: about 2
groups, 2.3 moves and 17 candidate distances per child, each distance a chain of 13
dependent additions), SSE and canonical labels about 35 ns each. On 12-record
macrogroups about 250 ns. Identical labels fix the order of every floating-point
operation behind an SSE (the roulette and the elitism compare fitnesses), so
incremental sums are out. Tried with identical labels and not kept (ratio to
86a8b51, several alternating runs): a candidate array instead of the per-group
member lists 0.92-0.95x; stopping a distance once it exceeds the best so far 0.74x;
the centroid computed once per move 0.98-1.0x; four candidate distances side by side
0.94x; branch-free selection of the nearest record 1.02-1.05x (slower on 12-record
groups); a memo of repaired children keyed by their labels (repeats: 56-66 % of the
changed children at K = 12, 15-26 % at K = 18, 4-6 % at K = 27) 0.92x overall; int32
or int16 labels 0.97x; the others (error_model="numpy", inlined helpers, split
crossover copy) within the noise of 1.00x +- 0.03 that this benchmark shows for
unchanged code.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from _against import HERE, old_checkout, option, run_with  # this folder (run as a script)

#: The commit the GA kernels are compared against by default (main when issue 25's
#: GA work started).
BEFORE = "86a8b51"
#: Data sets of the comparison: Table 2's real sets and one synthetic draw (seed 0).
DATASETS = ("census", "eia", "scattered")
#: Macrogroup sizes and partitionings of Table 2.
KS = (12, 18, 27)
PARTITIONINGS = ("one-step", "two-step")

_RUN_ONE = """
import json, sys, time
import numpy as np
import microagg
X = np.load(sys.argv[1])
iterations = int(sys.argv[2])
microagg.hybrid(X[:60], 3, K=12, iterations=5, seed=0)  # compile / load the cache first
out = []
for K in (12, 18, 27):
    for part in ("one-step", "two-step"):
        c = time.process_time()
        labels = microagg.hybrid(X, 3, K=K, partitioning=part, seed=0, n_jobs=1,
                                 iterations=iterations)
        out.append({"K": K, "partitioning": part, "cpu": time.process_time() - c,
                    "labels": labels.tolist()})
print(json.dumps(out))
"""


def _data(name: str) -> np.ndarray:
    from microagg.reproductions import table2_data

    return table2_data(name, seed=0)


def _run_in(root: Path, data: Path, iterations: int) -> list[dict]:
    """The six hybrid runs on ``data`` with the ``microagg`` found under ``root``."""
    return run_with(root, _RUN_ONE, data, iterations)


def bench_against(rev: str, iterations: int) -> None:
    """Old (``rev``) against this checkout, in turn, on every data set of :data:`DATASETS`."""
    print(f"MDAV+GA hybrid, k=3, K={'/'.join(map(str, KS))}, one-step and two-step, "
          f"{iterations} generations, seed 0, one thread: {rev} against this checkout "
          "(CPU seconds)")
    print(f"{'data':10s} {'old s':>8s} {'new s':>8s} {'ratio':>6s}  identical labels")
    with old_checkout(rev) as base:
        total_old = total_new = 0.0
        differ = []
        for name in DATASETS:
            data = base.parent / f"{name}.npy"
            np.save(data, _data(name))
            old = _run_in(base, data, iterations)
            new = _run_in(HERE, data, iterations)
            t_old = sum(r["cpu"] for r in old)
            t_new = sum(r["cpu"] for r in new)
            total_old += t_old
            total_new += t_new
            same = [a["labels"] == b["labels"] for a, b in zip(old, new, strict=True)]
            differ += [f"{name} K={a['K']} {a['partitioning']}"
                       for a, ok in zip(old, same, strict=True) if not ok]
            print(f"{name:10s} {t_old:8.2f} {t_new:8.2f} {t_old / t_new:5.2f}x  {all(same)}")
        print(f"{'all':10s} {total_old:8.2f} {total_new:8.2f} {total_old / total_new:5.2f}x  "
              f"{not differ}")
    if differ:
        raise SystemExit(f"labels differ from {rev}'s: {', '.join(differ)}")


def bench_threads(iterations: int) -> None:
    """Wall and CPU seconds of each data set's six runs with ``n_jobs=-1``, here."""
    import os

    import microagg

    microagg.hybrid(_data("census")[:60], 3, K=12, iterations=5, seed=0)
    print(f"n_jobs=-1 ({os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}), "
          f"{iterations} generations")
    print(f"{'data':10s} {'wall s':>8s} {'CPU s':>8s} {'CPU/wall':>9s}")
    for name in DATASETS:
        X = _data(name)
        t, c = time.perf_counter(), time.process_time()
        for K in KS:
            for part in PARTITIONINGS:
                microagg.hybrid(X, 3, K=K, partitioning=part, seed=0, n_jobs=-1,
                                iterations=iterations)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        print(f"{name:10s} {wall:8.2f} {cpu:8.2f} {cpu / wall:9.2f}")


if __name__ == "__main__":
    generations = int(option("--iterations", "10000"))
    if "--threads" in sys.argv:
        bench_threads(generations)
    else:
        bench_against(option("--against", BEFORE), generations)
