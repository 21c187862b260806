"""Views for the genetic algorithm and the MDAV+GA hybrid.

Book: :ref:`chap-genetic`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure

from .. import datasets
from .._core import sse, standardize
from .._defaults import GA
from .._genetic import ga_partition
from .._hybrid import macrogroups
from .._mdav import mdav
from ..teaching import split_close_pairs
from ._explorer import explorer
from ._plotting import (
    HIGHLIGHT,
    PALETTE,
    cvd_safe,
    group_colors,
    group_markers,
    plot_partition,
    set_alt_text,
    sizes_text,
)

__all__ = ["ga_view", "explore_ga", "macrogroups_view"]


def _ga_default_points() -> Any:
    """The 13 records of V-MDAV's Example 1, the default small set for the GA views."""
    return datasets.vmdav_example()


@cvd_safe
def ga_view(X: Any = None, k: int = 3, *, mutation_rate: float = GA.mutation_rate,
            crossover_rate: float = GA.crossover_rate, iterations: int = 300,
            population: int = GA.population,
            seed: int = 0, initial: Any = None,
            figsize: tuple[float, float] = (10.0, 4.0)) -> Figure:
    """Figure: the GA's best k-partition of a small 2-D set, and its fitness curve.

    Left: the best partition after ``iterations`` generations of
    :func:`microagg.ga_partition` (and, dotted in the title, the MDAV
    SSE for comparison). Right: best-so-far and population-mean fitness
    :math:`F = 1/(\\mathrm{SSE}+1)` per generation. Because a shorter run is a
    prefix of a longer one with the same seed, moving an iteration slider
    "animates" one run.

    Book: :ref:`chap-genetic`.

    Parameters
    ----------
    X : array_like, shape (n, 2), optional
        Default: the 13 records of V-MDAV's Example 1.
    k : int
    mutation_rate, crossover_rate : float
    iterations, population, seed : int
        GA settings (see :func:`microagg.ga_partition`).
    initial : array_like of int, optional
        Partition(s) injected into the initial population.
    figsize : (float, float)

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from microagg.views import ga_view
    >>> fig = ga_view(iterations=30)
    >>> print(fig.axes[0].get_title())
    GA best after 30 generations: SSE = 30.61
    (MDAV: SSE = 240; k = 3)
    """
    X = _ga_default_points() if X is None else X
    res = ga_partition(X, k, population=population, mutation_rate=mutation_rate,
                       crossover_rate=crossover_rate, iterations=iterations, seed=seed,
                       initial=initial)
    fig = Figure(figsize=figsize, layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=[1.0, 1.2])
    plot_partition(left, X, res.labels)
    left.set_title(f"GA best after {iterations} generations: SSE = {res.sse:.4g}\n"
                   f"(MDAV: SSE = {sse(X, mdav(X, k)):.4g}; k = {k})", fontsize=10)
    gens = res.history.index.to_numpy()
    right.plot(gens, res.history["best"], color=HIGHLIGHT, label="best so far (elitism)")
    right.plot(gens, res.history["mean"], color=PALETTE[0], linestyle="--", alpha=0.6,
               linewidth=0.8, label="population mean")
    right.set_xlabel("generation")
    right.set_ylabel("fitness  F = 1/(SSE+1)")
    right.set_title(f"mutation rate {mutation_rate:g}, crossover rate {crossover_rate:g}, "
                    f"{population} chromosomes", fontsize=10)
    right.legend(loc="lower right", fontsize=8)
    return set_alt_text(fig, f"Genetic algorithm, k = {k}, mutation rate {mutation_rate:g}, "
                             f"crossover rate {crossover_rate:g}, seed {seed}, after "
                             f"{iterations} generations: best partition of the "
                             f"{len(res.labels)} points, {sizes_text(res.labels)}, SSE "
                             f"{res.sse:.4g} (MDAV: {sse(X, mdav(X, k)):.4g}), drawn as shaded "
                             "groups; beside it, the best and mean fitness per generation.")


