"""Small plotting helpers shared by the chapters and the views of :mod:`microagg.views`.

Plumbing "not useful to read" lives here so that chapters show only the ideas.
Every helper draws on a matplotlib ``Axes`` passed in by the caller and returns
that ``Axes`` (or a small tuple), never calls ``plt.show()`` and never changes
global state, so the helpers compose and are testable without a display.

* :func:`plot_partition` - 2-D records coloured by group, with convex hulls,
  centroids and optional record numbers.
* :func:`plot_univariate` - one attribute on a line, groups as coloured runs.
* :func:`plot_arc_graph` - a DAG on nodes ``0..n`` drawn as an arc diagram, with
  one path highlighted (the Hansen-Mukherjee graph of :ref:`chap-foundations`).
* :func:`group_colors` - the colour of each group, consistent across helpers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import to_rgba
from matplotlib.patches import Arc, Polygon

from .._validate import as_labels, as_matrix

__all__ = ["group_colors", "plot_partition", "plot_univariate", "plot_arc_graph",
           "plot_group_hull"]


def group_colors(n_groups: int, *, cmap: str = "tab10") -> list[tuple[float, float, float, float]]:
    """``n_groups`` distinguishable RGBA colours (cycling ``cmap``, then ``tab20``).

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    n_groups : int
    cmap : str
        A qualitative matplotlib colormap name.
    """
    import matplotlib

    base = matplotlib.colormaps[cmap]
    n_base = getattr(base, "N", 10)
    if n_groups > n_base:
        base = matplotlib.colormaps["tab20"]
        n_base = 20
    return [to_rgba(base(i % n_base)) for i in range(n_groups)]


def _hull(points: np.ndarray) -> np.ndarray:
    """Vertices of the convex hull of 2-D ``points`` (or the points if degenerate)."""
    if points.shape[0] < 3:
        return points
    try:
        from scipy.spatial import ConvexHull

        return points[ConvexHull(points).vertices]
    except Exception:  # collinear or duplicate points: draw the segment between extremes
        d = points - points.mean(axis=0)
        axis = np.linalg.svd(d, full_matrices=False)[2][0]
        t = d @ axis
        return points[[int(np.argmin(t)), int(np.argmax(t))]]


def plot_partition(
    ax: Axes,
    X: Any,
    labels: Any,
    *,
    hulls: bool = True,
    centroids: bool = True,
    annotate: bool = False,
    cmap: str = "tab10",
    marker_size: float = 40.0,
    title: str | None = None,
) -> Axes:
    """Draw 2-D records coloured by group.

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    X : array_like, shape (n, 2)
        The records (only the first two columns are drawn).
    labels : array_like of int, shape (n,)
        Group of each record.
    hulls : bool
        Shade the convex hull of each group (a segment for two records).
    centroids : bool
        Mark each group centroid with a cross: the values that microaggregation
        publishes.
    annotate : bool
        Write each record's row number next to it.
    cmap : str
        Qualitative colormap for the groups.
    marker_size : float
        Scatter marker area.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    arr = as_matrix(X)
    if arr.shape[1] < 2:
        raise ValueError(f"plot_partition needs at least 2 columns, got shape {arr.shape}")
    lab = as_labels(labels, arr.shape[0])
    P = arr[:, :2]
    groups = np.unique(lab)
    colors = group_colors(groups.size, cmap=cmap)
    for g, col in zip(groups, colors, strict=True):
        pts = P[lab == g]
        if hulls and pts.shape[0] >= 2:
            h = _hull(pts)
            if h.shape[0] >= 3:
                ax.add_patch(Polygon(h, closed=True, facecolor=(*col[:3], 0.18),
                                     edgecolor=(*col[:3], 0.7), linewidth=1.0))
            else:
                ax.plot(h[:, 0], h[:, 1], color=col, alpha=0.5, linewidth=4,
                        solid_capstyle="round")
        ax.scatter(pts[:, 0], pts[:, 1], s=marker_size, color=col, edgecolor="k",
                   linewidth=0.4, zorder=3)
        if centroids:
            c = pts.mean(axis=0)
            ax.scatter([c[0]], [c[1]], marker="X", s=marker_size * 2.2, color=col,
                       edgecolor="k", linewidth=0.8, zorder=4)
    if annotate:
        for i, (a, b) in enumerate(P):
            ax.annotate(str(i), (a, b), textcoords="offset points", xytext=(4, 4), fontsize=8)
    if title is not None:
        ax.set_title(title)
    ax.set_aspect("equal", adjustable="datalim")
    return ax


