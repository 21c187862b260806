"""Opening a chapter in JupyterLab (through Jupytext) and saving it changes nothing.

Jupytext reads and writes the chapters with the settings pinned in ``chapters/jupytext.toml``
(the same file JupyterLab's Jupytext finds); a chapter must already be in the form Jupytext
writes. If this fails after an edit, run ``python tools/canonical_chapters.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from canonical_chapters import canonical  # noqa: E402
from toc import notebooks  # noqa: E402


@pytest.mark.parametrize("path", notebooks(ROOT), ids=lambda p: p.name)
def test_jupytext_round_trip_is_byte_identical(path):
    text = path.read_text(encoding="utf-8")
    written = canonical(path)
    if written != text:
        import difflib

        diff = "\n".join(list(difflib.unified_diff(text.splitlines(), written.splitlines(),
                                                   lineterm="", n=0))[:20])
        pytest.fail(f"{path.name} changes when Jupytext saves it "
                    f"(run tools/canonical_chapters.py):\n{diff}")
