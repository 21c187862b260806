"""WCAG 2.1 AA on every built page, checked in a real browser.

* **axe-core** (vendored from npm into ``_vendor/axe-core`` by ``make vendor``) runs the
  ``wcag2a``, ``wcag2aa``, ``wcag21a`` and ``wcag21aa`` rules on every page of ``_toc.yml``,
  at 1280 px and at 390 px, in the theme's light and dark modes, after MathJax and the widget
  manager have drawn the page: each page is loaded once and then resized and switched between
  the modes in place, as a reader would. No rule is disabled; every violation fails the test,
  which prints the count per page, width and mode (``test_axe_finds_no_violation``).
* **Figures**: every image in a page's text has alternative text that describes it, not a
  file name nor the caption's title alone (``test_every_figure_has_alt_text``).
* **Explorers**, with the keyboard alone (``test_explorers_work_with_the_keyboard``): Tab
  reaches each control in turn, each control is named by its visible label, an arrow key
  moves it, and the frame shown, its alternative text and the live region's text are those
  the build stored for the new values; the text names every control's value. (A slider's
  editable readout, also reachable with Tab, is passed over.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("playwright")

# reads the strict book build's outputs (_build/): `make test` runs it after the build
pytestmark = pytest.mark.after_build

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
AXE = ROOT / "_vendor" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
WIDTHS = ((1280, 900), (390, 844))
MODES = ("light", "dark")

#: How each explorer's text says a control's value ("{}" is the option's label; a tuple
#: gives the ways it may be said).
SAYS = {"k": ("k = {}", "{}-partition"), "n": "of {} points", "seed": "seed {}", "data": "{}",
        "data set": "{}", "γ": "γ = {}", "gamma": "gamma = {}", "mutation": "mutation rate {}",
        "crossover": "crossover rate {}", "generations": "after {} generations",
        "generation": "generation {}", "block size": "at most {} records", "strategy": "{} blocks"}

def _pages():
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import toc

    return [toc.html_page(p, ROOT).relative_to(SITE).as_posix() for p in toc.pages(ROOT)]


@pytest.fixture(scope="module")
def axe_source():
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run `make vendor` (axe-core from npm)")
    return AXE.read_text(encoding="utf-8")


def _open(browser, url, *, width=1280, height=900, mode="light"):
    """A page at ``url`` in the theme's ``mode``, after its scripts (MathJax, widgets) ran."""
    ctx = browser.new_context(viewport={"width": width, "height": height},
                              color_scheme=mode)
    # the theme keeps the reader's choice in localStorage; set it before its scripts run
    ctx.add_init_script(f"localStorage.setItem('mode', '{mode}');"
                        f"localStorage.setItem('theme', '{mode}');")
    page = ctx.new_page()
    page.goto(url, wait_until="networkidle")
    page.wait_for_timeout(1200)
    shown = page.evaluate("() => document.documentElement.dataset.theme")
    assert shown == mode, f"{url}: the theme shows {shown!r}, not {mode!r}"
    return page


def _run_axe(page):
    return page.evaluate("""(tags) => axe.run(document, {runOnly: {type: 'tag', values: tags},
        resultTypes: ['violations']}).then(r => r.violations.map(v => ({
          id: v.id, impact: v.impact, help: v.help,
          nodes: v.nodes.map(n => n.target.join(' ') + ' | ' + n.failureSummary
                                  .replace(/\\s+/g, ' ').slice(0, 300))})))""", TAGS)


def _show(page, *, width, height, mode):
    """Bring an open page to ``width`` and the theme's ``mode`` as a reader would: resize the
    window, switch the colour mode (the theme's own attributes and stored choice, and the
    browser's colour scheme), and let the layout and the theme's transitions settle."""
    page.set_viewport_size({"width": width, "height": height})
    page.emulate_media(color_scheme=mode)
    page.evaluate("""(mode) => {
        localStorage.setItem('mode', mode); localStorage.setItem('theme', mode);
        document.documentElement.dataset.mode = mode;
        document.documentElement.dataset.theme = mode; }""", mode)
    page.wait_for_timeout(500)
    shown = page.evaluate("() => document.documentElement.dataset.theme")
    assert shown == mode, f"the theme shows {shown!r}, not {mode!r}"


@pytest.mark.parametrize("path", _pages())
def test_axe_finds_no_violation(server, browser, axe_source, axe_counts, path, capsys):
    """axe-core on one page in each width and colour mode: the page is loaded once (light,
    1280 px) and then resized and switched in place, as a reader resizing the window or
    pressing the colour-mode button would."""
    found, report = {}, []
    (width, height), mode = WIDTHS[0], MODES[0]
    page = _open(browser, f"{server}/{path}", width=width, height=height, mode=mode)
    page.add_script_tag(content=axe_source)
    for width, height in WIDTHS:
        for mode in MODES:
            _show(page, width=width, height=height, mode=mode)
            violations = _run_axe(page)
            key = f"{width} px {mode}"
            found[key] = sum(len(v["nodes"]) for v in violations)
            for v in violations:
                report.append(f"[{key}] {v['id']} ({v['impact']}): {v['help']}\n    "
                              + "\n    ".join(v["nodes"][:5]))
    page.context.close()
    axe_counts[path] = found
    with capsys.disabled():
        print(f"\naxe (wcag2a/aa, wcag21a/aa) {path}: {sum(found.values())} violations "
              f"({', '.join(f'{k}: {n}' for k, n in found.items())})")
    assert not report, f"{path}:\n" + "\n".join(report)


