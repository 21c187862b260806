"""The MDAV family's labels on a fixed corpus, as stored hashes: a change of engine code must
not change one label.

``tests/mdav_hashes.json`` holds the SHA-256 of the int64 labels of MDAV, MDAV-single,
V-MDAV and IV-MDAV (default parameters) for each data set of :data:`CORPUS` and each of
its ``k``. The engines give the same labels by contract (``microagg._mdav``), so one
hash per data set, ``k`` and method is stored, and every engine must reproduce it; the
test is parametrized by engine, so a broken engine is named. (The file was written by
main at b1d345d, before the engines were reorganised, with every engine but the slow
pairs below computing each hash and all of them agreeing.)

The quadratic engines (loops, numpy) on the 50,000-record set take minutes; they run
with ``pytest -m slow`` or ``MICROAGG_SLOW=1``. The indexed engine covers that set's
hashes in every run.

Regenerate (only after a deliberate change of results, and say so in the commit)::

    .venv/bin/python tests/test_mdav_hashes.py --write
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import switches

from microagg import datasets
from microagg._mdav.dispatch import ENGINES as _ENGINES
from microagg._methods import MDAV_FAMILY, get_method

HASHES = Path(__file__).with_name("mdav_hashes.json")
METHODS = {name: get_method(name).function for name in MDAV_FAMILY}
ENGINES = tuple(_ENGINES)  # every engine the package has: a new one is checked too
#: data set name -> (description, values of k)
CORPUS = {
    "census": ("Census, standardised (population std)", (3, 10)),
    "eia": ("EIA, standardised", (3, 10)),
    "tarragona": ("Tarragona, standardised", (3, 10)),
    "gauss10k_p10": ("Gaussian, n = 10,000, p = 10, seed 0", (3,)),
    "gauss10k_p2": ("Gaussian, n = 10,000, p = 2, seed 0", (3,)),
    "gauss50k_p10": ("Gaussian, n = 50,000, p = 10, seed 0", (3,)),
    "ties": ("integers -3..3, n = 3,000, p = 3, seed 1: exact ties and duplicates", (3, 10)),
}
#: (data set, engine) pairs that take minutes: run only when asked for
SLOW = {("gauss50k_p10", "loops"), ("gauss50k_p10", "numpy")}


@functools.cache
def corpus_data(name: str) -> np.ndarray:
    if name in ("census", "eia", "tarragona"):
        return datasets.standardized(name)
    if name == "ties":
        return np.random.default_rng(1).integers(-3, 4, size=(3000, 3)).astype(float)
    n = {"gauss10k_p10": 10_000, "gauss10k_p2": 10_000, "gauss50k_p10": 50_000}[name]
    p = 2 if name.endswith("p2") else 10
    return np.random.default_rng(0).normal(size=(n, p))


def label_hash(labels: np.ndarray) -> str:
    return hashlib.sha256(np.asarray(labels, dtype="<i8").tobytes()).hexdigest()


def compute(name: str, engine: str) -> dict[str, str]:
    """``{"<data set>/k<k>/<method>": hash}`` for one data set on one engine."""
    X = corpus_data(name)
    return {f"{name}/k{k}/{method}": label_hash(f(X, k, engine=engine))
            for k in CORPUS[name][1] for method, f in METHODS.items()}


def _slow_wanted(request: pytest.FixtureRequest) -> bool:
    return "slow" in (request.config.getoption("markexpr") or "") or switches.SLOW


@pytest.mark.data
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", CORPUS)
def test_labels_unchanged(name: str, engine: str, request: pytest.FixtureRequest) -> None:
    if (name, engine) in SLOW and not _slow_wanted(request):
        pytest.skip("minutes (quadratic engine at n = 50,000): run with -m slow "
                    "(or MICROAGG_SLOW=1); the indexed engine checks these hashes")
    stored = json.loads(HASHES.read_text())["hashes"]
    got = compute(name, engine)
    changed = sorted(key for key, h in got.items() if stored.get(key) != h)
    assert not changed, f"labels changed for {changed}"


def test_every_combination_is_stored() -> None:
    stored = json.loads(HASHES.read_text())["hashes"]
    want = {f"{name}/k{k}/{method}" for name, (_, ks) in CORPUS.items()
            for k in ks for method in METHODS}
    assert set(stored) == want


if __name__ == "__main__":  # pragma: no cover - regenerates the stored hashes
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/test_mdav_hashes.py --write")
    hashes: dict[str, str] = {}
    for name in CORPUS:
        for engine in ENGINES:
            if (name, engine) in SLOW:
                continue
            got = compute(name, engine)
            assert all(hashes.setdefault(key, h) == h for key, h in got.items()), (name, engine)
            print(name, engine, flush=True)
    doc = {"about": "SHA-256 of the int64 labels; see tests/test_mdav_hashes.py",
           "corpus": {name: desc for name, (desc, _) in CORPUS.items()},
           "hashes": dict(sorted(hashes.items()))}
    HASHES.write_text(json.dumps(doc, indent=1) + "\n")
