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
* :func:`group_markers` - the marker of each group: groups differ in shape as well as colour.
* :func:`set_alt_text` / :func:`alt_text` - the text alternative a view writes for its figure
  (the explorers put it on each stored frame and in a live region).

Colours come from matplotlib's ``tableau-colorblind10`` (Tableau's palette designed for the
common colour-vision deficiencies), and every group also gets its own marker and hatching, so
no figure tells groups apart by colour alone.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import to_rgba
from matplotlib.patches import Arc, Polygon

from .._validate import as_labels, as_matrix

__all__ = ["group_colors", "group_markers", "plot_partition", "plot_univariate",
           "plot_arc_graph", "plot_group_hull", "set_alt_text", "alt_text", "sizes_text",
           "cvd_safe", "series_styles",
           "PALETTE", "HIGHLIGHT"]

#: The figures' colours: matplotlib's ``tableau-colorblind10`` style (safe for the common
#: colour-vision deficiencies), in its order.
PALETTE = ("#006BA4", "#FF800E", "#ABABAB", "#595959", "#5F9ED1", "#C85200", "#898989",
           "#A2C8EC", "#FFBC79", "#CFCFCF")

#: The colour of a highlighted element (a path, a chosen point): the palette's dark orange,
#: always drawn thicker as well, so it stands out without colour.
HIGHLIGHT = "#C85200"

#: Markers that cycle with the colours (ten shapes; with ten colours, 10 x 10 pairs differ
#: before one repeats, since the two cycles are offset).
_MARKERS = ("o", "s", "^", "D", "v", "P", "<", "h", ">", "*")
_HATCHES = ("", "//", "..", "\\\\", "xx", "--", "||", "++", "oo", "**")

_ALT = "microagg_alt_text"


def group_colors(n_groups: int, *, cmap: str | None = None
                 ) -> list[tuple[float, float, float, float]]:
    """``n_groups`` RGBA colours (cycling ``PALETTE``, or ``cmap`` if given).

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    n_groups : int
    cmap : str, optional
        A qualitative matplotlib colormap name instead of the colour-blind-safe default.

    Examples
    --------
    >>> from matplotlib.colors import to_hex
    >>> [to_hex(c) for c in group_colors(2)]
    ['#006ba4', '#ff800e']
    >>> group_colors(12)[10] == group_colors(12)[0]  # ten colours, then again
    True
    """
    if cmap is None:
        return [to_rgba(PALETTE[i % len(PALETTE)]) for i in range(n_groups)]
    import matplotlib

    base = matplotlib.colormaps[cmap]
    n_base = getattr(base, "N", 10)
    return [to_rgba(base(i % n_base)) for i in range(n_groups)]


