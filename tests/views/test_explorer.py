"""The one explorer helper (:func:`microagg.views.explorer`), static and live.

Static: one stored frame per combination of grid values (a PNG with its alternative text),
nested ``Stack`` widgets whose ``selected_index`` follows each control through a ``jsdlink``
(the widget manager switches frames in the browser, no kernel), the same for each frame's
text (the live region), and a caption naming the grid. Live: ordinary controls
over the whole ranges, re-running the view. ``tests/site/test_browser.py`` moves the static
explorers of the built book in a real browser.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re

import ipywidgets as w
import matplotlib
import pytest
from ipywidgets.widgets.widget import _instances

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

from microagg import views  # noqa: E402
from microagg.views import _explorer  # noqa: E402
from microagg.views._plotting import alt_text, set_alt_text  # noqa: E402


def _view(k: int, name: str = "a", *, scale: float = 1.0) -> Figure:
    fig = Figure(figsize=(2, 2))
    fig.add_subplot().set_title(f"{name} {k} {scale}")
    return fig


def _described_view(k: int, name: str = "a") -> Figure:
    return set_alt_text(_view(k, name), f"view of {name} & k = {k}: {k * 10} % <done>")


def _frame_hash(frame: w.HTML) -> str:
    return hashlib.sha256(frame.value.encode()).hexdigest()


def _png(frame: w.HTML) -> bytes:
    return base64.b64decode(re.search(r'src="data:image/png;base64,([^"]+)"', frame.value)[1])


def test_static_explorer_stores_every_combination_and_links_the_controls():
    box = views.explorer(_view, {"k": [2, 3, 4], "name": ["a", "b"]}, value={"k": 3},
                         fixed={"scale": 2.0}, static=True)
    rows, top, texts, caption = box.children
    controls = [row.children[1] for row in rows.children]
    assert [type(c).__name__ for c in controls] == ["SelectionSlider", "Dropdown"]
    assert [c.index for c in controls] == [1, 0]
    assert isinstance(top, w.Stack) and len(top.children) == 3 and top.selected_index == 1
    frames = [leaf for stack in top.children for leaf in stack.children]
    assert len(frames) == 6 and all(isinstance(f, w.HTML) for f in frames)
    assert len({hashlib.sha256(_png(f)).hexdigest() for f in frames}) == 6  # six figures
    assert isinstance(texts, w.Stack) and texts.selected_index == 1
    assert "ma-live" in texts._dom_classes
    links = [m for m in _instances.values() if type(m).__name__ == "DirectionalLink"]
    targets = {(link.source[0].model_id, link.target[0].model_id) for link in links}
    assert (controls[0].model_id, top.model_id) in targets
    for inner in top.children:
        assert (controls[1].model_id, inner.model_id) in targets
    assert (controls[0].model_id, texts.model_id) in targets
    for inner in texts.children:
        assert (controls[1].model_id, inner.model_id) in targets
    assert "k ∈ {2, 3, 4}" in caption.value and "(6 in all)" in caption.value


def test_static_frame_is_the_view_at_those_values():
    box = views.explorer(_view, {"k": [2, 3]}, static=True)
    frame = box.children[1].children[1]
    again = _explorer._frame(_view(3), 72, "k = 3")
    assert _frame_hash(frame) == _frame_hash(again)


def test_each_frame_carries_the_views_text_as_alt_and_live_text():
    box = views.explorer(_described_view, {"k": [2, 3], "name": ["a", "b"]}, static=True)
    _, top, texts, _ = box.children
    for i, k in enumerate([2, 3]):
        for j, name in enumerate("ab"):
            want = f"view of {name} & k = {k}: {k * 10} % <done>"
            frame, text = top.children[i].children[j], texts.children[i].children[j]
            alt = re.search(r'alt="([^"]*)"', frame.value)[1]
            assert html.unescape(alt) == want
            assert html.unescape(re.sub("<[^>]+>", "", text.value)) == want


def test_without_a_text_the_parameters_are_said():
    box = views.explorer(_view, {"k": [2, 3], "name": ["a", "b"]}, labels={"name": "data"},
                         value={"k": 3}, static=True)
    frame = box.children[1].children[1].children[0]
    assert 'alt="k = 3, data = a"' in frame.value
    assert box.children[2].children[1].children[0].value == "<p>k = 3, data = a</p>"


def test_controls_are_labelled_rows():
    box = views.explorer(_view, {"k": [2, 3], "name": ["a", "b"]}, labels={"name": "data"},
                         static=True)
    rows = box.children[0].children
    assert all("ma-control" in row._dom_classes for row in rows)
    assert [row.children[0].value for row in rows] == ["<b>k</b>", "<b>data</b>"]
    assert all("ma-label" in row.children[0]._dom_classes for row in rows)


def test_live_explorer_shows_the_text_too():
    box = views.explorer(_described_view, {"k": [2, 3]}, static=False)
    assert alt_text(_described_view(2)) == "view of a & k = 2: 20 % <done>"
    assert isinstance(box, w.interactive)


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


def test_a_single_value_is_text_not_a_one_stop_slider():
    """A slider over one value was a Tab stop that read "0" (its index) and could not move."""
    box = views.explorer(_view, {"k": [2, 3], "name": ["a"]}, static=True)
    rows = box.children[0].children
    fixed = rows[1].children[1]
    assert type(fixed).__name__ == "HTML" and fixed.value == "a"
    assert "ma-fixed" in fixed._dom_classes
    links = [m for m in _instances.values() if type(m).__name__ == "DirectionalLink"]
    assert fixed.model_id not in {link.source[0].model_id for link in links}
    assert rows[0].children[1].index == 0  # the other control still switches the frames
