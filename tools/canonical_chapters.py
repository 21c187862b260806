"""Rewrite the chapters in the form JupyterLab saves them, so that a save changes nothing.

Run after editing a chapter by hand if ``tests/test_chapters_roundtrip.py`` fails:
``python tools/canonical_chapters.py`` rewrites every executable page of the book and every
assignment master (``chapters/assignments/a*.md``) through Jupytext with the project's settings
(``chapters/jupytext.toml``). On the way it pins what JupyterLab would otherwise change when it
opens a chapter (:func:`pin`): the kernelspec, exactly as JupyterLab writes it, and the folding
of each solution's code cells.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import jupytext
from jupytext.config import load_jupytext_config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from toc import ROOT, notebooks  # noqa: E402

# What JupyterLab writes into the notebook when the kernel starts, keys in its order (Jupytext
# keeps the order, so a header in another order shows the page as modified and is rewritten).
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
# A solution's code cells fold with its prose in JupyterLab (the input collapsed; a click
# opens them). The Sphinx build ignores this metadata and shows them in the solution's dropdown.
FOLDED = {"source_hidden": True}
_START = re.compile(r"^```\{solution-start\}", re.MULTILINE)
_END = re.compile(r"^```\{solution-end\}", re.MULTILINE)


def masters(root: Path = ROOT) -> list[Path]:
    """The assignment masters (otter-grader notebooks in ``chapters/assignments``)."""
    return sorted((root / "chapters" / "assignments").glob("a*.md"))


def read(path: Path):
    """``path`` read by Jupytext as JupyterLab reads it (with ``chapters/jupytext.toml``)."""
    config = load_jupytext_config(str(path))  # chapters/jupytext.toml, as JupyterLab finds it
    return jupytext.read(path, config=config), config


def canonical(path: Path) -> str:
    """The text Jupytext writes for ``path`` after reading it, with the project's settings."""
    nb, config = read(path)
    return jupytext.writes(nb, fmt="md:myst", config=config)


def pin(nb) -> None:
    """Set what JupyterLab would change on opening ``nb``: kernelspec, folded solution code."""
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    inside = False
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            starts, ends = _START.search(cell.source), _END.search(cell.source)
            if starts and not (ends and ends.start() > starts.start()):
                inside = True
            elif ends:
                inside = False
        elif cell.cell_type == "code":
            jupyter = cell.metadata.get("jupyter", {})
            for key in FOLDED:
                jupyter.pop(key, None)
            if inside:
                jupyter.update(FOLDED)
            if jupyter:
                cell.metadata["jupyter"] = jupyter
            else:
                cell.metadata.pop("jupyter", None)


def pinned(path: Path) -> str:
    """The text of ``path`` as this script writes it (read, :func:`pin`, write)."""
    nb, config = read(path)
    pin(nb)
    return jupytext.writes(nb, fmt="md:myst", config=config)


if __name__ == "__main__":
    for path in notebooks(ROOT) + masters(ROOT):
        text = pinned(path)
        if text != path.read_text(encoding="utf-8"):
            path.write_text(text, encoding="utf-8")
            print(f"rewrote {path.relative_to(ROOT)}")
