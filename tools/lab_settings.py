"""Make JupyterLab (in this venv only) open MyST ``.md`` chapters as notebooks.

jupytext registers a "Jupytext Notebook" viewer; JupyterLab reads default
settings overrides from ``<venv>/share/jupyter/lab/settings/overrides.json``.
Existing overrides in that file are kept.

Usage: ``python tools/lab_settings.py .venv``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PLUGIN = "@jupyterlab/docmanager-extension:plugin"
VIEWERS = {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}


def main(venv: Path) -> Path:
    path = venv / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    settings = json.loads(path.read_text()) if path.exists() else {}
    settings.setdefault(PLUGIN, {}).setdefault("defaultViewers", {}).update(VIEWERS)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2) + "\n")
    return path


if __name__ == "__main__":
    print("JupyterLab settings:", main(Path(sys.argv[1] if len(sys.argv) > 1 else ".venv")))