def group_markers(n_groups: int) -> list[tuple[str, str]]:
    """``(marker, hatch)`` of each of ``n_groups`` groups, so that shape tells groups apart.

    Markers and hatches cycle with the ten colours of ``PALETTE``, shifted by one in each
    round of ten groups, so a colour and marker pair repeats only after 100 groups.

    Book: :ref:`chap-foundations`.

    Examples
    --------
    >>> group_markers(3)
    [('o', ''), ('s', '//'), ('^', '..')]
    >>> group_markers(12)[10]
    ('s', '//')
    """
    n = len(_MARKERS)
    return [(_MARKERS[(i + i // n) % n], _HATCHES[(i + i // n) % n]) for i in range(n_groups)]


#: Colours of line series: the palette's colours that keep 3:1 or more against white first
#: (its light grey, 2.3:1, is left out), then the others.
_SERIES = ("#006BA4", "#C85200", "#595959", "#5F9ED1", "#FF800E", "#898989")
_LINESTYLES = ("-", "--", "-.", ":")


def series_styles(n_series: int) -> list[dict[str, Any]]:
    """Colour, marker and line style of each of ``n_series`` lines of one plot, so that a
    line is told from the others without its colour (WCAG 1.4.1): pass each to ``plot``.

    Book: :ref:`chap-ivmdav`.

    Parameters
    ----------
    n_series : int
        Number of lines, ``>= 0``.

    Returns
    -------
    list of dict
        One dict per line with keys ``color``, ``marker`` and ``linestyle``. The six
        colours, ten markers and four line styles cycle independently, so no two of the
        first 60 lines share all three.

    Examples
    --------
    >>> series_styles(2)
    [{'color': '#006BA4', 'marker': 'o', 'linestyle': '-'}, \
{'color': '#C85200', 'marker': 's', 'linestyle': '--'}]
    """
    return [{"color": _SERIES[i % len(_SERIES)], "marker": _MARKERS[i % len(_MARKERS)],
             "linestyle": _LINESTYLES[i % len(_LINESTYLES)]} for i in range(n_series)]


def cvd_safe(view: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a view so that its figure is drawn in the ``tableau-colorblind10`` style.

    Inside the call, ``"C0"``, ``"C1"``, ... and the default line colours are
    ``PALETTE``; matplotlib's global settings are unchanged outside it.

    Book: :ref:`chap-foundations`.
    """
    import matplotlib.style

    @functools.wraps(view)
    def drawn(*args: Any, **kwargs: Any) -> Any:
        with matplotlib.style.context("tableau-colorblind10"):
            return view(*args, **kwargs)

    return drawn


def set_alt_text(figure: Any, text: str) -> Any:
    """Attach ``text``, what ``figure`` shows in words, to the figure; return the figure.

    :func:`microagg.views.explorer` stores it as each frame's alternative text and in the
    explorer's live region.

    Book: :ref:`chap-mdav`.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> alt_text(set_alt_text(Figure(), "an empty figure"))
    'an empty figure'
    """
    setattr(figure, _ALT, str(text))
    return figure


def sizes_text(labels: Any) -> str:
    """``"13 groups, sizes 3 to 4"``: the group count and size range of a partition, in words
    (for alternative texts).

    Book: :ref:`chap-mdav`.

    Examples
    --------
    >>> sizes_text([0, 0, 1, 1, 1])
    '2 groups, sizes 2 to 3'
    >>> sizes_text([0, 0, 0])
    '1 group, size 3'
    """
    sizes = np.bincount(as_labels(labels, len(labels)))
    sizes = sizes[sizes > 0]
    lo, hi = int(sizes.min()), int(sizes.max())
    many = "groups" if sizes.size != 1 else "group"
    span = f"size {lo}" if lo == hi else f"sizes {lo} to {hi}"
    return f"{sizes.size} {many}, {span}"


def alt_text(figure: Any) -> str | None:
    """The text set by ``set_alt_text``, or ``None``.

    Book: :ref:`chap-mdav`.
    """
    return getattr(figure, _ALT, None)


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
    cmap: str | None = None,
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
    cmap : str, optional
        Qualitative colormap for the groups (default ``PALETTE``).
    marker_size : float
        Scatter marker area.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().add_subplot()
    >>> ax = plot_partition(ax, [[0, 0], [1, 1], [2, 2], [5, 0]], [0, 0, 0, 1], title="two groups")
    >>> ax.get_title()
    'two groups'
    """
    arr = as_matrix(X)
    if arr.shape[1] < 2:
        raise ValueError(f"plot_partition needs at least 2 columns, got shape {arr.shape}")
    lab = as_labels(labels, arr.shape[0])
    P = arr[:, :2]
    groups = np.unique(lab)
    colors = group_colors(groups.size, cmap=cmap)
    for g, col, (marker, hatch) in zip(groups, colors, group_markers(groups.size), strict=True):
        pts = P[lab == g]
        if hulls and pts.shape[0] >= 2:
            h = _hull(pts)
            if h.shape[0] >= 3:
                ax.add_patch(Polygon(h, closed=True, facecolor=(*col[:3], 0.18),
                                     edgecolor=(*col[:3], 0.7), linewidth=1.0, hatch=hatch))
            else:
                ax.plot(h[:, 0], h[:, 1], color=col, alpha=0.5, linewidth=4,
                        solid_capstyle="round")
        ax.scatter(pts[:, 0], pts[:, 1], s=marker_size, color=col, edgecolor="k",
                   linewidth=0.4, zorder=3, marker=marker)
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
    cmap: str | None = None,
    centroids: bool = True,
    annotate: bool = False,
    title: str | None = None,
) -> Axes:
    """Draw one attribute on a horizontal line, each group a coloured run of its own marker.

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    x : array_like, shape (n,) or (n, 1)
    labels : array_like of int, shape (n,)
    cmap : str, optional
    centroids : bool
        Mark each group mean with a vertical tick (the published value).
    annotate : bool
        Write each value under its marker.
    title : str, optional

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = plot_univariate(Figure().add_subplot(), [3, 1, 2, 8, 9], [0, 0, 0, 1, 1], title="x")
    >>> ax.get_title()
    'x'
    """
    v = as_matrix(np.asarray(x, dtype=float).reshape(-1, 1), "x")[:, 0]
    lab = as_labels(labels, v.size)
    groups = np.unique(lab)
    colors = group_colors(groups.size, cmap=cmap)
    ax.axhline(0, color="0.7", linewidth=0.8, zorder=0)
    for g, col, (marker, _) in zip(groups, colors, group_markers(groups.size), strict=True):
        vals = v[lab == g]
        ax.plot([vals.min(), vals.max()], [0, 0], color=col, linewidth=8, alpha=0.35,
                solid_capstyle="round")
        ax.scatter(vals, np.zeros_like(vals), color=col, edgecolor="k", s=40, zorder=3,
                   marker=marker)
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
    and dark orange, the others thin and grey; with ``costs`` each arc is labelled at
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

    Examples
    --------
    The graph of seven values and ``k = 3``: nodes 0..7, twelve arcs, one cost label per arc:

    >>> import microagg
    >>> from matplotlib.figure import Figure
    >>> g = microagg.univariate_graph([1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0], 3)
    >>> ax = plot_arc_graph(Figure().add_subplot(), 8, g.arcs, costs=g.costs, path=g.path)
    >>> len(ax.patches), len(ax.texts)
    (12, 20)
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
                         color=HIGHLIGHT if hit else "0.6", linewidth=2.5 if hit else 0.8,
                         zorder=3 if hit else 1))
        if costs is not None:
            y = height / 2 if above else -height / 2
            ax.annotate(cost_format.format(costs[m]), ((i + j) / 2, y), ha="center",
                        va="bottom" if above else "top", fontsize=7,
                        color=HIGHLIGHT if hit else "0.35",
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

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = plot_group_hull(Figure().add_subplot(), [[0, 0], [1, 0], [0, 1]], "C0")
    >>> len(ax.patches)
    1
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
