"""Fixtures for the check of the built book (``tests/site/``).

The pages are rendered by headless Chromium (``--dump-dom``): this runs MathJax and the
widget manager as a reader's browser would, with no network (all assets are vendored).
Where no Chromium binary is found the browser tests are skipped with a message.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import http.server
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """``$MICROAGG_CHROMIUM``, else the first Chromium-like binary on ``PATH``."""
    env = os.environ.get("MICROAGG_CHROMIUM")
    if env:
        return env
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def chromium() -> str:
    """Path of the system Chromium (skips the test when there is none)."""
    path = find_chromium()
    if path is None:
        pytest.skip("browser check skipped: no chromium binary on PATH "
                    "(Debian: `apt-get install -y chromium`; or set MICROAGG_CHROMIUM)")
    return path


@pytest.fixture(scope="session")
def site() -> Path:
    logs = os.environ.get("MICROAGG_PHASE1_LOGS")
    build_rc = Path(logs, "book.rc") if logs else None
    if build_rc and build_rc.exists() and build_rc.read_text().strip() != "0":
        # A failing cell stops the build half-way: its pages are not worth checking, and
        # test_strict_book_build already fails with the reason.
        pytest.skip("the strict book build failed (see test_strict_book_build): pages not checked")
    if not (SITE / "index.html").exists():
        if logs:
            pytest.fail("the book build produced no _build/html/index.html (see _build/logs)")
        pytest.skip("no built book in _build/html: run `make book` (or `make test`) first")
    return SITE


@pytest.fixture(scope="session")
def render(site):
    """``render(path) -> str``: the DOM of a built page after its scripts ran.

    Raises ``RuntimeError`` when Chromium fails; safe to call from several threads.
    """
    browser = find_chromium()
    if browser is None:
        pytest.skip(
            "browser check skipped: no chromium binary on PATH "
            "(Debian: `apt-get install -y chromium`; or set MICROAGG_CHROMIUM)"
        )
    cache: dict[Path, str] = {}

    def _render(page: Path) -> str:
        if page not in cache:
            with tempfile.TemporaryDirectory() as profile:
                cmd = [
                    browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={profile}", "--virtual-time-budget=8000",
                    "--dump-dom", page.as_uri(),
                ]  # fmt: skip
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            if done.returncode != 0 or "<html" not in done.stdout:
                raise RuntimeError(f"chromium could not render {page}:\n{done.stderr[-2000:]}")
            cache[page] = done.stdout
        return cache[page]

    return _render


#: The explorers the book has, by page.
EXPECTED_EXPLORERS = {"chapters/foundations": 1, "chapters/mdav": 1, "chapters/vmdav": 1,
                      "chapters/ivmdav": 1, "chapters/genetic": 1, "chapters/gomm": 2,
                      "chapters/scale": 1}


@pytest.fixture(scope="session")
def expected_explorers() -> dict[str, int]:
    return EXPECTED_EXPLORERS


#: axe's violation counts, ``{page: {"1280 px light": n, ...}}``, filled by
#: tests/site/test_accessibility.py and summed at the end of the run.
AXE_COUNTS: dict[str, dict[str, int]] = {}


@pytest.fixture(scope="session")
def axe_counts() -> dict[str, dict[str, int]]:
    return AXE_COUNTS


def pytest_terminal_summary(terminalreporter):
    if AXE_COUNTS:
        runs = sum(len(v) for v in AXE_COUNTS.values())
        total = sum(sum(v.values()) for v in AXE_COUNTS.values())
        terminalreporter.write_line(
            f"axe-core (wcag2a, wcag2aa, wcag21a, wcag21aa): {total} violations on "
            f"{len(AXE_COUNTS)} pages, {runs} runs (1280 and 390 px, light and dark)")


# -- the built site served over HTTP, and one browser for the module -------------------------


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest's output clean
        pass


@pytest.fixture(scope="module")
def server(site):
    """The built site on ``http://127.0.0.1:<port>``."""
    handler = functools.partial(_Quiet, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser(chromium):
    """The system Chromium driven by Playwright (skipped without Playwright)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        yield b
        b.close()


# -- the explorers a page stores (microagg.views.explorer, static form) ----------------------

STATE = re.compile(r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>',
                   re.S)
VIEW = re.compile(r'<script type="application/vnd.jupyter.widget-view\+json">(.*?)</script>',
                  re.S)


@dataclass
class Control:
    label: str          #: the visible label beside it
    kind: str           #: "slider", "dropdown" or "fixed" (a single value, shown as text)
    options: list[str]  #: the option labels, in order
    start: int          #: the index shown when the page opens


@dataclass
class StoredExplorer:
    controls: list[Control]
    _state: dict[str, Any]
    _frames: Any
    _texts: Any

    def _leaf(self, top: Any, indices: tuple[int, ...]) -> dict[str, Any]:
        node = top
        for i in indices:
            node = self._state[node["state"]["children"][i][len("IPY_MODEL_"):]]
        return node

    def frame(self, indices: tuple[int, ...]) -> str:
        """SHA-256 of the PNG stored for these control indices."""
        value = self._leaf(self._frames, indices)["state"]["value"]
        data = re.search(r'src="data:image/png;base64,([^"]+)"', value)[1]
        return hashlib.sha256(base64.b64decode(data)).hexdigest()

    def alt(self, indices: tuple[int, ...]) -> str:
        value = self._leaf(self._frames, indices)["state"]["value"]
        return html.unescape(re.search(r'alt="([^"]*)"', value)[1])

    def text(self, indices: tuple[int, ...]) -> str:
        value = self._leaf(self._texts, indices)["state"]["value"]
        return html.unescape(re.sub(r"<[^>]+>", "", value))


@pytest.fixture(scope="session")
def stored_explorers():
    """``stored_explorers(page_html) -> list[StoredExplorer]`` (see :func:`read_explorers`)."""
    return read_explorers


def read_explorers(page_html: str) -> list[StoredExplorer]:
    """The static explorers of a page, read from its embedded widget state."""
    found = STATE.search(page_html)
    if not found:
        return []
    state = json.loads(found.group(1))["state"]

    def model(ref: str) -> dict[str, Any]:
        return state[ref[len("IPY_MODEL_"):]]

    out = []
    for view in VIEW.findall(page_html):
        box = state[json.loads(view)["model_id"]]
        children = box["state"].get("children", [])
        if box["model_name"] != "VBoxModel" or len(children) != 4:
            continue
        frames, texts = model(children[1]), model(children[2])
        if frames["model_name"] != "StackModel" or texts["model_name"] != "StackModel":
            continue
        controls = []
        for row in model(children[0])["state"]["children"]:
            label, ctrl = (model(c) for c in model(row)["state"]["children"])
            name = re.sub(r"<[^>]+>", "", label["state"]["value"])
            if ctrl["model_name"] == "HTMLModel":  # a single value, shown as text
                controls.append(Control(name, "fixed", [html.unescape(ctrl["state"]["value"])],
                                        0))
                continue
            kind = "slider" if ctrl["model_name"] == "SelectionSliderModel" else "dropdown"
            controls.append(Control(name, kind, list(ctrl["state"]["_options_labels"]),
                                    ctrl["state"]["index"]))
        out.append(StoredExplorer(controls, state, frames, texts))
    return out


def _open_page(browser, url: str, *, settle_ms: int = 1500):
    """Open ``url`` in a new context; return (page, problems), where problems collects
    console errors, uncaught exceptions, failed requests and HTTP errors."""
    ctx = browser.new_context()
    page = ctx.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text} {m.location}")
            if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"uncaught: {e}"))
    ctx.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    ctx.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}")
           if r.status >= 400 else None)
    page.goto(url, wait_until="networkidle")
    page.wait_for_timeout(settle_ms)
    return page, problems


@pytest.fixture(scope="session")
def open_page():
    """:func:`_open_page`: open a page and collect its problems (shared by the page tests)."""
    return _open_page


#: SHA-256 of the figure an explorer shows (the visible image in its box).
SHOWN_FRAME = """(box) => {
  const img = [...box.querySelectorAll('img')].find(i => i.offsetParent !== null);
  if (!img) return null;
  return fetch(img.src).then(r => r.arrayBuffer())
    .then(b => crypto.subtle.digest('SHA-256', b))
    .then(h => [...new Uint8Array(h)].map(x => x.toString(16).padStart(2, '0')).join(''));
}"""


@pytest.fixture(scope="session")
def shown_frame():
    """The SHA-256 of the frame an explorer's box shows now (shared by the explorer tests)."""
    return lambda box: box.evaluate(SHOWN_FRAME)
