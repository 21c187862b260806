"""Helpers shared by the tests (importable as ``helpers``: ``tests`` is on the path)."""

from __future__ import annotations

import ast
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import strategies as st

import microagg as ma
from microagg._mdav.dispatch import assign_leftovers
from microagg._mdav.kernels import sqdist


def default(function: Any, name: str) -> Any:
    """The default value of keyword ``name`` in ``function``'s signature."""
    return inspect.signature(function).parameters[name].default


def engine_labels(engine: Any, name: str, X: Any, k: int, *, gamma: float | None = None,
                  candidates: int | None = None, self_neighbour: bool = True) -> np.ndarray:
    """Run method ``name`` on an engine module (or anything with its four functions), with
    the preparation the public functions make (the engine contract of ``microagg._mdav``)."""
    arr = np.ascontiguousarray(X, dtype=float)
    if name in ("mdav", "mdav_single"):
        return getattr(engine, name)(arr, k, arr.sum(axis=0))
    if name == "vmdav":
        gamma = default(ma.vmdav, "gamma") if gamma is None else gamma
        labels = engine.vmdav(arr, k, float(gamma), sqdist(arr, arr.mean(axis=0)))
        return assign_leftovers(arr, labels, "centroid")
    if name != "ivmdav":
        raise ValueError(f"engine_labels knows mdav, mdav_single, vmdav and ivmdav, not "
                         f"{name!r}: add the preparation its public function makes")
    gamma = default(ma.ivmdav, "gamma") if gamma is None else gamma
    m = min(candidates or 2 * k, arr.shape[0])
    return engine.ivmdav(arr, k, float(gamma), m, self_neighbour, arr.sum(axis=0))


def size_report(root: Path, top: int = 12) -> list[str]:
    """The largest modules of ``root/microagg`` (lines) and functions (lines, docstring
    included): a report for ``tests/conftest.py``, not a cap."""
    modules, functions = [], []
    for path in sorted((root / "microagg").rglob("*.py")):
        text = path.read_text()
        name = str(path.relative_to(root))
        modules.append((len(text.splitlines()), name))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                functions.append((node.end_lineno - first + 1, f"{name}:{node.name}"))
    lines = [f"largest modules (of {len(modules)}):"]
    lines += [f"  {n:5d}  {name}" for n, name in sorted(modules, reverse=True)[:top]]
    lines.append(f"largest functions (of {len(functions)}):")
    lines += [f"  {n:5d}  {name}" for n, name in sorted(functions, reverse=True)[:top]]
    return lines


def random_k_partition(n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """A random k-partition of n records: random group sizes >= k, random members."""
    sizes = []
    left = n
    while left >= 2 * k:
        s = int(rng.integers(k, left - k + 1))
        sizes.append(s)
        left -= s
    sizes.append(left)
    labels = np.repeat(np.arange(len(sizes)), sizes)
    return labels[rng.permutation(n)]


#: GOMM at reduced settings for the tests (the paper's are 200 / 100 / 25 / 10)
GOMM_SMALL = {"population": 20, "generations": 8, "crossovers": 4, "mutations_per_operator": 2}


def correlated_blocks(n: int = 90, p: int = 6, seed: int = 0) -> np.ndarray:
    """Two blocks of three correlated attributes (GOMM's tests), first ``p`` columns."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, 3))
    return np.hstack([base, base + 0.3 * rng.normal(size=(n, 3))])[:, :p]


def run_json_script(script: str, *args: str, jit: bool, timeout: float) -> Any:
    """Run ``script`` with ``python -c`` in a subprocess, numba compiling or not
    (``NUMBA_DISABLE_JIT``), ``args`` as its arguments; return the JSON value printed on
    the last line of its output. The test fails with the end of its stderr if it fails."""
    env = dict(os.environ)
    env.pop("NUMBA_DISABLE_JIT", None)
    if not jit:
        env["NUMBA_DISABLE_JIT"] = "1"
    res = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True,
                         text=True, timeout=timeout)
    if res.returncode != 0:
        pytest.fail(f"the script exited with {res.returncode}:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def tie_heavy(draw: Any, *, max_n: int = 40, max_p: int = 6, signs: bool = False
              ) -> tuple[np.ndarray, int, np.random.Generator]:
    """Small data with many ties and a k, for a hypothesis composite (``draw`` is its draw).

    The data have a few levels per column, or duplicated records, or duplicated
    attributes, or normal values; with ``signs``, also balanced columns of -1 and 1, which
    are their own z-scores, so that sums are exact and rows really tie. No column is
    constant (GOMM's data never has one). Returns ``X, k`` and the generator that drew
    ``X``, for what the caller draws next.
    """
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(2, max_n))
    p = draw(st.integers(1, max_p))
    kind = draw(st.sampled_from(["levels", "gauss", "rows", "columns"]
                                + (["signs"] if signs else [])))
    if kind == "signs":
        n = 2 * draw(st.integers(4, 20))
        X = np.column_stack([rng.permutation(np.repeat([-1.0, 1.0], n // 2))
                             for _ in range(max(p, 2))])
        return X, draw(st.integers(2, 4)), rng
    if kind == "levels":  # a few distinct values per column
        X = rng.integers(0, draw(st.integers(1, 4)), size=(n, p)).astype(float)
    else:
        X = rng.normal(size=(n, p))
    if kind == "rows":  # duplicated records
        X = X[rng.integers(0, n, size=n)]
    if kind == "columns" and p > 1:  # duplicated attributes
        X[:, rng.integers(0, p, size=p // 2 + 1)] = X[:, [0]]
    X[0] += 7.0  # no constant column
    return X, draw(st.integers(1, max(1, n // 2))), rng


def letters(prefix: str, i: int) -> str:
    """``i`` written with letters after ``prefix`` (``p-cb`` for 21): a text label holding no
    digit (text with digits is asked about, as a number or code may be)."""
    return f"{prefix}-" + "".join(chr(97 + int(d)) for d in str(i))
