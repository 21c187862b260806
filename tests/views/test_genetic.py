"""Tests of :mod:`microagg.views` (the GA and the hybrid).

Called with values, no browser, no display.

The figures' titles and artists carry the algorithms' numbers; bad values raise clear errors.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from microagg import views  # noqa: E402


def test_genetic_views_return_figures() -> None:
    fig = views.ga_view(iterations=30)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    line = fig.axes[1].lines[0].get_ydata()
    assert len(line) == 31 and np.all(np.diff(line) >= 0)
    fig = views.macrogroups_view(n=90, K=12)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    assert "macrogroups" in fig.axes[0].get_title()
