"""List the book's pages from ``_toc.yml`` (used by ``make test``, the site check and
the notebook export).

Usage::

    python tools/toc.py              # every page's source file, in reading order
    python tools/toc.py --notebooks  # only the executable ones (MyST notebooks)

A page is a *notebook* when its source is an ``.ipynb`` file or a MyST Markdown file
whose YAML header names a kernel (``kernelspec:``), the same rule MyST-NB uses to
decide what to execute.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = (".md", ".ipynb")


def _walk(node: dict | list) -> list[str]:
    """Docnames in reading order from a ``jb-book`` table of contents."""
    found: list[str] = []
    if isinstance(node, list):
        for item in node:
            found += _walk(item)
    elif isinstance(node, dict):
        for key in ("root", "file"):
            if key in node:
                found.append(str(node[key]))
        for key in ("parts", "chapters", "sections"):
            if key in node:
                found += _walk(node[key])
    return found


def pages(root: Path = ROOT) -> list[Path]:
    """Source files of every page listed in ``root/_toc.yml``, in reading order.

    Raises ``FileNotFoundError`` naming a listed page whose source does not exist.
    """
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    out = []
    for docname in _walk(toc):
        stem = root / docname
        candidates = [stem] if stem.suffix in SUFFIXES else [
            stem.with_name(stem.name + s) for s in SUFFIXES
        ]
        for path in candidates:
            if path.exists():
                out.append(path)
                break
        else:
            raise FileNotFoundError(f"_toc.yml lists {docname!r}, but no such .md/.ipynb file")
    return out


def is_notebook(path: Path) -> bool:
    """True when MyST-NB executes ``path`` (an .ipynb, or .md with a kernelspec header)."""
    if path.suffix == ".ipynb":
        return True
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return False
    header = text.split("---", 2)[1]
    return "kernelspec:" in header


def notebooks(root: Path = ROOT) -> list[Path]:
    """The executable pages of the book, in reading order."""
    return [p for p in pages(root) if is_notebook(p)]


def html_page(path: Path, root: Path = ROOT) -> Path:
    """Where the strict build writes the page for source ``path``."""
    return root / "_build" / "html" / path.relative_to(root).with_suffix(".html")


if __name__ == "__main__":
    chosen = notebooks() if "--notebooks" in sys.argv[1:] else pages()
    print("\n".join(str(p.relative_to(ROOT)) for p in chosen))
