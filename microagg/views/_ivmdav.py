"""Views for MDAV-single-group and IV-MDAV: group sizes and information loss.

Book: :ref:`chap-ivmdav`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure

from .. import datasets, published
from .._core import information_loss
from .._defaults import IVMDAV
from .._mdav import ivmdav, mdav_single
from ..reproductions._mdav_family import PAPER_DATASETS, PAPER_KS
from ._explorer import explorer
from ._plotting import cvd_safe, set_alt_text, sizes_text

__all__ = ["ivmdav_view", "explore_ivmdav"]


@cvd_safe
def ivmdav_view(dataset: Any = "census", k: int = 3, *, gamma: float = IVMDAV.gamma,
                figsize: tuple[float, float] = (10.0, 3.8)) -> Figure:
    """Figure: what IV-MDAV's extension step does, against MDAV-single-group.

    Left: how many groups of each size IV-MDAV (gain factor ``gamma``) and
    MDAV-single-group form (IV-MDAV groups hold ``k`` to ``2k-1`` records).
    Right: the information loss :math:`\\mathrm{IL} = 100\\,\\mathrm{SSE}/\\mathrm{SST}`
    of both, with the IV-MDAV paper's value :cite:p:`rawat2014ivmdav` marked
    when ``(dataset, k, gamma)`` is a cell of its Table 1 (``gamma = 1.16``).

    Book: :ref:`chap-ivmdav`.

    Parameters
    ----------
    dataset : str or array_like, shape (n, p)
        A reference data set name, standardised by
        :func:`microagg.datasets.standardized`, or a matrix used as given.
    k : int
        Minimum group size.
    gamma : float
        IV-MDAV's gain factor: ``y_j`` joins when :math:`d_2 > \\gamma\\, d_1`.
    figsize : (float, float)

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from microagg.views import ivmdav_view, two_d_data
    >>> fig = ivmdav_view(two_d_data("scattered 2-D"), 3)
    >>> [ax.get_title() for ax in fig.axes]
    ['data (n = 40), k = 3: 13 vs 13 groups', 'IL: IV-MDAV +0.0000 points']
    """

    if isinstance(dataset, str):
        name = dataset.lower()
        X = datasets.standardized(name)
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
    _il_panel(right, name, k, gamma, il_single, il_iv)
    return set_alt_text(fig, f"IV-MDAV (gamma = {gamma:g}) against MDAV-single-group on "
                             f"{name or 'the data'} ({X.shape[0]} records), k = {k}. Bar chart "
                             "of group sizes: MDAV-single-group "
                             f"{sizes_text(lab_single)}; IV-MDAV {sizes_text(lab_iv)}. IL: "
                             f"MDAV-single-group {il_single:.4f} %, IV-MDAV {il_iv:.4f} % "
                             f"({il_iv - il_single:+.4f} points).")


def _il_panel(right: Any, name: str | None, k: int, gamma: float, il_single: float,
              il_iv: float) -> None:
    """A dot plot of both ILs (no zero baseline, so small differences stay visible)."""
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
    if name is not None and gamma == IVMDAV.gamma and k in PAPER_KS:
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


def explore_ivmdav(*, dataset: str = "census", k: int = 3,
                   gamma: float = IVMDAV.gamma) -> Any:
    """Data set, ``k`` and ``gamma`` controls around :func:`ivmdav_view`.

    Static pages hold the three reference data sets, ``k`` in 3, 4, 5, 10 and gamma
    in 1.0, 1.16, 1.4; a live kernel takes ``k`` from 2 to 10 and any gamma in
    [0, 2].

    Book: :ref:`chap-ivmdav`.

    Parameters
    ----------
    dataset : {"tarragona", "census", "eia"}, default "census"
        The data set the control opens at.
    k : int, default 3
        The ``k`` the control opens at; one of 3, 4, 5, 10 (any other raises
        ``ValueError``, in a live kernel too).
    gamma : float, default 1.16
        The gain factor the control opens at; one of 1.0, 1.16, 1.4.

    Returns
    -------
    ipywidgets.Widget
        The controls and the figure, as :func:`explorer` returns them.

    Examples
    --------
    Outside a notebook the explorer's figure is shown as text; we drop it:

    >>> import contextlib, io
    >>> with contextlib.redirect_stdout(io.StringIO()):
    ...     box = explore_ivmdav(dataset="tarragona")
    >>> [(c.description, c.value) for c in box.children[:-1]]
    [('data set', 'tarragona'), ('k', 3), ('gamma', 1.16)]
    """
    return explorer(ivmdav_view, {"dataset": list(PAPER_DATASETS), "k": list(PAPER_KS),
                                  "gamma": [1.0, IVMDAV.gamma, 1.4]},
                    value={"dataset": dataset, "k": k, "gamma": gamma},
                    live={"k": (2, 10, 1), "gamma": (0.0, 2.0, 0.02)},
                    labels={"dataset": "data set"})
