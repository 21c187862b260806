"""Opening a chapter in JupyterLab (through Jupytext) and saving it changes nothing.

Jupytext reads and writes the chapters with the settings pinned in ``chapters/jupytext.toml``
(the same file JupyterLab's Jupytext finds); a chapter must already be in the form Jupytext
writes, with what JupyterLab sets on opening it pinned (the kernelspec as JupyterLab writes
it, each solution's code folded). If this fails after an edit, run
``python tools/canonical_chapters.py``. The same is checked in a real JupyterLab, with a run
and a save, by ``tests/test_lab.py``.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

import pytest

pytest.importorskip("jupytext", reason="needs the lab extra: pip install -e '.[lab,test]'")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from canonical_chapters import KERNELSPEC, masters, pinned, read  # noqa: E402
from toc import notebooks  # noqa: E402


def _diff(text: str, written: str) -> str:
    return "\n".join(list(difflib.unified_diff(text.splitlines(), written.splitlines(),
                                               lineterm="", n=0))[:20])


@pytest.mark.parametrize("path", notebooks(ROOT) + masters(ROOT), ids=lambda p: p.name)
def test_jupytext_round_trip_is_byte_identical(path):
    text = path.read_text(encoding="utf-8")
    written = pinned(path)
    if written != text:
        pytest.fail(f"{path.name} changes when Jupytext saves it "
                    f"(run tools/canonical_chapters.py):\n{_diff(text, written)}")
    nb, _ = read(path)
    assert list(nb.metadata["kernelspec"].items()) == list(KERNELSPEC.items())


def test_solution_code_folds_and_run_time_metadata_is_not_saved():
    nb, config = read(ROOT / "chapters" / "mdav.md")
    folded = [c for c in nb.cells if c.metadata.get("jupyter", {}).get("source_hidden")]
    assert folded, "mdav.md: no solution code cell is folded"
    for cell in nb.cells:
        cell.metadata["trusted"] = True
        cell.metadata["execution"] = {"iopub.status.busy": "2026-01-01T00:00:00Z"}
    import jupytext

    written = jupytext.writes(nb, fmt="md:myst", config=config)
    assert "trusted" not in written and "iopub" not in written
    assert written.count("source_hidden: true") == len(folded)
