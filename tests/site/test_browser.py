"""The built book in a real browser: every page loads cleanly, and every explorer responds.

Playwright for Python drives the system Chromium (never a downloaded browser) against the
built site served on 127.0.0.1, as a reader's browser would load it, with no network beyond
that server and no kernel.

* Every page in ``_toc.yml`` loads without a console error, an uncaught exception or a failed
  request (``test_page_loads_cleanly``).
* Every explorer (:func:`microagg.views.explorer`, static form) is found on its page. For each
  of its controls the test moves the control to two other grid values and checks that the
  figure shown is the frame the build stored for those values (PNG bytes compared with the
  widget state embedded in the page) and differs from the default
  (``test_explorers_respond``). The test prints how many explorers and controls it moved.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("yaml", reason="needs the book toolchain: pip install -e '.[book,test]'")

pytest.importorskip("playwright")

# reads the strict book build's outputs (_build/): `make test` runs it after the build
pytestmark = pytest.mark.after_build

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"

def _pages():
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import toc

    return [toc.html_page(p, ROOT).relative_to(SITE).as_posix() for p in toc.pages(ROOT)]


@pytest.mark.parametrize("path", _pages())
def test_page_loads_cleanly(open_page, server, browser, path):
    page, problems = open_page(browser, f"{server}/{path}")
    page.context.close()
    assert not problems, f"{path}:\n" + "\n".join(problems)


# -- explorers ----------------------------------------------------------------------------


def _move(box, kind, j, index, current, page):
    """Set control ``j`` of the explorer ``box`` to grid position ``index``."""
    row = box.locator(":scope > .widget-hbox > .widget-hbox").nth(j)
    if kind == "dropdown":
        select = row.locator("select")
        select.select_option(index=index)
        return
    handle = row.locator(".noUi-handle")
    handle.focus()
    key = "ArrowRight" if index > current else "ArrowLeft"
    for _ in range(abs(index - current)):
        handle.press(key)


def test_explorers_respond(open_page, shown_frame, server, browser, stored_explorers,
                           expected_explorers, capsys):
    found, moved = {}, 0
    for name, expected in expected_explorers.items():
        path = SITE / f"{name}.html"
        assert path.exists(), f"{path} was not built"
        explorers = stored_explorers(path.read_text(encoding="utf-8"))
        found[name] = len(explorers)
        assert len(explorers) == expected, f"{name}: {len(explorers)} explorers, want {expected}"
        page, problems = open_page(browser, f"{server}/{name}.html")
        boxes = page.locator(".widget-subarea > .widget-vbox")
        for e, stored in enumerate(explorers):
            frame = stored.frame
            controls = [(c.kind, len(c.options), c.start) for c in stored.controls]
            box = boxes.nth(e)
            box.scroll_into_view_if_needed()
            default = tuple(c[2] for c in controls)
            shown = shown_frame(box)
            assert shown == frame(default), f"{name} explorer {e}: default frame not shown"
            for j, (kind, n_values, start) in enumerate(controls):
                if n_values < 2:
                    continue
                targets = [i for i in range(n_values) if i != start][:2]
                current = start
                for target in targets:
                    _move(box, kind, j, target, current, page)
                    current = target
                    page.wait_for_timeout(150)
                    want = list(default)
                    want[j] = target
                    shown = shown_frame(box)
                    assert shown == frame(tuple(want)), (
                        f"{name} explorer {e}: control {j} at index {target} shows the wrong "
                        "frame")
                    assert shown != frame(default) or frame(tuple(want)) == frame(default)
                    moved += 1
                _move(box, kind, j, start, current, page)  # back to the default
                page.wait_for_timeout(150)
        assert not problems, f"{name}:\n" + "\n".join(problems)
        page.context.close()
    with capsys.disabled():
        print(f"\nexplorers found and moved: {sum(found.values())} ({found}); "
              f"{moved} control moves checked against the stored frames")
    assert sum(found.values()) == 8


# -- narrow screens and page sizes --------------------------------------------------------


#: Elements that stick out of the window (outside boxes that scroll on their own).
OVERFLOWING = """() => [...document.querySelectorAll('article *')]
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1
          && !e.closest('.cell_output, .highlight, .widget-subarea, table, mjx-container'))
  .slice(0, 3).map(e => e.tagName + '.' + e.className + ': ' + e.textContent.slice(0, 40))"""


@pytest.mark.parametrize("path", _pages())
def test_nothing_overflows_at_phone_width(server, browser, path):
    ctx = browser.new_context(viewport={"width": 390, "height": 844})
    page = ctx.new_page()
    page.goto(f"{server}/{path}", wait_until="networkidle")
    page.wait_for_timeout(800)
    width = page.evaluate("() => document.documentElement.scrollWidth")
    wide = page.evaluate(OVERFLOWING)
    ctx.close()
    assert width <= 391, f"{path}: the page is {width} px wide at 390 px: {wide}"


def test_page_sizes_within_budget_and_listed(site):
    rows = json.loads((site / "_static" / "page-sizes.json").read_text())
    assert rows, "the build recorded no page sizes"
    over = {r["page"]: round(r["total"] / 2**20, 2) for r in rows if r["total"] > 6 * 2**20}
    assert not over, f"pages over 6 MB: {over}"
    status = (site / "chapters" / "status.html").read_text(encoding="utf-8")
    for r in rows:
        if r["page"].startswith("chapters/"):
            assert f"<td>{r['page']}</td>" in status, f"{r['page']} is not on the status page"
