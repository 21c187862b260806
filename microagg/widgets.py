"""Interactive explorers used by the chapters, and the static views behind them.

Each explorer is split in two: a pure *view* function that takes plain values
(data set, k, gamma, ...) and returns a matplotlib ``Figure`` (and, where
useful, a small table), and an ``explore_*`` function that wires that view to
ipywidgets sliders. Chapters first show the view at its default values (so the
static HTML book has the figure), then the live widget. The views are
unit-tested without a browser by calling them with values.

Plotting plumbing that is not worth reading lives in :mod:`microagg.plotting`.
"""

from __future__ import annotations

__all__: list[str] = []

# ======================================================================================
# Chapter 1: k-partitions, SSE and the exact optimum
# ======================================================================================

# ======================================================================================
# Chapters 2-4: MDAV, V-MDAV, IV-MDAV
# ======================================================================================

# ======================================================================================
# Chapter 5: the genetic algorithm and the MDAV+GA hybrid
# ======================================================================================

# ======================================================================================
# Chapter 6: GOMM (attribute grouping) and disclosure risk
# ======================================================================================
