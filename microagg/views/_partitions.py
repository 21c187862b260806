"""Views for k-partitions, SSE and the exact optimum.

Book: :ref:`chap-foundations`.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .. import datasets
from .._core import group_sizes, information_loss, is_k_partition, sse
from .._optimal import (
    UNIVARIATE_ALGORITHMS,
    optimal_partition,
    optimal_univariate,
    univariate_graph,
)
from .._timing import least_time
from ._explorer import explorer
from ._plotting import (
    cvd_safe,
    plot_arc_graph,
    plot_partition,
    plot_univariate,
    set_alt_text,
    sizes_text,
)

__all__ = ["small_points", "partition_view", "explore_partition", "univariate_view",
           "univariate_timings", "univariate_time_view"]


def small_points(n: int = 12, *, seed: int = 2) -> np.ndarray:
    """A small 2-D set with some cluster structure (unit square), for exact partitions.

    :func:`microagg.datasets.synthetic_clustered` with clusters of 2-5 records and
    spread 0.1.

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    n : int, default 12
        Number of records.
    seed : int, default 2
        Seed of the draw (the same seed, the same points).

    Returns
    -------
    numpy.ndarray of float64, shape (n, 2)
        The records, cluster centres in the unit square, in random order.

    Examples
    --------
    >>> small_points(12, seed=2).shape
    (12, 2)
    """
    return datasets.synthetic_clustered(n, 2, cluster_size=(2, 5), spread=0.1, seed=seed)



@cvd_safe
def partition_view(X: Any = None, k: int = 3, *, n: int = 12, seed: int = 2,
                   labels: Any = None, annotate: bool = False,
                   figsize: tuple[float, float] = (5.0, 4.2)) -> Figure:
    """Figure: a small 2-D data set, its optimal k-partition, SSE and IL in the title.

    :ref:`chap-foundations`. The optimum comes from
    :func:`microagg.optimal_partition` (exact, ``n <= 16``); pass ``labels`` to
    draw another partition of ``X`` instead.

    Book: :ref:`chap-foundations`.

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

    Examples
    --------
    >>> from microagg.views import partition_view
    >>> fig = partition_view(k=2, n=8, seed=1)
    >>> print(fig.axes[0].get_title())
    optimal 2-partition: 3 groups
    SSE = 0.2295, IL = 21.26%
    """
    data = f"{n} points in the plane (seed {seed})" if X is None else None
    X = small_points(n, seed=seed) if X is None else X
    data = data or f"{len(X)} points in the plane"
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
    return set_alt_text(fig, f"The {what} of {data}: "
                             f"{sizes_text(labels)}, SSE {sse(X, labels):.4g}, IL "
                             f"{information_loss(X, labels):.2f} %. Each group is shaded, "
                             "its centroid marked with a cross.")


def explore_partition(*, n: int = 12, k: int = 3, seed: int = 2) -> Any:
    """Controls for ``k``, ``n`` and the seed around :func:`partition_view`.

    Static pages hold ``k`` in 2..4, ``n`` in 8, 10, 12, 14 and seeds 0..2; a live
    kernel takes ``k`` 1..6, ``n`` 4..14 and seeds 0..30.

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    n : int, default 12
        Number of records the controls open at; one of the static values 8, 10, 12, 14
        (any other raises ``ValueError``, in a live kernel too).
    k : int, default 3
        Minimum group size the controls open at; one of 2, 3, 4.
    seed : int, default 2
        Seed of the points (:func:`small_points`) the controls open at; one of 0, 1, 2.

    Returns
    -------
    ipywidgets.Widget
        The controls and the figure, as :func:`explorer` returns them.

    Examples
    --------
    Outside a notebook the explorer's figure is shown as text; we drop it:

    >>> import contextlib, io
    >>> with contextlib.redirect_stdout(io.StringIO()):
    ...     box = explore_partition(n=8, k=2, seed=1)
    >>> [(c.description, c.value) for c in box.children[:-1]]
    [('k', 2), ('n', 8), ('seed', 1)]
    """
    return explorer(_partition_frame, {"k": [2, 3, 4], "n": [8, 10, 12, 14], "seed": [0, 1, 2]},
                    value={"k": k, "n": n, "seed": seed},
                    live={"k": (1, 6, 1), "n": (4, 14, 1), "seed": (0, 30, 1)})


def _partition_frame(k: int, n: int, seed: int) -> Figure:
    if k > n:
        fig = Figure(figsize=(5.0, 4.2))
        fig.text(0.5, 0.5, f"k = {k} > n = {n}: no k-partition exists;\nraise n or lower k",
                 ha="center", va="center")
        return set_alt_text(fig, f"k = {k}, n = {n}: no k-partition exists; raise n or "
                                 "lower k.")
    return partition_view(k=k, n=n, seed=seed)



@cvd_safe
def univariate_view(x: Any, k: int, *,
                    figsize: tuple[float, float] = (8.0, 4.0)) -> Figure:
    """Figure: the Hansen-Mukherjee graph of ``x`` over its optimal univariate partition.

    Top: nodes ``0..n`` (the gaps between sorted values), every arc ``(i, j)``
    with ``k <= j - i <= 2k-1`` labelled with its group's SSE, the shortest
    path thick and dark orange. Bottom: the values on a line, coloured by optimal group.
    :ref:`chap-foundations`; see
    :func:`microagg.univariate_graph`.

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    x : array_like, shape (n,) or (n, 1)
        The values; a few dozen at most keep the arcs readable.
    k : int
        Minimum group size, ``1 <= k <= n``.
    figsize : (float, float), default (8.0, 4.0)
        The figure's size in inches.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: the graph, then the values.

    Examples
    --------
    >>> from microagg.views import univariate_view
    >>> fig = univariate_view([3, 1, 2, 8, 9, 7, 20], 2)
    >>> len(fig.axes), fig.axes[0].get_title()
    (2, 'shortest path 0 -> 7: SSE = 63 (k = 2)')
    """
    g = univariate_graph(x, k)
    labels = optimal_univariate(g.values, k)
    fig = Figure(figsize=figsize, layout="constrained")
    top, bottom = fig.subplots(2, 1, height_ratios=[3, 1])
    plot_arc_graph(top, g.values.size + 1, g.arcs, costs=g.costs, path=g.path,
                   title=f"shortest path 0 -> {g.values.size}: SSE = {g.sse:.4g} (k = {k})")
    plot_univariate(bottom, g.values, labels, annotate=True)
    bottom.set_xlabel("sorted values, coloured by optimal group (ticks: group means)")
    return set_alt_text(fig, f"The Hansen-Mukherjee graph of {g.values.size} sorted values "
                        f"for k = {k}: its shortest path, nodes {g.path.tolist()}, is the "
                        f"optimal partition ({sizes_text(labels)}, SSE {g.sse:.4g}), shown "
                        "below on the number line.")


def univariate_timings(sizes: Any, *, ks: Any = (3, 10, 100),
                       algorithms: Any = ("shortest-path", "linear"), repeat: int = 3,
                       seed: int = 0) -> pd.DataFrame:
    """Measured run time of :func:`microagg.optimal_univariate`, each pass, each n and k.

    Standard normal data (``seed``), the same array for every pass; the least CPU time
    of ``repeat`` runs, after one warm-up call per pass (numba loads or compiles its
    kernels outside the timings). Sorting is included.

    Book: :ref:`sec-foundations-linear`.

    Parameters
    ----------
    sizes : iterable of int
        Numbers of values ``n``, in the order the rows come.
    ks : iterable of int, default (3, 10, 100)
        Minimum group sizes, each ``<=`` every ``n``.
    algorithms : iterable of str, default ("shortest-path", "linear")
        The passes of :func:`microagg.optimal_univariate` to time, in order:
        ``"shortest-path"``, ``"linear"`` or ``"auto"``.
    repeat : int, default 3
        Runs of each (``n``, ``k``, algorithm), ``>= 1``.
    seed : int, default 0
        Seed of ``numpy.random.default_rng`` that draws the data.

    Returns
    -------
    pandas.DataFrame
        Columns ``n``, ``k``, ``algorithm``, ``seconds``, ``SSE`` (of the partition).

    Examples
    --------
    Both algorithms find the same optimal SSE; the seconds vary from run to run:

    >>> times = univariate_timings([300], ks=(2,), repeat=1)
    >>> times[["n", "k", "algorithm"]].values.tolist()
    [[300, 2, 'shortest-path'], [300, 2, 'linear']]
    >>> times["SSE"].nunique()
    1
    """
    algorithms = tuple(algorithms)
    unknown = [a for a in algorithms if a not in UNIVARIATE_ALGORITHMS]
    if unknown:
        raise ValueError(f"unknown algorithm(s) {unknown}; choose from "
                         f"{list(UNIVARIATE_ALGORITHMS)}")
    rng = np.random.default_rng(seed)
    warm = rng.standard_normal(500)
    rows = []
    for n in sizes:
        x = rng.standard_normal(int(n))
        for k in ks:
            for algorithm in algorithms:
                optimal_univariate(warm, min(int(k), warm.size), algorithm=algorithm)
                t = least_time(functools.partial(optimal_univariate, x, k,
                                                 algorithm=algorithm), repeat=repeat)
                rows.append({"n": int(n), "k": int(k), "algorithm": algorithm,
                             "seconds": t.seconds, "SSE": sse(x.reshape(-1, 1), t.result)})
    return pd.DataFrame(rows)


@cvd_safe
def univariate_time_view(times: pd.DataFrame, *,
                         figsize: tuple[float, float] = (6.4, 3.8)) -> Figure:
    """Figure: seconds against n (log-log) from :func:`univariate_timings`.

    One colour and marker per ``k`` (told apart without colour); solid lines for the
    linear pass, dashed for the :math:`O(nk)` shortest path; a grey dotted line of slope
    1 (time proportional to n) through the first linear point.

    Book: :ref:`sec-foundations-linear`.

    Parameters
    ----------
    times : pandas.DataFrame
        Columns ``n``, ``k``, ``algorithm`` (``"linear"``, ``"shortest-path"`` or
        ``"auto"``) and ``seconds``, as :func:`univariate_timings` returns them.
    figsize : (float, float), default (6.4, 3.8)
        The figure's size in inches.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from microagg.views import univariate_time_view
    >>> fig = univariate_time_view(univariate_timings([200, 400], ks=(2,), repeat=1))
    >>> len(fig.axes)
    1
    """
    fig = Figure(figsize=figsize, layout="constrained")
    ax = fig.add_subplot()
    lines = {"linear": "-", "shortest-path": "--", "auto": "-."}
    markers = ("o", "s", "^", "D", "v")
    for ci, (k, by_k) in enumerate(times.groupby("k", sort=True)):
        for algorithm, part in by_k.groupby("algorithm", sort=False):
            part = part.sort_values("n")
            ax.loglog(part["n"], part["seconds"], lines[str(algorithm)],
                      marker=markers[ci % len(markers)], color=f"C{ci % 10}",
                      label=f"k = {k}, {algorithm}")
    lin = times[times["algorithm"] == "linear"].sort_values(["k", "n"])
    if len(lin):
        n0, t0 = float(lin["n"].iloc[0]), float(lin["seconds"].iloc[0])
        ns = np.array(sorted(times["n"].unique()), dtype=float)
        ax.loglog(ns, t0 * ns / n0, ":", color="0.4", label=r"$\propto n$")
    ax.set_xlabel("number of values n")
    ax.set_ylabel("seconds (best of runs)")
    ax.legend(fontsize=8, ncol=2)
    slowest = times.loc[times["seconds"].idxmax()] if len(times) else None
    return set_alt_text(fig, "Seconds against the number of values n, on log-log scales, "
                        f"for k = {', '.join(map(str, sorted(times['k'].unique())))} and "
                        f"the passes {', '.join(map(str, times['algorithm'].unique()))}"
                        + ("" if slowest is None else
                           f"; the slowest run: {slowest['algorithm']} at n = "
                           f"{int(slowest['n'])}, k = {int(slowest['k'])}, "
                           f"{float(slowest['seconds']):.3g} s") + ".")
