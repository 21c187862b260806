"""Tests of :mod:`microagg.views` (V-MDAV): called with values, no browser, no display.

The figures' titles and artists carry the algorithms' numbers; bad values raise clear errors.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import microagg as ma  # noqa: E402
from microagg import datasets, views  # noqa: E402


def _visible_axes(fig: Figure) -> list:
    return [ax for ax in fig.axes if ax.get_visible()]



def test_vmdav_extension_view():
    fig = views.vmdav_extension_view()
    assert len(fig.axes) == 2
    left, right = fig.axes
    assert "d_{in}" in left.get_title() and "add" in left.get_title()
    X = datasets.vmdav_example()
    lab = ma.vmdav(X, 3, gamma=1.1)
    assert f"SSE = {ma.sse(X, lab):.4g}" in right.get_title()
    with pytest.raises(ValueError, match="2-D"):
        views.vmdav_extension_view(np.zeros((6, 3)))


def test_vmdav_view():
    fig = views.vmdav_view(k=3, gamma=1.1)
    assert len(fig.axes) == 2
    X = views.two_d_data("clustered 2-D")
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
        views.vmdav_view(k=3, gamma=-0.1)
    with pytest.raises(ValueError, match="gamma"):
        views.vmdav_view(k=3, gamma=float("nan"))
    with pytest.raises(ValueError):
        views.vmdav_view(k=0, gamma=1.1)
    with pytest.raises(ValueError, match="2-D"):
        views.vmdav_view(np.zeros((10, 3)), 3, gamma=1.1)


def test_explore_vmdav_builds_widget():
    ipywidgets = pytest.importorskip("ipywidgets")
    w = views.explore_vmdav()
    assert isinstance(w, ipywidgets.interactive)
    names = {c.description for c in w.children if hasattr(c, "description")}
    assert {"γ", "k", "data"} <= names


def test_gamma_sweep_view():
    sweeps = {
        "a": pd.DataFrame({"gamma": [0.0, 0.5, 1.0], "IL": [3.0, 1.0, 2.0]}),
        "b": pd.DataFrame({"gamma": [0.0, 0.5, 1.0], "IL": [5.0, 6.0, 7.0]}),
    }
    fig = views.gamma_sweep_view(sweeps, mdav_il={"a": 2.5}, ncols=3)
    visible = _visible_axes(fig)
    assert len(fig.axes) == 3 and len(visible) == 2
    assert visible[0].get_title().startswith("a: best γ = 0.5")
    assert visible[1].get_title().startswith("b: best γ = 0")
    # MDAV line only where given: V-MDAV line + MDAV line in "a", only V-MDAV line in "b"
    assert len(visible[0].lines) == 2 + 2  # + the two dotted marks
    assert len(visible[1].lines) == 1 + 2
    with pytest.raises(ValueError, match="empty"):
        views.gamma_sweep_view({})
    with pytest.raises(ValueError, match="lacks"):
        views.gamma_sweep_view({"a": pd.DataFrame({"gamma": [0.0]})})


def test_views_are_registered_in_all():
    for name in ("mdav_steps_view", "partitions_view", "mdav_view", "explore_mdav",
                 "two_d_data", "vmdav_extension_view", "vmdav_view",
                 "explore_vmdav", "gamma_sweep_view"):
        assert name in views.__all__
        assert callable(getattr(views, name))
