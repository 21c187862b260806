"""Benchmark the MDAV family at scale: indexed engine against the quadratic loops.

Run as a script (not collected by pytest)::

    .venv/bin/python tests/benchmarks/bench_scale.py            # n = 1e3 .. 1e6, p = 10
    .venv/bin/python tests/benchmarks/bench_scale.py --quick    # n = 1e3 .. 1e5
    .venv/bin/python tests/benchmarks/bench_scale.py --sizes 100000 --methods mdav \\
        --p 2,5,10,20 --data gaussian,clustered

For every data kind x p x n x method, one row, every number measured in this run:

* wall-clock and CPU seconds of the indexed engine (``engine="indexed"``) and of the
  compiled loops (``engine="loops"``, the quadratic engine; best of ``--repeat`` below
  n = 100,000, else one run). The loops are skipped above ``--loops-max`` records
  (default 100,000: at 10^6 MDAV would take about an hour), and the row says so;
* ``speed-up``: loops CPU seconds over indexed CPU seconds;
* ``peak MiB``: peak memory allocated during a separate indexed run (tracemalloc; it sees
  the compiled kernels' arrays too), input excluded, up to ``--memory-max`` records;
* ``same``: whether the two engines' labels are identical ("not compared" where the loops
  were skipped);
* ``auto``: the engine ``engine="auto"`` picks for that method and data
  (:func:`microagg._mdav.dispatch.choose_engine`), beside the times that justify it.

Where auto should switch (``--breakeven``): for each data kind x method x p, n walks up
the sizes (default 500 .. 64,000, doubling) until the indexed engine has been clearly
faster (loops/indexed CPU >= 1.25) at two sizes in a row. At each n both engines run
``--repeat`` times in alternating order (best of 3 below 16,000 records, 2 above); the
row shows the median CPU seconds, the median of the per-repeat ratios loops/indexed with
their range, and auto's choice. After each walk, the break-even n (where the ratio
crosses 1, interpolated on log-log scales between the two sizes around it) and its
range (the same from the smallest and the largest ratios)::

    nice -n 5 .venv/bin/python tests/benchmarks/bench_scale.py --breakeven \
        --methods mdav --p 2,5,10,20,40
    nice -n 5 .venv/bin/python tests/benchmarks/bench_scale.py --breakeven --data eia,census

The real sets (``eia``, ``census``: standardised, :func:`microagg.datasets.standardized`)
have one size and one p each: one row per method, no walk.

Data: Gaussian (``standard_normal``) or clustered (:func:`microagg.datasets.synthetic_clustered`,
clusters of 3-5 records), fixed seed, k = 3 (``--k``). CPU time is less affected than
wall-clock time by other jobs on a shared machine; both are printed.

Before and after a change (``--baseline``): the same measurements on this checkout and on
another one (for example the old commit in a ``git worktree``), in one run::

    git worktree add ../base main --detach
    .venv/bin/python tests/benchmarks/bench_scale.py --baseline ../base --sizes 10000,100000

Each round runs one fresh process per checkout (the other checkout's ``microagg`` first on
``PYTHONPATH``; kernels loaded before timing), the two in alternating order; each process
times every method x n once on the indexed engine, and on the loops up to ``--loops-max``.
After ``--rounds`` rounds, one row per method x n x engine: the median CPU seconds of
each checkout and their ratio (this / baseline), with the spread of the per-round ratios.
The labels of the two checkouts are compared too (hash of each run's labels).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np

import microagg as ma
from microagg._mdav.dispatch import choose_engine
from microagg._methods import MDAV_FAMILY, get_method

SEED = 0
METHODS: dict[str, Callable[..., np.ndarray]] = {
    name: get_method(name).function for name in MDAV_FAMILY}
DATA = ("gaussian", "clustered")
REAL = ("eia", "census")  # standardised reference sets (one size each; --breakeven only)


def make_data(kind: str, n: int, p: int) -> np.ndarray:
    if kind == "gaussian":
        return np.random.default_rng(SEED).standard_normal((n, p))
    if kind in REAL:
        return np.array(ma.datasets.standardized(kind))
    return ma.datasets.synthetic_clustered(n, p, seed=SEED)


def auto_choice(name: str, X: np.ndarray) -> str:
    """The engine ``engine="auto"`` runs for this method on ``X``."""
    return choose_engine("auto", X, method=name)


def timed(f: Callable[..., np.ndarray], X: np.ndarray, k: int, engine: str,
          repeat: int) -> tuple[float, float, np.ndarray]:
    """Best wall-clock time over ``repeat`` runs, that run's CPU time, and the labels."""
    best, cpu, labels = np.inf, np.inf, np.empty(0)
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        labels = f(X, k, engine=engine)
        wall, used = time.perf_counter() - t0, time.process_time() - c0
        if wall < best:
            best, cpu = wall, used
    return best, cpu, labels


