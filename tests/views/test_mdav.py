"""Tests of :mod:`microagg.views` (MDAV): called with values, no browser, no display.

The figures' titles and artists carry the algorithms' numbers; bad values raise clear errors.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import microagg as ma  # noqa: E402
from microagg import datasets, views  # noqa: E402


def _visible_axes(fig: Figure) -> list:
    return [ax for ax in fig.axes if ax.get_visible()]


def test_two_d_data_is_standardised_and_seeded():
    for name in ("clustered 2-D", "scattered 2-D"):
        X = views.two_d_data(name)
        assert X.shape == (40, 2)
        np.testing.assert_allclose(X.mean(axis=0), 0, atol=1e-12)
        np.testing.assert_allclose(X.std(axis=0), 1)
        np.testing.assert_array_equal(X, views.two_d_data(name))
    with pytest.raises(ValueError, match="unknown 2-D set"):
        views.two_d_data("moons")


def test_mdav_steps_view_default_panels():
    fig = views.mdav_steps_view()
    assert isinstance(fig, Figure)
    axes = fig.axes
    # 20 records, k = 3: two full rounds, the 2k..3k-1 step, and the final partition
    assert len(axes) == 4
    titles = [ax.get_title() for ax in axes]
    assert titles[0].startswith("step 1: 20 left") and "$x_s$" in titles[0]
    assert titles[1].startswith("step 2: 14 left")
    assert titles[2].startswith("step 3: 8 left (< 3k)")
    X = np.asarray(ma.standardize(datasets.scattered(20, seed=3)))
    lab = ma.mdav(X, 3)
    assert f"IL = {ma.information_loss(X, lab):.1f}%" in titles[3]
    # the last panel shows all 20 records
    assert sum(len(c.get_offsets()) for c in axes[3].collections
               if hasattr(c, "get_offsets")) >= 20


def test_mdav_steps_view_marks_the_right_records():
    X = np.asarray(ma.standardize(datasets.scattered(20, seed=3)))
    fig = views.mdav_steps_view(X, 3)
    ax = fig.axes[0]
    r = int(np.argmax(((X - X.mean(axis=0)) ** 2).sum(axis=1)))
    stars = [c for c in ax.collections if c.get_sizes().size and c.get_sizes()[0] == 260]
    assert len(stars) == 2  # x_r and x_s
    np.testing.assert_allclose(stars[0].get_offsets()[0], X[r])


def test_mdav_steps_view_max_panels_and_errors():
    fig = views.mdav_steps_view(max_panels=2)
    assert len(fig.axes) == 2
    with pytest.raises(ValueError, match="max_panels"):
        views.mdav_steps_view(max_panels=1)
    with pytest.raises(ValueError, match="2-D"):
        views.mdav_steps_view(np.zeros((10, 3)), 3)
    with pytest.raises(ValueError):
        views.mdav_steps_view(k=0)
    with pytest.raises(ValueError):
        views.mdav_steps_view(k=21)


def test_partitions_view():
    X = datasets.vmdav_example()
    parts = {"MDAV": ma.mdav(X, 3), "optimal": ma.vmdav(X, 3, gamma=1.1)}
    fig = views.partitions_view(X, parts)
    assert len(fig.axes) == 2
    for ax, (name, lab) in zip(fig.axes, parts.items(), strict=True):
        title = ax.get_title()
        assert title.startswith(name)
        assert f"SSE = {ma.sse(X, lab):.4g}" in title
    with pytest.raises(ValueError, match="empty"):
        views.partitions_view(X, {})


def test_mdav_view_2d_has_partition_and_histogram():
    fig = views.mdav_view("clustered 2-D", 3)
    assert len(fig.axes) == 2
    X = views.two_d_data("clustered 2-D")
    lab = ma.mdav(X, 3)
    sup = fig._suptitle.get_text()
    assert "k = 3" in sup and f"IL = {ma.information_loss(X, lab):.2f}%" in sup
    hist = fig.axes[1]
    heights = sorted(int(p.get_height()) for p in hist.patches)
    sizes = ma.group_sizes(lab)
    assert sum(heights) == sizes.size  # one count per group
    assert hist.get_xlabel() == "group size"


def test_mdav_view_array_input_uses_it_as_given():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    fig = views.mdav_view(X, 4)
    assert len(fig.axes) == 1  # not 2-D: histogram only
    assert f"SSE = {ma.sse(X, ma.mdav(X, 4)):.4g}" in fig._suptitle.get_text()


@pytest.mark.data
def test_mdav_view_real_data():
    fig = views.mdav_view("census", 5)
    assert len(fig.axes) == 1
    assert "Census (1080 x 13), k = 5" in fig._suptitle.get_text()
    assert fig.axes[0].get_title() == "216 groups"


def test_mdav_view_errors():
    with pytest.raises(ValueError, match="unknown data set"):
        views.mdav_view("nonsense", 3)
    with pytest.raises(ValueError):
        views.mdav_view("clustered 2-D", 0)
    with pytest.raises(ValueError):
        views.mdav_view("clustered 2-D", 41)
    with pytest.raises((TypeError, ValueError)):
        views.mdav_view(np.array([1.0, np.nan]).reshape(2, 1), 1)


def test_explore_mdav_builds_widget():
    ipywidgets = pytest.importorskip("ipywidgets")
    w = views.explore_mdav()
    assert isinstance(w, ipywidgets.interactive)
    names = {c.description for c in w.children if hasattr(c, "description")}
    assert {"data", "k"} <= names
