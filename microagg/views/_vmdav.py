"""Views for V-MDAV: how a group grows, MDAV against V-MDAV, the gain-factor sweep.

Book: :ref:`chap-vmdav`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure

from .. import datasets
from .._core import group_sizes, information_loss, sse
from .._defaults import VMDAV, VMDAV_CLUSTERED_GAMMA
from .._mdav import mdav, vmdav
from .._validate import as_matrix, check_k
from ..teaching import vmdav_first_group
from ._common import dataset_matrix
from ._explorer import explorer
from ._plotting import (
    HIGHLIGHT,
    PALETTE,
    cvd_safe,
    plot_group_hull,
    plot_partition,
    set_alt_text,
    sizes_text,
)

__all__ = ["vmdav_extension_view", "vmdav_view", "explore_vmdav", "gamma_sweep_view"]


@cvd_safe
def vmdav_extension_view(X: Any = None, k: int = 3, *, gamma: float = VMDAV_CLUSTERED_GAMMA,
                         figsize: tuple[float, float] = (10.0, 4.4)) -> Figure:
    r"""Figure: how V-MDAV grows its first group (left) and the partition it ends with (right).

    Left: the global centroid (triangle), the record :math:`e` farthest from it
    (star), its first :math:`k` records (outlined), and each extension test of
    :func:`microagg.teaching.vmdav_first_group`: :math:`d_{in}` as a solid line from
    :math:`e_{min}` to the nearest group member, :math:`d_{out}` dashed to its
    nearest unassigned neighbour, grey circles when the record was added, dark orange
    squares when not. Right: :func:`microagg.vmdav` on the whole set. Default data: the 13
    records of V-MDAV's Example 1.

    Book: :ref:`chap-vmdav`.

    Parameters
    ----------
    X : array_like, shape (n, 2), optional
        The records, used as given; default the 13 records of
        :func:`microagg.datasets.vmdav_example`.
    k : int, default 3
        Minimum group size, ``1 <= k <= n``.
    gamma : float, default 1.1
        V-MDAV's gain factor, ``>= 0`` (the paper's value for clustered data).
    figsize : (float, float), default (10.0, 4.4)
        The figure's size in inches.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from microagg.views import vmdav_extension_view
    >>> fig = vmdav_extension_view()
    >>> print(fig.axes[1].get_title())
    V-MDAV result: SSE = 30.61, IL = 2.23%
    """
    X = as_matrix(datasets.vmdav_example() if X is None else X)
    if X.shape[1] != 2:
        raise ValueError(f"vmdav_extension_view draws 2-D data, got {X.shape[1]} columns")
    group, tests = vmdav_first_group(X, k, gamma=gamma)
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
        col, mark = (PALETTE[3], "o") if t.added else (HIGHLIGHT, "s")
        a, b = X[t.e_min], X[t.nearest_member]
        left.plot([a[0], b[0]], [a[1], b[1]], color=col, linewidth=2, zorder=3)
        if t.nearest_outside >= 0:
            o = X[t.nearest_outside]
            left.plot([a[0], o[0]], [a[1], o[1]], color=col, linewidth=1.2, ls="--", zorder=3)
        left.scatter(*a, s=90, facecolor="none", edgecolor=col, linewidth=2, zorder=6,
                     marker=mark)
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


    values, counts = np.unique(group_sizes(labels), return_counts=True)
    return ", ".join(f"{c}×{v}" for v, c in zip(values, counts, strict=True))


@cvd_safe
def vmdav_view(dataset: Any = "clustered 2-D", k: int = 3, *,
               gamma: float = VMDAV_CLUSTERED_GAMMA,
               figsize: tuple[float, float] = (10.0, 4.6)) -> Figure:
    """Figure: MDAV (left) and V-MDAV with gain factor ``gamma`` (right) on a 2-D set.

    Titles give each partition's IL and its group sizes (count × size). The
    default set has natural clusters of 3 to 5 records (:func:`two_d_data`).
    :ref:`chap-vmdav`; :func:`explore_vmdav` adds sliders.

    Book: :ref:`chap-vmdav`.

    Parameters
    ----------
    dataset : str or array_like, shape (n, 2)
        ``"clustered 2-D"``, ``"scattered 2-D"`` or an array.
    k : int
        Minimum group size.
    gamma : float
        V-MDAV's gain factor, ``>= 0``.
    figsize : (float, float)

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from microagg.views import vmdav_view
    >>> fig = vmdav_view(k=3, gamma=1.1)
    >>> print(fig.axes[1].get_title())
    V-MDAV, γ = 1.1: IL = 0.59%
    groups: 4×3, 2×4, 4×5
    """

    X, name = dataset_matrix(dataset)
    if X.shape[1] != 2:
        raise ValueError(f"vmdav_view draws 2-D data, got {X.shape[1]} columns")
    if not np.isfinite(gamma) or gamma < 0:
        raise ValueError(f"gamma must be a finite number >= 0, got {gamma}")
    k = check_k(k, X.shape[0])
    fig = Figure(figsize=figsize, layout="constrained")
    axes = fig.subplots(1, 2)
    parts = {"MDAV": mdav(X, k), f"V-MDAV, γ = {gamma:g}": vmdav(X, k, gamma=gamma)}
    said = []
    for ax, (title, labels) in zip(axes, parts.items(), strict=True):
        plot_partition(ax, X, labels, marker_size=25)
        ax.set_title(f"{title}: IL = {information_loss(X, labels):.2f}%\n"
                     f"groups: {_size_summary(labels)}", fontsize=9)
        said.append(f"{title}: {sizes_text(labels)}, IL {information_loss(X, labels):.2f} %")
    fig.suptitle(f"{name} ({X.shape[0]} records), k = {k}", fontsize=10)
    return set_alt_text(fig, f"Two partitions of {name} ({X.shape[0]} records), k = {k}, "
                             f"drawn side by side as points in shaded groups. {said[0]}; "
                             f"{said[1]}.")


def explore_vmdav(*, gamma: float = VMDAV_CLUSTERED_GAMMA, k: int = 3,
                  dataset: str = "clustered 2-D") -> Any:
    """Controls for ``gamma``, ``k`` and a 2-D data set around :func:`vmdav_view`.

    Static pages hold gamma in 0, 0.2, 0.5, 0.8, 1.1, 1.5, 2, ``k`` in 3, 4, 5 and
    both 2-D sets; a live kernel takes any gamma in [0, 2] and ``k`` from 2 to 8.

    Book: :ref:`chap-vmdav`.

    Parameters
    ----------
    gamma : float, default 1.1
        The gain factor the control opens at; one of the static values above (any other
        raises ``ValueError``, in a live kernel too).
    k : int, default 3
        The ``k`` the control opens at; one of 3, 4, 5.
    dataset : {"clustered 2-D", "scattered 2-D"}, default "clustered 2-D"
        The data set the control opens at (:func:`two_d_data`).

    Returns
    -------
    ipywidgets.Widget
        The controls and the figure, as :func:`explorer` returns them.

    Examples
    --------
    Outside a notebook the explorer's figure is shown as text; we drop it:

    >>> import contextlib, io
    >>> with contextlib.redirect_stdout(io.StringIO()):
    ...     box = explore_vmdav(gamma=0.5)
    >>> [(c.description, c.value) for c in box.children[:-1]]
    [('γ', 0.5), ('k', 3), ('data', 'clustered 2-D')]
    """
    return explorer(vmdav_view, {"gamma": [0.0, 0.2, 0.5, 0.8, 1.1, 1.5, 2.0], "k": [3, 4, 5],
                                 "dataset": ["clustered 2-D", "scattered 2-D"]},
                    value={"gamma": gamma, "k": k, "dataset": dataset},
                    live={"gamma": (0.0, 2.0, 0.05), "k": (2, 8, 1)},
                    labels={"gamma": "γ", "dataset": "data"})



@cvd_safe
def gamma_sweep_view(sweeps: dict[str, Any], *, mdav_il: dict[str, float] | None = None,
                     marks: tuple[float, ...] = (VMDAV.gamma, VMDAV_CLUSTERED_GAMMA),
                     ncols: int = 3,
                     figsize: tuple[float, float] | None = None) -> Figure:
    """Figure: V-MDAV's IL against its gain factor, one panel per data set.

    Book: :ref:`chap-vmdav`.

    Parameters
    ----------
    sweeps : dict
        ``{data set name: DataFrame}`` as returned by
        :func:`microagg.teaching.gamma_sweep` (columns ``gamma`` and ``IL``).
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
        the grid), plus hidden spare axes if the grid is not full.

    Examples
    --------
    >>> from microagg import datasets, teaching
    >>> from microagg.views import gamma_sweep_view
    >>> sweep = teaching.gamma_sweep(datasets.vmdav_example(), 3, [0.0, 0.5, 1.1])
    >>> fig = gamma_sweep_view({"example": sweep})
    >>> fig.axes[0].get_title()
    'example: best γ = 0.5 (IL 2.23%)'
    """
    if not sweeps:
        raise ValueError("sweeps is empty: pass {name: teaching.gamma_sweep(...)}")
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
        ax.scatter([best["gamma"]], [best["IL"]], color=HIGHLIGHT, marker="D", zorder=5)
        ax.set_title(f"{name}: best γ = {best['gamma']:g} (IL {best['IL']:.3g}%)", fontsize=9)
        ax.set_xlabel("γ", fontsize=8)
        ax.set_ylabel("IL (%)", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=7)
    for ax in axes[len(sweeps):]:
        ax.set_visible(False)
    return fig
