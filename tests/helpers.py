"""Helpers shared by the tests (importable as ``helpers``: ``tests`` is on the path)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import numpy as np

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
