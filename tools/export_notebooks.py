"""Write an ``.ipynb`` copy of every chapter into the built site.

Launch services (Colab, Binder, JupyterHub) and most readers want ``.ipynb`` files,
while the chapters are kept as MyST Markdown (diff-friendly, no stored outputs).
After ``jupyter-book build`` this writes ``_build/html/_notebooks/<chapter>.ipynb``
(an install cell first; no outputs: they run on the reader's kernel; the MyST markup as
plain Markdown, with the numbers and names the built site shows, :func:`plain_cells`) and a
small ``index.html`` listing them, which the preface links to; each chapter's ".ipynb"
download button points at its copy (``book_ext.py``).

Usage: ``python tools/export_notebooks.py [site folder]`` (default ``_build/html``).
"""

from __future__ import annotations

import functools
import html
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from toc import ROOT, notebooks  # noqa: E402

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Chapter notebooks</title></head>
<body>
<h1>Chapter notebooks (.ipynb)</h1>
<p>Download a chapter and open it in any Jupyter, or upload it to Colab (File, Upload
notebook). Its first cell installs the <code>microagg</code> package when it is missing: the
version these notebooks were made with, from the book's repository (it is not on PyPI). To
run the notebooks in an environment of your own, install that package with numba (the
papers' reproductions take minutes with it, hours without) and Jupyter:
<code>pip install "{requirement}" jupyterlab</code>.</p>
<p>To run a notebook unattended (<code>jupyter nbconvert --execute</code>, papermill), set
the environment variable <code>MICROAGG_STATIC_EXPLORERS=1</code> and give each cell a
timeout: the explorers then show their frames as the book does and open no widgets.</p>
<p>The reference data sets are downloaded from their original sources on first use, or all
at once with <code>microagg data --download</code>; to use copies you already have, put them
in a folder and name it in the environment variable <code>MICROAGG_DATA</code> (the
repository's <code>data/README.md</code> lists the files and their sources). In a clone of
the repository, <code>make lab</code> opens the chapters directly.</p>
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
elif importlib.util.find_spec("numba") is None:
    print("note: numba is not installed, so this chapter's heavier cells (the papers' tables "
          "at their settings) run as plain Python, hours instead of minutes: install it "
          "(pip install numba) and restart the kernel")
"""


def repository_url(root: Path = ROOT) -> str:
    """The repository's address: ``repository.url`` in ``_config.yml``, its only home."""
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    return str(config["repository"]["url"]).rstrip("/")


@functools.cache  # (one git call per build, not one per chapter)
def requirement(root: Path = ROOT) -> str:
    """What the notebooks install: ``microagg[fast]`` (numba: the chapters time code) from
    the repository, at the commit the book is built from (the chapters check numbers that
    other versions may not give); at its newest commit where the sources are not a git
    checkout. Where the package's sources differ from that commit (uncommitted edits), the
    notebooks would install other code than the book was built with: a warning says so."""
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                          text=True, check=False)
    commit = done.stdout.strip()
    pinned = f"@{commit}" if done.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", commit) \
        else ""
    if pinned:
        changed = uncommitted_package_files(root)
        if changed:
            shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more"
                                              if len(changed) > 5 else "")
            print(f"warning: the exported notebooks install microagg at commit {commit[:12]}, "
                  f"but the package's sources here differ from it ({shown}): commit them and "
                  "rebuild before publishing the site", file=sys.stderr)
    return f"microagg[fast] @ git+{repository_url(root)}{pinned}"


def uncommitted_package_files(root: Path = ROOT) -> list[str]:
    """The files of what the install cell installs (``microagg/``, ``pyproject.toml``) that
    differ from the checkout's last commit: edited, added or deleted, untracked included
    (not ignored ones)."""
    done = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--",
                           "microagg", "pyproject.toml"], cwd=root, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        return []
    return [line[3:] for line in done.stdout.splitlines() if line.strip()]


def install_cell() -> nbformat.NotebookNode:
    """The first cell of every exported chapter: install microagg when it is missing."""
    return nbformat.v4.new_code_cell(INSTALL_CELL.format(requirement=requirement()),
                                     metadata={"tags": ["install"]})


# -- MyST markup as plain Markdown ------------------------------------------------------------
#
# Colab and a Jupyter without jupyterlab-myst show MyST's roles and directives as raw text
# ({glue:text}`name:.2f`, {numref}`...`, a solution's text in full). The copies say the same in
# plain Markdown: the numbers, chapter and figure numbers and titles as the built site shows
# them, citations as [author, year], exercises in bold and solutions folded in <details>.

ROLE = re.compile(r"\{(glue:text|glue:md|glue|numref|ref|eq|cite|download|func)\}`([^`]*)`")
TARGET = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)  # "text <label>"
LABEL_LINE = re.compile(r"^\(([\w-]+)\)=[ \t]*\n", re.M)
DISPLAY = re.compile(r"^([ \t]*)\$\$\n(.*?)\n[ \t]*\$\$[ \t]*\(([\w-]+)\)",  # $$ ... $$ (label)
                     re.S | re.M)
