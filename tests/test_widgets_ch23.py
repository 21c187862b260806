"""Tests of the chapter 2-3 views in :mod:`microagg.widgets` (no browser, no display).

Each view is called with values; we check the returned Figure's axes, titles and
artists, that the numbers in the titles are those of the algorithms, and that bad
values raise clear errors.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import microagg as ma  # noqa: E402
from microagg import datasets, widgets  # noqa: E402


def _visible_axes(fig: Figure) -> list:
    return [ax for ax in fig.axes if ax.get_visible()]


# --------------------------------------------------------------------------------------
# Chapter 2
# --------------------------------------------------------------------------------------

def test_two_d_data_is_standardised_and_seeded():
    for name in ("clustered 2-D", "scattered 2-D"):
        X = widgets.two_d_data(name)
        assert X.shape == (40, 2)
        np.testing.assert_allclose(X.mean(axis=0), 0, atol=1e-12)
        np.testing.assert_allclose(X.std(axis=0), 1)
        np.testing.assert_array_equal(X, widgets.two_d_data(name))
    with pytest.raises(ValueError, match="unknown 2-D set"):
        widgets.two_d_data("moons")


def test_mdav_steps_view_default_panels():
    fig = widgets.mdav_steps_view()
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
    fig = widgets.mdav_steps_view(X, 3)
    ax = fig.axes[0]
    r = int(np.argmax(((X - X.mean(axis=0)) ** 2).sum(axis=1)))
    stars = [c for c in ax.collections if c.get_sizes().size and c.get_sizes()[0] == 260]
    assert len(stars) == 2  # x_r and x_s
    np.testing.assert_allclose(stars[0].get_offsets()[0], X[r])


def test_mdav_steps_view_max_panels_and_errors():
    fig = widgets.mdav_steps_view(max_panels=2)
    assert len(fig.axes) == 2
    with pytest.raises(ValueError, match="max_panels"):
        widgets.mdav_steps_view(max_panels=1)
    with pytest.raises(ValueError, match="2-D"):
        widgets.mdav_steps_view(np.zeros((10, 3)), 3)
    with pytest.raises(ValueError):
        widgets.mdav_steps_view(k=0)
    with pytest.raises(ValueError):
        widgets.mdav_steps_view(k=21)


def test_partitions_view():
    X = datasets.vmdav_example()
    parts = {"MDAV": ma.mdav(X, 3), "optimal": ma.vmdav(X, 3, gamma=1.1)}
    fig = widgets.partitions_view(X, parts)
    assert len(fig.axes) == 2
    for ax, (name, lab) in zip(fig.axes, parts.items(), strict=True):
        title = ax.get_title()
        assert title.startswith(name)
        assert f"SSE = {ma.sse(X, lab):.4g}" in title
    with pytest.raises(ValueError, match="empty"):
        widgets.partitions_view(X, {})


def test_mdav_view_2d_has_partition_and_histogram():
    fig = widgets.mdav_view("clustered 2-D", 3)
    assert len(fig.axes) == 2
    X = widgets.two_d_data("clustered 2-D")
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
    fig = widgets.mdav_view(X, 4)
    assert len(fig.axes) == 1  # not 2-D: histogram only
    assert f"SSE = {ma.sse(X, ma.mdav(X, 4)):.4g}" in fig._suptitle.get_text()


@pytest.mark.data
def test_mdav_view_real_data():
    fig = widgets.mdav_view("census", 5)
    assert len(fig.axes) == 1
    assert "Census (1080 x 13), k = 5" in fig._suptitle.get_text()
    assert fig.axes[0].get_title() == "216 groups"


def test_mdav_view_errors():
    with pytest.raises(ValueError, match="unknown data set"):
        widgets.mdav_view("nonsense", 3)
    with pytest.raises(ValueError):
        widgets.mdav_view("clustered 2-D", 0)
    with pytest.raises(ValueError):
        widgets.mdav_view("clustered 2-D", 41)
    with pytest.raises((TypeError, ValueError)):
        widgets.mdav_view(np.array([1.0, np.nan]).reshape(2, 1), 1)


def test_explore_mdav_builds_widget():
    ipywidgets = pytest.importorskip("ipywidgets")
    w = widgets.explore_mdav()
    assert isinstance(w, ipywidgets.interactive)
    names = {c.description for c in w.children if hasattr(c, "description")}
    assert {"data", "k"} <= names


# --------------------------------------------------------------------------------------
# Chapter 3
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("gamma", [0.0, 0.2, 1.1, 3.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vmdav_first_group_is_vmdav_group_zero(gamma, seed):
    X = datasets.synthetic_clustered(25, 2, cluster_size=(2, 5), spread=0.05, seed=seed)
    for k in (2, 3, 4):
        group, tests = widgets.vmdav_first_group(X, k, gamma)
        expected = np.flatnonzero(ma.vmdav(X, k, gamma=gamma) == 0)
        assert sorted(group.tolist()) == expected.tolist()
        assert k <= group.size <= 2 * k - 1
        # every test row is consistent with the rule d_in < gamma * d_out
        assert (tests["added"] == (tests["d_in"] < gamma * tests["d_out"])).all()
        assert int(tests["added"].sum()) == group.size - k


def test_vmdav_first_group_example1():
    X = datasets.vmdav_example()
    group, tests = widgets.vmdav_first_group(X, 3, 0.2)
    # the four records near the origin: e = (2.4, 3), two neighbours, then (5.32, 3.6)
    assert group.tolist() == [0, 1, 2, 3]
    assert tests["added"].tolist() == [True, False]
    with pytest.raises(ValueError, match="gamma"):
        widgets.vmdav_first_group(X, 3, -1)


def test_vmdav_extension_view():
    fig = widgets.vmdav_extension_view()
    assert len(fig.axes) == 2
    left, right = fig.axes
    assert "d_{in}" in left.get_title() and "add" in left.get_title()
    X = datasets.vmdav_example()
    lab = ma.vmdav(X, 3, gamma=1.1)
    assert f"SSE = {ma.sse(X, lab):.4g}" in right.get_title()
    with pytest.raises(ValueError, match="2-D"):
        widgets.vmdav_extension_view(np.zeros((6, 3)))


def test_vmdav_view():
    fig = widgets.vmdav_view(1.1, 3)
    assert len(fig.axes) == 2
    X = widgets.two_d_data("clustered 2-D")
    il_m = ma.information_loss(X, ma.mdav(X, 3))
    il_v = ma.information_loss(X, ma.vmdav(X, 3, gamma=1.1))
    t0, t1 = (ax.get_title() for ax in fig.axes)
    assert t0.startswith("MDAV") and f"IL = {il_m:.2f}%" in t0
    assert t1.startswith("V-MDAV, γ = 1.1") and f"IL = {il_v:.2f}%" in t1
    assert "groups:" in t1
    assert "k = 3" in fig._suptitle.get_text()
    # the default clustered set is one where growing groups pays off
    assert il_v < il_m / 3


def test_vmdav_view_errors():
    with pytest.raises(ValueError, match="gamma"):
        widgets.vmdav_view(-0.1, 3)
    with pytest.raises(ValueError, match="gamma"):
        widgets.vmdav_view(float("nan"), 3)
    with pytest.raises(ValueError):
        widgets.vmdav_view(1.1, 0)
    with pytest.raises(ValueError, match="2-D"):
        widgets.vmdav_view(1.1, 3, dataset=np.zeros((10, 3)))


def test_explore_vmdav_builds_widget():
    ipywidgets = pytest.importorskip("ipywidgets")
    w = widgets.explore_vmdav()
    assert isinstance(w, ipywidgets.interactive)
    names = {c.description for c in w.children if hasattr(c, "description")}
    assert {"γ", "k", "data"} <= names


def test_gamma_sweep_view():
    sweeps = {
        "a": pd.DataFrame({"gamma": [0.0, 0.5, 1.0], "IL": [3.0, 1.0, 2.0]}),
        "b": pd.DataFrame({"gamma": [0.0, 0.5, 1.0], "IL": [5.0, 6.0, 7.0]}),
    }
    fig = widgets.gamma_sweep_view(sweeps, {"a": 2.5}, ncols=3)
    visible = _visible_axes(fig)
    assert len(fig.axes) == 3 and len(visible) == 2
    assert visible[0].get_title().startswith("a: best γ = 0.5")
    assert visible[1].get_title().startswith("b: best γ = 0")
    # MDAV line only where given: V-MDAV line + MDAV line in "a", only V-MDAV line in "b"
    assert len(visible[0].lines) == 2 + 2  # + the two dotted marks
    assert len(visible[1].lines) == 1 + 2
    with pytest.raises(ValueError, match="empty"):
        widgets.gamma_sweep_view({})
    with pytest.raises(ValueError, match="lacks"):
        widgets.gamma_sweep_view({"a": pd.DataFrame({"gamma": [0.0]})})


def test_views_are_registered_in_all():
    for name in ("mdav_steps_view", "partitions_view", "mdav_view", "explore_mdav",
                 "two_d_data", "vmdav_first_group", "vmdav_extension_view", "vmdav_view",
                 "explore_vmdav", "gamma_sweep_view"):
        assert name in widgets.__all__
        assert callable(getattr(widgets, name))
