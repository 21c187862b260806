"""A view's figure shows as an image in a Jupyter kernel, also before pyplot has drawn."""

from __future__ import annotations

import nbformat
import pytest

pytest.importorskip("ipykernel", reason="runs a Jupyter kernel (the book or lab extra)")
from kernel_runner import sliced_config
from nbclient import NotebookClient

from microagg.views._inline import show_figures_inline


def _outputs(*cells: str) -> list[list[str]]:
    """Each cell's outputs, run in a fresh kernel: MIME types, and printed text as it is."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=300, kernel_name="python3", config=sliced_config()).execute()
    return [[m for o in cell.outputs for m in o.get("data", {})]
            + [o.text.strip() for o in cell.outputs if o.output_type == "stream"]
            for cell in nb.cells]


def test_first_figure_of_a_notebook_is_an_image(monkeypatch):
    # (the scale chapter showed its figures as "<Figure size 640x420 with 1 Axes>": no
    # pyplot call had come before them, so the kernel had no image formatter yet)
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's own default, as a reader's
    first, second, switched = _outputs(
        "import pandas as pd\n"
        "from microagg import views\n"
        "views.scaling_view(pd.DataFrame({'n': [100, 200], 'engine': ['loops'] * 2,\n"
        "                                 'seconds': [0.1, 0.4]}))",
        "views.blocks_view(100, n=300)",
        "%matplotlib agg\n"
        "from microagg.views._inline import show_figures_inline\n"
        "print(show_figures_inline())")
    assert "image/png" in first
    assert "image/png" in second
    assert switched == ["False"]  # another backend chosen: nothing to register


def test_nothing_happens_outside_a_kernel():
    assert show_figures_inline() is False
