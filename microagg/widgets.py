"""Interactive explorers used by the chapters, and the static views behind them.

Each explorer is split in two: a pure *view* function that takes plain values
(data set, k, gamma, ...) and returns a matplotlib ``Figure`` (and, where
useful, a small table), and an ``explore_*`` function that wires that view to
ipywidgets sliders. Chapters first show the view at its default values (so the
static HTML book has the figure), then the live widget. The views are
unit-tested without a browser by calling them with values.

Plotting plumbing that is not worth reading lives in :mod:`microagg.plotting`.
"""

from __future__ import annotations

__all__: list[str] = []

# ======================================================================================
# Chapter 1: k-partitions, SSE and the exact optimum
# ======================================================================================

from typing import Any  # noqa: E402

from matplotlib.figure import Figure  # noqa: E402

__all__ += ["partition_view", "explore_partition", "univariate_view"]


def _ch1_points(n: int, seed: int) -> Any:
    """A small 2-D set with some cluster structure (unit square), for chapter 1."""
    from . import datasets

    return datasets.synthetic_clustered(n, 2, cluster_size=(2, 5), spread=0.1, seed=seed)


def partition_view(X: Any = None, k: int = 3, *, n: int = 12, seed: int = 2,
                   labels: Any = None, annotate: bool = False,
                   figsize: tuple[float, float] = (5.0, 4.2)) -> Figure:
    """Figure: a small 2-D data set, its optimal k-partition, SSE and IL in the title.

    Chapter 1 (``chapters/01_foundations.md``). The optimum comes from
    :func:`microagg.optimal_partition` (exact, ``n <= 16``); pass ``labels`` to
    draw another partition of ``X`` instead.

    Parameters
    ----------
    X : array_like, shape (n, 2), optional
        Records to partition; default a seeded clustered set of ``n`` points.
    k : int
        Minimum group size.
    n, seed : int
        Size and seed of the default data set (ignored when ``X`` is given).
    labels : array_like of int, optional
        A partition to draw instead of the optimal one.
    annotate : bool
        Number the records.
    figsize : (float, float)

    Returns
    -------
    matplotlib.figure.Figure
    """
    from .core import group_sizes, information_loss, is_k_partition, sse
    from .optimal import optimal_partition
    from .plotting import plot_partition

    X = _ch1_points(n, seed) if X is None else X
    if labels is None:
        labels = optimal_partition(X, k)
        what = f"optimal {k}-partition"
    else:
        what = f"{k}-partition" if is_k_partition(labels, k) else "partition (not a k-partition)"
    fig = Figure(figsize=figsize, layout="constrained")
    ax = fig.add_subplot()
    n_groups = len(group_sizes(labels))
    plot_partition(ax, X, labels, annotate=annotate)
    ax.set_title(f"{what}: {n_groups} groups\nSSE = {sse(X, labels):.4g}, "
                 f"IL = {information_loss(X, labels):.2f}%", fontsize=10)
    return fig


def explore_partition(n: int = 12, k: int = 3, seed: int = 2) -> Any:
    """Sliders for ``k``, ``n`` and the seed around :func:`partition_view` (chapter 1).

    Returns an ``ipywidgets.interactive``; display it in a notebook (it needs a
    running kernel: in the static book it is a snapshot).
    """
    import ipywidgets as w
    from IPython.display import display

    def show(k: int, n: int, seed: int) -> None:
        if k > n:
            print(f"k={k} > n={n}: no k-partition exists; raise n or lower k")
            return
        display(partition_view(k=k, n=n, seed=seed))

    return w.interactive(
        show,
        k=w.IntSlider(value=k, min=1, max=6, description="k"),
        n=w.IntSlider(value=n, min=4, max=14, description="n"),
        seed=w.IntSlider(value=seed, min=0, max=30, description="seed"),
    )


def univariate_view(x: Any, k: int, *,
                    figsize: tuple[float, float] = (8.0, 4.0)) -> Figure:
    """Figure: the Hansen-Mukherjee graph of ``x`` over its optimal univariate partition.

    Top: nodes ``0..n`` (the gaps between sorted values), every arc ``(i, j)``
    with ``k <= j - i <= 2k-1`` labelled with its group's SSE, the shortest
    path in red. Bottom: the values on a line, coloured by optimal group.
    Chapter 1 (``chapters/01_foundations.md``); see
    :func:`microagg.optimal.univariate_graph`.
    """
    from .optimal import optimal_univariate, univariate_graph
    from .plotting import plot_arc_graph, plot_univariate

    g = univariate_graph(x, k)
    labels = optimal_univariate(g.values, k)
    fig = Figure(figsize=figsize, layout="constrained")
    top, bottom = fig.subplots(2, 1, height_ratios=[3, 1])
    plot_arc_graph(top, g.values.size + 1, g.arcs, costs=g.costs, path=g.path,
                   title=f"shortest path 0 -> {g.values.size}: SSE = {g.sse:.4g} (k = {k})")
    plot_univariate(bottom, g.values, labels, annotate=True)
    bottom.set_xlabel("sorted values, coloured by optimal group (ticks: group means)")
    return fig

# ======================================================================================
# Chapters 2-4: MDAV, V-MDAV, IV-MDAV
# ======================================================================================

# ======================================================================================
# Chapter 5: the genetic algorithm and the MDAV+GA hybrid
# ======================================================================================

# ======================================================================================
# Chapter 6: GOMM (attribute grouping) and disclosure risk
# ======================================================================================
