"""Benchmark: the DLD search without numba, k-d tree against every record x every row.

Run as a script (not collected by pytest)::

    .venv/bin/python tests/benchmarks/bench_risk.py           # n = 10,000 to 100,000
    .venv/bin/python tests/benchmarks/bench_risk.py --quick   # n = 10,000 and 30,000

On a plain install (no numba) :func:`microagg.distance_linkage_disclosure` searches with
:func:`microagg._risk_kernels._dld_kdtree`; :func:`~microagg._risk_kernels._dld_numpy`,
the dense search it replaced, compares every record with every distinct row. Both run
here on the same releases (Gaussian data, ``p`` attributes, MDAV at ``k = 3``,
standardised), in turn, in one process: the script prints the CPU seconds of each and
their ratio, and fails unless every record's linked fraction is the same. The compiled
kernel's time is printed for reference when numba is installed.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import microagg
from microagg._jit import HAVE_NUMBA
from microagg._risk_kernels import _dld_kdtree, _dld_numpy, distinct_rows, dld_standardized

SIZES = ((10_000, 4), (30_000, 4), (100_000, 4), (10_000, 13), (30_000, 13))
QUICK = ((10_000, 4), (30_000, 4))


def cpu(f):  # type: ignore[no-untyped-def]
    t = time.process_time()
    out = f()
    return time.process_time() - t, out


def main(quick: bool) -> None:
    rng = np.random.default_rng(0)
    print("DLD of an MDAV release (k = 3), CPU seconds; numba", "on" if HAVE_NUMBA else "off")
    print(f"{'n':>8s} {'p':>3s} {'rows':>7s} {'dense':>8s} {'k-d tree':>9s} {'ratio':>7s} "
          f"{'kernel':>7s}  DLD %")
    for n, p in QUICK if quick else SIZES:
        Z = microagg.standardize(rng.normal(size=(n, p)))
        Q = microagg.aggregate(Z, microagg.mdav(Z, 3))
        U, mult, own = distinct_rows(Q)
        t_tree, tree = cpu(lambda Z=Z, U=U, mult=mult, own=own: _dld_kdtree(Z, U, mult, own))
        t_dense, dense = cpu(lambda Z=Z, U=U, mult=mult, own=own: _dld_numpy(Z, U, mult, own))
        if not np.array_equal(tree, dense):
            sys.exit(f"n = {n}, p = {p}: the k-d tree search differs from the dense one")
        kernel = "      -"
        if HAVE_NUMBA:
            kernel = f"{cpu(lambda Z=Z, Q=Q: dld_standardized(Z, Q))[0]:7.2f}"
        print(f"{n:8d} {p:3d} {U.shape[0]:7d} {t_dense:8.2f} {t_tree:9.2f} "
              f"{t_dense / t_tree:6.1f}x {kernel}  {100 * tree.sum() / n:6.2f}", flush=True)


if __name__ == "__main__":
    main("--quick" in sys.argv[1:])
