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
  the build stored for the new values; the text names every control's value. A slider says
  its value (``aria-valuetext``, as its readout shows it), and its readout is no Tab stop.
* **Focus and contrast beyond axe** (``test_focus_is_visible_on_every_kind_of_control``,
  ``test_explorer_text_keeps_its_contrast_in_dark_mode``, ...): axe reports neither a focus
  that does not show nor text the colour of its background (an "incomplete" result), so
  these are checked directly: the screen changes where each kind of control takes the focus
  from the keyboard, and the explorers' texts reach 4.5:1 on their box in both modes.
* **Touch screens** (``test_copy_buttons_show_on_a_touch_screen``): what a mouse reveals by
  hovering (the code boxes' copy buttons) shows where nothing can hover.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("yaml", reason="needs the book toolchain: pip install -e '.[book,test]'")

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
  const readout = row >= 0 ? rows[row].querySelector('.widget-readout') : null;
  return {row, tag: a.tagName, cls: a.className,
          name: by ? document.getElementById(by)?.innerText.trim() : null,
          valuetext: a.getAttribute('aria-valuetext'),
          readout: readout ? readout.innerText.trim() : null};
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
                if control.kind == "fixed":  # a single value, as text: not a Tab stop
                    continue
                page.keyboard.press("Tab")  # (straight on: a slider's readout is no stop)
                focused = box.evaluate(FOCUSED)
                assert focused["row"] == j, f"{where}: Tab did not reach control {j}: {focused}"
                assert focused["name"] == control.label, (
                    f"{where}: control {j} is named {focused['name']!r}, its label says "
                    f"{control.label!r}")
                _check_value(focused, control, indices[j], where)
                forward = indices[j] + 1 < len(control.options)
                key = {("slider", True): "ArrowRight", ("slider", False): "ArrowLeft",
                       ("dropdown", True): "ArrowDown", ("dropdown", False): "ArrowUp"}[
                    (control.kind, forward)]
                page.keyboard.press(key)
                page.wait_for_timeout(200)
                indices[j] += 1 if forward else -1
                _check_shown(box, stored, indices, f"{where} after {key} on {control.label!r}")
                _check_value(box.evaluate(FOCUSED), control, indices[j], f"{where} after {key}")
                checked += 1
        page.context.close()
    with capsys.disabled():
        print(f"\nkeyboard: {checked} controls reached with Tab and moved with an arrow key; "
              "frame, alt text and live text checked each time")
    assert checked >= 15


def _check_value(focused, control, index, where):
    """A slider says its value (the manager's aria-valuenow is the value's index)."""
    if control.kind == "slider":
        want = control.options[index]
        assert focused["valuetext"] == focused["readout"] == want, (
            f"{where}: {control.label!r} says {focused['valuetext']!r} (readout "
            f"{focused['readout']!r}), not {want!r}")


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



#: Each kind of control that takes the focus, on a chapter that has them all.
FOCUS_KINDS = {
    "solution toggle": "div.solution button.toggle-button",
    "header dropdown": ".bd-header-article button.dropdown-toggle",
    "sidebar toggle": "button.sidebar-toggle.primary-toggle",
    "colour-mode button": "button.theme-switch-button",
    "explorer slider": ".widget-subarea .noUi-handle",
    "explorer dropdown": ".widget-subarea select",
    "table that scrolls": "table.ma-scroll-tab",
    "copy button": "div.highlight button.copybtn",
}


def _focus_shows(page, selector):
    """Whether the screen around the first ``selector`` changes when it takes the focus from
    the keyboard (Tab onto it, so that :focus-visible holds), against when it has none."""
    el = page.locator(f"{selector} >> visible=true").first
    el.scroll_into_view_if_needed()
    el.evaluate("e => e.focus()")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    page.wait_for_timeout(300)
    held = el.evaluate("e => e === document.activeElement")
    box = el.bounding_box()
    clip = {"x": max(box["x"] - 6, 0), "y": max(box["y"] - 6, 0),
            "width": box["width"] + 12, "height": box["height"] + 12}
    focused = page.screenshot(clip=clip)
    el.evaluate("e => e.blur()")
    page.wait_for_timeout(300)
    return held and focused != page.screenshot(clip=clip)


@pytest.mark.parametrize("mode", MODES)
def test_focus_is_visible_on_every_kind_of_control(server, browser, mode):
    """WCAG 2.4.7: the theme's toggles and header buttons, the explorers' controls and the
    boxes that scroll sideways each show the focus (sphinx-togglebutton and Bootstrap remove
    it; the output box clipped the outline of a table that scrolls)."""
    page = _open(browser, f"{server}/chapters/mdav.html", mode=mode)
    hidden = [kind for kind, selector in FOCUS_KINDS.items()
              if not _focus_shows(page, selector)]
    page.context.close()
    assert not hidden, f"{mode}: no visible focus on: {hidden}"


def test_copy_buttons_show_on_a_touch_screen(server, browser):
    """sphinx-copybutton shows its button while the pointer is over the code; on a phone,
    where nothing hovers, it stayed see-through (a control nobody could find)."""
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                              has_touch=True)
    page = ctx.new_page()
    page.goto(f"{server}/chapters/mdav.html", wait_until="networkidle")
    page.wait_for_timeout(800)
    assert page.evaluate("() => matchMedia('(hover: none)').matches"), "not a touch screen"
    shown = page.evaluate("""() => [...document.querySelectorAll('div.highlight button.copybtn')]
        .map(b => getComputedStyle(b).opacity)""")
    ctx.close()
    assert shown and set(shown) == {"1"}, shown


