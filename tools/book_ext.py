"""A small Sphinx extension for this book (``_config.yml``: ``local_extensions``).

* Sets ``MICROAGG_STATIC_EXPLORERS=1`` in the build process. The kernels that execute the
  chapters inherit the environment, so every explorer (:func:`microagg.views.explorer`)
  stores precomputed frames that the reader's browser switches between without a kernel.
  Run anywhere else (JupyterLab, nbval, a downloaded notebook), the explorers stay live.
* Points ``MICROAGG_REPRODUCTION_CACHE`` at a fresh folder next to the build output, so a
  paper's table computed by a chapter is reused by the ledger page in the same build.
* Keeps the static pages free of console errors: scripts that two extensions both add (the
  thebe configuration) are written once, the theme gets an explicit default colour mode,
  and the widget manager's icon fonts are copied to where it requests them (relative to the
  page: ``<page folder>/@jupyter-widgets/html-manager/dist/``).
* Accessibility (WCAG 2.1 AA) where other extensions' markup falls short: bibliography
  entries get a role their list allows and code toggles are named by their text
  (:data:`ARIA_FIXES`); ``tools/assets/microagg-a11y.js`` names the explorers' controls,
  makes their text a live region and lets Tab reach boxes that scroll sideways. Theme
  components are overridden in ``_templates/``.
* Measures every page (its HTML plus the images it shows), fills the table on the status page
  (``<div id="microagg-page-sizes">``), writes ``_static/page-sizes.json`` and warns (an error
  in the strict build) when a page exceeds ``PAGE_BUDGET`` bytes.
* The ``{microagg-api} MODULE`` directive documents every name in ``MODULE.__all__``: an
  autosummary table, then autodoc of each function and class from its numpydoc docstring.
  The API page (``chapters/api.md``) is made of these, so it cannot drift from the code.
* Keys the execution cache on the package. ``_config.yml`` asks for ``execute_notebooks:
  cache``; the cache folder is ``_build/.jupyter_cache/<key>``, where the key hashes every file
  of ``microagg/`` and ``data/``, the installed distributions' versions and the ``MICROAGG_*``
  switches (jupyter-cache itself keys each notebook on its code cells). An
  HTML build (``make book``, the strict build of ``make test``) empties the cache first, so it
  always runs every chapter at the papers' settings and records the outputs; ``make pdf`` right
  after reuses them, and after any change to the package or the data it runs the chapters
  again (a new key): it never shows a stale number. With ``MICROAGG_QUICK=1`` the chapters run
  at reduced settings, so such a build neither reads nor writes the cache.
* Shows the package version (``microagg.__version__``, the one place it is kept) in every
  page's footer.
* LaTeX (``make pdf``): an explorer becomes its default frame, stored in the page's widget
  state, and a sentence with the address of its online page (GitHub Pages, derived from
  ``repository.url``); HTML tables (the pandas ``Styler`` output of the paper tables and the
  ledger) become real tables, sized to the page.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import inspect
import json
import os
import posixpath
import re
import shutil
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[1]
#: Where myst-nb's jupyter-cache lives: one folder per key (:func:`cache_key`).
CACHE_ROOT = ROOT / "_build" / ".jupyter_cache"
#: What the chapters' outputs depend on besides their own code: the package and the data.
KEYED = ("microagg", "data")


class MicroaggApi(SphinxDirective):
    """``{microagg-api} microagg.views``: summary table + autodoc of ``__all__``."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        modname = self.arguments[0]
        module = importlib.import_module(modname)
        names = [n for n in module.__all__
                 if inspect.isfunction(getattr(module, n)) or inspect.isclass(getattr(module, n))]
        lines = [f".. module:: {modname}", "", ".. autosummary::", "   :nosignatures:", ""]
        lines += [f"   {n}" for n in names] + [""]
        for n in names:
            kind = "autoclass" if inspect.isclass(getattr(module, n)) else "autofunction"
            lines += [f".. {kind}:: {n}", ""]
            if kind == "autoclass":
                lines += ["   :members:", "   :exclude-members: __init__", ""]
        # The page is MyST: hand the reStructuredText to MyST's eval-rst directive.
        lines = ["````{eval-rst}", *lines, "````"]
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source=f"<api of {modname}>"),
                                self.content_offset, container)
        return container.children