MATH = re.compile(r"^([ \t]*)```\{math\}\n[ \t]*:label: ([\w-]+)\n(.*?)\n[ \t]*```", re.S | re.M)
EXERCISE = re.compile(  # title, options, text
    r"^```\{exercise\}[ \t]*([^\n]*)\n((?::[\w-]+:[^\n]*\n)*)\n?(.*?)\n```[ \t]*$", re.S | re.M)
SOLUTION_START = re.compile(r"^```\{solution-start\}[^\n]*\n(?::[\w-]+:.*\n)*```[ \t]*\n?", re.M)
SOLUTION_END = re.compile(r"^```\{solution-end\}[ \t]*\n```[ \t]*\n?", re.M)
ADMONITION = re.compile(
    r"^:::\{admonition\}[ \t]*([^\n]*)\n(?::[\w-]+:[^\n]*\n)*(.*?)\n:::[ \t]*$", re.S | re.M)
#: The heading of a solution (its text is folded, its code cells collapsed).
SOLVED = "**Solution** (folded below: try the exercise first)"
#: Where the built site names a label: its element, then a number and a title.
_HEADING = re.compile(
    r'<span class="section-number">([\d.]+?)\.? </span>(.*?)<a class="headerlink"', re.S)
_BEFORE_HEADING = re.compile(r'>\s*(?:</span>\s*)?(?:<span id="[^"]*"></span>\s*)*<h[1-6]')
_CAPTION = re.compile(r'<span class="caption-number">(.*?) </span>')
_EQNO = re.compile(r'<span class="eqno">\((.*?)\)')
_TITLE = re.compile(r"<h1>(.*?)<a class=\"headerlink\"", re.S)


@dataclass
class Targets:
    """What the built site shows for each label: a number (``2``, ``Fig. 5.1``, ``6.1``) and
    a title (a section's), read from its pages."""

    numbers: dict[str, str] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)
    exercises: dict[str, str] = field(default_factory=dict)  # label: "Exercise 2.3"

    @classmethod
    def from_site(cls, site: Path) -> Targets:
        found = cls()
        for page in sorted(site.rglob("*.html")):
            if page.relative_to(site).parts[0].startswith("_"):
                continue
            text = page.read_text(encoding="utf-8")
            for m in re.finditer(r'id="([\w-]+)"', text):
                label, after = m.group(1), text[m.end():m.end() + 3000]
                if label.startswith("equation-"):
                    eq = _EQNO.search(after[:300])
                    if eq:
                        found.numbers[label.removeprefix("equation-")] = eq.group(1)
                    continue
                if _BEFORE_HEADING.match(after):
                    heading = _HEADING.search(after[:1500])
                    plain = _TITLE.search(after[:1500])
                    if heading:
                        found.numbers.setdefault(label, heading.group(1))
                        found.titles.setdefault(label, _text(heading.group(2)))
                    elif plain:
                        found.titles.setdefault(label, _text(plain.group(1)))
                elif 'class="caption-number"' in after[:2500] and "<figure" in text[
                        max(0, m.start() - 200):m.start()]:
                    found.numbers.setdefault(label, _CAPTION.search(after).group(1))
                elif 'class="exercise admonition"' in text[max(0, m.start() - 60):m.start()]:
                    caption = _CAPTION.search(after[:400])
                    if caption:
                        found.exercises.setdefault(label, caption.group(1))
        return found


