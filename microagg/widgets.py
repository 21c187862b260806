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

# --------------------------------------------------------------------------------------
# Chapter 2: MDAV, fixed-size microaggregation (chapters/02_mdav.md)
# --------------------------------------------------------------------------------------

__all__ += ["MDAV_DATASETS", "two_d_data", "mdav_steps_view", "partitions_view",
            "mdav_view", "explore_mdav"]

#: Data sets offered by :func:`mdav_view` / :func:`explore_mdav` (and V-MDAV's views).
MDAV_DATASETS: tuple[str, ...] = ("clustered 2-D", "scattered 2-D", "census", "tarragona",
                                  "eia", "water-treatment")


def two_d_data(name: str = "clustered 2-D") -> Any:
    """The small standardised 2-D sets drawn in chapters 2 and 3.

    ``"clustered 2-D"``: 40 records in natural clusters of 3-5
    (:func:`microagg.datasets.synthetic_clustered` with ``spread=0.015``,
    ``seed=4``); ``"scattered 2-D"``: 40 uniform records
    (:func:`microagg.datasets.scattered`, ``seed=1``). Both standardised
    (population std), so IL is comparable with the real data sets.
    """
    import numpy as np

    from . import datasets
    from .core import standardize

    if name == "clustered 2-D":
        X = datasets.synthetic_clustered(40, 2, cluster_size=(3, 5), spread=0.015, seed=4)
    elif name == "scattered 2-D":
        X = datasets.scattered(40, seed=1)
    else:
        raise ValueError(f"unknown 2-D set {name!r}; choose 'clustered 2-D' or 'scattered 2-D'")
    return np.asarray(standardize(X))


def _ch2_matrix(dataset: Any) -> tuple[Any, str]:
    """(standardised array, display name) for a name in :data:`MDAV_DATASETS` or an array."""
    if isinstance(dataset, str):
        if dataset in ("clustered 2-D", "scattered 2-D"):
            return two_d_data(dataset), dataset
        from . import datasets
        from .tables import standardized

        if dataset.lower() not in datasets.NAMES:
            raise ValueError(f"unknown data set {dataset!r}; choose one of {list(MDAV_DATASETS)}")
        return standardized(dataset), dataset.capitalize()
    from ._validate import as_matrix

    return as_matrix(dataset), "data"


def mdav_steps_view(X: Any = None, k: int = 3, *, max_panels: int = 4,
                    figsize: tuple[float, float] | None = None) -> Figure:
    r"""Figure: MDAV (survey Algorithm 1) round by round on a small 2-D set.

    One panel per round of :func:`microagg.mdav`: records already grouped in
    their group colour (faded), the records still unassigned in grey, their
    centroid :math:`\bar{\mathbf{x}}` (black triangle), the record
    :math:`\mathbf{x}_r` farthest from it, the record :math:`\mathbf{x}_s`
    farthest from :math:`\mathbf{x}_r`, and the two groups of :math:`k` formed
    around them (outlined). The last panel is the final partition. The rounds
    are read off the labels of :func:`microagg.mdav` (groups are numbered in
    the order they are formed), so the picture is exactly what the algorithm
    did. Chapter 2 (``chapters/02_mdav.md``).

    Parameters
    ----------
    X : array_like, shape (n, 2), optional
        Default: 20 uniform records (``datasets.scattered(20, seed=3)``),
        standardised; with ``k = 3`` that shows two full rounds, the
        "between 2k and 3k-1 left" step and the final partition.
    k : int
    max_panels : int
        At most this many panels (the last one is always the final partition).
    figsize : (float, float), optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    import numpy as np

    from . import datasets
    from ._validate import as_matrix, check_k
    from .core import information_loss, sse, standardize
    from .mdav import mdav
    from .plotting import group_colors, plot_group_hull, plot_partition

    X = np.asarray(standardize(datasets.scattered(20, seed=3))) if X is None else X
    X = as_matrix(X)
    if X.shape[1] != 2:
        raise ValueError(f"mdav_steps_view draws 2-D data, got {X.shape[1]} columns")
    k = check_k(k, X.shape[0])
    if max_panels < 2:
        raise ValueError(f"max_panels must be at least 2, got {max_panels}")
    labels = mdav(X, k)
    n_groups = int(labels.max()) + 1
    colors = group_colors(n_groups)
    # the steps: (groups formed in this step, "round"/"last2k")
    steps: list[tuple[list[int], str]] = []
    g = 0
    while g < n_groups - 1:
        left = int((labels >= g).sum())
        if left >= 3 * k:
            steps.append(([g, g + 1], "round"))
            g += 2
        else:  # between 2k and 3k-1 left: one group around the farthest record
            steps.append(([g], "last2k"))
            g += 1
    steps = steps[: max_panels - 1]
    n_panels = len(steps) + 1
    fig = Figure(figsize=figsize or (3.3 * n_panels, 3.6), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, n_panels))
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = 0.08 * (hi - lo).max()
    for ax in axes:  # same window in every panel (sharing axes would fight the aspect)
        ax.set_xlim(lo[0] - pad, hi[0] + pad)
        ax.set_ylim(lo[1] - pad, hi[1] + pad)
    for step, (ax, (formed, kind)) in enumerate(zip(axes, steps, strict=False), start=1):
        first = formed[0]
        done = labels < first
        left = ~done
        for h in range(first):  # groups formed earlier, faded
            pts = X[labels == h]
            ax.scatter(pts[:, 0], pts[:, 1], s=30, color=colors[h], alpha=0.35, zorder=2)
        ax.scatter(X[left, 0], X[left, 1], s=30, color="0.6", edgecolor="k", linewidth=0.3,
                   zorder=2)
        c = X[left].mean(axis=0)
        ax.scatter([c[0]], [c[1]], marker="^", s=90, color="k", zorder=5)
        idx_left = np.flatnonzero(left)
        d_c = ((X[idx_left] - c) ** 2).sum(axis=1)
        r = int(idx_left[np.argmax(d_c)])
        ax.annotate("", X[r], c, arrowprops={"arrowstyle": "->", "color": "k", "lw": 1})
        for h in formed:  # the groups formed in this step, outlined
            pts = X[labels == h]
            plot_group_hull(ax, pts, colors[h])
            ax.scatter(pts[:, 0], pts[:, 1], s=34, color=colors[h], edgecolor="k",
                       linewidth=0.6, zorder=4)
        ax.scatter(*X[r], marker="*", s=260, color=colors[formed[0]], edgecolor="k", zorder=6)
        ax.annotate(r"$x_r$", X[r], textcoords="offset points", xytext=(6, 6), fontsize=10)
        if kind == "round":
            rest = idx_left[labels[idx_left] != formed[0]]
            d_r = ((X[rest] - X[r]) ** 2).sum(axis=1)
            s_ = int(rest[np.argmax(d_r)])
            ax.annotate("", X[s_], X[r], arrowprops={"arrowstyle": "->", "color": "0.3",
                                                      "lw": 0.8, "ls": "--"})
            ax.scatter(*X[s_], marker="*", s=260, color=colors[formed[1]], edgecolor="k",
                       zorder=6)
            ax.annotate(r"$x_s$", X[s_], textcoords="offset points", xytext=(6, 6),
                        fontsize=10)
            what = f"{int(left.sum())} left: groups around $x_r$ and $x_s$"
        else:
            what = f"{int(left.sum())} left (< 3k): one group around $x_r$"
        ax.set_title(f"step {step}: {what}", fontsize=9)
    last = axes[n_panels - 1]
    plot_partition(last, X, labels, marker_size=30)
    last.set_title(f"final {k}-partition: SSE = {sse(X, labels):.3g}, "
                   f"IL = {information_loss(X, labels):.1f}%", fontsize=9)
    for ax in axes:
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlim(lo[0] - pad, hi[0] + pad)
        ax.set_ylim(lo[1] - pad, hi[1] + pad)
    return fig


def partitions_view(X: Any, partitions: dict[str, Any], *, annotate: bool = False,
                    figsize: tuple[float, float] | None = None) -> Figure:
    """Figure: several partitions of the same 2-D records side by side, SSE and IL in titles.

    Chapters 2 and 3 (e.g. MDAV, V-MDAV and the optimum on V-MDAV's Example 1).

    Parameters
    ----------
    X : array_like, shape (n, 2)
    partitions : dict
        ``{panel title: labels}``, at least one.
    annotate : bool
        Number the records.
    figsize : (float, float), optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    import numpy as np

    from ._validate import as_matrix
    from .core import group_sizes, information_loss, sse
    from .plotting import plot_partition

    X = as_matrix(X)
    if not partitions:
        raise ValueError("partitions is empty: pass {title: labels, ...}")
    fig = Figure(figsize=figsize or (3.6 * len(partitions), 3.8), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(partitions)))
    for ax, (name, labels) in zip(axes, partitions.items(), strict=True):
        plot_partition(ax, X, labels, annotate=annotate)
        sizes = "/".join(str(s) for s in sorted(group_sizes(labels).tolist()))
        ax.set_title(f"{name}\nSSE = {sse(X, labels):.4g}, IL = "
                     f"{information_loss(X, labels):.2f}%\ngroup sizes {sizes}", fontsize=9)
    return fig


