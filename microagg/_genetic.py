r"""The genetic algorithm for small data sets (:func:`ga_partition`).

The operators and the generation loop are compiled kernels in
:mod:`microagg._ga_kernels` (whose docstring lists the readings of the details the
paper leaves open); this module validates the input and packages the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ._core import relabel, sse, sse_any_scale
from ._defaults import GA
from ._ga_kernels import ga_core, seed_state
from ._validate import as_labels, as_matrix, check_k, check_seed, rescaled
from ._validate import check_count as _check_count

__all__ = ["GAResult", "ga_partition"]


@dataclass(frozen=True)
class GAResult:
    """Result of :func:`ga_partition`.

    Book: :ref:`chap-genetic`.

    Attributes
    ----------
    labels : numpy.ndarray of int64, shape (n,)
        The best k-partition found, labelled 0, 1, ... by first appearance.
    sse : float
        Its within-group sum of squares (as :func:`microagg.sse`; ``inf`` if it
        exceeds the float64 range, for values beyond about ``1e150``).
    history : pandas.DataFrame
        One row per generation (row 0: the initial population) with columns
        ``best`` (fitness of the best chromosome so far) and ``mean`` (mean
        fitness of the population).

    Examples
    --------
    >>> from microagg import datasets
    >>> res = ga_partition(datasets.vmdav_example(), 3, iterations=50, seed=0)
    >>> type(res).__name__, res.labels.shape, len(res.history), list(res.history.columns)
    ('GAResult', (13,), 51, ['best', 'mean'])
    """

    labels: np.ndarray
    sse: float
    history: pd.DataFrame = field(repr=False)


def ga_settings(*, population: Any = GA.population, iterations: Any = GA.iterations,
                mutation_rate: Any = GA.mutation_rate,
                crossover_rate: Any = GA.crossover_rate) -> dict[str, Any]:
    """The GA's settings, checked (defaults: the paper's Table 1)."""
    return {"population": _check_count(population, "population", 2),
            "iterations": _check_count(iterations, "iterations", 0),
            "mutation_rate": _check_rate(mutation_rate, "mutation_rate"),
            "crossover_rate": _check_rate(crossover_rate, "crossover_rate")}


def _check_rate(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number in [0, 1], got {value!r}")
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")
    return value


def _initial_rows(initial: Any, n: int, k: int, population: int) -> list[np.ndarray]:
    if initial is None:
        return []
    arr = np.asarray(initial)
    rows = [arr] if arr.ndim == 1 else list(arr) if arr.ndim == 2 else None
    if rows is None or (arr.ndim == 2 and arr.shape[0] == 0):
        raise ValueError("initial must be one label array of length n or a list of them")
    if len(rows) > population:
        raise ValueError(
            f"initial holds {len(rows)} partitions but the population has only {population}"
        )
    out = []
    for r, row in enumerate(rows):
        lab = relabel(as_labels(row, n))
        sizes = np.bincount(lab)
        if sizes.min() < k:
            raise ValueError(
                f"initial partition {r} has a group of {sizes.min()} records, fewer than "
                f"k={k}: it is not a k-partition"
            )
        out.append(lab)
    return out


def ga_partition(X: Any, k: int, *, population: int = GA.population,
                 mutation_rate: float = GA.mutation_rate,
                 crossover_rate: float = GA.crossover_rate, iterations: int = GA.iterations,
                 seed: Any = None, initial: Any = None) -> GAResult:
    r"""Search for a minimum-SSE k-partition of a small data set with a genetic algorithm.

    Each chromosome assigns every record a group label; its fitness is

    .. math:: F = \frac{1}{\mathrm{SSE} + 1},\qquad
              \mathrm{SSE} = \sum_{i=1}^{s}\sum_{j=1}^{n_i}
              \lVert\mathbf{x}_{ij}-\bar{\mathbf{x}}_i\rVert^2 .

    Each generation keeps the best chromosome found so far (elitism) and fills
    the rest of the population with children: two parents drawn by roulette
    wheel (probability proportional to :math:`F`), one-point crossover with
    probability ``crossover_rate``, each gene mutated to a random label with
    probability ``mutation_rate``, then the child is *repaired* into a
    k-partition with group sizes :math:`k..2k-1` (the module ``microagg._ga_kernels``
    explains why repair, not rejection, and the other open details).

    Book: :ref:`chap-genetic`.

    Parameters
    ----------
    X : array_like, shape (n, p)
        The records (the GA is meant for small ``n``: tens of records).
    k : int
        Minimum group size.
    population, mutation_rate, crossover_rate, iterations : default 10, 0.1, 0.5, 10_000
        Chromosomes, per-gene probability of moving a record to a random group,
        probability that two parents cross over, generations (the paper's Table 1).
    seed : int, numpy SeedSequence or Generator, optional
        Seed for ``numpy.random.default_rng``, which seeds the GA's own
        xorshift128 generator; same seed, same result, with or without numba.
        A run with fewer ``iterations`` is a prefix of a longer run.
    initial : array_like of int, shape (n,) or (m, n), optional
        Partitions injected unchanged into the initial population (the rest is
        random). Each must be a k-partition (groups may exceed ``2k-1``). With
        elitism the result is never worse than the best of them: this is what
        Lemma 1 of the genetic-hybrid paper relies on.

    Returns
    -------
    GAResult
        ``labels`` (canonical: 0, 1, ... by first appearance), ``sse`` and
        ``history`` (best and mean fitness per generation).

    Raises
    ------
    ValueError
        On ``k`` out of range, a rate outside ``[0, 1]``, too small a
        ``population`` or ``iterations``, or an invalid injected partition.

    Notes
    -----
    Martinez-Balleste et al. :cite:p:`martinez2007genetic`, Sec. 2.2 and Table 1.

    Examples
    --------
    >>> from microagg import datasets
    >>> res = ga_partition(datasets.vmdav_example(), 3, iterations=200, seed=0)
    >>> res.labels.tolist()
    [0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    """
    arr = as_matrix(X)
    n = arr.shape[0]
    k = check_k(k, n)
    ga = ga_settings(population=population, iterations=iterations,
                     mutation_rate=mutation_rate, crossover_rate=crossover_rate)
    given = _initial_rows(initial, n, k, ga["population"])
    pop = np.zeros((ga["population"], n), dtype=np.int64)
    for r, lab in enumerate(given):
        pop[r] = lab
    Xc = _centred(arr)
    best, _, history = ga_core(Xc, k, pop, len(given), ga["mutation_rate"],
                               ga["crossover_rate"], ga["iterations"],
                               seed_state(check_seed(seed)))
    labels = relabel(best)
    return GAResult(labels=labels, sse=sse_any_scale(arr, labels),
                    history=pd.DataFrame(history, columns=["best", "mean"]).rename_axis(
                        "generation"))


def _centred(arr: np.ndarray) -> np.ndarray:
    """The data centred (SSE is shift-invariant; small sums), times a power of two if
    squares would overflow or underflow (exact: values beyond ~1e30 or below ~1e-30)."""
    scaled = rescaled(arr)
    return scaled - scaled.mean(axis=0)


def ga_labels(Xsub: np.ndarray, k: int, population: int, mutation_rate: float,
               crossover_rate: float, iterations: int, state: np.ndarray,
               initial: np.ndarray | None) -> np.ndarray:
    """Run the GA on one macrogroup (no input checks) and return canonical labels.

    An injected ``initial`` partition is returned instead of the GA's result
    unless the GA's result has a strictly smaller SSE as computed by
    :func:`microagg.sse`: in exact arithmetic elitism already guarantees this,
    the check only keeps rounding noise from breaking Lemma 1's inequality.
    """
    n = Xsub.shape[0]
    Xc = Xsub - Xsub.mean(axis=0)
    pop = np.zeros((population, n), dtype=np.int64)
    n_given = 0
    if initial is not None:
        pop[0] = relabel(initial)
        n_given = 1
    best, _, _ = ga_core(Xc, k, pop, n_given, mutation_rate, crossover_rate, iterations,
                         state)
    best = relabel(best)
    if initial is not None and not sse(Xc, best) < sse(Xc, initial):
        return relabel(initial)
    return best