def peak_mib(f: Callable[..., np.ndarray], X: np.ndarray, k: int) -> float:
    """Peak memory allocated during ``f(X, k, engine="indexed")`` (tracemalloc), MiB."""
    tracemalloc.start()
    try:
        f(X, k, engine="indexed")
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def row(cells: list[str], widths: list[int]) -> str:
    return "  ".join(c.rjust(w) if i > 2 else c.ljust(w) for i, (c, w) in
                     enumerate(zip(cells, widths, strict=True)))


WIDTHS = [10, 3, 12, 10, 9, 9, 9, 9, 9, 9, 13, 8]
HEADER = ["data", "p", "method", "n", "idx s", "idx cpu", "loops s", "loops cpu", "speed-up",
          "peak MiB", "same", "auto"]


def measure(kind: str, p: int, n: int, name: str, args: argparse.Namespace) -> list[str]:
    """One table row: both engines on one data set, every number measured now."""
    X = make_data(kind, n, p)
    f = METHODS[name]
    repeat = args.repeat if n < 100_000 else 1
    t_idx, c_idx, lab_idx = timed(f, X, args.k, "indexed", repeat)
    if n <= args.loops_max:
        t_loop, c_loop, lab_loop = timed(f, X, args.k, "loops", repeat)
        loops = [f"{t_loop:.3f}", f"{c_loop:.3f}", f"{c_loop / c_idx:.1f}x"]
        same = "yes" if np.array_equal(lab_idx, lab_loop) else "NO"
    else:
        loops = ["skipped", "-", "-"]
        same = "not compared"
    mem = f"{peak_mib(f, X, args.k):.1f}" if n <= args.memory_max else "-"
    return [kind, str(p), name, f"{n:,}", f"{t_idx:.3f}", f"{c_idx:.3f}", *loops, mem, same,
            auto_choice(name, X)]


def paired(f: Callable[..., np.ndarray], X: np.ndarray, k: int,
           repeat: int) -> tuple[float, float, list[float], bool]:
    """Both engines ``repeat`` times, in alternating order: median CPU seconds of the loops
    and of the indexed engine, the per-repeat ratios loops / indexed, identical labels."""
    loops, idx, same = [], [], True
    for r in range(repeat):
        runs = {}
        for engine in ("loops", "indexed") if r % 2 == 0 else ("indexed", "loops"):
            c0 = time.process_time()
            runs[engine] = f(X, k, engine=engine)
            (loops if engine == "loops" else idx).append(time.process_time() - c0)
        same = same and bool(np.array_equal(runs["loops"], runs["indexed"]))
    ratios = [a / b for a, b in zip(loops, idx, strict=True)]
    return statistics.median(loops), statistics.median(idx), ratios, same


def crossing(points: list[tuple[int, float]]) -> str:
    """Where the ratio loops / indexed crosses 1 along ``(n, ratio)``: interpolated on
    log-log scales between the last size below 1 and the next; "<= n" or "> n" if it
    does not cross inside the sizes measured."""
    if points[0][1] >= 1:
        return f"<={points[0][0]:,}"
    for (n0, r0), (n1, r1) in zip(points, points[1:], strict=False):
        if r0 < 1 <= r1:
            t = -np.log(r0) / (np.log(r1) - np.log(r0))
            return f"{np.exp(np.log(n0) + t * (np.log(n1) - np.log(n0))):,.0f}"
    return f">{points[-1][0]:,}"


