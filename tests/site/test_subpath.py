"""The built site served under a sub-path, as GitHub Pages serves a project's site.

Pages puts a repository's site at ``https://<owner>.github.io/<repository>/``, so no page may
refer to an asset or a download by an address that starts at the server's root. Here
``_build/html`` is served at ``/microagg/`` by a local HTTP server that answers 404 for
anything outside that prefix, and Playwright (system Chromium) checks that

* every page of ``_toc.yml`` loads with no failed request, no HTTP error and no console error;
* every download link and every local asset the page refers to (``href``/``src``) resolves;
* every explorer still responds: moving each of its controls changes the figure shown.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import sys
import threading
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest

pytest.importorskip("playwright")

# reads the strict book build's outputs (_build/): `make test` runs it after the build
pytestmark = pytest.mark.after_build

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
pytest.importorskip("sphinx", reason="needs the book toolchain: pip install -e '.[book,test]'")
import book_ext  # noqa: E402
import toc  # noqa: E402

#: The sub-path, as for a repository called microagg.
PREFIX = "/microagg/"
PAGES = [toc.html_page(p, ROOT).relative_to(ROOT / "_build" / "html").as_posix()
         for p in toc.pages(ROOT)]
STATE = re.compile(r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>',
                   re.S)
VIEW = re.compile(r'<script type="application/vnd.jupyter.widget-view\+json">(.*?)</script>',
                  re.S)



def _explorers(html: str) -> int:
    """How many explorers a built page holds (widget views with a default frame)."""
    state = STATE.search(html)
    if not state:
        return 0
    state = json.loads(state.group(1))["state"]
    return sum(book_ext.default_frame(state, json.loads(v)["model_id"]) is not None
               for v in VIEW.findall(html))


class _SubPath(http.server.SimpleHTTPRequestHandler):
    """Serves ``directory`` at ``PREFIX`` only (everything else is 404)."""

    def translate_path(self, path: str) -> str:
        if not urlsplit(path).path.startswith(PREFIX):
            return "/nonexistent-outside-the-sub-path"
        return super().translate_path("/" + path[len(PREFIX):])

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def base(site):
    handler = functools.partial(_SubPath, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}{PREFIX}"
    httpd.shutdown()


#: Every local address a page refers to: links (downloads, other pages), scripts, styles, images.
REFERENCES = """() => [...document.querySelectorAll('[href], [src]')]
  .map(e => e.getAttribute('href') ?? e.getAttribute('src'))
  .filter(u => u && !u.startsWith('#') && !/^(data|javascript|mailto):/.test(u))"""


def test_server_hides_the_root(base, browser):
    page = browser.new_page()
    root = base[: -len(PREFIX)]
    assert page.goto(f"{root}/index.html").status == 404
    assert page.goto(f"{base}index.html").status == 200
    page.close()


@pytest.mark.parametrize("path", PAGES)
def test_page_works_under_a_sub_path(open_page, shown_frame, site, base, browser, path):
    url = base + path
    page, problems = open_page(browser, url, settle_ms=800)
    ctx = page.context
    # every local reference of the page (downloads included) must resolve under the sub-path
    local = set()
    for ref in page.evaluate(REFERENCES):
        absolute = urljoin(url, ref)
        if absolute.startswith(base[: -len(PREFIX)]):
            local.add(urlsplit(absolute)._replace(fragment="").geturl())
    assert local, f"{path}: no local reference found"
    for ref in sorted(local):
        if not urlsplit(ref).path.startswith(PREFIX):
            problems.append(f"outside the sub-path: {unquote(ref)}")
            continue
        status = ctx.request.get(ref).status
        if status >= 400:
            problems.append(f"HTTP {status}: {unquote(ref)}")
    # every explorer responds: each control moved once changes the figure
    expected = _explorers((site / path).read_text(encoding="utf-8"))
    boxes = page.locator(".widget-subarea > .widget-vbox")
    responded = 0
    for e in range(boxes.count()):
        box = boxes.nth(e)
        if box.locator("img").count() == 0:
            continue
        box.scroll_into_view_if_needed()
        controls = box.locator("select, .noUi-handle")
        for j in range(controls.count()):
            control = controls.nth(j)
            before = shown_frame(box)
            if control.evaluate("e => e.tagName") == "SELECT":
                options = control.locator("option").count()
                if options < 2:
                    continue
                current = control.evaluate("e => e.selectedIndex")
                control.select_option(index=(current + 1) % options)
            else:
                low, high = (control.get_attribute(a) for a in ("aria-valuemin", "aria-valuemax"))
                if low is not None and low == high:
                    continue
                control.focus()
                control.press("ArrowRight")
                page.wait_for_timeout(150)
                if shown_frame(box) == before:  # at the right end already
                    control.press("ArrowLeft")
                    control.press("ArrowLeft")
            page.wait_for_timeout(150)
            if shown_frame(box) == before:
                problems.append(f"explorer {e}: control {j} did not change the figure")
        responded += 1
    ctx.close()
    if responded != expected:
        problems.append(f"{responded} explorers found on the page, the build stored {expected}")
    assert not problems, f"{path} under {PREFIX}:\n" + "\n".join(problems)
