"""Rewrite the chapters in Jupytext's canonical MyST form (what JupyterLab would save).

Run after editing a chapter by hand if ``tests/test_chapters_roundtrip.py`` fails:
``python tools/canonical_chapters.py`` rewrites every executable chapter through Jupytext with
the project's settings (``chapters/jupytext.toml``), so that opening and saving it in
JupyterLab changes nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import jupytext
from jupytext.config import load_jupytext_config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from toc import ROOT, notebooks  # noqa: E402


def canonical(path: Path) -> str:
    """The text Jupytext writes for ``path`` after reading it, with the project's settings."""
    config = load_jupytext_config(str(path))  # chapters/jupytext.toml, as JupyterLab finds it
    nb = jupytext.read(path, config=config)
    return jupytext.writes(nb, fmt="md:myst", config=config)


if __name__ == "__main__":
    for path in notebooks(ROOT):
        text = canonical(path)
        if text != path.read_text(encoding="utf-8"):
            path.write_text(text, encoding="utf-8")
            print(f"rewrote {path.relative_to(ROOT)}")
