"""Views for MDAV: its rounds step by step, partitions side by side, an explorer.

Book: :ref:`chap-mdav`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure

from .. import datasets
from .._core import group_sizes, information_loss, sse, standardize
from .._mdav import mdav
from .._validate import as_matrix, check_k
from ._common import MDAV_DATASETS, dataset_matrix
from ._explorer import explorer
from ._plotting import (
    cvd_safe,
    group_colors,
    group_markers,
    plot_group_hull,
    plot_partition,
    set_alt_text,
    sizes_text,
)

__all__ = ["mdav_steps_view", "partitions_view", "mdav_view", "explore_mdav"]


@cvd_safe
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
    did.

    Book: :ref:`chap-mdav`.

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

    Examples
    --------
    >>> from microagg.views import mdav_steps_view
    >>> fig = mdav_steps_view(max_panels=2)
    >>> [ax.get_title() for ax in fig.axes]
    ['step 1: 20 left: groups around $x_r$ and $x_s$', 'final 3-partition: SSE = 8.98, IL = 22.5%']
    """

    X = np.asarray(standardize(datasets.scattered(20, seed=3))) if X is None else X
    X = as_matrix(X)
    if X.shape[1] != 2:
        raise ValueError(f"mdav_steps_view draws 2-D data, got {X.shape[1]} columns")
    k = check_k(k, X.shape[0])
    if max_panels < 2:
        raise ValueError(f"max_panels must be at least 2, got {max_panels}")
    labels = mdav(X, k)
    colors = group_colors(int(labels.max()) + 1)
    steps = _mdav_steps(labels, k)[: max_panels - 1]
    n_panels = len(steps) + 1
    fig = Figure(figsize=figsize or (3.3 * n_panels, 3.6), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, n_panels))
    for step, (ax, (formed, kind)) in enumerate(zip(axes, steps, strict=False), start=1):
        _draw_step(ax, X, labels, colors, formed, kind)
        ax.set_title(f"step {step}: {ax.get_title()}", fontsize=9)
    last = axes[n_panels - 1]
    plot_partition(last, X, labels, marker_size=30)
    last.set_title(f"final {k}-partition: SSE = {sse(X, labels):.3g}, "
                   f"IL = {information_loss(X, labels):.1f}%", fontsize=9)
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = 0.08 * (hi - lo).max()
    for ax in axes:  # same window in every panel (sharing axes would fight the aspect)
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlim(lo[0] - pad, hi[0] + pad)
        ax.set_ylim(lo[1] - pad, hi[1] + pad)
    return fig


def _mdav_steps(labels: np.ndarray, k: int) -> list[tuple[list[int], str]]:
    """MDAV's steps read off its labels (groups are numbered in order of formation).

    Each step is (groups formed, ``"round"``) for a full round of two groups, or
    (one group, ``"last2k"``) when between 2k and 3k-1 records were left.
    """
    n_groups = int(labels.max()) + 1
    steps: list[tuple[list[int], str]] = []
    g = 0
    while g < n_groups - 1:
        if int((labels >= g).sum()) >= 3 * k:
            steps.append(([g, g + 1], "round"))
            g += 2
        else:
            steps.append(([g], "last2k"))
            g += 1
    return steps


def _marker(group: int) -> str:
    return group_markers(group + 1)[group][0]


def _draw_step(ax: Any, X: np.ndarray, labels: np.ndarray, colors: list[Any],
               formed: list[int], kind: str) -> None:
    """One step: earlier groups faded, the rest grey, centroid, x_r (and x_s), new groups."""
    first = formed[0]
    left = labels >= first
    for h in range(first):
        pts = X[labels == h]
        ax.scatter(pts[:, 0], pts[:, 1], s=30, color=colors[h], alpha=0.35, zorder=2,
                   marker=_marker(h))
    ax.scatter(X[left, 0], X[left, 1], s=30, color="0.6", edgecolor="k", linewidth=0.3,
               zorder=2)
    c = X[left].mean(axis=0)
    ax.scatter([c[0]], [c[1]], marker="^", s=90, color="k", zorder=5)
    idx_left = np.flatnonzero(left)
    r = int(idx_left[np.argmax(((X[idx_left] - c) ** 2).sum(axis=1))])
    ax.annotate("", X[r], c, arrowprops={"arrowstyle": "->", "color": "k", "lw": 1})
    for h in formed:
        pts = X[labels == h]
        plot_group_hull(ax, pts, colors[h])
        ax.scatter(pts[:, 0], pts[:, 1], s=34, color=colors[h], edgecolor="k", linewidth=0.6,
                   zorder=4, marker=_marker(h))
    ax.scatter(*X[r], marker="*", s=260, color=colors[first], edgecolor="k", zorder=6)
    ax.annotate(r"$x_r$", X[r], textcoords="offset points", xytext=(6, 6), fontsize=10)
    if kind != "round":
        ax.set_title(f"{int(left.sum())} left (< 3k): one group around $x_r$")
        return
    rest = idx_left[labels[idx_left] != first]
    s_ = int(rest[np.argmax(((X[rest] - X[r]) ** 2).sum(axis=1))])
    ax.annotate("", X[s_], X[r], arrowprops={"arrowstyle": "->", "color": "0.3", "lw": 0.8,
                                              "ls": "--"})
    ax.scatter(*X[s_], marker="*", s=260, color=colors[formed[1]], edgecolor="k", zorder=6)
    ax.annotate(r"$x_s$", X[s_], textcoords="offset points", xytext=(6, 6), fontsize=10)
    ax.set_title(f"{int(left.sum())} left: groups around $x_r$ and $x_s$")


