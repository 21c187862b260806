"""Checks of the built book, run by ``make test`` after the strict build.

1. The results of ``make test``'s first phase (chapters under nbval, strict book build),
   read from ``_build/logs``, so that they count in this pytest run's summary.
2. For every page listed in ``_toc.yml``: the page was built, no cell output shows a
   traceback, each chapter's ``.ipynb`` copy is in ``_notebooks/``; and, in headless
   Chromium, the math is typeset by the vendored MathJax (``mjx-container`` elements, no
   ``mjx-merror``) and pages with widget outputs show rendered widgets (``widget-*``
   elements) without network access.
"""

from __future__ import annotations

import html as html_text
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import unquote

import pytest

pytest.importorskip("yaml", reason="needs the book toolchain: pip install -e '.[book,test]'")

# reads the strict book build's outputs (_build/): `make test` runs it after the build
pytestmark = pytest.mark.after_build

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import toc  # noqa: E402

try:
    PAGES = toc.pages(ROOT)
    TOC_ERROR = None
except (OSError, ValueError) as exc:  # a listed page is missing, or _toc.yml is unreadable
    PAGES, TOC_ERROR = [], str(exc)

IDS = [str(p.relative_to(ROOT)) for p in PAGES]
LOGS = os.environ.get("MICROAGG_PHASE1_LOGS")

TRACEBACK = re.compile(r"Traceback \(most recent call last\)|class=\"[^\"]*output traceback")
FIGURE_AS_TEXT = re.compile(r"&lt;Figure size \d+x\d+ with \d+ Axes&gt;")  # no image shown
# what a cell wrote to stderr (a library's warning, a progress bar): a built page shows none
STDERR = re.compile(r"class=\"output stderr[^>]*>(?:<[^>]*>)*([^<]{0,300})")
# a $ left beside rendered maths: a display equation MyST did not parse (in a list item)
STRAY_DOLLAR = re.compile(r"\$<span class=\"math|</span>\$")
MATH_SOURCE = re.compile(r"class=\"math notranslate")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_ELEMENT = re.compile(r"class=\"[^\"]*\bwidget-[a-z]")
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # colour codes in the logs
EXCEPTION = re.compile(r"^\w*(Error|Exception)\b.*: ")  # "IndexError: ..." lines
# mystnb's report of a cell that raised, from its source to the end of the traceback
FAILED_CELL = re.compile(
    r"An error occurred while executing the following cell:(.*?)\[mystnb\.exec\]", re.S
)


def test_toc_lists_existing_pages():
    assert TOC_ERROR is None, TOC_ERROR
    assert PAGES, "_toc.yml lists no pages"


# -- phase 1 of `make test` ---------------------------------------------------------------


def _phase1(step: str) -> tuple[int, str]:
    if not LOGS:
        pytest.skip("phase-1 results exist only under `make test` (tools/run_tests.sh)")
    logs = Path(LOGS)
    rc_file = logs / f"{step}.rc"
    if not rc_file.exists():
        pytest.fail(f"{step} did not finish: no {rc_file}")
    return int(rc_file.read_text().strip()), (logs / f"{step}.log").read_text(errors="replace")


def test_chapters_pass_nbval():
    """Every chapter executes without error under ``pytest --nbval-lax``."""
    rc, log = _phase1("nbval")
    log = ANSI.sub("", log)
    tail = "\n".join(log.splitlines()[-40:])
    assert rc != 5, f"nbval collected no cells (pytest exit 5): chapters/conftest.py?\n{tail}"
    # On failure show which cells failed and with which exception, not the whole log.
    failed = [ln for ln in log.splitlines() if ln.startswith("FAILED ") or EXCEPTION.match(ln)]
    assert rc == 0, f"nbval failed (exit {rc}), see {LOGS}/nbval.log:\n" + (
        "\n".join(failed[-40:]) or tail
    )
    listed = Path(LOGS, "chapters.txt").read_text().split()
    # nbval's verbose lines name each cell as "chapters/foundations::md::Cell 0".
    missing = [c for c in listed if Path(c).with_suffix("").as_posix() not in log]
    assert not missing, f"chapters not run by nbval: {missing}"