def breakeven(args: argparse.Namespace, sizes: list[int]) -> int:
    """``--breakeven``: walk n up per method x p until the indexed engine clearly wins."""
    widths = [8, 3, 12, 8, 9, 9, 8, 11, 5, 8]
    print(f"MDAV family, k = {args.k}, seed {SEED}: CPU seconds (median of the repeats), "
          f"ratio = loops / indexed (median, range of the repeats)\n")
    print(row(["data", "p", "method", "n", "loops cpu", "idx cpu", "ratio", "range",
               "same", "auto"], widths))
    summary = []
    for kind in args.data:
        real = kind in REAL
        for name in args.methods:
            for p in [0] if real else args.p:
                points: list[tuple[int, float, float, float]] = []
                clear = 0
                for n in [0] if real else sizes:
                    X = make_data(kind, n, p)
                    repeat = args.repeat if X.shape[0] < 16_000 else min(args.repeat, 2)
                    c_loop, c_idx, ratios, same = paired(METHODS[name], X, args.k, repeat)
                    mid = statistics.median(ratios)
                    points.append((X.shape[0], mid, min(ratios), max(ratios)))
                    print(row([kind, str(X.shape[1]), name, f"{X.shape[0]:,}",
                               f"{c_loop:.3f}", f"{c_idx:.3f}", f"{mid:.2f}",
                               f"{min(ratios):.2f}-{max(ratios):.2f}",
                               "yes" if same else "NO", auto_choice(name, X)], widths),
                          flush=True)
                    clear = clear + 1 if mid >= 1.25 else 0
                    if clear == 2:
                        break
                if not real:
                    mids = crossing([(n, m) for n, m, _, _ in points])
                    # the most favourable ratios cross first, the least favourable last
                    lo = crossing([(n, hi) for n, _, _, hi in points])
                    hi = crossing([(n, lo) for n, _, lo, _ in points])
                    summary.append(f"{kind:8}  p = {p:2}  {name:12} break-even n {mids:>9} "
                                   f"(range {lo} .. {hi})")
    if summary:
        print("\n" + "\n".join(summary))
    return 0


def child(args: argparse.Namespace, sizes: list[int]) -> int:
    """One process of a ``--baseline`` round: CPU seconds (and a label hash) per
    method x n x engine, as one JSON object on stdout."""
    for f in METHODS.values():  # load (or compile) the kernels before timing
        for engine in ("indexed", "loops"):
            f(make_data("gaussian", 300, 3), 3, engine=engine)
    out = {}
    for kind in args.data:
        for p in args.p:
            for n in sizes:
                X = make_data(kind, n, p)
                for name in args.methods:
                    for engine in ("indexed", "loops") if n <= args.loops_max else ("indexed",):
                        c0 = time.process_time()
                        labels = METHODS[name](X, args.k, engine=engine)
                        cpu = time.process_time() - c0
                        digest = hashlib.sha256(labels.astype("<i8").tobytes()).hexdigest()
                        out[f"{kind}|{p}|{n}|{name}|{engine}"] = [cpu, digest[:16]]
    print(json.dumps({"microagg": ma.__file__, "times": out}))
    return 0