def _text(fragment: str) -> str:
    """An HTML fragment's text."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


def citations(bib: Path) -> dict[str, str]:
    """Each reference's author-year form, as the site cites it: ``Solanas and
    Martínez-Ballesté, 2006``."""
    from pybtex.database import parse_file

    out = {}
    for key, entry in parse_file(str(bib)).entries.items():
        names = [" ".join(p.last_names) for p in entry.persons.get("author", [])]
        who = (names[0] if len(names) == 1 else " and ".join(names) if len(names) == 2
               else f"{names[0]} et al." if names else key)
        out[key] = f"{who}, {entry.fields.get('year', 'n.d.')}"
    return out


def glue_values(site: Path, stem: str) -> dict[str, str]:
    """The values a chapter glued when the site was built (MyST-NB's record, text form)."""
    record = site.parent / "jupyter_execute" / "chapters" / f"{stem}.glue.json"
    if not record.exists():
        return {}
    out = {}
    for name, output in json.loads(record.read_text(encoding="utf-8")).items():
        data = output.get("data", {})
        out[name] = data.get("text/markdown") or data.get("text/plain", "")
    return out


def _glued(value: str, spec: str) -> str:
    """A glued value as ``{glue:text}`` shows it, formatted by ``spec`` (e.g. ``.2f``)."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    if not spec:
        return value
    try:
        number = float(value)
    except ValueError:
        return value
    return format(int(number) if spec.endswith("d") else number, spec)


def plain_markdown(text: str, targets: Targets, glue: dict[str, str],
                   cites: dict[str, str]) -> str:
    """One Markdown cell's MyST roles and directives as plain Markdown (see above)."""

    def role(m: re.Match[str]) -> str:
        kind, body = m.groups()
        named = TARGET.match(body)
        shown, label = (named.group(1), named.group(2)) if named else ("", body)
        if kind.startswith("glue"):
            name, _, spec = body.partition(":")
            return _glued(glue[name], spec) if name in glue else f"`{name}`"
        if kind == "numref":
            number = targets.numbers.get(label, label)
            return shown.replace("%s", number) if shown else number
        if kind == "ref":
            return (shown or targets.exercises.get(label)
                    or f"“{targets.titles.get(label, label)}”")
        if kind == "eq":
            return f"({targets.numbers.get(label, label)})"
        if kind == "cite":
            return "[" + "; ".join(cites.get(k.strip(), k.strip()) for k in body.split(",")) + "]"
        if kind == "download":
            return shown or body
        return f"`{body}`"  # func

    def tagged(body: str, label: str, indent: str = "") -> str:
        number = targets.numbers.get(label)
        tag = f"{indent}\\tag{{{number}}}\n" if number else ""
        return f"{indent}$$\n{body}\n{tag}{indent}$$"

    def exercise(m: re.Match[str]) -> str:
        label = re.search(r":label:[ \t]*([\w-]+)", m.group(2))
        number = targets.exercises.get(label.group(1), "Exercise") if label else "Exercise"
        return f"**{number}: {m.group(1).strip()}.** {m.group(3)}"

    text = LABEL_LINE.sub("", text)
    text = DISPLAY.sub(lambda m: tagged(m.group(2), m.group(3), m.group(1)), text)
    text = MATH.sub(lambda m: tagged(m.group(3), m.group(2), m.group(1)), text)
    text = EXERCISE.sub(exercise, text)
    text = ADMONITION.sub(lambda m: "\n".join(f"> {line}".rstrip() for line in
                                              [f"**{m.group(1).strip()}**", "",
                                               *m.group(2).splitlines()]), text)
    return ROLE.sub(role, text)


def plain_cells(cells: list[Any], targets: Targets, glue: dict[str, str],
                cites: dict[str, str]) -> list[Any]:
    """The chapter's cells for a plain Jupyter: Markdown without MyST, each solution's text
    folded in ``<details>`` and its code cells collapsed, the markers dropped."""
    out, solving = [], False
    for cell in cells:
        if cell.cell_type != "markdown":
            if solving:
                cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
                cell.metadata["cellView"] = "form"  # (Colab's way to fold a cell's code)
            out.append(cell)
            continue
        # a cell's text, cut where a solution starts or ends: (part, inside a solution?)
        parts, rest = [], cell.source
        while True:
            marker = (SOLUTION_END if solving else SOLUTION_START).search(rest)
            if marker is None:
                parts.append((rest, solving))
                break
            parts.append((rest[:marker.start()], solving))
            if not solving:
                parts.append((SOLVED, True))
            rest, solving = rest[marker.end():], not solving
        for text, inside in parts:
            text = text if text is SOLVED else plain_markdown(text, targets, glue, cites).strip()
            if text and text is not SOLVED and inside:
                text = f"<details><summary>Solution (show)</summary>\n\n{text}\n\n</details>"
            if text:
                out.append(nbformat.v4.new_markdown_cell(text))
    return out


def export(site: Path) -> list[Path]:
    out_dir = site / "_notebooks"
    out_dir.mkdir(parents=True, exist_ok=True)
    targets = Targets.from_site(site)
    cites = citations(ROOT / "references.bib")
    written = []
    for src in notebooks():
        nb = jupytext.read(src)
        # The copy is a plain notebook: drop jupytext's pairing information.
        nb.metadata.pop("jupytext", None)
        nb.cells = plain_cells(nb.cells, targets, glue_values(site, src.stem), cites)
        nb.cells.insert(0, install_cell())
        target = out_dir / (src.stem + ".ipynb")
        jupytext.write(nb, target, fmt="ipynb")
        written.append(target)
    items = "\n".join(
        f'<li><a href="{html.escape(p.name)}" download>{html.escape(p.name)}</a></li>'
        for p in written
    )
    (out_dir / "index.html").write_text(
        PAGE.format(items=items, requirement=html.escape(requirement())), encoding="utf-8")
    return written


if __name__ == "__main__":
    site = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "_build" / "html"
    done = export(site)
    print(f"wrote {len(done)} chapter notebooks to {site / '_notebooks'}")
