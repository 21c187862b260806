"""Tests of :mod:`microagg.views` (IV-MDAV): called with values, no browser, no display.

The figures' titles and artists carry the algorithms' numbers; bad values raise clear errors.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from microagg import datasets, information_loss, ivmdav, mdav_single, views  # noqa: E402  # noqa: E402


def _bar_heights(ax) -> list[float]:
    return [p.get_height() for p in ax.patches]



def test_view_on_a_matrix_counts_groups_and_il():
    X = datasets.synthetic_clustered(60, 2, seed=1)
    fig = views.ivmdav_view(X, 3, gamma=1.16)
    assert isinstance(fig, Figure)
    left, right = fig.axes
    sizes_iv = np.bincount(ivmdav(X, 3, gamma=1.16))
    sizes_single = np.bincount(mdav_single(X, 3))
    # left: one bar per group size (k .. largest) for each method, summing to the group counts
    heights = _bar_heights(left)
    half = len(heights) // 2
    assert sum(heights[:half]) == sizes_single.size
    assert sum(heights[half:]) == sizes_iv.size
    # right: the two IL dots are the information losses of the two partitions
    il = [float(line.get_xdata()[0]) for line in right.lines[:2]]
    assert il == pytest.approx([information_loss(X, mdav_single(X, 3)),
                                information_loss(X, ivmdav(X, 3, gamma=1.16))])


def test_large_gamma_without_duplicates_is_mdav_single():
    X = datasets.synthetic_clustered(40, 2, seed=3)
    left, right = views.ivmdav_view(X, 2, gamma=50.0).axes
    a, b = (float(line.get_xdata()[0]) for line in right.lines[:2])
    assert a == pytest.approx(b)


@pytest.mark.data
def test_view_marks_the_published_cell():
    fig = views.ivmdav_view("tarragona", 4, gamma=1.16)
    right = fig.axes[1]
    assert right.get_legend() is not None
    assert "paper" in right.get_legend().get_texts()[0].get_text()
    # no published cell for gamma != 1.16: no marker
    assert views.ivmdav_view("tarragona", 4, gamma=1.0).axes[1].get_legend() is None


def test_view_rejects_bad_input():
    with pytest.raises(ValueError):
        views.ivmdav_view(np.zeros((4, 2)), 5)
    with pytest.raises(ValueError):
        views.ivmdav_view(np.zeros((10, 2)), 2, gamma=-1.0)


def test_explorer_builds_a_widget():
    pytest.importorskip("ipywidgets")
    w = views.explore_ivmdav(dataset="tarragona", k=3, gamma=1.16)
    names = {c.description for c in w.children if hasattr(c, "description")}
    assert {"data set", "k", "gamma"} <= names
    assert "ivmdav_view" in views.__all__ and "explore_ivmdav" in views.__all__