def mdav_view(dataset: Any = "clustered 2-D", k: int = 3, *,
              figsize: tuple[float, float] | None = None) -> Figure:
    """Figure: MDAV on a data set: SSE and IL in the title, the group-size histogram.

    For a 2-D data set the partition is drawn too (left panel). Attributes are
    standardised (population std), as in the papers. Chapter 2
    (``chapters/02_mdav.md``); :func:`explore_mdav` wraps it in widgets.

    Parameters
    ----------
    dataset : str or array_like
        A name from :data:`MDAV_DATASETS` or a 2-D array (used as given).
    k : int
        Minimum group size, ``1 <= k <= n``.
    figsize : (float, float), optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    import numpy as np

    from ._validate import check_k
    from .core import group_sizes, information_loss, sse
    from .mdav import mdav
    from .plotting import plot_partition

    X, name = _ch2_matrix(dataset)
    k = check_k(k, X.shape[0])
    labels = mdav(X, k)
    two_d = X.shape[1] == 2
    fig = Figure(figsize=figsize or ((9.0, 3.8) if two_d else (5.5, 3.6)),
                 layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, 2 if two_d else 1,
                                      width_ratios=[1.3, 1] if two_d else None))
    if two_d:
        plot_partition(axes[0], X, labels, marker_size=25)
        axes[0].set_title("partition (crosses: released centroids)", fontsize=9)
    hist = axes[-1]
    sizes = group_sizes(labels)
    values, counts = np.unique(sizes, return_counts=True)
    hist.bar(values, counts, width=0.8, color="C0", edgecolor="k")
    for v, c in zip(values, counts, strict=True):
        hist.annotate(str(c), (v, c), ha="center", va="bottom", fontsize=8)
    hist.set_xticks(range(k, max(2 * k, int(values.max()) + 1)))
    hist.set_xlim(k - 0.7, max(2 * k - 1, int(values.max())) + 0.7)
    hist.set_xlabel("group size")
    hist.set_ylabel("number of groups")
    hist.set_title(f"{sizes.size} groups", fontsize=9)
    fig.suptitle(f"MDAV on {name} ({X.shape[0]} x {X.shape[1]}), k = {k}: "
                 f"SSE = {sse(X, labels):.4g}, IL = {information_loss(X, labels):.2f}%",
                 fontsize=10)
    return fig


def explore_mdav(dataset: str = "clustered 2-D", k: int = 3) -> Any:
    """A data-set dropdown and a ``k`` slider around :func:`mdav_view` (chapter 2).

    Returns an ``ipywidgets.interactive``; it needs a running kernel (in the
    static book it is a snapshot).
    """
    import ipywidgets as w
    from IPython.display import display

    def show(dataset: str, k: int) -> None:
        display(mdav_view(dataset, k))

    return w.interactive(
        show,
        dataset=w.Dropdown(options=list(MDAV_DATASETS), value=dataset, description="data"),
        k=w.IntSlider(value=k, min=2, max=20, description="k"),
    )


# --------------------------------------------------------------------------------------
# Chapter 3: V-MDAV, variable-size groups (chapters/03_vmdav.md)
# --------------------------------------------------------------------------------------

__all__ += ["vmdav_first_group", "vmdav_extension_view", "vmdav_view", "explore_vmdav",
            "gamma_sweep_view"]


def vmdav_first_group(X: Any, k: int = 3, gamma: float = 1.1) -> Any:
    r"""The first group of V-MDAV and every extension test made for it, for teaching.

    A plain re-tracing of V-MDAV's first iteration (Solanas & Martinez-Balleste
    2006, Sec. 2; the algorithm itself is :func:`microagg.vmdav`): the record
    :math:`e` farthest from the global centroid and its :math:`k-1` nearest
    records form the group; then, while the group has fewer than
    :math:`2k-1` records, the outside record :math:`e_{min}` nearest to the
    group (distance :math:`d_{in}`) is added if

    .. math:: d_{in} < \gamma\, d_{out},

    :math:`d_{out}` being its distance to its nearest other unassigned record.
    Ties go to the first record, as in :func:`microagg.vmdav`, so the returned
    group is that function's group 0. Chapter 3 (``chapters/03_vmdav.md``).

    Parameters
    ----------
    X : array_like, shape (n, p)
    k : int
    gamma : float
        Gain factor, ``>= 0``.

    Returns
    -------
    (numpy.ndarray, pandas.DataFrame)
        The group's record indices (``e`` first, then its neighbours, then the
        added records in order) and one row per test with columns ``e_min``,
        ``nearest_member``, ``d_in``, ``nearest_outside``, ``d_out``,
        ``gamma_d_out``, ``added``.
    """
    import numpy as np
    import pandas as pd

    from ._validate import as_matrix, check_k

    X = as_matrix(X)
    k = check_k(k, X.shape[0])
    if not np.isfinite(gamma) or gamma < 0:
        raise ValueError(f"gamma must be a finite number >= 0, got {gamma}")

    def d2(A: Any, v: Any) -> Any:
        return ((A - v) ** 2).sum(axis=1)

    n = X.shape[0]
    e = int(np.argmax(d2(X, X.mean(axis=0))))
    others = np.array([i for i in range(n) if i != e], dtype=int)
    near = others[np.argsort(d2(X[others], X[e]), kind="stable")[: k - 1]]
    group = [e, *near.tolist()]
    tests = []
    while len(group) < 2 * k - 1:
        outside = np.array([i for i in range(n) if i not in group], dtype=int)
        if outside.size == 0:
            break
        dist = np.sqrt(np.array([d2(X[group], X[j]) for j in outside]))  # outside x members
        j = int(np.argmin(dist.min(axis=1)))
        e_min, d_in = int(outside[j]), float(dist[j].min())
        member = int(group[int(np.argmin(dist[j]))])
        rest = outside[outside != e_min]
        if rest.size:
            d_rest = np.sqrt(d2(X[rest], X[e_min]))
            out, d_out = int(rest[int(np.argmin(d_rest))]), float(d_rest.min())
        else:
            out, d_out = -1, float("inf")
        added = bool(d_in < gamma * d_out)
        tests.append((e_min, member, d_in, out, d_out, gamma * d_out, added))
        if not added:
            break
        group.append(e_min)
    table = pd.DataFrame(tests, columns=["e_min", "nearest_member", "d_in", "nearest_outside",
                                         "d_out", "gamma_d_out", "added"])
    return np.asarray(group, dtype=np.int64), table


def vmdav_extension_view(X: Any = None, k: int = 3, gamma: float = 1.1, *,
                         figsize: tuple[float, float] = (10.0, 4.4)) -> Figure:
    r"""Figure: how V-MDAV grows its first group (left) and the partition it ends with (right).

    Left: the global centroid (triangle), the record :math:`e` farthest from it
    (star), its first :math:`k` records (outlined), and each extension test of
    :func:`vmdav_first_group`: :math:`d_{in}` as a solid line from
    :math:`e_{min}` to the nearest group member, :math:`d_{out}` dashed to its
    nearest unassigned neighbour, green when the record was added, red when
    not. Right: :func:`microagg.vmdav` on the whole set. Default data: the 13
    records of V-MDAV's Example 1. Chapter 3 (``chapters/03_vmdav.md``).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from . import datasets
    from ._validate import as_matrix
    from .core import information_loss, sse
    from .mdav import vmdav
    from .plotting import plot_group_hull, plot_partition

    X = as_matrix(datasets.vmdav_example() if X is None else X)
    if X.shape[1] != 2:
        raise ValueError(f"vmdav_extension_view draws 2-D data, got {X.shape[1]} columns")
    group, tests = vmdav_first_group(X, k, gamma)
    fig = Figure(figsize=figsize, layout="constrained")
    left, right = fig.subplots(1, 2)
    left.scatter(X[:, 0], X[:, 1], s=35, color="0.65", edgecolor="k", linewidth=0.3, zorder=2)
    c = X.mean(axis=0)
    left.scatter(*c, marker="^", s=110, color="k", zorder=5, label="global centroid")
    plot_group_hull(left, X[group[:k]], "C0")
    left.scatter(X[group, 0], X[group, 1], s=40, color="C0", edgecolor="k", zorder=4)
    left.scatter(*X[group[0]], marker="*", s=280, color="C0", edgecolor="k", zorder=6,
                 label="e: farthest from centroid")
    lines = []
    for t in tests.itertuples():
        col = "tab:green" if t.added else "tab:red"
        a, b = X[t.e_min], X[t.nearest_member]
        left.plot([a[0], b[0]], [a[1], b[1]], color=col, linewidth=2, zorder=3)
        if t.nearest_outside >= 0:
            o = X[t.nearest_outside]
            left.plot([a[0], o[0]], [a[1], o[1]], color=col, linewidth=1.2, ls="--", zorder=3)
        left.scatter(*a, s=90, facecolor="none", edgecolor=col, linewidth=2, zorder=6)
        verdict = "add" if t.added else "stop"
        lines.append(f"$d_{{in}}$={t.d_in:.3g} {'<' if t.added else '≥'} "
                     f"γ·$d_{{out}}$={t.gamma_d_out:.3g}: {verdict}")
    left.legend(loc="lower right", fontsize=7)
    left.set_aspect("equal", adjustable="datalim")
    left.set_title(f"first group (k = {k}, γ = {gamma:g})\n" + "\n".join(lines), fontsize=8)
    labels = vmdav(X, k, gamma=gamma)
    plot_partition(right, X, labels)
    right.set_title(f"V-MDAV result: SSE = {sse(X, labels):.4g}, "
                    f"IL = {information_loss(X, labels):.2f}%", fontsize=9)
    return fig


