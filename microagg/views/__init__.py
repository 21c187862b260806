"""Figures and explorers for the book's chapters, one module per topic.

A *view* is a plain function of a few values that returns a matplotlib ``Figure``
(the chapters show it at its default values, so the static book has the figure);
an ``explore_*`` function wires a view to controls with :func:`explorer`, the one
helper every explorer uses: live in a kernel, precomputed frames in the static
pages. The views are tested without a browser by calling them with values
(``tests/views/``); the explorers are tested in a real browser (``tests/site/``).

Book: :ref:`chap-foundations` ... :ref:`chap-scale`.
"""

from ._book import glue
from ._common import dataset_matrix, two_d_data
from ._explorer import explorer, static_explorers
from ._genetic import explore_ga, ga_view, macrogroups_view
from ._gomm import (
    explore_gomm,
    explore_gomm_population,
    gomm_encoding_view,
    gomm_population_view,
    gomm_view,
    operator_analysis_view,
)
from ._inline import show_figures_inline
from ._ivmdav import explore_ivmdav, ivmdav_view
from ._mdav import explore_mdav, mdav_steps_view, mdav_view, partitions_view
from ._partitions import (
    explore_partition,
    partition_view,
    small_points,
    univariate_time_view,
    univariate_timings,
    univariate_view,
)
from ._plotting import (
    group_colors,
    plot_arc_graph,
    plot_group_hull,
    plot_partition,
    plot_univariate,
    series_styles,
)
from ._runs import runs_alt_text, runs_view
from ._scale import blocks_view, explore_blocks, scaling_view
from ._vmdav import explore_vmdav, gamma_sweep_view, vmdav_extension_view, vmdav_view

__all__ = [
    "glue",
    "series_styles",
    "explorer",
    "static_explorers",
    "two_d_data",
    "dataset_matrix",
    "small_points",
    "partition_view",
    "explore_partition",
    "univariate_view",
    "univariate_timings",
    "univariate_time_view",
    "mdav_steps_view",
    "partitions_view",
    "mdav_view",
    "explore_mdav",
    "vmdav_extension_view",
    "vmdav_view",
    "explore_vmdav",
    "gamma_sweep_view",
    "ivmdav_view",
    "explore_ivmdav",
    "ga_view",
    "explore_ga",
    "macrogroups_view",
    "gomm_encoding_view",
    "gomm_view",
    "explore_gomm",
    "gomm_population_view",
    "explore_gomm_population",
    "operator_analysis_view",
    "runs_view",
    "runs_alt_text",
    "blocks_view",
    "explore_blocks",
    "scaling_view",
    "group_colors",
    "plot_partition",
    "plot_univariate",
    "plot_arc_graph",
    "plot_group_hull",
]

show_figures_inline()  # in a Jupyter kernel, a view's figure shows as an image from the first