CONTRAST = """() => {
  const rgb = c => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = c => { const v = rgb(c).map(x => { x /= 255;
      return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  const out = [];
  document.querySelectorAll('.widget-subarea').forEach(box => {
    const bg = getComputedStyle(box).backgroundColor;
    const back = bg.startsWith('rgba(0, 0, 0, 0)') ? getComputedStyle(document.body)
      .backgroundColor : bg;
    box.querySelectorAll('.ma-label b, .widget-readout, .ma-live p, small, .ma-fixed, select')
      .forEach(el => { if (!el.offsetParent) return;
        const a = lum(getComputedStyle(el).color), b = lum(back);
        out.push([el.className || el.tagName, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)]);
      });
  });
  return out;
}"""


@pytest.mark.parametrize("mode", MODES)
def test_explorer_text_keeps_its_contrast_in_dark_mode(server, browser, mode):
    """WCAG 1.4.3 where axe cannot tell (it files text the colour of its background under
    "incomplete"): in dark mode the theme paints an explorer's box light, and the labels,
    readouts, texts and captions had been made light too (1:1)."""
    page = _open(browser, f"{server}/chapters/mdav.html", mode=mode)
    found = page.evaluate(CONTRAST)
    page.context.close()
    assert len(found) >= 5, found
    low = [f"{what}: {ratio:.2f}" for what, ratio in found if ratio < 4.5]
    assert not low, f"{mode}: explorer text below 4.5:1: {low}"


def test_equations_toggles_and_the_mode_button_serve_a_keyboard(server, browser):
    """Equations are no Tab stops (a hundred on a chapter; screen readers read their MathML);
    each solution's toggle is named by its visible hint and its title; the colour-mode
    button keeps the focus when pressed, so pressing again cycles on, and names the mode."""
    page = _open(browser, f"{server}/chapters/mdav.html")
    assert page.evaluate("() => document.querySelectorAll('mjx-container').length") > 20
    assert page.evaluate(
        "() => document.querySelectorAll('mjx-container[tabindex=\"0\"]').length") == 0
    names = page.evaluate("""() => [...document.querySelectorAll(
        'div.solution button.toggle-button')].map(b => [b.getAttribute('aria-label'),
        b.getAttribute('data-toggle-hint'), b.getAttribute('aria-expanded')])""")
    assert names and all(re.fullmatch(rf"{re.escape(hint)}: Solution to Exercise \d+\.\d+.*",
                                      label) for label, hint, _ in names), names
    toggle = page.locator("div.solution button.toggle-button").first
    toggle.focus()
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)
    label, hint, expanded = page.evaluate("""() => { const b = document.querySelector(
        'div.solution button.toggle-button'); return [b.getAttribute('aria-label'),
        b.getAttribute('data-toggle-hint'), b.getAttribute('aria-expanded')]; }""")
    assert expanded == "true" and label.startswith(f"{hint}: "), (label, hint, expanded)
    button = page.locator("button.theme-switch-button").first
    button.focus()
    seen = []
    for _ in range(3):
        page.keyboard.press("Enter")
        page.wait_for_timeout(300)
        mode = page.evaluate("() => document.documentElement.dataset.mode")
        assert page.evaluate("() => document.activeElement.classList.contains("
                             "'theme-switch-button')"), "the mode button lost the focus"
        assert mode in button.get_attribute("aria-label"), (mode, button.get_attribute(
            "aria-label"))
        seen.append(mode)
    page.context.close()
    assert len(set(seen)) == 3, seen