def plot_univariate(
    ax: Axes,
    x: Any,
    labels: Any,
    *,
    cmap: str = "tab10",
    centroids: bool = True,
    annotate: bool = False,
    title: str | None = None,
) -> Axes:
    """Draw one attribute on a horizontal line, each group a coloured run.

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    x : array_like, shape (n,) or (n, 1)
    labels : array_like of int, shape (n,)
    cmap : str
    centroids : bool
        Mark each group mean with a vertical tick (the published value).
    annotate : bool
        Write each value under its marker.
    title : str, optional
    """
    v = as_matrix(np.asarray(x, dtype=float).reshape(-1, 1), "x")[:, 0]
    lab = as_labels(labels, v.size)
    groups = np.unique(lab)
    colors = group_colors(groups.size, cmap=cmap)
    ax.axhline(0, color="0.7", linewidth=0.8, zorder=0)
    for g, col in zip(groups, colors, strict=True):
        vals = v[lab == g]
        ax.plot([vals.min(), vals.max()], [0, 0], color=col, linewidth=8, alpha=0.35,
                solid_capstyle="round")
        ax.scatter(vals, np.zeros_like(vals), color=col, edgecolor="k", s=40, zorder=3)
        if centroids:
            ax.plot([vals.mean()] * 2, [-0.25, 0.25], color=col, linewidth=2, zorder=2)
    if annotate:
        for val in v:
            ax.annotate(f"{val:g}", (val, 0), textcoords="offset points", xytext=(0, -16),
                        ha="center", fontsize=8)
    ax.set_yticks([])
    ax.set_ylim(-1, 1)
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    if title is not None:
        ax.set_title(title)
    return ax


def plot_arc_graph(
    ax: Axes,
    n_nodes: int,
    arcs: Any,
    *,
    costs: Sequence[float] | np.ndarray | None = None,
    path: Sequence[int] | np.ndarray | None = None,
    node_labels: Sequence[str] | None = None,
    cost_format: str = "{:.3g}",
    title: str | None = None,
) -> Axes:
    """Draw a DAG on nodes ``0`` to ``n_nodes - 1`` placed on a line, arcs as half-ellipses.

    Arcs of the highlighted ``path`` (consecutive node pairs) are drawn thick
    and red, the others thin and grey; with ``costs`` each arc is labelled at
    its top.

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    n_nodes : int
    arcs : array_like of int, shape (m, 2)
        Arcs ``(i, j)`` with ``i < j``.
    costs : sequence of float, optional
        One label value per arc.
    path : sequence of int, optional
        Nodes of a path to highlight.
    node_labels : sequence of str, optional
        Text under each node (default: the node number).
    cost_format : str
        Format of the arc labels.
    title : str, optional
    """
    A = np.asarray(arcs, dtype=int).reshape(-1, 2)
    on_path: set[tuple[int, int]] = set()
    if path is not None:
        pth = [int(v) for v in path]
        on_path = set(zip(pth[:-1], pth[1:], strict=False))
    top = 0.0
    for m, (i, j) in enumerate(A):
        width = float(j - i)
        # alternate arcs above and below the line so labels do not collide
        above = (i % 2 == 0)
        height = width * 0.5
        top = max(top, height / 2)
        hit = (int(i), int(j)) in on_path
        ax.add_patch(Arc(((i + j) / 2, 0), width, height,
                         theta1=0 if above else 180, theta2=180 if above else 360,
                         color="tab:red" if hit else "0.6", linewidth=2.5 if hit else 0.8,
                         zorder=3 if hit else 1))
        if costs is not None:
            y = height / 2 if above else -height / 2
            ax.annotate(cost_format.format(costs[m]), ((i + j) / 2, y), ha="center",
                        va="bottom" if above else "top", fontsize=7,
                        color="tab:red" if hit else "0.35",
                        fontweight="bold" if hit else "normal")
    ax.scatter(np.arange(n_nodes), np.zeros(n_nodes), s=60, color="white", edgecolor="k",
               zorder=4)
    labels = node_labels if node_labels is not None else [str(v) for v in range(n_nodes)]
    for v, text in enumerate(labels):
        ax.annotate(text, (v, 0), ha="center", va="center", fontsize=7, zorder=5)
    ax.set_xlim(-0.7, n_nodes - 0.3)
    ax.set_ylim(-top - 0.6, top + 0.6)
    ax.set_aspect("equal")
    ax.axis("off")
    if title is not None:
        ax.set_title(title)
    return ax


# ======================================================================================
# Helpers added for :ref:`chap-mdav` to :ref:`chap-vmdav` (step-by-step MDAV / V-MDAV figures)
# ======================================================================================

def plot_group_hull(ax: Axes, points: Any, color: Any, *, alpha: float = 0.18,
                    linewidth: float = 1.2) -> Axes:
    """Shade the convex hull of one group of 2-D ``points`` in ``color``.

    Three or more points: a filled polygon with an outline; two points: a thick
    segment; one point: nothing. Used to outline the groups formed in one step
    of an algorithm (:ref:`chap-mdav` to :ref:`chap-vmdav`).

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    points : array_like, shape (m, 2)
    color : matplotlib colour
    alpha : float
        Opacity of the fill.
    linewidth : float
        Width of the outline.

    Returns
    -------
    matplotlib.axes.Axes
    """
    P = as_matrix(points, "points")[:, :2]
    rgba = to_rgba(color)
    if P.shape[0] >= 2:
        h = _hull(P)
        if h.shape[0] >= 3:
            ax.add_patch(Polygon(h, closed=True, facecolor=(*rgba[:3], alpha),
                                 edgecolor=(*rgba[:3], 0.9), linewidth=linewidth))
        else:
            ax.plot(h[:, 0], h[:, 1], color=rgba, alpha=0.5, linewidth=4,
                    solid_capstyle="round")
    return ax
