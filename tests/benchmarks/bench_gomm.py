"""Benchmark: where GOMM's time goes, and what caching and compiled kernels buy.

Run as a script (not collected by pytest)::

    .venv/bin/python tests/benchmarks/bench_gomm.py          # kernels + one paper-setting run
    .venv/bin/python tests/benchmarks/bench_gomm.py --quick  # kernels only
    .venv/bin/python tests/benchmarks/bench_gomm.py --rivals  # the rival search, 7ee98b8 vs this
    .venv/bin/python tests/benchmarks/bench_gomm.py --against c1d8519  # old code vs this
    .venv/bin/python tests/benchmarks/bench_gomm.py --against HEAD --rounds 3  # best of 3

``--against REV`` checks out ``REV`` (default: :data:`BEFORE_FAST_PATH`, the code
before issue 25's fast scorer) in a temporary git worktree, runs the same
paper-setting GOMM runs there (in a subprocess importing that ``microagg``) and
here, in turn, prints the ratio of CPU seconds and fails unless groupings, measures, the score of
every member of every generation and the history are identical.

Targets (chapter 6): one GOMM run at the paper's settings (population 200, 100
generations, 25 crossovers + 5 x 10 mutations per generation) on Census (12
attributes) at k = 25 in <= 60 s on two cores; the whole reproduction
(``microagg.gomm.reproduce()``) in <= 15 minutes. Times are wall-clock and CPU
seconds (CPU time is what to compare when other jobs share the machine).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from _against import HERE, old_checkout, run_with  # this folder (run as a script)

import microagg
from microagg._risk_kernels import (
    _dld_kdtree,
    _dld_numpy,
    distinct_rows,
    dld_standardized,
    principal_axes,
)
from microagg.reproductions import gomm_data


def best_of(f, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.process_time()
        f()
        times.append(time.process_time() - t)
    return min(times)


def naive_dld(Z: np.ndarray, Q: np.ndarray) -> float:
    """The definition with a full n x n distance matrix (what we avoid)."""
    D = np.zeros((len(Z), len(Q)))
    for c in range(Z.shape[1]):
        t = Z[:, c, None] - Q[None, :, c]
        D += t * t
    own = np.diag(D)
    best = D.min(axis=1)
    tied = (D == best[:, None]).sum(axis=1)
    return 100.0 * float(np.where(own == best, 1.0 / tied, 0.0).sum()) / len(Z)


def releases(Z: np.ndarray, k: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    p = Z.shape[1]
    half = list(range(p // 2)), list(range(p // 2, p))
    out = {}
    for name, groups in {"1 group": [list(range(p))], "2 groups": list(half),
                         "univariate": [[c] for c in range(p)]}.items():
        Q = np.empty_like(Z)
        keys = []
        for g in groups:
            lab = microagg.mdav(np.ascontiguousarray(Z[:, g]), k)
            Q[:, g] = microagg.aggregate(Z[:, g], lab)
            keys.append(lab)
        out[name] = (Q, np.vstack(keys))
    return out


def bench_kernels() -> None:
    print("DLD on one release (CPU ms, best of 5)")
    print(f"{'data':16s} {'release':11s} {'n x n numpy':>12s} {'blocked numpy':>14s} "
          f"{'k-d tree':>9s} {'kernel':>8s} {'ratio':>7s}  DLD %")
    for name in ("census", "water-treatment"):
        Z = microagg.standardize(gomm_data(name).to_numpy())
        axes = principal_axes(Z)
        for rel, (Q, keys) in releases(Z, 5).items():
            ref = naive_dld(Z, Q)
            fast = dld_standardized(Z, Q, keys, axes)
            assert abs(ref - fast) < 1e-9, (ref, fast)
            U, mult, own = distinct_rows(Q, keys)
            t_naive = best_of(lambda Z=Z, Q=Q: naive_dld(Z, Q))
            t_block = best_of(lambda Z=Z, U=U, mult=mult, own=own: _dld_numpy(Z, U, mult,
                                                                                    own))
            t_tree = best_of(lambda Z=Z, U=U, mult=mult, own=own: _dld_kdtree(Z, U, mult, own))
            t_fast = best_of(lambda Z=Z, Q=Q, keys=keys, W=axes: dld_standardized(
                Z, Q, keys, W))
            print(f"{name:16s} {rel:11s} {1e3 * t_naive:12.2f} {1e3 * t_block:14.2f} "
                  f"{1e3 * t_tree:9.2f} {1e3 * t_fast:8.2f} {t_naive / t_fast:6.1f}x  {fast:6.2f}")
    print()
    print()


#: The last commit before the rival search's list was grown outside its loop.
BEFORE_RIVALS = "7ee98b8"

_RIVALS = """
import hashlib, json, sys, time
import numpy as np
import microagg
from microagg._risk_kernels import rival_clusters, rival_margin
out = []
for path in sys.argv[1:]:
    Z = microagg.standardize(np.load(path))
    margin = rival_margin(Z)
    for w in sorted({2, 6, Z.shape[1] // 2}):
        sub = np.ascontiguousarray(Z[:, :w])
        for k in (5, 25, 100):
            labels = microagg.mdav(sub, k)
            cen = np.vstack([sub[labels == g].mean(axis=0) for g in range(labels.max() + 1)])
            ptr, cl = rival_clusters(sub, labels, cen, margin)
            best = np.inf
            for _ in range(5):
                t = time.process_time()
                for _ in range(20):
                    rival_clusters(sub, labels, cen, margin)
                best = min(best, (time.process_time() - t) / 20)
            digest = hashlib.sha256(ptr.tobytes() + cl.tobytes()).hexdigest()
            out.append([w, k, best, int(cl.size), digest])
print(json.dumps(out))
"""


def bench_rivals(rev: str) -> None:
    """The rival search (:func:`microagg._risk_kernels.rival_clusters`) on MDAV's attribute
    groups of the papers' data, ``rev``'s code against this checkout's, in turn (each in a
    subprocess): CPU ms a call (best of 5 rounds of 20), and the same lists."""
    print(f"Rival clusters of one attribute group (CPU ms a call): {rev} against this checkout")
    print(f"{'data':16s} {'columns':>7s} {'k':>4s} {'old':>8s} {'new':>8s} {'ratio':>6s}  pairs")
    with old_checkout(rev) as base:
        for name in ("census", "water-treatment"):
            data = base.parent / f"{name}.npy"
            np.save(data, gomm_data(name).to_numpy())
            old = run_with(base, _RIVALS, data)
            new = run_with(HERE, _RIVALS, data)
            for (w, k, t_old, pairs, h_old), (_, _, t_new, _, h_new) in zip(old, new, strict=True):
                assert h_old == h_new, f"{name} w={w} k={k}: the lists differ"
                print(f"{name:16s} {w:7d} {k:4d} {1e3 * t_old:8.3f} {1e3 * t_new:8.3f} "
                      f"{t_old / t_new:5.1f}x  {pairs}")
    print()


def bench_run() -> None:
    print("One GOMM / D-GOMM run at the paper's settings, empty caches")
    print(f"{'data':16s} {'k':>4s} {'variant':7s} {'wall s':>7s} {'CPU s':>7s} {'children':>9s} "
          f"{'scored':>7s} {'groups MDAV':>12s} {'score':>7s} {'groups':>6s}")
    for name, k in (("census", 25), ("water-treatment", 25)):
        X = gomm_data(name)
        for dynamic in (False, True):
            c = time.process_time()
            r = microagg.gomm(X, k, seed=0, progress=False, dynamic=dynamic, shared_cache=False)
            cpu = time.process_time() - c
            children = int(r.operators["children"].sum()) + r.settings["population"]
            print(f"{name:16s} {k:4d} {'D-GOMM' if dynamic else 'GOMM':7s} {r.elapsed:7.1f} "
                  f"{cpu:7.1f} {children:9d} {r.evaluations:7d} {r.group_microaggregations:12d} "
                  f"{r.score:7.2f} {r.n_groups:6d}")
    print("children = groupings the GA asked to score; scored = distinct groupings actually "
          "scored (the rest were cache hits); groups MDAV = attribute groups microaggregated.")


#: The last commit before the fast GOMM scorer (issue 25: at least 4x faster, same runs).
BEFORE_FAST_PATH = "c1d8519"
#: Paper-setting runs compared by ``--against``: (data, k).
AGAINST_RUNS = (("water-treatment", 5), ("water-treatment", 25), ("census", 25))

_RUN_ONE = """
import json, sys, time
import numpy as np
import microagg
from microagg import _gomm_eval
X = np.load(sys.argv[1])
k = int(sys.argv[2])
in_dld = [0.0]
if hasattr(_gomm_eval, "dld_assembled"):  # the DLD kernel's own share (code since c1d8519)
    kernel = _gomm_eval.dld_assembled
    def timed(*args):
        c = time.process_time()
        out = kernel(*args)
        in_dld[0] += time.process_time() - c
        return out
    _gomm_eval.dld_assembled = timed
microagg.gomm(X, k, population=4, generations=1, progress=False)  # compile first
in_dld[0] = 0.0
c = time.process_time()
r = microagg.gomm(X, k, seed=0, progress=False, shared_cache=False)
cpu = time.process_time() - c
print(json.dumps({"cpu": cpu, "dld_cpu": in_dld[0], "groups": r.groups, "il": r.il,
                  "id": r.id, "dld": r.dld, "score": r.score,
                  "population_scores": r.population_scores.tolist(),
                  "best": r.history["best"].tolist(), "evaluations": r.evaluations}))
"""


def _run_in(root: Path, data: Path, k: int) -> dict:
    """One paper-setting GOMM run (seed 0) with the ``microagg`` found under ``root``."""
    return run_with(root, _RUN_ONE, data, k)


def bench_against(rev: str, rounds: int = 1) -> None:
    """Old (``rev``) against this checkout, in turn, on the runs of :data:`AGAINST_RUNS`."""
    print(f"One GOMM run at the paper's settings (seed 0, empty cache): {rev} against this "
          "checkout, CPU seconds (best of the rounds); of which in the DLD kernel "
          "(dld_assembled, where both have it)")
    print(f"{'data':16s} {'k':>4s} {'old s':>8s} {'new s':>8s} {'ratio':>6s}  "
          f"{'old DLD':>8s} {'new DLD':>8s} {'ratio':>6s}  identical")
    with old_checkout(rev) as base:
        total_old = total_new = 0.0
        for name, k in AGAINST_RUNS:
            data = base.parent / f"{name}.npy"
            np.save(data, gomm_data(name).to_numpy())
            pairs = [(_run_in(base, data, k), _run_in(HERE, data, k)) for _ in range(rounds)]
            old = [a for a, _ in pairs]  # (in turn, so that both meet the same neighbours)
            new = [b for _, b in pairs]
            t_old = min(r["cpu"] for r in old)
            t_new = min(r["cpu"] for r in new)
            total_old += t_old
            total_new += t_new
            d_old = min(r["dld_cpu"] for r in old)
            d_new = min(r["dld_cpu"] for r in new)
            same = all({**a, "cpu": 0, "dld_cpu": 0} == {**new[0], "cpu": 0, "dld_cpu": 0}
                       for a in old + new)
            dld = (f"{d_old:8.2f} {d_new:8.2f} {d_old / d_new:5.2f}x" if d_old and d_new
                   else f"{'':8s} {d_new:8.2f} {'':6s}")
            print(f"{name:16s} {k:4d} {t_old:8.2f} {t_new:8.2f} {t_old / t_new:5.2f}x  "
                  f"{dld}  {same}")
            assert same, f"{name} k={k}: the runs differ"
        print(f"{'all':21s} {total_old:8.2f} {total_new:8.2f} {total_old / total_new:5.2f}x")


if __name__ == "__main__":
    if "--rivals" in sys.argv:
        at = sys.argv.index("--rivals") + 1
        bench_rivals(sys.argv[at] if at < len(sys.argv) else BEFORE_RIVALS)
        sys.exit()
    if "--against" in sys.argv:
        at = sys.argv.index("--against") + 1
        rev = sys.argv[at] if at < len(sys.argv) and not sys.argv[at].startswith("--") \
            else BEFORE_FAST_PATH
        rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 1
        bench_against(rev, rounds)
        sys.exit()
    microagg.gomm(gomm_data("census"), 25, population=4, generations=1, progress=False)  # JIT
    bench_kernels()
    if "--quick" not in sys.argv:
        bench_run()
