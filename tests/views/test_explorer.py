"""The one explorer helper (:func:`microagg.views.explorer`), static and live.

Static: one stored frame per combination of grid values, nested ``Stack`` widgets whose
``selected_index`` follows each control through a ``jsdlink`` (the widget manager switches
frames in the browser, no kernel), and a caption naming the grid. Live: ordinary controls
over the whole ranges, re-running the view. ``tests/site/test_browser.py`` moves the static
explorers of the built book in a real browser.
"""

from __future__ import annotations

import hashlib

import ipywidgets as w
import matplotlib
import pytest
from ipywidgets.widgets.widget import _instances

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

from microagg import views  # noqa: E402
from microagg.views import _explorer  # noqa: E402


def _view(k: int, name: str = "a", *, scale: float = 1.0) -> Figure:
    fig = Figure(figsize=(2, 2))
    fig.add_subplot().set_title(f"{name} {k} {scale}")
    return fig


def _frame_hash(image: w.Image) -> str:
    return hashlib.sha256(image.value).hexdigest()


def test_static_explorer_stores_every_combination_and_links_the_controls():
    box = views.explorer(_view, {"k": [2, 3, 4], "name": ["a", "b"]}, value={"k": 3},
                         fixed={"scale": 2.0}, static=True)
    rows, top, caption = box.children
    controls = [row.children[1] for row in rows.children]
    assert [type(c).__name__ for c in controls] == ["SelectionSlider", "Dropdown"]
    assert [c.index for c in controls] == [1, 0]
    assert isinstance(top, w.Stack) and len(top.children) == 3 and top.selected_index == 1
    frames = [leaf for stack in top.children for leaf in stack.children]
    assert len(frames) == 6 and all(isinstance(f, w.Image) for f in frames)
    assert len({_frame_hash(f) for f in frames}) == 6  # six different figures
    links = [m for m in _instances.values() if type(m).__name__ == "DirectionalLink"]
    targets = {(link.source[0].model_id, link.target[0].model_id) for link in links}
    assert (controls[0].model_id, top.model_id) in targets
    for inner in top.children:
        assert (controls[1].model_id, inner.model_id) in targets
    assert "k ∈ {2, 3, 4}" in caption.value and "(6 in all)" in caption.value


def test_static_frame_is_the_view_at_those_values():
    box = views.explorer(_view, {"k": [2, 3]}, static=True)
    frame = box.children[1].children[1]
    again = _explorer._frame(_view(3), 72)
    assert _frame_hash(frame) == _frame_hash(again)


def test_live_explorer_takes_any_value():
    box = views.explorer(_view, {"k": [2, 3, 4]}, live={"k": (1, 20, 1)}, static=False)
    assert isinstance(box, w.interactive)
    slider = box.children[0]
    assert isinstance(slider, w.IntSlider) and (slider.min, slider.max) == (1, 20)
    slider.value = 17  # not a grid value: the view still runs
    assert "17" in str(box.result) or box.result is None


def test_mode_follows_the_environment(monkeypatch):
    monkeypatch.setenv(_explorer.STATIC_ENV, "1")
    assert views.static_explorers()
    assert isinstance(views.explorer(_view, {"k": [2]}), w.VBox)
    monkeypatch.delenv(_explorer.STATIC_ENV)
    assert not views.static_explorers()
    assert isinstance(views.explorer(_view, {"k": [2]}), w.interactive)


@pytest.mark.parametrize("kwargs,match", [
    ({"grid": {}}, "at least one"),
    ({"grid": {"k": []}}, "at least one"),
    ({"grid": {"k": [2, 3]}, "value": {"k": 9}}, "not one of the grid"),
    ({"grid": {"k": [2, 3]}, "value": {"q": 1}}, "not in the grid"),
    ({"grid": {"k": list(range(65))}, "static": True}, "at most 64"),
])
def test_bad_grids_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        views.explorer(_view, **kwargs)


@pytest.mark.parametrize("make", [
    lambda: views.explore_partition(), lambda: views.explore_mdav(),
    lambda: views.explore_vmdav(), lambda: views.explore_ivmdav(),
    lambda: views.explore_ga(iterations=30),
 ], ids=["explore_partition", "explore_mdav", "explore_vmdav", "explore_ivmdav",
      "explore_ga"])
@pytest.mark.data
def test_every_explorer_is_built_by_the_helper_live(make, monkeypatch):
    monkeypatch.delenv(_explorer.STATIC_ENV, raising=False)
    box = make()
    assert isinstance(box, w.interactive) and len(box.children) >= 2
