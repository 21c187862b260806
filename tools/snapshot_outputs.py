"""Fingerprints of the package's outputs, to prove a refactoring changed none of them.

``python tools/snapshot_outputs.py write`` stores, in ``tests/snapshots/outputs.json``, the
SHA-256 of every label array the book's algorithms produce on the reference data (every
method x data set x k of the papers' tables, plus synthetic, tied and GA/hybrid/GOMM runs
from saved seeds) and the exact values (``repr`` of the floats) of the reproduced tables.
``tests/test_snapshot.py`` recomputes them and requires equality, bit for bit.

Only fingerprints and computed statistics are stored: no record of any third-party data set.
Needs the reference data (``make data``).
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "tests" / "snapshots" / "outputs.json"

REAL = ("census", "eia", "tarragona", "water-treatment")
KS = (3, 4, 5, 10)
GAMMA = {"vmdav": {"census": 0.2, "tarragona": 0.2, "eia": 1.1, "water-treatment": 0.2},
         "ivmdav": dict.fromkeys(REAL, 1.16)}


def digest(labels: Any) -> str:
    arr = np.ascontiguousarray(np.asarray(labels, dtype=np.int64))
    return hashlib.sha256(arr.tobytes()).hexdigest()


def _z(name: str) -> np.ndarray:
    import microagg as ma

    return np.asarray(ma.standardize(ma.datasets.load(name).to_numpy(dtype=float)))


def _synthetic() -> Iterator[tuple[str, np.ndarray]]:
    for seed in (0, 1):
        yield f"gauss-2000x10-s{seed}", np.random.default_rng(seed).normal(size=(2000, 10))
    rng = np.random.default_rng(7)
    yield "ties-500x3", rng.integers(0, 4, size=(500, 3)).astype(float)
    yield "dups-300x2", np.repeat(rng.normal(size=(60, 2)), 5, axis=0)


def label_cases() -> Iterator[tuple[str, Callable[[], Any]]]:
    """(key, thunk returning labels) for every label array in the snapshot."""
    import microagg as ma
    from microagg._methods import MDAV_FAMILY, get_method

    fns = {name: get_method(name).function for name in MDAV_FAMILY}
    for name in REAL:
        Z = _z(name)
        for method, f in fns.items():
            for k in KS:
                extra = {"gamma": GAMMA[method][name]} if method in GAMMA else {}
                yield f"labels/{method}/{name}/k{k}", (lambda f=f, Z=Z, k=k, e=extra: f(Z, k, **e))
        for k in KS:
            yield f"labels/vmdav-gamma0/{name}/k{k}", (lambda Z=Z, k=k: ma.vmdav(Z, k, gamma=0.0))
    for name, X in _synthetic():
        for method, f in fns.items():
            for k in (3, 7):
                yield f"labels/{method}/{name}/k{k}", (lambda f=f, X=X, k=k: f(X, k))
    for seed in range(5):
        rng = np.random.default_rng(100 + seed)
        X = rng.normal(size=(int(rng.integers(8, 13)), 2))
        yield f"labels/optimal_partition/s{seed}", (lambda X=X: ma.optimal_partition(X, 3))
        x = rng.normal(size=40)
        yield f"labels/optimal_univariate/s{seed}", (lambda x=x: ma.optimal_univariate(x, 3))
        Y = rng.normal(size=(27, 2))
        yield f"labels/ga_partition/s{seed}", (
            lambda Y=Y, s=seed: ma.ga_partition(Y, 3, iterations=300, seed=s).labels)
    Zc = _z("census")
    for part in ("one-step", "two-step"):
        for K in (12, 18):
            yield f"labels/hybrid/census/{part}/K{K}", (
                lambda part=part, K=K: ma.hybrid(Zc, 3, K=K, partitioning=part, seed=0,
                                                 iterations=200, n_jobs=1))


def _floats(values: Any) -> list[str]:
    return [repr(float(v)) for v in np.asarray(values, dtype=float).ravel()]


def table_cases() -> Iterator[tuple[str, Callable[[], Any]]]:
    """(key, thunk returning a JSON-able value) for the reproduced tables and GOMM runs."""
    import microagg as ma
    from microagg import reproductions as rep

    yield "table/ivmdav-table1", lambda: _floats(rep.ivmdav_table1()["ours"])
    yield "table/vmdav-table1", _vmdav_table1_ils
    yield "table/mdav-readings", lambda: _floats(
        rep.mdav_readings()[["mdav", "mdav_single", "vmdav_gamma0"]].to_numpy())

    def genetic() -> Any:
        t = rep.reproduce_table2(iterations=100, seeds=(0, 1), progress=False, n_jobs=1)
        cols = ["SSE_MDAV", "one_step_clusters", "one_step_SSE", "two_step_clusters",
                "two_step_SSE"]
        return _floats(t[cols].to_numpy())

    yield "table/genetic-table2-reduced", genetic

    def gomm_runs() -> Any:
        # The data as they were when the snapshot was written: Census without ERNVAL and
        # the 380 complete Water-treatment days (``gomm_data`` now reads all 527 days).
        data = {"census": ma.datasets.load("census").drop(columns=["ERNVAL"]),
                "water-treatment": ma.datasets.load("water-treatment")}
        out = {}
        for name, k in (("census", 5), ("water-treatment", 10)):
            X = data[name]
            for seed in (0, 1):
                for dynamic in (False, True):
                    r = ma.gomm(X, k, population=20, generations=6, crossovers=3,
                                mutations_per_operator=2, dynamic=dynamic, seed=seed,
                                progress=False, patience=2, shared_cache=False)
                    key = f"{name}/k{k}/s{seed}/{'d' if dynamic else ''}gomm"
                    out[key] = {"groups": r.groups, "score": repr(r.score),
                                "best": _floats(r.history["best"]),
                                "operators": _floats(r.operators[["children", "improved",
                                                                  "unused_pct", "life_time"]]
                                                     .to_numpy())}
        return out

    yield "gomm/runs", gomm_runs


def _vmdav_table1_ils() -> list[str]:
    """IL of MDAV and of V-MDAV (the paper's gamma rule) on the real rows of V-MDAV's Table 1,
    in the published order: the values the table showed before the restructuring."""
    import microagg as ma

    pub = ma.published.table("vmdav", 1, metric="IL", dataset=["census", "eia", "tarragona"],
                             method=["mdav", "vmdav"])
    types = ma.published.table("vmdav", 1, metric="type")
    out = []
    for r in pub.itertuples():
        Z = ma.datasets.standardized(r.dataset)
        label = types[(types.dataset == r.dataset) & (types.k == r.k)]["value"].iloc[0]
        labels = (ma.mdav(Z, r.k) if r.method == "mdav"
                  else ma.vmdav(Z, r.k, gamma=1.1 if label == 1 else 0.2))
        out.append(ma.information_loss(Z, labels))
    return _floats(out)


def compute() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, thunk in label_cases():
        out[key] = digest(thunk())
    for key, thunk in table_cases():
        out[key] = thunk()
    return out


def main(argv: list[str]) -> int:
    if argv[1:] != ["write"]:
        print("usage: python tools/snapshot_outputs.py write", file=sys.stderr)
        return 2
    SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
    SNAPSHOT.write_text(json.dumps(compute(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {SNAPSHOT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
