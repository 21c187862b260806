"""Benchmark the MDAV family: time and peak memory against a plain numpy MDAV.

Run as a script (not collected by pytest)::

    .venv/bin/python tests/benchmarks/bench_mdav.py           # n = 1e3, 1e4, 1e5
    .venv/bin/python tests/benchmarks/bench_mdav.py --quick   # skip n = 100,000
    .venv/bin/python tests/benchmarks/bench_mdav.py --sizes 100000 --methods mdav,mdav_single

Three tables, every number measured in this run:

1. Time (best of ``--repeat``) and peak memory (``tracemalloc``, a separate
   run) of :func:`microagg.mdav`, :func:`~microagg.mdav_single`,
   :func:`~microagg.vmdav` and :func:`~microagg.ivmdav` on Gaussian data
   (p = 10, k = 3, fixed seed), for n = 1,000, 10,000 and 100,000.
2. The ratio of each method's time to MDAV's, and of :func:`microagg.mdav`
   against the straightforward numpy MDAV
   :func:`microagg.reference.mdav_reference` (distances to all remaining
   records and a full ``argsort`` for every group), measured in the same run
   (not at n = 100,000: it would take far too long).
3. Our :func:`~microagg.mdav` (wall-clock and CPU time) on the inputs of the
   three sdcMicro C++ timings recorded in ``../shared/TOOLCHAIN.md`` (measured
   there, on the same kind of machine, not in this run), with the ratios to C++.

Peak memory is what numpy allocates during the call (input excluded); it grows
as O(n p), never O(n^2): at n = 100,000 an n x n float64 distance matrix would
need 80 GB.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from collections.abc import Callable

import numpy as np

import microagg as ma
from microagg import datasets
from microagg._methods import MDAV_FAMILY, get_method
from microagg.reference import mdav_reference

P, K, SEED = 10, 3, 0

#: sdcMicro's C++ MDAV (k = 3), built from its source and timed on this kind of
#: machine; copied from ../shared/TOOLCHAIN.md ("Reference timings"), seconds.
SDCMICRO_CPP = {"census (1080 x 13)": 0.014, "eia (4092 x 11)": 0.132,
                "gaussian n=20,000 p=10": 3.3}

METHODS: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
    name: get_method(name).function for name in MDAV_FAMILY}


def gaussian(n: int, p: int = P, seed: int = SEED) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, p))


#: CPU seconds of the best run of the last :func:`best_time` call (a shared machine
#: inflates wall-clock times; CPU time is less affected).
LAST_CPU = [0.0]


def best_time(f: Callable[[np.ndarray, int], object], X: np.ndarray, repeat: int) -> float:
    """Best wall-clock time of ``f(X, K)`` over ``repeat`` runs, seconds."""
    best = np.inf
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        f(X, K)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        if wall < best:
            best, LAST_CPU[0] = wall, cpu
    return best


def peak_mib(f: Callable[[np.ndarray, int], object], X: np.ndarray) -> float:
    """Peak memory allocated during ``f(X, K)`` (tracemalloc), MiB."""
    tracemalloc.start()
    try:
        f(X, K)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def row(cells: list[str], widths: list[int]) -> str:
    return "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in
                     enumerate(zip(cells, widths, strict=True)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="skip n = 100,000")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs (default 3)")
    ap.add_argument("--sizes", type=lambda v: [int(x) for x in v.split(",")],
                    help="comma-separated n values (default 1000,10000,100000)")
    ap.add_argument("--methods", type=lambda v: v.split(","), default=list(METHODS),
                    help=f"comma-separated subset of {','.join(METHODS)}")
    args = ap.parse_args(argv)
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    if args.sizes:
        sizes = args.sizes
    unknown = set(args.methods) - set(METHODS)
    if unknown or "mdav" not in args.methods:
        ap.error(f"--methods must include mdav and name only {', '.join(METHODS)}")

    from microagg._jit import HAVE_NUMBA

    for f in METHODS.values():  # warm up: load (or compile) the numba kernels before timing
        f(gaussian(50), K)
    engine = ("engine='auto': indexed from n = 4,000 (p = 10), compiled loops below (numba)"
              if HAVE_NUMBA else "vectorised numpy (numba not installed)")
    print(f"engine: {engine}; tests/benchmarks/bench_scale.py compares the engines")
    print(f"MDAV family on Gaussian data, p = {P}, k = {K}, seed {SEED}; "
          f"time = best of {args.repeat} (1 at n = 100,000), peak memory by tracemalloc")
    print("note: wall-clock times; a machine shared with other jobs inflates them\n")
    widths = [12, 9, 11, 9, 9]
    print(row(["method", "n", "seconds", "cpu s", "peak MiB"], widths))
    ref_times: dict[int, float] = {}
    our_times: dict[int, float] = {}
    all_times: dict[tuple[str, int], float] = {}
    for n in sizes:
        X = gaussian(n)
        repeat = 1 if n >= 100_000 else args.repeat
        for name in args.methods:
            f = METHODS[name]
            t = best_time(f, X, repeat)
            mem = peak_mib(f, X) if n < 100_000 else float("nan")
            all_times[name, n] = t
            if name == "mdav":
                our_times[n] = t
            print(row([name, f"{n:,}", f"{t:.3f}", f"{LAST_CPU[0]:.3f}", f"{mem:.1f}"], widths),
                  flush=True)
        if n < 100_000:
            ref_times[n] = best_time(mdav_reference, X, repeat)
            cpu = LAST_CPU[0]
            mem = peak_mib(mdav_reference, X)
            print(row(["reference", f"{n:,}", f"{ref_times[n]:.3f}", f"{cpu:.3f}", f"{mem:.1f}"],
                      widths), flush=True)
        else:
            print(row(["reference", f"{n:,}", "skipped", "-", "-"], widths), "(too slow)")
        print()

    print("mdav vs the straightforward numpy MDAV (reference.mdav_reference), same run")
    widths2 = [9, 14, 13, 12]
    print(row(["n", "reference s", "mdav s", "speed-up"], widths2))
    for n in sizes:
        if n in ref_times:
            print(row([f"{n:,}", f"{ref_times[n]:.3f}", f"{our_times[n]:.3f}",
                       f"{ref_times[n] / our_times[n]:.1f}x"], widths2))
        else:
            print(row([f"{n:,}", "skipped", f"{our_times[n]:.3f}", "-"], widths2))
    print()

    print("each method's time over mdav's, same run (target at n = 10,000: at most 3)")
    print(row(["method"] + [f"n={n:,}" for n in sizes], [12] + [11] * len(sizes)))
    for name in args.methods:
        print(row([name] + [f"{all_times[name, n] / our_times[n]:.2f}" for n in sizes],
                  [12] + [11] * len(sizes)))
    print()

    print("mdav vs sdcMicro's C++ MDAV (k = 3; C++ times from ../shared/TOOLCHAIN.md)")
    inputs = {"census (1080 x 13)": datasets.standardized("census"),
              "eia (4092 x 11)": datasets.standardized("eia"),
              "gaussian n=20,000 p=10": gaussian(20_000)}
    widths3 = [24, 8, 8, 8, 11, 10]
    print(row(["input", "C++ s", "ours s", "cpu s", "ours / C++", "cpu / C++"], widths3))
    for label, X in inputs.items():
        t = best_time(ma.mdav, X, args.repeat)
        c = SDCMICRO_CPP[label]
        print(row([label, f"{c:.3f}", f"{t:.3f}", f"{LAST_CPU[0]:.3f}", f"{t / c:.2f}",
                   f"{LAST_CPU[0] / c:.2f}"], widths3), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