def _size_summary(labels: Any) -> str:
    import numpy as np

    from .core import group_sizes

    values, counts = np.unique(group_sizes(labels), return_counts=True)
    return ", ".join(f"{c}×{v}" for v, c in zip(values, counts, strict=True))


def vmdav_view(gamma: float = 1.1, k: int = 3, *, dataset: Any = "clustered 2-D",
               figsize: tuple[float, float] = (10.0, 4.6)) -> Figure:
    """Figure: MDAV (left) and V-MDAV with gain factor ``gamma`` (right) on a 2-D set.

    Titles give each partition's IL and its group sizes (count × size). The
    default set has natural clusters of 3 to 5 records (:func:`two_d_data`).
    Chapter 3 (``chapters/03_vmdav.md``); :func:`explore_vmdav` adds sliders.

    Parameters
    ----------
    gamma : float
        V-MDAV's gain factor, ``>= 0``.
    k : int
    dataset : str or array_like, shape (n, 2)
        ``"clustered 2-D"``, ``"scattered 2-D"`` or an array.
    figsize : (float, float)

    Returns
    -------
    matplotlib.figure.Figure
    """
    import numpy as np

    from ._validate import check_k
    from .core import information_loss
    from .mdav import mdav, vmdav
    from .plotting import plot_partition

    X, name = _ch2_matrix(dataset)
    if X.shape[1] != 2:
        raise ValueError(f"vmdav_view draws 2-D data, got {X.shape[1]} columns")
    if not np.isfinite(gamma) or gamma < 0:
        raise ValueError(f"gamma must be a finite number >= 0, got {gamma}")
    k = check_k(k, X.shape[0])
    fig = Figure(figsize=figsize, layout="constrained")
    axes = fig.subplots(1, 2)
    parts = {"MDAV": mdav(X, k), f"V-MDAV, γ = {gamma:g}": vmdav(X, k, gamma=gamma)}
    for ax, (title, labels) in zip(axes, parts.items(), strict=True):
        plot_partition(ax, X, labels, marker_size=25)
        ax.set_title(f"{title}: IL = {information_loss(X, labels):.2f}%\n"
                     f"groups: {_size_summary(labels)}", fontsize=9)
    fig.suptitle(f"{name} ({X.shape[0]} records), k = {k}", fontsize=10)
    return fig


