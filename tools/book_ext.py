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
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)


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
    (out / "_static" / "page-sizes.json").write_text(json.dumps(rows, indent=1))
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


def setup(app: Any) -> dict[str, Any]:
    os.environ.setdefault("MICROAGG_STATIC_EXPLORERS", "1")
    app.connect("builder-inited", _fresh_reproduction_cache)
    app.connect("config-inited", _theme_defaults)
    app.connect("html-page-context", _unique_scripts, priority=900)
    app.connect("html-page-context", _aria_fixes)
    app.connect("build-finished", _widget_fonts)
    app.connect("build-finished", _page_sizes)
    app.add_css_file("microagg.css")
    # names the explorers' controls and makes their text a live region (see the file)
    app.add_js_file("microagg-a11y.js")
    app.add_directive("microagg-api", MicroaggApi)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