def test_strict_book_build():
    """``jupyter-book build . --all -W -n --keep-going`` succeeds (no warning, no failing cell)."""
    rc, log = _phase1("book")
    log = ANSI.sub("", log)
    # Sphinx's own messages ("file:line: WARNING: ..."), not the kernels' log lines.
    sphinx_message = re.compile(r"(WARNING|ERROR|CRITICAL): |^\w*Error")
    problems = [ln for ln in log.splitlines() if sphinx_message.search(ln)]
    detail = "\n".join(problems[-40:] or log.splitlines()[-40:])
    # A failing cell: its traceback's last lines, which name the line and the values
    # (CI shows only a part of this message, so keep it short).
    for failed in FAILED_CELL.findall(log):
        detail += "\n--- a failing cell:\n" + "\n".join(failed.strip().splitlines()[-25:])
    assert rc == 0, f"strict book build failed (exit {rc}), see {LOGS}/book.log:\n{detail}"


# -- the built pages ----------------------------------------------------------------------


@pytest.mark.parametrize("source", PAGES, ids=IDS)
def test_page_shows_no_traceback_warning_figure_as_text_or_stray_dollar(site, source):
    page = toc.html_page(source, ROOT)
    assert page.exists(), f"{source.name} is in _toc.yml but {page} was not built"
    html = page.read_text(encoding="utf-8")
    hit = TRACEBACK.search(html)
    assert hit is None, f"{page.name} shows a traceback in an output: ...{hit.group(0)}..."
    warned = STDERR.search(html)
    assert warned is None, f"{page.name} shows a cell's stderr (a warning?): {warned.group(1)}"
    shown = FIGURE_AS_TEXT.search(html)
    assert shown is None, f"{page.name} shows a figure as text, not an image: {shown.group(0)}"
    stray = STRAY_DOLLAR.search(html)
    assert stray is None, (f"{page.name} shows a '$' beside its maths (an equation left "
                           f"unparsed): ...{html[stray.start() - 80:stray.end() + 80]}...")
    if toc.is_notebook(source):
        copy = site / "_notebooks" / (source.stem + ".ipynb")
        assert copy.exists(), f"no downloadable notebook {copy} (tools/export_notebooks.py)"


@pytest.fixture(scope="module")
def rendered(render):
    """The DOM of every built page, rendered two at a time (one Chromium per core)."""
    pages = [toc.html_page(p, ROOT) for p in PAGES]
    pages = [p for p in pages if p.exists()]

    def attempt(page):
        try:
            return render(page)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
            return exc

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(pages, pool.map(attempt, pages), strict=True))


@pytest.mark.parametrize("source", PAGES, ids=IDS)
def test_page_renders_in_browser(rendered, source):
    page = toc.html_page(source, ROOT)
    if not page.exists():
        pytest.fail(f"{page} was not built")
    html = page.read_text(encoding="utf-8")
    dom = rendered[page]
    if isinstance(dom, Exception):
        pytest.fail(str(dom))

    n_math = len(MATH_SOURCE.findall(html))
    n_typeset = dom.count("<mjx-container")
    if n_math:
        assert n_typeset >= n_math, (
            f"{page.name}: {n_math} math elements but {n_typeset} typeset by MathJax "
            "(is _vendor/mathjax in place? `make vendor`)"
        )
    assert "<mjx-merror" not in dom, f"{page.name}: MathJax reports a TeX error"

    n_views = html.count(WIDGET_VIEW)
    n_widgets = len(WIDGET_ELEMENT.findall(dom))
    if n_views:
        assert n_widgets >= n_views, (
            f"{page.name}: {n_views} widget outputs but {n_widgets} rendered widget elements "
            "(embedded widget state and the vendored html-manager should draw them offline)"
        )
    assert "Traceback (most recent call last)" not in dom, f"{page.name}: traceback in page"


LINK_TO_ANCHOR = re.compile(r'href="([^"#]*)#([^"]*)"')
ELEMENT_ID = re.compile(r'\bid="([^"]+)"')


