"""Tests of :func:`microagg.views.runs_view`: every run, the mean and the published value."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection

from microagg import views


def _cmp() -> pd.DataFrame:
    return pd.DataFrame({"dataset": ["a", "b", "a"], "method": "m", "parameters": "",
                         "k": [3, 3, 3], "metric": ["IL", "IL", "DLD"],
                         "ours": [1.0, 2.0, 5.0], "published": [1.2, 2.0, np.nan],
                         "ours_runs": ["0.9;1.1;1.0", "", "4.0;6.0"]})


def _points(ax) -> set[float]:
    return {round(float(y), 6) for c in ax.collections if isinstance(c, PathCollection)
            for y in c.get_offsets()[:, 1]}


def test_runs_view_draws_every_run_the_mean_and_the_published_value():
    fig = views.runs_view(_cmp(), title="T")
    il, dld = fig.axes[:2]
    assert {0.9, 1.1, 1.0, 2.0, 1.2} <= _points(il)  # the runs, a single value, published
    assert "IL (1/3 runs per cell)" in il.get_title() and il.get_title().startswith("T: ")
    assert [t.get_text() for t in il.get_xticklabels()] == ["a", "b"]
    assert "2 runs" in dld.get_title() and _points(dld) == {4.0, 6.0}  # no published value
    means = [seg[0][1] for c in il.collections if hasattr(c, "get_segments")
             for seg in c.get_segments()]
    assert means == pytest.approx([1.0, 2.0])


def test_runs_view_relative_puts_the_published_value_at_zero():
    fig = views.runs_view(_cmp()[_cmp()["metric"] == "IL"], relative=("IL",))
    ax = fig.axes[0]
    assert {0.0, -25.0, -8.333333, -16.666667} <= _points(ax)
    assert "% from the published value" in ax.get_title()
    with pytest.raises(ValueError, match="relative to a published"):
        views.runs_view(_cmp(), relative=("DLD",))


def test_runs_view_refuses_a_metric_it_does_not_have():
    with pytest.raises(ValueError, match="no cells with metric 'SSE'"):
        views.runs_view(_cmp(), metrics=["SSE"])
    with pytest.raises(ValueError, match="at least one metric"):
        views.runs_view(_cmp(), metrics=[])


def test_runs_alt_text_counts_the_cells_whose_published_value_our_runs_bracket():
    text = views.runs_alt_text(_cmp(), what="T")
    assert text.startswith("Strip plot of T, one panel per measure (IL, DLD)")
    assert "our 1 to 3 runs" in text
    assert "for 1 of 2 cells" in text  # 2.0 equals our single run; 1.2 is above 0.9..1.1