def _fresh_reproduction_cache(app: Any) -> None:
    cache = Path(app.outdir).parent / "reproduction-cache"
    shutil.rmtree(cache, ignore_errors=True)
    os.environ["MICROAGG_REPRODUCTION_CACHE"] = str(cache)


def _theme_defaults(app: Any, config: Any) -> None:
    config.html_context.setdefault("default_mode", "light")


def _unique_scripts(app: Any, pagename: str, templatename: str, context: dict[str, Any],
                    doctree: Any) -> None:
    """Drop repeated script tags (JB 1 adds the thebe and togglebutton settings twice, once
    with filename ``None`` and once with ``""``; the second ``const`` declaration throws)."""
    seen, unique = set(), []
    for js in context.get("script_files", []):
        key = (str(getattr(js, "filename", js) or ""),
               str(sorted(getattr(js, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    if "script_files" in context:
        context["script_files"] = unique


#: Markup that other extensions write and WCAG 2.1 AA rejects, with its replacement:
#: * docutils writes each citation as ``role="doc-biblioentry"`` inside ``role="list"``;
#:   DPUB-ARIA 1.1 deprecates that role, and a list may only hold list items (1.3.1, 4.1.2);
#: * myst-nb names the "Show code cell source" toggle "Toggle hidden content", a name
#:   without its visible text (2.5.3, label in name): it is named by that text instead.
ARIA_FIXES = (('role="doc-biblioentry"', 'role="listitem"'),
              ('<summary aria-label="Toggle hidden content">', "<summary>"))


def _aria_fixes(app: Any, pagename: str, templatename: str, context: dict[str, Any],
                doctree: Any) -> None:
    """Apply :data:`ARIA_FIXES` to the page's body (text, ids and links are unchanged)."""
    body = context.get("body")
    if body:
        for old, new in ARIA_FIXES:
            body = body.replace(old, new)
        context["body"] = body


def _notebook_download(app: Any, pagename: str, templatename: str, context: dict[str, Any],
                       doctree: Any) -> None:
    """Point a chapter's ".ipynb" download button at its plain copy in ``_notebooks/``
    (``tools/export_notebooks.py``: an install cell first, the MyST markup as plain Markdown,
    no outputs) instead of the executed notebook in ``_sources/`` (no install cell, raw MyST,
    a megabyte of widget state), which neither Colab nor a plain Jupyter can use."""
    for group in context.get("header_buttons", []):
        for button in group.get("buttons", []):
            if button.get("label") == "download-notebook-button":
                stem = Path(pagename).name
                button["url"] = f"{context['pathto']('_notebooks', 1)}/{stem}.ipynb"
                button["tooltip"] = "Download the notebook (its first cell installs microagg)"


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
FONT_SUFFIXES = (".woff2", ".woff", ".ttf", ".eot", ".svg")


def _widget_fonts(app: Any, exception: Exception | None) -> None:
    """Copy the widget manager's fonts beside every page that shows widgets."""
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    fonts = [p for p in (out / "_static" / "html-manager").glob("*") if p.suffix in FONT_SUFFIXES]
    folders = {page.parent for page in out.rglob("*.html")
               if WIDGET_VIEW in page.read_text(encoding="utf-8", errors="ignore")}
    for folder in folders:
        target = folder / "@jupyter-widgets" / "html-manager" / "dist"
        target.mkdir(parents=True, exist_ok=True)
        for font in fonts:
            shutil.copy2(font, target / font.name)


#: The largest a page may be, HTML plus its images (its explorers' frames are in the HTML).
PAGE_BUDGET = 6 * 1024 * 1024
SKIP_PAGES = ("genindex.html", "search.html", "py-modindex.html")


def _page_size(page: Path) -> tuple[int, int]:
    """(bytes of the HTML, bytes of the local images it shows)."""
    html = page.read_text(encoding="utf-8", errors="ignore")
    images = set(re.findall(r'<img[^>]+src="(?!data:|https?:)([^"#?]+)"', html))
    extra = sum((page.parent / src).stat().st_size for src in images
                if (page.parent / src).is_file())
    return len(html.encode("utf-8")), extra


def _page_sizes(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    rows = []
    for docname in sorted(app.env.found_docs):
        page = out / f"{docname}.html"
        if page.name in SKIP_PAGES or not page.exists():
            continue
        html, images = _page_size(page)
        rows.append({"page": docname, "html": html, "images": images, "total": html + images})
        if html + images > PAGE_BUDGET:
            logger.warning(f"{docname}: {(html + images) / 2**20:.1f} MB, over the "
                           f"{PAGE_BUDGET / 2**20:.0f} MB page budget")
    (out / "_static" / "page-sizes.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    status = out / "chapters" / "status.html"
    if status.exists():
        table = "".join(f"<tr><td>{r['page']}</td><td>{r['html'] / 2**20:.2f}</td>"
                        f"<td>{r['images'] / 2**20:.2f}</td><td>{r['total'] / 2**20:.2f}</td></tr>"
                        for r in rows)
        html = ('<table class="table"><thead><tr><th>page</th><th>HTML (MB)</th>'
                "<th>images (MB)</th><th>total (MB)</th></tr></thead><tbody>"
                f"{table}</tbody></table>")
        text = status.read_text(encoding="utf-8")
        status.write_text(re.sub(r'(<div id="microagg-page-sizes">).*?(</div>)',
                                 lambda m: m.group(1) + html + m.group(2), text, flags=re.S),
                          encoding="utf-8")


# -- execution cache -------------------------------------------------------------------------


def _environment() -> str:
    """What else decides the outputs: Python, every installed distribution's version, and the
    package's environment switches (bar the per-build reproduction cache folder)."""
    from importlib.metadata import distributions

    from microagg.reproductions._registry import CACHE_ENV

    versions = sorted(f"{d.metadata['Name']}=={d.version}" for d in distributions())
    switches = sorted(f"{k}={v}" for k, v in os.environ.items()
                      if k.startswith("MICROAGG_") and k != CACHE_ENV)
    return "\n".join([sys.version, *versions, *switches])


def cache_key(root: Path = ROOT) -> str:
    """A hash of every file under ``microagg/`` and ``data/`` (names and bytes) and of
    :func:`_environment`."""
    digest = hashlib.sha256(_environment().encode())
    for top in KEYED:
        for path in sorted((root / top).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(path.relative_to(root).as_posix().encode() + b"\0")
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _execution_cache(app: Any) -> None:
    """Point myst-nb's cache at this source's key (runs before myst-nb reads its config)."""
    from microagg.reproductions import quick_mode

    config = app.config
    if config.nb_execution_mode != "cache":
        return
    if quick_mode():
        # reduced settings: run everything, and keep those outputs out of the cache
        config.nb_execution_mode = "force"
        logger.info("MICROAGG_QUICK=1: chapters run at reduced settings, cache not used")
        return
    if app.builder.format == "html":
        shutil.rmtree(CACHE_ROOT, ignore_errors=True)  # the site always runs every chapter
    config.nb_execution_cache_path = str(CACHE_ROOT / cache_key())


# -- version ---------------------------------------------------------------------------------


def _version_footer(app: Any, config: Any) -> None:
    """The package's version in every page's footer, and on the PDF's title page."""
    import microagg

    config.release = config.version = microagg.__version__
    options = config.html_theme_options
    footer = options.get("extra_footer") or ""
    options["extra_footer"] = (f'{footer}<p class="microagg-version">microagg '
                               f"{microagg.__version__}</p>")


# -- LaTeX -----------------------------------------------------------------------------------

#: In LaTeX, myst-nb picks a widget view first (an explorer: :func:`_explorer_frame`), and an
#: HTML output before plain text (a pandas table: :func:`_html_table`).
LATEX_MIME_PRIORITY = [("latex", WIDGET_VIEW, 5), ("latex", "text/html", 55)]


def _latex_priorities(app: Any, config: Any) -> None:
    config.nb_mime_priority_overrides = [*config.nb_mime_priority_overrides,
                                         *LATEX_MIME_PRIORITY]


def pages_url(repository_url: str) -> str:
    """The GitHub Pages address of the repository ``https://github.com/OWNER/NAME``."""
    match = re.fullmatch(r"https://github\.com/([^/]+)/([^/]+?)/?", repository_url)
    if not match:
        raise ValueError(f"repository.url {repository_url!r} is not https://github.com/OWNER/NAME")
    return f"https://{match.group(1).lower()}.github.io/{match.group(2)}/"


def _model(state: dict[str, Any], ref: str) -> dict[str, Any]:
    return state[ref.removeprefix("IPY_MODEL_")]


def default_frame(state: dict[str, Any], model_id: str) -> bytes | None:
    """The PNG an explorer (:func:`microagg.views.explorer`, static) shows first, else None."""
    box = state.get(model_id, {})
    if box.get("model_name") != "VBoxModel":
        return None
    # the frames: the box's first Stack (controls, labels and captions are its other children)
    stacks = [_model(state, c) for c in box.get("state", {}).get("children", [])
              if _model(state, c)["model_name"] == "StackModel"]
    if not stacks:
        return None
    node = stacks[0]
    while node["model_name"] == "StackModel":
        node = _model(state, node["state"]["children"][node["state"]["selected_index"]])
    # a frame is an HTML widget holding one <img> with its alt text (views/_explorer.py)
    found = _FRAME_PNG.search(node.get("state", {}).get("value", ""))
    if node["model_name"] != "HTMLModel" or found is None:
        return None
    return base64.b64decode(found.group(1))


#: The PNG inside an explorer frame's HTML.
_FRAME_PNG = re.compile(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"')


#: What the PDF says below an explorer's frame, before the address of its web page.
EXPLORER_SENTENCE = ("This is an explorer's default figure; on the book's web page its "
                     "controls change it:")


def _explorer_frame(app: Any, docname: str, raw: nodes.raw) -> list[nodes.Node]:
    js = getattr(app.env, "nb_metadata", {}).get(docname, {}).get("js_files", {})
    body = js.get("ipywidgets_state", (None, {}))[1].get("body", "{}")
    state = json.loads(body).get("state", {})
    view = raw.astext().split(">", 1)[1].rsplit("</script>", 1)[0]
    png = default_frame(state, json.loads(view)["model_id"])
    if png is None:
        return []
    folder = Path(app.outdir).parent / "jupyter_execute"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{hashlib.sha256(png).hexdigest()}.png"
    path.write_bytes(png)
    url = pages_url(app.config.html_theme_options["repository_url"]) + f"{docname}.html"
    text = nodes.paragraph()
    text += nodes.emphasis(text=EXPLORER_SENTENCE + " ")
    text += nodes.reference(url, url, refuri=url)
    return [nodes.image(uri="/" + os.path.relpath(path, app.srcdir), alt="explorer frame"),
            text]


#: The cells a pandas Styler sets in bold: ``#T_<id>_row0_col1, ... { font-weight: bold; }``.
_BOLD_RULE = re.compile(r"([^{}]*)\{[^{}]*font-weight:\s*(?:bold|[6-9]00)[^{}]*\}")


class _TableParser(HTMLParser):
    """The cells of an HTML table: rows of ``(text, colspan, rowspan, bold, links)``, header
    rows apart (``bold``: a Styler's CSS, given as ``bold_ids``, sets the cell in bold;
    ``links``: the ``(text, href)`` of each link in the cell)."""

    def __init__(self, bold_ids: frozenset[str] = frozenset()) -> None:
        super().__init__()
        self.bold_ids = bold_ids
        self.head: list[list[tuple[str, int, int, bool, list[tuple[str, str]]]]] = []
        self.body: list[list[tuple[str, int, int, bool, list[tuple[str, str]]]]] = []
        self.in_head, self.row, self.cell = False, None, None
        self.href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "thead":
            self.in_head = True
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            a = dict(attrs)
            self.cell = [[], int(a.get("colspan") or 1), int(a.get("rowspan") or 1),
                         a.get("id") in self.bold_ids]
        elif tag == "a" and self.cell is not None:
            self.href = dict(attrs).get("href")

    def handle_endtag(self, tag: str) -> None:
        if tag == "thead":
            self.in_head = False
        elif tag == "a":
            self.href = None
        elif tag in ("td", "th") and self.cell is not None and self.row is not None:
            parts = self.cell[0]
            text = " ".join("".join(t for t, _ in parts).split())
            links = [(" ".join(t.split()), h) for t, h in parts if h and t.strip()]
            self.row.append((text, self.cell[1], self.cell[2], self.cell[3], links))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            (self.head if self.in_head else self.body).append(self.row)
            self.row = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell[0].append((data, self.href))


def _linked(text: str, links: list[tuple[str, str]], docname: str) -> list[nodes.Node]:
    """A cell's text with its links to sections of the book as LaTeX cross-references,
    with the page for print (``(our runs, p. 100)``); other links stay text."""
    from sphinx.util.texescape import escape

    out: list[nodes.Node] = []
    for label, href in links:
        page, _, anchor = href.partition("#")
        at = text.find(label)
        if at < 0 or "://" in href or not anchor or not page.endswith(".html"):
            continue
        target = posixpath.normpath(posixpath.join(posixpath.dirname(docname),
                                                   page.removesuffix(".html")))
        ref = rf"\detokenize{{{target}:{anchor}}}"
        out.append(nodes.Text(text[:at]))
        out.append(nodes.raw("", rf"\hyperref[{ref}]{{{escape(label)}}}, p.~\pageref{{{ref}}}",
                             format="latex"))
        text = text[at + len(label):]
    return [*out, nodes.Text(text)]


#: A cell that is one number (kept on one line in the PDF: no break after its minus sign).
_NUMBER = re.compile(r"[-+]?(\d[\d,]*)?\.?\d+(e[-+]?\d+)?%?")


def _html_table(text: str, docname: str = "") -> list[nodes.Node]:
    """An HTML table (with the Styler's ``<style>`` before it, if any) as a docutils table
    whose columns share the text width (LaTeX): a column of numbers as wide as its longest
    number, a column of text in proportion to its longest cell up to a cap (10 characters,
    or its cells' mean length up to 30: so that text wraps and numbers do not), and every
    column at least as wide as the longest word of its header; cells the Styler sets in
    bold stay bold; a link to a section of the book (from page ``docname``) is a
    cross-reference with its page number."""
    start = text.index("<table")
    bold = frozenset(name for rule in _BOLD_RULE.findall(text[:start])
                     for name in re.findall(r"#([\w-]+)", rule))
    parser = _TableParser(bold)
    parser.feed(text[start:])
    rows = parser.head + parser.body
    if not rows:
        return []
    # lay the cells on a grid to find the columns (a rowspan covers the rows below it)
    covered: set[tuple[int, int]] = set()
    longest: dict[int, int] = {}
    numeric: dict[int, bool] = {}
    header_word: dict[int, int] = {}
    length: dict[int, list[int]] = {}
    for i, row in enumerate(rows):
        col = 0
        for cell_text, colspan, rowspan, *_ in row:
            while (i, col) in covered:
                col += 1
            for di in range(rowspan):
                for dj in range(colspan):
                    covered.add((i + di, col + dj))
            if colspan == 1 and i < len(parser.head):  # a header wraps between its words
                header_word[col] = max([header_word.get(col, 0),
                                        *(len(w) for w in cell_text.split())])
            elif colspan == 1:
                longest[col] = max(longest.get(col, 3), len(cell_text))
                length.setdefault(col, []).append(len(cell_text))
                numeric[col] = numeric.get(col, True) and (
                    cell_text in ("", "-", "nan") or bool(_NUMBER.fullmatch(cell_text)))
            col += colspan
    # a text column of long sentences (the ledger's reasons) gets up to three times the cap
    cap = {c: max(10, min(round(sum(v) / len(v)), 30)) for c, v in length.items()}
    widths = {c: max(n + 1 if numeric[c] else min(n, cap[c]), header_word.get(c, 0) + 1)
              for c, n in longest.items()}
    ncols = 1 + max(c for _, c in covered)
    table = nodes.table(classes=["colwidths-given"])
    group = nodes.tgroup(cols=ncols)
    table += group
    for c in range(ncols):
        group += nodes.colspec(colwidth=widths.get(c, 3))
    for part, part_rows in ((nodes.thead(), parser.head), (nodes.tbody(), parser.body)):
        if not part_rows:
            continue
        for row in part_rows:
            line = nodes.row()
            for cell_text, colspan, rowspan, in_bold, links in row:
                entry = nodes.entry()
                if colspan > 1:
                    entry["morecols"] = colspan - 1
                if rowspan > 1:
                    entry["morerows"] = rowspan - 1
                if _NUMBER.fullmatch(cell_text):
                    number = cell_text.replace("%", r"\%")
                    shown = rf"\textbf{{{number}}}" if in_bold else number
                    entry += nodes.paragraph("", "", nodes.raw("", rf"\mbox{{{shown}}}",
                                                               format="latex"))
                elif in_bold:
                    entry += nodes.paragraph("", "", nodes.strong(text=cell_text))
                elif links:
                    entry += nodes.paragraph("", "", *_linked(cell_text, links, docname))
                else:
                    entry += nodes.paragraph(text=cell_text)
                line += entry
            part += line
        group += part
    # a wide table: smaller type and narrower gaps, so that numbers and header words keep to
    # their columns (at \scriptsize a line holds about 110 characters of cells, at \tiny 150)
    chars = sum(widths.get(c, 3) for c in range(ncols))
    size = (r"\tiny\setlength{\tabcolsep}{1.5pt}" if chars > 110 else
            r"\scriptsize\setlength{\tabcolsep}{2pt}" if ncols > 8 or chars > 80 else
            r"\footnotesize")
    return [nodes.raw("", r"\begingroup" + size, format="latex"), table,
            nodes.raw("", r"\endgroup", format="latex")]


def _latex_outputs(app: Any, doctree: nodes.document) -> None:
    """Cell outputs a PDF can show: explorers as their default frame, HTML tables as tables."""
    if app.builder.format != "latex":
        return
    docname = app.env.docname
    for raw in list(doctree.findall(nodes.raw)):
        if "html" not in raw.get("format", "").split():
            continue
        text = raw.astext()
        if text.startswith(f'<script type="{WIDGET_VIEW}">'):
            raw.replace_self(_explorer_frame(app, docname, raw))
        elif "<table" in text and "</table>" in text:
            raw.replace_self(_html_table(text, docname))
    for table in list(doctree.findall(nodes.table)):
        _breakable(table)


#: A table of at least this many body rows may break across pages in the PDF (LaTeX's
#: tabulary, Sphinx's choice below 30 rows, cannot: a long one ran off the page).
LONG_TABLE_ROWS = 6
#: What may hold a table that breaks across pages, up to the document (LaTeX's longtable
#: cannot sit in a box: an admonition, an exercise or its solution).
_FLOW = (nodes.section, nodes.container, nodes.compound)


#: How much wider a character of code (monospaced) is than one of text, about.
_CODE_WIDTH = 1.6


def _breakable(table: nodes.table) -> None:
    """Let a long table in the text flow break across pages (a longtable); a Markdown one
    gets column widths from its cells (the longest word, or the mean length up to a cap),
    as tabulary found them by itself."""
    body = next(iter(table.findall(nodes.tbody)), None)
    parent = table.parent
    while isinstance(parent, _FLOW):
        parent = parent.parent
    if body is None or len(body.children) < LONG_TABLE_ROWS \
            or not isinstance(parent, nodes.document):
        return
    table["classes"] = [*table["classes"], "longtable"]
    if "colwidths-given" in table["classes"]:
        return
    group = next(iter(table.findall(nodes.tgroup)))
    specs = [c for c in group.children if isinstance(c, nodes.colspec)]
    texts: list[list[str]] = [[] for _ in specs]
    words: list[list[float]] = [[] for _ in specs]  # the widths of the words that cannot wrap
    for row in table.findall(nodes.row):
        for j, entry in enumerate(row.children[:len(specs)]):
            text = entry.astext()
            texts[j].append(text)
            code = [w for lit in entry.findall(nodes.literal) for w in lit.astext().split()]
            words[j] += [len(w) * _CODE_WIDTH if w in code else len(w) for w in text.split()]
            if len(text) <= 8:  # a short cell ("2-3 h") stays on one line
                words[j].append(len(text))
    for spec, cells, unbroken in zip(specs, texts, words, strict=True):
        mean = sum(map(len, cells)) / max(len(cells), 1)
        spec["colwidth"] = max(round(max(unbroken, default=3)) + 2, min(round(mean), 40), 4)
    table["classes"] = [c for c in table["classes"] if c != "colwidths-auto"]
    table["classes"].append("colwidths-given")


# -- bibliography ----------------------------------------------------------------------------


def _author_year(entry: Any) -> str:
    """``Surname, 2006``, ``A and B, 2014`` or ``A et al., 2007``: the text with which the
    chapters cite the entry (``bibtex_reference_style: author_year``)."""
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [" ".join(p.last_names) for p in people]
    who = (names[0] if len(names) == 1 else " and ".join(names) if len(names) == 2
           else f"{names[0]} et al." if names else entry.fields.get("title", "?"))
    return f"{who}, {entry.fields.get('year', 'n.d.')}"


def _register_author_year_style() -> None:
    """The bibliography style ``authoryear``: pybtex's ``alpha`` (sorted by author, year,
    title) labelled as the chapters cite (``[Domingo-Ferrer, 2006]``, where ``alpha``
    printed ``[DF06]`` beside citations reading "Domingo-Ferrer, 2006")."""
    from pybtex.plugin import register_plugin
    from pybtex.style.formatting.alpha import Style as Alpha
    from pybtex.style.labels import BaseLabelStyle

    class Labels(BaseLabelStyle):
        def format_labels(self, sorted_entries: Any) -> Iterator[str]:
            labels = [_author_year(e) for e in sorted_entries]
            for label in labels:
                if labels.count(label) > 1:
                    raise ValueError(f"two bibliography entries are cited as {label!r}")
                yield label

    class Style(Alpha):
        default_label_style = "authoryear"

    register_plugin("pybtex.style.labels", "authoryear", Labels, force=True)
    register_plugin("pybtex.style.formatting", "authoryear", Style, force=True)


def setup(app: Any) -> dict[str, Any]:
    _register_author_year_style()
    os.environ.setdefault("MICROAGG_STATIC_EXPLORERS", "1")
    app.connect("builder-inited", _fresh_reproduction_cache)
    app.connect("config-inited", _theme_defaults)
    app.connect("config-inited", _version_footer)
    app.connect("config-inited", _latex_priorities)
    # before myst-nb reads its configuration (builder-inited, priority 500)
    app.connect("builder-inited", _execution_cache, priority=100)
    # before Sphinx collects the images of the page (doctree-read, priority 500)
    app.connect("doctree-read", _latex_outputs, priority=400)
    app.connect("html-page-context", _unique_scripts, priority=900)
    app.connect("html-page-context", _aria_fixes)
    app.connect("html-page-context", _notebook_download, priority=600)  # after the theme's
    app.connect("build-finished", _widget_fonts)
    app.connect("build-finished", _page_sizes)
    app.add_css_file("microagg.css")
    # names the explorers' controls and makes their text a live region (see the file)
    app.add_js_file("microagg-a11y.js")
    app.add_directive("microagg-api", MicroaggApi)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
