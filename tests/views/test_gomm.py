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
