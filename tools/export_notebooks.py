"""Write an ``.ipynb`` copy of every chapter into the built site.

Launch services (Colab, Binder, JupyterHub) and most readers want ``.ipynb`` files,
while the chapters are kept as MyST Markdown (diff-friendly, no stored outputs).
After ``jupyter-book build`` this writes ``_build/html/_notebooks/<chapter>.ipynb``
(no outputs: they run on the reader's kernel) and a small ``index.html`` listing
them, which the preface links to.

Usage: ``python tools/export_notebooks.py [site folder]`` (default ``_build/html``).
"""

from __future__ import annotations

import html
import sys
from pathlib import Path

import jupytext
import nbformat
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from toc import ROOT, notebooks  # noqa: E402

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Chapter notebooks</title></head>
<body>
<h1>Chapter notebooks (.ipynb)</h1>
<p>Download a chapter and open it in any Jupyter (or upload it to Colab). Its first cell
installs the <code>microagg</code> package when it is missing; the reference data sets are
fetched from their original sources on first use (see the repository's
<code>data/README.md</code>). In a clone of the repository, <code>make lab</code> opens the
chapters directly.</p>
<ul>
{items}
</ul>
<p><a href="../index.html">Back to the book</a></p>
</body></html>
"""


INSTALL_CELL = """\
# Outside a checkout of the book (Colab, Binder, a plain Jupyter) this installs the companion
# package microagg first; where microagg is already installed it does nothing.
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("microagg") is None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "{requirement}"],
                   check=True)
"""


def repository_url(root: Path = ROOT) -> str:
    """The repository's address: ``repository.url`` in ``_config.yml``, its only home."""
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    return str(config["repository"]["url"]).rstrip("/")


def install_cell() -> nbformat.NotebookNode:
    """The first cell of every exported chapter: install microagg when it is missing."""
    requirement = f"microagg[fast] @ git+{repository_url()}"  # numba: the chapters time code
    return nbformat.v4.new_code_cell(INSTALL_CELL.format(requirement=requirement),
                                     metadata={"tags": ["install"]})


def export(site: Path) -> list[Path]:
    out_dir = site / "_notebooks"
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for src in notebooks():
        nb = jupytext.read(src)
        # The copy is a plain notebook: drop jupytext's pairing information.
        nb.metadata.pop("jupytext", None)
        nb.cells.insert(0, install_cell())
        target = out_dir / (src.stem + ".ipynb")
        jupytext.write(nb, target, fmt="ipynb")
        written.append(target)
    items = "\n".join(
        f'<li><a href="{html.escape(p.name)}" download>{html.escape(p.name)}</a></li>'
        for p in written
    )
    (out_dir / "index.html").write_text(PAGE.format(items=items), encoding="utf-8")
    return written


if __name__ == "__main__":
    site = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "_build" / "html"
    done = export(site)
    print(f"wrote {len(done)} chapter notebooks to {site / '_notebooks'}")