@cvd_safe
def partitions_view(X: Any, partitions: dict[str, Any], *, annotate: bool = False,
                    figsize: tuple[float, float] | None = None) -> Figure:
    """Figure: several partitions of the same 2-D records side by side, SSE and IL in titles.

    :ref:`chap-mdav` to :ref:`chap-vmdav` (e.g. MDAV, V-MDAV and the optimum on V-MDAV's Example 1).

    Book: :ref:`chap-mdav`.

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

    Examples
    --------
    >>> import microagg
    >>> from microagg.views import partitions_view, small_points
    >>> X = small_points(8, seed=1)
    >>> fig = partitions_view(X, {"MDAV": microagg.mdav(X, 2),
    ...                           "optimal": microagg.optimal_partition(X, 2)})
    >>> print(fig.axes[1].get_title())
    optimal
    SSE = 0.2295, IL = 21.26%
    group sizes 2/3/3
    """

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


@cvd_safe
def mdav_view(dataset: Any = "clustered 2-D", k: int = 3, *,
              figsize: tuple[float, float] | None = None) -> Figure:
    """Figure: MDAV on a data set: SSE and IL in the title, the group-size histogram.

    For a 2-D data set the partition is drawn too (left panel). Attributes are
    standardised (population std), as in the papers. :func:`explore_mdav` wraps it in widgets.

    Book: :ref:`chap-mdav`.

    Parameters
    ----------
    dataset : str or array_like
        A name from the explorer's list or a 2-D array (used as given).
    k : int
        Minimum group size, ``1 <= k <= n``.
    figsize : (float, float), optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from microagg.views import mdav_view
    >>> fig = mdav_view("clustered 2-D", 3)
    >>> [ax.get_title() for ax in fig.axes]
    ['partition (crosses: released centroids)', '13 groups']
    """

    X, name = dataset_matrix(dataset)
    k = check_k(k, X.shape[0])
    labels = mdav(X, k)
    two_d = X.shape[1] == 2
    fig = Figure(figsize=figsize or ((9.0, 3.8) if two_d else (5.5, 3.6)),
                 layout="constrained")
    axes = fig.subplots(1, 2 if two_d else 1, squeeze=False,
                        width_ratios=[1.3, 1] if two_d else None)[0]
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
    drawn = "the partition drawn as points in shaded groups, and " if two_d else ""
    return set_alt_text(fig, f"MDAV on {name} ({X.shape[0]} records, {X.shape[1]} attributes), "
                             f"k = {k}: {sizes_text(labels)}, IL "
                             f"{information_loss(X, labels):.2f} %. Shown: {drawn}a bar chart "
                             "of how many groups have each size.")


def explore_mdav(*, dataset: str = "clustered 2-D", k: int = 3) -> Any:
    """A data-set choice and a ``k`` control around :func:`mdav_view`.

    Static pages hold every data set of the explorer with ``k`` in 2, 3, 4, 5, 10;
    a live kernel takes any ``k`` from 2 to 20.

    Book: :ref:`chap-mdav`.

    Parameters
    ----------
    dataset : str, default "clustered 2-D"
        The data set the control opens at, one of ``MDAV_DATASETS``: ``"clustered
        2-D"``, ``"scattered 2-D"``, ``"census"``, ``"tarragona"``, ``"eia"``,
        ``"water-treatment"``.
    k : int, default 3
        The ``k`` the control opens at; one of the static values 2, 3, 4, 5, 10 (any
        other raises ``ValueError``, in a live kernel too).

    Returns
    -------
    ipywidgets.Widget
        The controls and the figure, as :func:`explorer` returns them.

    Examples
    --------
    Outside a notebook the explorer's figure is shown as text; we drop it:

    >>> import contextlib, io
    >>> with contextlib.redirect_stdout(io.StringIO()):
    ...     box = explore_mdav(k=4)
    >>> [(c.description, c.value) for c in box.children[:-1]]
    [('data', 'clustered 2-D'), ('k', 4)]
    """
    return explorer(mdav_view, {"dataset": list(MDAV_DATASETS), "k": [2, 3, 4, 5, 10]},
                    value={"dataset": dataset, "k": k}, live={"k": (2, 20, 1)},
                    labels={"dataset": "data"})
