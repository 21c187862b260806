"""Let nbval run the MyST Markdown chapters in place.

nbval collects only ``.ipynb`` files. Here a ``.md`` file whose YAML header names a
kernel (a jupytext MyST notebook) is read with ``jupytext.read`` and handed to nbval's
own collector, so ``pytest --nbval-lax chapters/foundations.md`` executes every code
cell of the chapter in a fresh kernel (working folder ``chapters/``, as in the book
build) and fails on the first error. The chapters carry no stored outputs, so they
are checked by their own ``assert`` cells.

nbval's per-cell options are cell tags (``nbval-ignore-output``, ``nbval-check-output``,
``nbval-skip``, ...), written in the chapter as ``:tags: [nbval-ignore-output]``; Jupytext
reads them into the cell's metadata, where nbval's own ``find_metadata_tags`` finds them
below. Tags keep nbval's plumbing out of the code a reader sees (no ``# NBVAL_*`` comment
lines, which ``tests/test_publishing.py`` rejects in chapters); comment markers would still
be honoured.
"""

from __future__ import annotations

import warnings
from collections import defaultdict

import jupytext
from nbval.plugin import IPyNbCell, IPyNbFile, find_comment_markers, find_metadata_tags


def _is_myst_notebook(path) -> bool:
    text = path.read_text(encoding="utf-8")
    return text.startswith("---") and "kernelspec:" in text.split("---", 2)[1]


class MystNotebookFile(IPyNbFile):
    """nbval's notebook collector, reading a jupytext text notebook."""

    def collect(self):
        self.nb = jupytext.read(self.path)
        cell_num = 0
        for cell in self.nb.cells:
            if cell.cell_type != "code":
                continue
            # The same per-cell options nbval derives (tags and NBVAL_* comments).
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                options = defaultdict(bool, find_metadata_tags(cell.metadata))
                options.update(dict(find_comment_markers(cell.source)))
            options.setdefault("check", self.compare_outputs)
            yield IPyNbCell.from_parent(
                self, name=f"Cell {cell_num}", cell_num=cell_num, cell=cell, options=options
            )
            cell_num += 1


def pytest_collect_file(file_path, parent):
    opt = parent.config.option
    if (
        (getattr(opt, "nbval", False) or getattr(opt, "nbval_lax", False))
        and file_path.suffix == ".md"
        and _is_myst_notebook(file_path)
    ):
        return MystNotebookFile.from_parent(parent, path=file_path)
    return None
