"""Tests of :mod:`microagg.views` (partitions: k-partitions, SSE and the exact optimum).

Called with values, no browser, no display.

The figures' titles and artists carry the algorithms' numbers; bad values raise clear errors.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import microagg as ma  # noqa: E402
from microagg import views  # noqa: E402


def test_partition_view_title_reports_sse_and_il():
    X = np.array([[0, 0], [2, 0], [1, 3], [10, 10], [12, 10], [11, 13]], dtype=float)
    fig = views.partition_view(X, 3)
    assert isinstance(fig, Figure)
    title = fig.axes[0].get_title()
    assert "optimal 3-partition: 2 groups" in title
    assert "SSE = 16" in title and f"IL = {1600 / 316:.2f}%" in title
    fig2 = views.partition_view(X, 2, labels=[0, 0, 0, 0, 1, 1])
    assert "2-partition" in fig2.axes[0].get_title()
    fig3 = views.partition_view(X, 3, labels=[0, 0, 0, 0, 1, 1])
    assert "not a k-partition" in fig3.axes[0].get_title()


def test_partition_view_default_data_and_explorer():
    fig = views.partition_view(k=2, n=8, seed=1)
    assert "optimal 2-partition" in fig.axes[0].get_title()
    w = views.explore_partition(n=8, k=2, seed=1)
    assert [c.description for c in w.children[:3]] == ["k", "n", "seed"]
    assert {"partition_view", "explore_partition", "univariate_view"} <= set(views.__all__)


def test_univariate_view_and_plot_helpers():
    fig = views.univariate_view([3, 1, 2, 8, 9, 7, 20], 2)
    assert "SSE = 63" in fig.axes[0].get_title()
    ax = Figure().add_subplot()
    views.plot_partition(ax, np.array([[0, 0], [1, 1], [2, 2], [5, 0]]), [0, 0, 0, 1],
                            annotate=True, title="t")  # collinear group: a segment
    assert ax.get_title() == "t"
    with pytest.raises(ValueError, match="2 columns"):
        views.plot_partition(ax, np.ones((3, 1)), [0, 0, 0])
    assert len(views.group_colors(25)) == 25


def test_partitions_explorer_default_record_9():
    from microagg.views import small_points as _ch1_points  # noqa: N813

    X = _ch1_points(12, seed=2)
    labels = ma.optimal_partition(X, 3)
    d = np.linalg.norm(X - X[9], axis=1)
    d[9] = np.inf
    assert labels[int(np.argmin(d))] != labels[9]
    mates = np.flatnonzero((labels == labels[9]) & (np.arange(12) != 9))
    assert len(mates) == 2 and (X[mates, 0] < 0.5).all() and X[9, 0] > 0.5


def test_univariate_timings_and_time_view():
    times = views.univariate_timings([300, 600], ks=(2, 5), repeat=1)
    assert list(times.columns) == ["n", "k", "algorithm", "seconds", "SSE"]
    assert len(times) == 2 * 2 * 2 and (times["seconds"] > 0).all()
    # both passes find the same optimum on every (n, k)
    same = times.pivot_table(index=["n", "k"], columns="algorithm", values="SSE")
    np.testing.assert_allclose(same["linear"], same["shortest-path"], rtol=1e-12)
    fig = views.univariate_time_view(times)
    ax = fig.axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    labels = [line.get_label() for line in ax.get_lines()]
    assert "k = 2, linear" in labels and "k = 5, shortest-path" in labels
    with pytest.raises(ValueError, match="unknown algorithm"):
        views.univariate_timings([100], ks=(2,), algorithms=("wilber",))
    with pytest.raises(ValueError, match="repeat"):
        views.univariate_timings([100], ks=(2,), repeat=0)