def test_every_figure_has_alt_text(server, browser):
    bad, seen = [], 0
    for path in _pages():
        page = _open(browser, f"{server}/{path}")
        images = page.evaluate("""() => [...document.querySelectorAll('article img')]
            .filter(i => !i.closest('.widget-subarea'))
            .map(i => ({alt: i.getAttribute('alt'), src: i.getAttribute('src'),
                        caption: (i.closest('figure')?.querySelector('figcaption')?.innerText
                                  || '').replace(/^Fig\\.\\s*[\\d.]+\\s*/, '').trim()}))""")
        page.context.close()
        for img in images:
            seen += 1
            alt = (img["alt"] or "").strip()
            title = re.split(r"(?<=[.:])\s", img["caption"])[0] if img["caption"] else ""
            if (len(alt.split()) < 8 or alt.lower().endswith((".png", ".svg", ".jpg"))
                    or alt == title or alt == img["caption"]):
                bad.append(f"{path}: {img['src']}: alt {alt!r}")
    assert seen > 20, f"only {seen} figures found in the pages"
    assert not bad, "figures without a description:\n" + "\n".join(bad)


FOCUSED = """(box) => {
  const a = document.activeElement;
  const rows = [...box.querySelectorAll('.ma-control')];
  const row = rows.findIndex(r => r.contains(a));
  const by = a.getAttribute('aria-labelledby');
  return {row, tag: a.tagName, cls: a.className,
          name: by ? document.getElementById(by)?.innerText.trim() : null};
}"""

SHOWN = """(box) => {
  const img = [...box.querySelectorAll('img.ma-frame')].find(i => i.offsetParent !== null);
  const live = box.querySelector('.ma-live');
  const text = live ? live.innerText.trim() : null;
  if (!img) return null;
  return fetch(img.src).then(r => r.arrayBuffer())
    .then(b => crypto.subtle.digest('SHA-256', b))
    .then(h => ({hash: [...new Uint8Array(h)].map(x => x.toString(16).padStart(2, '0')).join(''),
                 alt: img.alt, text, live: live && live.getAttribute('aria-live'),
                 role: live && live.getAttribute('role')}));
}"""

#: What the page's focusable elements are, in order (to start Tab just before an explorer).
FOCUS_BEFORE = """(box) => {
  const all = [...document.querySelectorAll(
      'a[href], button, input, select, [tabindex]:not([tabindex="-1"])')]
    .filter(e => !e.disabled && e.offsetParent !== null);
  const first = box.querySelector('.noUi-handle, select');
  const i = all.indexOf(first);
  if (i < 1) return false;
  all[i - 1].focus();
  return document.activeElement === all[i - 1];
}"""


def test_explorers_work_with_the_keyboard(server, browser, stored_explorers,
                                          expected_explorers, capsys):
    checked = 0
    for name, expected in expected_explorers.items():
        path = SITE / f"{name}.html"
        explorers = stored_explorers(path.read_text(encoding="utf-8"))
        assert len(explorers) == expected, f"{name}: {len(explorers)} explorers, want {expected}"
        page = _open(browser, f"{server}/{name}.html")
        boxes = page.locator(".widget-subarea > .widget-vbox")
        for e, stored in enumerate(explorers):
            box = boxes.nth(e)
            box.scroll_into_view_if_needed()
            where = f"{name} explorer {e}"
            indices = [c.start for c in stored.controls]
            _check_shown(box, stored, indices, where)
            assert box.evaluate(FOCUS_BEFORE), f"{where}: nothing focusable before it"
            for j, control in enumerate(stored.controls):
                page.keyboard.press("Tab")
                focused = box.evaluate(FOCUSED)
                if j > 0 and focused["row"] == j - 1 and "widget-readout" in focused["cls"]:
                    page.keyboard.press("Tab")  # past the slider's editable readout
                    focused = box.evaluate(FOCUSED)
                assert focused["row"] == j, f"{where}: Tab did not reach control {j}: {focused}"
                assert focused["name"] == control.label, (
                    f"{where}: control {j} is named {focused['name']!r}, its label says "
                    f"{control.label!r}")
                if len(control.options) < 2:
                    continue
                forward = indices[j] + 1 < len(control.options)
                key = {("slider", True): "ArrowRight", ("slider", False): "ArrowLeft",
                       ("dropdown", True): "ArrowDown", ("dropdown", False): "ArrowUp"}[
                    (control.kind, forward)]
                page.keyboard.press(key)
                page.wait_for_timeout(200)
                indices[j] += 1 if forward else -1
                _check_shown(box, stored, indices, f"{where} after {key} on {control.label!r}")
                checked += 1
        page.context.close()
    with capsys.disabled():
        print(f"\nkeyboard: {checked} controls reached with Tab and moved with an arrow key; "
              "frame, alt text and live text checked each time")
    assert checked >= 15


def _check_shown(box, stored, indices, where):
    key = tuple(indices)
    shown = box.evaluate(SHOWN)
    assert shown is not None, f"{where}: no frame shown"
    assert shown["hash"] == stored.frame(key), f"{where}: wrong frame for {key}"
    assert shown["alt"] == stored.alt(key), f"{where}: wrong alt text"
    assert shown["text"] == stored.alt(key) == stored.text(key), f"{where}: wrong live text"
    assert (shown["live"], shown["role"]) == ("polite", "status"), f"{where}: no live region"
    for control, i in zip(stored.controls, indices, strict=True):
        ways = SAYS[control.label]
        said = [w.format(control.options[i]) for w in ((ways,) if isinstance(ways, str) else ways)]
        assert any(x.lower() in shown["alt"].lower() for x in said), (
            f"{where}: {shown['alt']!r} does not say {said}")

