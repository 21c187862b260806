"""Tests of :mod:`microagg.views` (GOMM): called with values, no browser, no display.

The figures' titles and artists carry the algorithms' numbers; bad values raise clear errors.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from helpers import GOMM_SMALL as SMALL
from helpers import correlated_blocks
from matplotlib.figure import Figure  # noqa: E402

import microagg as ma  # noqa: E402
from microagg import views  # noqa: E402

_data = correlated_blocks


def test_gomm_views_return_figures():
    X = _data(seed=8)
    runs = {k: ma.gomm(X, k, **SMALL, seed=0, progress=False) for k in (3, 6)}
    assert isinstance(views.gomm_encoding_view(p=6, seed=1), Figure)
    fig = views.gomm_view(runs, 6, names=list("abcdef"))
    assert isinstance(fig, Figure) and len(fig.axes) >= 3
    assert isinstance(views.gomm_population_view(runs[3], 2), Figure)
    assert isinstance(views.gomm_population_view(runs[3], 999), Figure)  # clipped
    fig = views.operator_analysis_view(runs[3].operators)
    assert len(fig.axes) == 4 * 5
    assert len(views.operator_analysis_view(runs[3].operators, which=["CX"]).axes) == 4
    for name in ("gomm_view", "explore_gomm", "gomm_population_view",
                 "explore_gomm_population", "operator_analysis_view", "gomm_encoding_view"):
        assert name in views.__all__


def test_gomm_explorers_open_where_asked():
    # (the chapter's figure showed k = 50 and generation 5, its explorers opened elsewhere)
    import contextlib
    import io

    import pytest

    X = _data(seed=8)
    runs = {k: ma.gomm(X, k, **SMALL, seed=0, progress=False) for k in (3, 4, 6)}
    with contextlib.redirect_stdout(io.StringIO()):
        assert views.explore_gomm(runs).children[0].value == 4  # the middle k
        assert views.explore_gomm(runs, k=6).children[0].value == 6
        slider = views.explore_gomm_population(runs[3], generation=1).children[0]
        assert (slider.value, slider.max) == (1, len(runs[3].population_scores) - 1)
    with pytest.raises(ValueError, match=r"k=5 is not among the k of the runs given \(\[3, 4"):
        views.explore_gomm(runs, k=5)
    for bad in (-1, 99, 1.5, True):
        with pytest.raises(ValueError, match="generation must be a whole number from 0 to"):
            views.explore_gomm_population(runs[3], generation=bad)