def explore_ga(X: Any = None, k: int = 3, *, iterations: int = 300, seed: int = 0) -> Any:
    """Controls for mutation rate, crossover rate, generations and seed around :func:`ga_view`.

    With the same seed, a run of fewer generations retraces the start of a longer
    one, so the generation control replays one run. Static pages hold mutation rates
    0, 0.1, 0.3, crossover rate 0.5, generations 0, 30, 100, 300, 1000 and seeds 0
    and 1; a live kernel takes any rates, up to 3000 generations and seeds 0..20.

    Book: :ref:`chap-genetic`.

    Parameters
    ----------
    X : array_like, shape (n, 2), optional
        The records of every frame; default the 13 records of V-MDAV's Example 1.
    k : int, default 3
        Minimum group size of every frame.
    iterations : int, default 300
        The number of generations the control opens at; one of the static values 0,
        30, 100, 300, 1000 (any other raises ``ValueError``, in a live kernel too).
    seed : int, default 0
        The GA's seed the control opens at; 0 or 1. The mutation rate opens at 0.1,
        the crossover rate at 0.5.

    Returns
    -------
    ipywidgets.Widget
        The controls and the figure, as :func:`explorer` returns them.

    Examples
    --------
    Outside a notebook the explorer's figure is shown as text; we drop it:

    >>> import contextlib, io
    >>> with contextlib.redirect_stdout(io.StringIO()):
    ...     box = explore_ga(iterations=30)
    >>> [c.description for c in box.children[:-1]]
    ['mutation', 'crossover', 'generations', 'seed']
    """
    return explorer(ga_view, {"mutation_rate": [0.0, 0.1, 0.3], "crossover_rate": [0.5],
                              "iterations": [0, 30, 100, 300, 1000], "seed": [0, 1]},
                    value={"mutation_rate": 0.1, "iterations": iterations, "seed": seed},
                    live={"mutation_rate": (0.0, 0.5, 0.01), "crossover_rate": (0.0, 1.0, 0.05),
                          "iterations": (0, 3000, 10), "seed": (0, 20, 1)},
                    labels={"mutation_rate": "mutation", "crossover_rate": "crossover",
                            "iterations": "generations"},
                    fixed={"X": X, "k": k})



@cvd_safe
def macrogroups_view(X: Any = None, k: int = 3, *, K: int = 24, n: int = 300, seed: int = 0,
                     radius: float = 0.1,
                     figsize: tuple[float, float] = (10.0, 4.8)) -> Figure:
    """Figure: one-step (left) vs two-step (right) MDAV macrogroups, as in the paper's Fig. 2.

    Each colour and marker is a macrogroup (the set the GA will partition). A thick orange
    segment joins two records closer than ``radius`` that ended up in different
    macrogroups: a natural cluster the GA can no longer reunite. One-step cuts
    an MDAV ``K``-partition and splits more of them; two-step groups whole MDAV
    ``k``-groups by their centroids (``K`` must be a multiple of ``k``).
    Default data: ``datasets.clustered(n, seed=seed)``, standardised.
    :ref:`chap-genetic`.

    Book: :ref:`chap-genetic`.

    Parameters
    ----------
    X : array_like, shape (n, p), optional
        The records, used as given, ``p >= 2`` (the first two attributes are drawn; the
        macrogroups and the distances use all of them). Default: ``n`` clustered records.
    k : int, default 3
        Minimum group size of the final partition.
    K : int, default 24
        Macrogroup size, ``>= k`` and a multiple of ``k`` (for the two-step panel).
    n, seed : int, default 300, 0
        Size and seed of the default data (unused when ``X`` is given).
    radius : float, default 0.1
        Distance below which two records count as close, in the units of ``X``
        (standard deviations for the default data); ``> 0``.
    figsize : (float, float), default (10.0, 4.8)
        The figure's size in inches.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: one-step, then two-step.

    Examples
    --------
    >>> from microagg.views import macrogroups_view
    >>> fig = macrogroups_view(n=90, K=12)
    >>> print(fig.axes[0].get_title())
    one-step: MDAV with K = 12
    7 macrogroups, 10 close pairs split (thick orange)
    """

    X = standardize(datasets.clustered(n, seed=seed)) if X is None else np.asarray(X, dtype=float)
    fig = Figure(figsize=figsize, layout="constrained")
    axes = fig.subplots(1, 2)
    for ax, part in zip(axes, ("one-step", "two-step"), strict=True):
        macro, _ = macrogroups(X, k, K=K, partitioning=part)
        n_macro = int(macro.max()) + 1
        split_i, split_j = split_close_pairs(X, macro, radius)
        for a, b in zip(split_i, split_j, strict=True):
            ax.plot(X[[a, b], 0], X[[a, b], 1], color=HIGHLIGHT, linewidth=2.0, zorder=2)
        for g, col, (marker, _) in zip(range(n_macro), group_colors(n_macro),
                                       group_markers(n_macro), strict=True):
            ax.scatter(X[macro == g, 0], X[macro == g, 1], s=16, color=col, marker=marker,
                       edgecolor="k", linewidth=0.3, zorder=3)
        title = f"one-step: MDAV with K = {K}" if part == "one-step" else (
            f"two-step: MDAV k = {k}, then {K // k} centroids per macrogroup")
        ax.set_title(f"{title}\n{int(macro.max()) + 1} macrogroups, "
                     f"{split_i.size} close pairs split (thick orange)", fontsize=10)
        ax.set_aspect("equal", adjustable="datalim")
    return fig