def against(args: argparse.Namespace, argv: list[str]) -> int:
    """``--baseline``: alternate fresh processes of this checkout and the baseline."""
    here = Path(__file__).resolve().parents[2]
    base = Path(args.baseline).resolve()
    if not (base / "microagg" / "__init__.py").is_file():
        sys.exit(f"--baseline {base}: no microagg/ package there")
    skip = {"--baseline", "--rounds"}
    rest, i = [], 0
    while i < len(argv):  # the same options, without --baseline/--rounds
        if argv[i] in skip:
            i += 2
            continue
        if argv[i].split("=")[0] in skip:
            i += 1
            continue
        rest.append(argv[i])
        i += 1
    runs: dict[str, list[dict[str, list]]] = {"this": [], "baseline": []}
    for r in range(args.rounds):
        order = [("this", here), ("baseline", base)]
        for side, root in order if r % 2 == 0 else order[::-1]:
            env = dict(os.environ, PYTHONPATH=str(root))
            done = subprocess.run([sys.executable, __file__, "--child", *rest], env=env,
                                  capture_output=True, text=True, check=True)
            result = json.loads(done.stdout.strip().splitlines()[-1])
            if not result["microagg"].startswith(str(root)):
                sys.exit(f"the {side} process imported {result['microagg']}, not {root}")
            runs[side].append(result["times"])
        print(f"round {r + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    print(f"MDAV family, k = {args.k}, seed {SEED}: CPU seconds, median of {args.rounds} rounds "
          f"(fresh processes, alternating order)")
    print(f"this:     {here}\nbaseline: {base}\n")
    widths = [10, 3, 12, 9, 8, 9, 9, 7, 13, 6]
    print(row(["data", "p", "method", "n", "engine", "this s", "base s", "ratio",
               "ratio range", "same"], widths))
    for key in runs["this"][0]:
        kind, p, n, name, engine = key.split("|")
        mine = [t[key][0] for t in runs["this"]]
        theirs = [t[key][0] for t in runs["baseline"]]
        ratios = sorted(a / b for a, b in zip(mine, theirs, strict=True))
        same = {t[key][1] for t in runs["this"] + runs["baseline"]}
        print(row([kind, p, name, f"{int(n):,}", engine, f"{statistics.median(mine):.3f}",
                   f"{statistics.median(theirs):.3f}",
                   f"{statistics.median(mine) / statistics.median(theirs):.3f}",
                   f"{ratios[0]:.2f}-{ratios[-1]:.2f}", "yes" if len(same) == 1 else "NO"],
                  widths), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ints = lambda v: [int(x) for x in v.split(",")]  # noqa: E731
    ap.add_argument("--sizes", type=ints, help="comma-separated n (default 1e3,1e4,1e5,1e6)")
    ap.add_argument("--quick", action="store_true", help="n up to 100,000 only")
    ap.add_argument("--methods", type=lambda v: v.split(","), default=list(METHODS),
                    help=f"comma-separated subset of {','.join(METHODS)}")
    ap.add_argument("--p", type=ints, default=[10], help="comma-separated p (default 10)")
    ap.add_argument("--data", type=lambda v: v.split(","), default=["gaussian"],
                    help=f"comma-separated subset of {','.join(DATA)}")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs below n=1e5")
    ap.add_argument("--loops-max", type=int, default=100_000,
                    help="largest n timed on the quadratic loops (default 100,000)")
    ap.add_argument("--memory-max", type=int, default=1_000_000,
                    help="largest n whose peak memory is measured (a separate run)")
    ap.add_argument("--baseline", metavar="DIR",
                    help="a checkout of another commit: time both, in alternating processes")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of --baseline (default 5)")
    ap.add_argument("--breakeven", action="store_true",
                    help="walk n up to where the indexed engine wins, per method x p")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    argv = sys.argv[1:] if argv is None else argv
    args = ap.parse_args(argv)
    walk = [500 * 2**i for i in range(8)]  # 500 .. 64,000
    sizes = args.sizes or (walk if args.breakeven else [1_000, 10_000, 100_000] if args.quick
                           else [1_000, 10_000, 100_000, 1_000_000])
    kinds = DATA + REAL if args.breakeven else DATA
    if set(args.methods) - set(METHODS) or set(args.data) - set(kinds):
        ap.error(f"--methods from {', '.join(METHODS)}; --data from {', '.join(kinds)}")
    if args.child:
        return child(args, sizes)
    if args.baseline:
        return against(args, argv)

    from microagg._jit import HAVE_NUMBA

    if not HAVE_NUMBA:
        print("numba is not installed: both engines run as plain Python (very slow)")
    for f in METHODS.values():  # warm up: load (or compile) the kernels before timing
        for engine in ("indexed", "loops"):
            f(make_data("gaussian", 300, 3), 3, engine=engine)
    if args.breakeven:
        return breakeven(args, sizes)
    print(f"MDAV family, k = {args.k}, seed {SEED}; indexed engine vs compiled loops "
          f"(loops skipped above n = {args.loops_max:,}).")
    print("Wall-clock and CPU seconds; speed-up = loops CPU / indexed CPU. On a shared "
          "machine wall-clock times include waiting for the CPU.\n")
    print(row(HEADER, WIDTHS))
    for kind in args.data:
        for p in args.p:
            for n in sizes:
                for name in args.methods:
                    print(row(measure(kind, p, n, name, args), WIDTHS), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