def test_every_link_to_an_anchor_finds_it(site):
    """Links into a page (``page.html#anchor``, the indexes' included) land on an element."""
    pages = [p for p in site.rglob("*.html") if not p.relative_to(site).parts[0].startswith("_")]
    ids = {p.resolve(): set(ELEMENT_ID.findall(p.read_text(encoding="utf-8"))) for p in pages}
    missing = set()
    for page in pages:
        for target, anchor in LINK_TO_ANCHOR.findall(page.read_text(encoding="utf-8")):
            if not anchor or ":" in target:  # (the page's top, another site)
                continue
            dest = (page.parent / unquote(html_text.unescape(target))).resolve()
            if dest in ids and unquote(html_text.unescape(anchor)) not in ids[dest]:
                missing.add(f"{page.relative_to(site)} -> {target}#{anchor}")
    assert len(pages) > 10 and not missing, f"links to anchors that do not exist: {sorted(missing)}"


#: MyST markup a plain Jupyter or Colab would show as raw text.
MYST_LEFT = re.compile(r"\{(?:glue(?::\w+)?|numref|ref|eq|cite|download|func)\}`|^```\{|^:::\{"
                       r"|^\([\w-]+\)=", re.M)


def test_downloaded_notebooks_read_as_plain_markdown(site):
    """The ".ipynb" button of a chapter gives its copy in _notebooks/: the install cell
    first, and its text without MyST (numbers, references and citations as the page shows
    them; tools/export_notebooks.py)."""
    import json

    import nbformat

    copies = sorted((site / "_notebooks").glob("*.ipynb"))
    assert copies
    for copy in copies:
        nb = nbformat.read(copy, as_version=4)
        assert nb.cells[0].metadata.get("tags") == ["install"], copy.name
        text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        left = MYST_LEFT.search(text)
        assert left is None, f"{copy.name}: MyST left: ...{text[left.start():left.end() + 60]}"
        labels = sorted(set(re.findall(r"\b(?:chap|fig|sec|eq|page|ex)-[a-z0-9-]+\b", text)))
        assert not labels, f"{copy.name}: labels the site names otherwise: {labels[:5]}"
        record = site.parent / "jupyter_execute" / "chapters" / f"{copy.stem}.glue.json"
        glued = json.loads(record.read_text(encoding="utf-8")) if record.exists() else {}
        unresolved = [name for name in glued if f"`{name}`" in text]
        assert not unresolved, f"{copy.name}: glued values not filled in: {unresolved}"
        page = (site / "chapters" / f"{copy.stem}.html").read_text(encoding="utf-8")
        assert f'href="../_notebooks/{copy.stem}.ipynb"' in page, copy.stem


def test_api_page_lists_every_public_name(site):
    """The API page documents every name of ``microagg.__all__`` and of each public subpackage."""
    import importlib

    html = (site / "chapters" / "api.html").read_text(encoding="utf-8")
    missing = []
    for modname in ("microagg", "microagg.datasets", "microagg.published",
                    "microagg.reproductions", "microagg.views", "microagg.teaching",
                    "microagg.reference", "microagg.dask"):
        module = importlib.import_module(modname)
        for name in module.__all__:
            obj = getattr(module, name)
            if not callable(obj):
                continue  # constants (EXACT, ...) are documented in their functions' docs
            if f'id="{modname}.{name}"' not in html:
                missing.append(f"{modname}.{name}")
    assert not missing, f"not on the API page: {missing}"


def test_jupyterlab_numbers_figures_and_equations_as_the_book_does(site):
    """``make lab`` shows a reference to a figure or an equation with the number the built
    book gives it (tools/lab_settings.py numbers them from the chapters' sources)."""
    import lab_settings

    pages = "".join(p.read_text(encoding="utf-8") for p in (site / "chapters").glob("*.html"))
    found = {}
    for label, entry in lab_settings.labels().items():
        if label.startswith("fig-"):
            m = re.search(rf'id="{re.escape(label)}".{{0,3000}}?<span class="caption-number">'
                          r"([^<]*?) </span>", pages, re.S)
        elif label.startswith("eq-"):
            m = re.search(rf'id="equation-{re.escape(label)}".{{0,400}}?<span class="eqno">'
                          r"(\([0-9.]+\))", pages, re.S)
        else:
            continue
        found[label] = (m.group(1) if m else None, entry["title"])
    assert len(found) >= 30, found
    wrong = {label: pair for label, pair in found.items() if pair[0] != pair[1]}
    assert not wrong, wrong
