"""Views for microaggregation at scale: blocks, and how run time grows with the data.

Book: :ref:`chap-scale`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .. import datasets
from .._blocked import blocked, pca_blocks, tree_blocks
from .._core import information_loss, standardize
from .._mdav import mdav
from ._explorer import explorer
from ._plotting import cvd_safe, group_colors, group_markers, series_styles, set_alt_text

__all__ = ["blocks_view", "explore_blocks", "scaling_view"]


def _blocks_data(n: int, seed: int) -> np.ndarray:
    return np.asarray(standardize(datasets.synthetic_clustered(n, 2, spread=0.02, seed=seed)))


@cvd_safe
def blocks_view(block_size: int = 500, *, strategy: str = "tree", n: int = 2000, k: int = 3,
                seed: int = 0, figsize: tuple[float, float] = (6.0, 4.6)) -> Figure:
    """Figure: the blocks :func:`microagg.blocked` cuts a 2-D set into, and what they cost.

    Each colour and marker is a block (groups are formed inside a block only); the title compares
    the information loss of blocked MDAV with exact MDAV on the same records
    (:func:`microagg.datasets.synthetic_clustered`, standardised).

    Book: :ref:`chap-scale`.

    Parameters
    ----------
    block_size : int, default 500
        Largest (``"tree"``) or target (``"pca"``) number of records in a block, ``>= k``.
    strategy : {"tree", "pca"}, default "tree"
        How the records are cut into blocks, as in :func:`microagg.blocked`.
    n : int, default 2000
        Number of records.
    k : int, default 3
        Minimum group size.
    seed : int, default 0
        Seed of the records.
    figsize : (float, float), default (6.0, 4.6)
        The figure's size in inches.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = blocks_view(400, strategy="pca", n=1200)
    >>> "IL" in fig.axes[0].get_title()
    True
    """
    X = _blocks_data(n, seed)
    il_blocked = information_loss(X, blocked(X, k, block_size=block_size, strategy=strategy))
    blocks = (pca_blocks if strategy == "pca" else tree_blocks)(X, k, block_size)
    il_exact = information_loss(X, mdav(X, k))
    fig = Figure(figsize=figsize, layout="constrained")
    ax = fig.add_subplot()
    colors, markers = group_colors(len(blocks)), group_markers(len(blocks))
    for b, idx in enumerate(blocks):
        ax.scatter(X[idx, 0], X[idx, 1], s=6, color=colors[b], marker=markers[b][0])
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(f"{len(blocks)} {strategy} blocks of <= {block_size} records (n = {n})\n"
                 f"IL: blocked {il_blocked:.2f}% against exact MDAV {il_exact:.2f}% "
                 f"(x{il_blocked / il_exact:.2f})", fontsize=9)
    return set_alt_text(fig, f"{n} records cut into {len(blocks)} {strategy} blocks of at most "
                             f"{block_size} records, drawn as points with one colour and marker "
                             f"per block. IL: blocked MDAV {il_blocked:.2f} %, exact MDAV "
                             f"{il_exact:.2f} % ({il_blocked / il_exact:.2f} times).")


def explore_blocks(*, block_size: int = 500, strategy: str = "tree") -> Any:
    """Block size and blocking strategy around :func:`blocks_view`.

    Static pages hold block sizes 100, 250, 500, 1000, 2000 and both strategies; a live
    kernel takes any block size from 10 to 2000.

    Book: :ref:`chap-scale`.

    Parameters
    ----------
    block_size : int, default 500
        The block size the control opens at; one of the static values 100, 250, 500,
        1000, 2000 (any other raises ``ValueError``, in a live kernel too).
    strategy : {"tree", "pca"}, default "tree"
        The strategy the control opens at.

    Returns
    -------
    ipywidgets.Widget
        The controls and the figure, as :func:`explorer` returns them.

    Examples
    --------
    Outside a notebook the explorer's figure is shown as text; we drop it:

    >>> import contextlib, io
    >>> with contextlib.redirect_stdout(io.StringIO()):
    ...     box = explore_blocks(block_size=250)
    >>> [(c.description, c.value) for c in box.children[:-1]]
    [('block size', 250), ('strategy', 'tree')]
    """
    return explorer(blocks_view, {"block_size": [100, 250, 500, 1000, 2000],
                                  "strategy": ["tree", "pca"]},
                    value={"block_size": block_size, "strategy": strategy},
                    live={"block_size": (10, 2000, 10)},
                    labels={"block_size": "block size"})


@cvd_safe
def scaling_view(timings: pd.DataFrame, *, figsize: tuple[float, float] = (6.4, 4.2)) -> Figure:
    """Figure: run time against the number of records, one line per engine, log-log.

    ``timings`` has columns ``n``, ``engine`` and ``seconds`` (e.g.
    :func:`microagg.teaching.engine_timings`); a dotted line of slope 2 marks quadratic
    growth through the first point of the slowest engine.

    Book: :ref:`chap-scale`.

    Parameters
    ----------
    timings : pandas.DataFrame
        Columns ``n``, ``engine`` and ``seconds``, one row per measurement; one line per
        engine, in order of first appearance.
    figsize : (float, float), default (6.4, 4.2)
        The figure's size in inches.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import pandas as pd
    >>> from microagg.views import scaling_view
    >>> timings = pd.DataFrame({"n": [100, 200, 100, 200],
    ...                         "engine": ["loops", "loops", "indexed", "indexed"],
    ...                         "seconds": [0.01, 0.04, 0.002, 0.004]})
    >>> fig = scaling_view(timings)
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['loops', 'indexed', 'n^2']
    """
    missing = {"n", "engine", "seconds"} - set(timings.columns)
    if missing:
        raise ValueError(f"timings lacks column(s) {sorted(missing)}")
    fig = Figure(figsize=figsize, layout="constrained")
    ax = fig.add_subplot()
    groups = timings.groupby("engine", sort=False)
    for (engine, d), style in zip(groups, series_styles(groups.ngroups), strict=True):
        ax.plot(d["n"], d["seconds"], label=str(engine), **style)
    slow = timings.sort_values("seconds").iloc[-1]["engine"]
    first = timings[timings["engine"] == slow].sort_values("n").iloc[0]
    ns = np.array(sorted(timings["n"].unique()), dtype=float)
    ax.plot(ns, first["seconds"] * (ns / first["n"]) ** 2, ":", color="0.5", label="n^2")
    ax.set(xscale="log", yscale="log", xlabel="records n", ylabel="seconds")
    ax.legend(fontsize=8)
    return fig