def explore_vmdav(gamma: float = 1.1, k: int = 3, dataset: str = "clustered 2-D") -> Any:
    """Sliders for ``gamma`` and ``k`` (and a 2-D data set) around :func:`vmdav_view`.

    Returns an ``ipywidgets.interactive``; it needs a running kernel (chapter 3).
    """
    import ipywidgets as w
    from IPython.display import display

    def show(gamma: float, k: int, dataset: str) -> None:
        display(vmdav_view(gamma, k, dataset=dataset))

    return w.interactive(
        show,
        gamma=w.FloatSlider(value=gamma, min=0.0, max=2.0, step=0.05, description="γ"),
        k=w.IntSlider(value=k, min=2, max=8, description="k"),
        dataset=w.Dropdown(options=["clustered 2-D", "scattered 2-D"], value=dataset,
                           description="data"),
    )


def gamma_sweep_view(sweeps: dict[str, Any], mdav_il: dict[str, float] | None = None, *,
                     marks: tuple[float, ...] = (0.2, 1.1), ncols: int = 3,
                     figsize: tuple[float, float] | None = None) -> Figure:
    """Figure: V-MDAV's IL against its gain factor, one panel per data set.

    Parameters
    ----------
    sweeps : dict
        ``{data set name: DataFrame}`` as returned by
        :func:`microagg.tables.gamma_sweep` (columns ``gamma`` and ``IL``).
    mdav_il : dict, optional
        ``{data set name: IL of MDAV}``, drawn as a dashed horizontal line.
    marks : tuple of float
        Gain factors to mark with vertical dotted lines (the V-MDAV paper's
        0.2 and 1.1).
    ncols : int
    figsize : (float, float), optional

    Returns
    -------
    matplotlib.figure.Figure
        One axes per data set (titled with the data set and the best gamma on
        the grid), plus hidden spare axes if the grid is not full. Chapter 3.
    """
    import numpy as np

    if not sweeps:
        raise ValueError("sweeps is empty: pass {name: tables.gamma_sweep(...)}")
    nrows = int(np.ceil(len(sweeps) / ncols))
    fig = Figure(figsize=figsize or (3.4 * ncols, 2.7 * nrows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax, (name, df) in zip(axes, sweeps.items(), strict=False):
        missing = {"gamma", "IL"} - set(df.columns)
        if missing:
            raise ValueError(f"sweep {name!r} lacks column(s) {sorted(missing)}")
        ax.plot(df["gamma"], df["IL"], marker="o", markersize=3, color="C0", label="V-MDAV")
        if mdav_il is not None and name in mdav_il:
            ax.axhline(mdav_il[name], color="k", ls="--", linewidth=1, label="MDAV")
        for m in marks:
            ax.axvline(m, color="0.5", ls=":", linewidth=1)
        best = df.loc[df["IL"].idxmin()]
        ax.scatter([best["gamma"]], [best["IL"]], color="tab:red", zorder=5)
        ax.set_title(f"{name}: best γ = {best['gamma']:g} (IL {best['IL']:.3g}%)", fontsize=9)
        ax.set_xlabel("γ", fontsize=8)
        ax.set_ylabel("IL (%)", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=7)
    for ax in axes[len(sweeps):]:
        ax.set_visible(False)
    return fig



# --------------------------------------------------------------------------------------
# Chapter 4: MDAV-single-group and IV-MDAV
# --------------------------------------------------------------------------------------

__all__ += ["ivmdav_view", "explore_ivmdav"]


def ivmdav_view(dataset: Any = "census", k: int = 3, gamma: float = 1.16, *,
                figsize: tuple[float, float] = (10.0, 3.8)) -> Figure:
    """Figure: what IV-MDAV's extension step does, against MDAV-single-group.

    Left: how many groups of each size IV-MDAV (gain factor ``gamma``) and
    MDAV-single-group form (IV-MDAV groups hold ``k`` to ``2k-1`` records).
    Right: the information loss :math:`\\mathrm{IL} = 100\\,\\mathrm{SSE}/\\mathrm{SST}`
    of both, with the IV-MDAV paper's value :cite:p:`rawat2014ivmdav` marked
    when ``(dataset, k, gamma)`` is a cell of its Table 1 (``gamma = 1.16``).
    Chapter 4 (``chapters/04_ivmdav.md``).

    Parameters
    ----------
    dataset : str or array_like, shape (n, p)
        A reference data set name (``"census"``, ``"eia"``, ``"tarragona"``),
        standardised by :func:`microagg.tables.standardized`, or a matrix used
        as given.
    k : int
        Minimum group size.
    gamma : float
        IV-MDAV's gain factor: ``y_j`` joins when :math:`d_2 > \\gamma\\, d_1`.
    figsize : (float, float)

    Returns
    -------
    matplotlib.figure.Figure
    """
    import numpy as np

    from . import published, tables
    from .core import information_loss
    from .mdav import ivmdav, mdav_single

    if isinstance(dataset, str):
        name = dataset.lower()
        X = tables.standardized(name)
    else:
        name, X = None, dataset
    lab_iv = ivmdav(X, k, gamma=gamma)
    lab_single = mdav_single(X, k)
    sizes_iv, sizes_single = np.bincount(lab_iv), np.bincount(lab_single)
    top = int(max(sizes_iv.max(), sizes_single.max()))
    span = np.arange(k, top + 1)
    count_iv = np.array([(sizes_iv == s).sum() for s in span])
    count_single = np.array([(sizes_single == s).sum() for s in span])
    il_iv, il_single = information_loss(X, lab_iv), information_loss(X, lab_single)

    fig = Figure(figsize=figsize, layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=[1.3, 1.0])
    w = 0.4
    for dx, counts, colour, label in ((-w / 2, count_single, "C0", "MDAV-single-group"),
                                      (w / 2, count_iv, "C3", f"IV-MDAV, $\\gamma$ = {gamma:g}")):
        bars = left.bar(span + dx, counts, w, color=colour, label=label)
        left.bar_label(bars, labels=[str(c) if c else "" for c in counts], fontsize=7)
    left.set_yscale("symlog", linthresh=1.0)
    left.set_ylim(0, 4.0 * max(count_single.max(), count_iv.max()))
    left.set_xticks(span)
    left.set_xlabel("group size")
    left.set_ylabel("number of groups")
    left.set_title(f"{name or 'data'} (n = {X.shape[0]}), k = {k}: "
                   f"{sizes_single.size} vs {sizes_iv.size} groups", fontsize=10)
    left.legend(fontsize=8, loc="upper right")
    # right: a dot plot (no zero baseline, so small differences stay visible)
    right.plot([il_single], [1], "o", color="C0", markersize=9)
    right.plot([il_iv], [0], "o", color="C3", markersize=9)
    for y, v in ((1, il_single), (0, il_iv)):
        right.annotate(f"{v:.4f}", (v, y), textcoords="offset points", xytext=(0, 8),
                       ha="center", fontsize=8)
    right.set_yticks([0, 1], ["IV-MDAV", "MDAV-single"])
    right.set_ylim(-0.6, 1.6)
    right.set_xlabel("information loss IL (%)")
    right.set_title(f"IL: IV-MDAV {il_iv - il_single:+.4f} points", fontsize=10)
    shown = [il_single, il_iv]
    if name is not None and gamma == 1.16 and k in (3, 4, 5, 10):
        try:
            pub = published.value("ivmdav", 1, name, "ivmdav", k, "IL")
        except ValueError:
            pub = None
        if pub is not None:
            shown.append(pub)
            right.axvline(pub, color="k", linestyle=":", linewidth=1,
                          label=f"paper's IV-MDAV: {pub:g}")
            right.legend(fontsize=8, loc="upper center")
    lo, hi = min(shown), max(shown)
    pad = max(0.25 * (hi - lo), 0.002 * hi, 1e-6)
    right.set_xlim(lo - pad, hi + pad)
    return fig


def explore_ivmdav(dataset: str = "census", k: int = 3, gamma: float = 1.16) -> Any:
    """Data set, ``k`` and ``gamma`` controls around :func:`ivmdav_view` (chapter 4).

    Returns an ``ipywidgets.interactive``; it needs a running kernel (in the
    static book it is a snapshot). EIA takes a few seconds per view.
    """
    import ipywidgets as w
    from IPython.display import display

    def show(dataset: str, k: int, gamma: float) -> None:
        display(ivmdav_view(dataset, k, gamma))

    return w.interactive(
        show,
        dataset=w.Dropdown(options=["tarragona", "census", "eia"], value=dataset,
                           description="data set"),
        k=w.IntSlider(value=k, min=2, max=10, description="k", continuous_update=False),
        gamma=w.FloatSlider(value=gamma, min=0.0, max=2.0, step=0.02, description="gamma",
                            continuous_update=False),
    )

# ======================================================================================
# Chapter 5: the genetic algorithm and the MDAV+GA hybrid
# ======================================================================================

__all__ += ["ga_view", "explore_ga", "macrogroups_view"]


def _ga_default_points() -> Any:
    """The 13 records of V-MDAV's Example 1, the default small set for the GA views."""
    from . import datasets

    return datasets.vmdav_example()


def ga_view(X: Any = None, k: int = 3, *, mutation_rate: float = 0.1,
            crossover_rate: float = 0.5, iterations: int = 300, population: int = 10,
            seed: int = 0, initial: Any = None,
            figsize: tuple[float, float] = (10.0, 4.0)) -> Figure:
    """Figure: the GA's best k-partition of a small 2-D set, and its fitness curve.

    Left: the best partition after ``iterations`` generations of
    :func:`microagg.genetic.ga_partition` (and, dotted in the title, the MDAV
    SSE for comparison). Right: best-so-far and population-mean fitness
    :math:`F = 1/(\\mathrm{SSE}+1)` per generation. Because a shorter run is a
    prefix of a longer one with the same seed, moving an iteration slider
    "animates" one run. Chapter 5 (``chapters/05_genetic.md``).

    Parameters
    ----------
    X : array_like, shape (n, 2), optional
        Default: the 13 records of V-MDAV's Example 1.
    k : int
    mutation_rate, crossover_rate : float
    iterations, population, seed : int
        GA settings (see :func:`microagg.genetic.ga_partition`).
    initial : array_like of int, optional
        Partition(s) injected into the initial population.
    figsize : (float, float)

    Returns
    -------
    matplotlib.figure.Figure
    """
    from .core import sse
    from .genetic import ga_partition
    from .mdav import mdav
    from .plotting import plot_partition

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
    right.plot(gens, res.history["best"], color="C3", label="best so far (elitism)")
    right.plot(gens, res.history["mean"], color="C0", alpha=0.6, linewidth=0.8,
               label="population mean")
    right.set_xlabel("generation")
    right.set_ylabel("fitness  F = 1/(SSE+1)")
    right.set_title(f"mutation rate {mutation_rate:g}, crossover rate {crossover_rate:g}, "
                    f"{population} chromosomes", fontsize=10)
    right.legend(loc="lower right", fontsize=8)
    return fig


def explore_ga(X: Any = None, k: int = 3, *, iterations: int = 300, seed: int = 0) -> Any:
    """Sliders for mutation rate, crossover rate, generations and seed around :func:`ga_view`.

    The generation slider replays one seeded run: each position re-runs the GA
    for that many generations, which, with the same seed, retraces the same
    run up to that point. Needs a running kernel (chapter 5).
    """
    import ipywidgets as w
    from IPython.display import display

    def show(mutation_rate: float, crossover_rate: float, iterations: int, seed: int) -> None:
        display(ga_view(X, k, mutation_rate=mutation_rate, crossover_rate=crossover_rate,
                        iterations=iterations, seed=seed))

    return w.interactive(
        show,
        mutation_rate=w.FloatSlider(value=0.1, min=0.0, max=0.5, step=0.01,
                                    description="mutation"),
        crossover_rate=w.FloatSlider(value=0.5, min=0.0, max=1.0, step=0.05,
                                     description="crossover"),
        iterations=w.IntSlider(value=iterations, min=0, max=3000, step=10,
                               description="generations"),
        seed=w.IntSlider(value=seed, min=0, max=20, description="seed"),
    )


def macrogroups_view(X: Any = None, k: int = 3, K: int = 24, *, n: int = 300, seed: int = 0,
                     radius: float = 0.1,
                     figsize: tuple[float, float] = (10.0, 4.8)) -> Figure:
    """Figure: one-step (left) vs two-step (right) MDAV macrogroups, as in the paper's Fig. 2.

    Each colour is a macrogroup (the set the GA will partition). A red segment
    joins two records closer than ``radius`` that ended up in different
    macrogroups: a natural cluster the GA can no longer reunite. One-step cuts
    an MDAV ``K``-partition and splits more of them; two-step groups whole MDAV
    ``k``-groups by their centroids (``K`` must be a multiple of ``k``).
    Default data: ``datasets.clustered(n, seed)``, standardised.
    Chapter 5 (``chapters/05_genetic.md``).
    """
    import numpy as np

    from . import datasets
    from .core import standardize
    from .genetic import macrogroups, split_close_pairs
    from .plotting import group_colors

    X = standardize(datasets.clustered(n, seed)) if X is None else np.asarray(X, dtype=float)
    fig = Figure(figsize=figsize, layout="constrained")
    axes = fig.subplots(1, 2)
    for ax, part in zip(axes, ("one-step", "two-step"), strict=True):
        macro, _ = macrogroups(X, k, K, part)
        cols = np.array(group_colors(int(macro.max()) + 1, "tab20"))
        split_i, split_j = split_close_pairs(X, macro, radius)
        for a, b in zip(split_i, split_j, strict=True):
            ax.plot(X[[a, b], 0], X[[a, b], 1], color="red", linewidth=2.0, zorder=2)
        ax.scatter(X[:, 0], X[:, 1], s=16, c=cols[macro], edgecolor="k", linewidth=0.3,
                   zorder=3)
        title = f"one-step: MDAV with K = {K}" if part == "one-step" else (
            f"two-step: MDAV k = {k}, then {K // k} centroids per macrogroup")
        ax.set_title(f"{title}\n{int(macro.max()) + 1} macrogroups, "
                     f"{split_i.size} close pairs split (red)", fontsize=10)
        ax.set_aspect("equal", adjustable="datalim")
    return fig


# ======================================================================================
# Chapter 6: GOMM (attribute grouping) and disclosure risk
# ======================================================================================

__all__ += ["gomm_encoding_view", "gomm_view", "explore_gomm", "gomm_population_view",
            "explore_gomm_population", "operator_analysis_view"]


def _letters(n: int) -> list[str]:
    return [chr(ord("A") + i) if i < 26 else f"G{i}" for i in range(n)]


def _draw_chromosome(ax: Any, groups: Any, p: int, y: float, label: str,
                     highlight: Any = ()) -> None:
    """One chromosome as a row: object part (group letter per attribute) | group part."""
    from matplotlib.patches import Rectangle

    from .plotting import group_colors

    letters = _letters(max(len(groups), 1))
    colors = group_colors(max(len(groups), 1), "tab10")
    where = {a: gi for gi, g in enumerate(groups) for a in g}
    for a in range(p):
        gi = where[a]
        ax.add_patch(Rectangle((a, y), 0.95, 0.8, facecolor=colors[gi], alpha=0.55,
                               edgecolor="k", linewidth=1.6 if a in highlight else 0.4))
        ax.text(a + 0.47, y + 0.4, letters[gi], ha="center", va="center", fontsize=9)
    ax.plot([p + 0.25, p + 0.25], [y - 0.05, y + 0.85], color="k", linewidth=3)
    for gi in range(len(groups)):
        ax.add_patch(Rectangle((p + 0.5 + gi, y), 0.95, 0.8, facecolor=colors[gi], alpha=0.9,
                               edgecolor="k", linewidth=0.4))
        ax.text(p + 0.97 + gi, y + 0.4, letters[gi], ha="center", va="center", fontsize=9,
                fontweight="bold")
    ax.text(-0.4, y + 0.4, label, ha="right", va="center", fontsize=9)


def gomm_encoding_view(p: int = 8, seed: int = 3,
                       figsize: tuple[float, float] = (10.0, 6.4)) -> Figure:
    """Figure: GOMM's chromosome (object part | group part) and what each operator does.

    Draws a random parent grouping of ``p`` attributes and its children under the
    GGA crossover and the five mutations of :mod:`microagg.gomm` (same seeded
    random choices as the library's operators). Each row shows the group letter of
    attributes 1..p (object part), a thick bar, then the groups (group part).
    Chapter 6 (``chapters/06_gomm.md``).
    """
    import numpy as np

    from .gomm import _random_chromosome, crossover, mutate

    rng = np.random.default_rng(seed)
    parent = _random_chromosome(p, rng)
    while not 3 <= len(parent) <= 4:
        parent = _random_chromosome(p, rng)
    other = _random_chromosome(p, rng)
    rows: list[tuple[str, Any]] = [("parent 1", parent), ("parent 2", other)]
    c1, c2 = crossover(parent, other, rng)
    rows += [("crossover child 1", c1), ("crossover child 2", c2)]
    names = {"GC": "group create", "GE": "group eliminate", "GS": "group split",
             "ES": "element swap", "EM": "element move"}
    for op, name in names.items():
        child = mutate(op, parent, p, rng)
        tries = 0
        while child == parent and tries < 20:  # show an informative (non-clone) example
            child = mutate(op, parent, p, rng)
            tries += 1
        rows.append((f"{name} (of parent 1)", child))
    fig = Figure(figsize=figsize, layout="constrained")
    ax = fig.subplots()
    for r, (label, c) in enumerate(rows):
        y = -1.1 * r - (0.5 if r >= 2 else 0) - (0.5 if r >= 4 else 0)
        _draw_chromosome(ax, c, p, y, label)
    for a in range(p):
        ax.text(a + 0.47, 1.0, f"a{a + 1}", ha="center", fontsize=8)
    ax.text(p / 2, 1.5, "object part (group of each attribute)", ha="center", fontsize=9)
    ax.text(p + 2.5, 1.5, "group part", ha="center", fontsize=9)
    ax.set_xlim(-5.5, p + 8)
    ax.set_ylim(-1.1 * len(rows) - 1.2, 2.0)
    ax.axis("off")
    return fig


def _names_of(names: Any, p: int) -> list[str]:
    return list(names) if names is not None else [f"a{j + 1}" for j in range(p)]


def gomm_view(results: Any, k: int, *, names: Any = None,
              figsize: tuple[float, float] = (11.0, 4.2)) -> Figure:
    """Figure: GOMM's best grouping at ``k`` and its score breakdown, among all ``k`` run.

    Parameters
    ----------
    results : dict of int -> GommResult
        Precomputed runs (one per ``k``), e.g. from :func:`microagg.gomm.reproduce`.
    k : int
        Which run to show (a key of ``results``).
    names : list of str, optional
        Attribute names (default a1, a2, ...).

    Left: each attribute coloured by its group. Middle: IL, ID, DLD, DR and the
    score. Right: score and number of groups against ``k``, this ``k`` marked.
    Chapter 6 (``chapters/06_gomm.md``).
    """
    import numpy as np
    from matplotlib.patches import Rectangle

    from .plotting import group_colors

    r = results[k]
    p = sum(len(g) for g in r.groups)
    labels = _names_of(names, p)
    fig = Figure(figsize=figsize, layout="constrained")
    a0, a1, a2 = fig.subplots(1, 3, width_ratios=[0.8, 1.0, 1.2])
    colors = group_colors(len(r.groups), "tab10")
    where = {a: gi for gi, g in enumerate(r.groups) for a in g}
    cols = max(1, int(np.ceil(p / 13)))
    per_col = int(np.ceil(p / cols))
    for a in range(p):
        x, y = a // per_col, a % per_col
        a0.add_patch(Rectangle((x * 3, -y), 2.9, 0.9, facecolor=colors[where[a]], alpha=0.6,
                               edgecolor="k", linewidth=0.3))
        a0.text(x * 3 + 1.45, -y + 0.45, labels[a], ha="center", va="center", fontsize=7)
    a0.set_xlim(-0.2, cols * 3)
    a0.set_ylim(-per_col, 1.2)
    a0.axis("off")
    a0.set_title(f"k = {k}: {r.n_groups} group(s)", fontsize=10)
    parts = {"IL": r.il, "ID": r.id, "DLD": r.dld, "DR": r.dr, "score": r.score}
    bars = a1.bar(list(parts), list(parts.values()),
                  color=["C0", "C1", "C2", "C4", "C3"])
    a1.bar_label(bars, fmt="%.1f", fontsize=8)
    a1.set_ylabel("percent")
    a1.set_title("score = (IL + DR)/2,  DR = (ID + DLD)/2", fontsize=10)
    ks = sorted(results)
    a2.plot(ks, [results[q].score for q in ks], "o-", color="C3", label="best score")
    a2.plot([k], [r.score], "o", ms=12, mfc="none", mec="k")
    a2.set_xscale("log")
    a2.set_xticks(ks, [str(q) for q in ks])
    a2.set_xlabel("k")
    a2.set_ylabel("score")
    twin = a2.twinx()
    twin.step(ks, [results[q].n_groups for q in ks], where="mid", color="C0", alpha=0.7,
              label="groups")
    twin.set_ylabel("number of groups", color="C0")
    twin.set_ylim(0, max(results[q].n_groups for q in ks) + 1)
    a2.set_title("best score and number of groups against k", fontsize=10)
    return fig


def explore_gomm(results: Any, names: Any = None) -> Any:
    """A k slider over precomputed GOMM runs, showing :func:`gomm_view` (needs a kernel)."""
    import ipywidgets as w
    from IPython.display import display

    ks = sorted(results)

    def show(k: int) -> None:
        display(gomm_view(results, k, names=names))

    return w.interactive(show, k=w.SelectionSlider(options=ks, value=ks[len(ks) // 2],
                                                   description="k"))


def gomm_population_view(result: Any, generation: int,
                         figsize: tuple[float, float] = (11.0, 4.0)) -> Figure:
    """Figure: the population of one GOMM run at a generation.

    Left: every member's score against its number of groups (the population is
    kept sorted, best first; clones pile up on one point). Right: best, mean and
    worst score per generation, the chosen generation marked; the title gives the
    best grouping's number of groups. Chapter 6 (``chapters/06_gomm.md``).
    """
    import numpy as np

    g = int(np.clip(generation, 0, len(result.population_scores) - 1))
    s = result.population_scores[g]
    ng = result.population_groups[g]
    fig = Figure(figsize=figsize, layout="constrained")
    a0, a1 = fig.subplots(1, 2)
    jitter = (np.random.default_rng(0).random(s.size) - 0.5) * 0.3
    a0.scatter(ng + jitter, s, s=12, alpha=0.5)
    a0.scatter([ng[0]], [s[0]], s=60, color="C3", label="best")
    a0.set_xlabel("number of groups")
    a0.set_ylabel("score (lower is better)")
    distinct = len({(round(float(a), 9), int(b)) for a, b in zip(s, ng, strict=True)})
    a0.set_title(f"generation {g}: {s.size} members, {distinct} distinct scores", fontsize=10)
    a0.legend(fontsize=8)
    h = result.history
    a1.plot(h["generation"], h["best"], color="C3", label="best")
    a1.plot(h["generation"], h["mean"], color="C0", label="mean")
    a1.plot(h["generation"], h["worst"], color="C7", label="worst")
    a1.axvline(g, color="k", linewidth=0.8)
    a1.set_xlabel("generation")
    a1.set_ylabel("score")
    best = result.best_history[g]
    a1.set_title(f"best at generation {g}: {len(best)} group(s), score {s[0]:.2f}",
                 fontsize=10)
    a1.legend(fontsize=8)
    return fig


def explore_gomm_population(result: Any) -> Any:
    """A generation slider over one GOMM run, showing :func:`gomm_population_view`."""
    import ipywidgets as w
    from IPython.display import display

    last = len(result.population_scores) - 1

    def show(generation: int) -> None:
        display(gomm_population_view(result, generation))

    return w.interactive(show, generation=w.IntSlider(value=min(10, last), min=0, max=last,
                                                      description="generation"))


def operator_analysis_view(operators: Any, which: Any = ("GC", "GE", "GS", "ES", "EM"),
                           figsize: tuple[float, float] | None = None) -> Figure:
    """Figure: the operator analysis of the GOMM paper (its Figures 6 and 7).

    One column per operator; rows: utilization (% of children removed without ever
    being a parent), mean life time (generations), efficacy (children better /
    worse than their parent(s)) and efficiency (mean and extreme % improvement and
    worsening, formulas 7-9). ``operators`` is :attr:`GommResult.operators`.
    Chapter 6 (``chapters/06_gomm.md``).
    """
    from .gomm import OPERATORS

    which = list(which)
    figsize = figsize or (2.3 * len(which) + 1.5, 8.0)
    fig = Figure(figsize=figsize, layout="constrained")
    axes = fig.subplots(4, len(which), squeeze=False, sharex=True)
    for j, op in enumerate(which):
        d = operators[operators["operator"] == op]
        gen = d["generation"]
        axes[0, j].plot(gen, d["unused_pct"], color="C0")
        axes[0, j].set_ylim(-5, 105)
        axes[0, j].set_title(OPERATORS[op], fontsize=10)
        axes[1, j].plot(gen, d["life_time"], color="C1")
        axes[2, j].plot(gen, d["improved"], color="C2", label="improved")
        axes[2, j].plot(gen, d["worsened"], color="C3", label="worsened")
        axes[3, j].plot(gen, d["eff_improve_mean"], color="C2", label="mean improvement")
        axes[3, j].plot(gen, d["eff_improve_max"], color="C2", linestyle=":",
                        label="max improvement")
        axes[3, j].plot(gen, d["eff_worsen_mean"], color="C3", label="mean worsening")
        axes[3, j].plot(gen, d["eff_worsen_max"], color="C3", linestyle=":",
                        label="max worsening")
        axes[3, j].set_xlabel("generation")
        if not d["active"].all():
            off = int(gen[~d["active"].to_numpy()].min())
            for row in axes[:, j]:
                row.axvline(off, color="k", linewidth=0.6, linestyle="--")
    for i, lab in enumerate(["unused %", "life time", "children", "efficiency %"]):
        axes[i, 0].set_ylabel(lab)
    axes[2, 0].legend(fontsize=7)
    axes[3, 0].legend(fontsize=7)
    return fig
