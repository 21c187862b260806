"""The chapters in a real JupyterLab (`make lab`), driven by the system Chromium.

A reader opens a chapter, runs it and saves it (and JupyterLab autosaves while it runs); a
page that is not a notebook opens as Markdown and is saved too. Afterwards the files are
byte-identical and ``git status`` shows nothing in ``chapters/``. In the open chapter, a
reference to another chapter reads "Chapter 2" and a citation "Domingo-Ferrer, 2006" (not
"Chapter %s" or a bibliography key), and a solution's code is folded. The server runs on the
repository's own ``chapters/`` (as ``make lab`` does), with the settings ``make lab`` writes
(``tools/lab_settings.py``), in quick mode (``MICROAGG_QUICK=1``); a failing test puts every
file of ``chapters/`` back as it was.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("playwright")
pytest.importorskip("jupyterlab")
pytest.importorskip("jupytext")
from playwright.sync_api import sync_playwright  # noqa: E402

# writes in chapters/ while it runs: `make test` runs it after the book build
pytestmark = pytest.mark.after_build

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
sys.path.insert(0, str(ROOT / "tools"))
import lab_settings  # noqa: E402

CHAPTER = "foundations.md"  # short in quick mode; citations, chapter references, solutions
PAGE = "students.md"  # not a notebook; references to other pages
AUTOSAVE_SECONDS = 5  # so that autosave happens during Run All


def _chromium() -> str:
    path = os.environ.get("MICROAGG_CHROMIUM") or shutil.which("chromium")
    if not path:
        pytest.skip("no chromium on PATH (Debian: `apt-get install -y chromium`)")
    return path


def _snapshot() -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in CHAPTERS.rglob("*") if p.is_file()}


def _git_status() -> str:
    done = subprocess.run(["git", "status", "--porcelain", "--", "chapters"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return done.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A running ``jupyter lab`` on ``chapters/`` and a Chromium page; restores the files."""
    browser_path = _chromium()
    if shutil.which("git") is None or _git_status():
        pytest.skip("needs git and a clean chapters/ (commit or stash your edits first)")
    before = _snapshot()
    lab_settings.main(Path(sys.prefix))  # what `make lab` does
    home = tmp_path_factory.mktemp("lab")
    user = home / "settings" / "@jupyterlab"
    (user / "docmanager-extension").mkdir(parents=True)
    (user / "docmanager-extension" / "plugin.jupyterlab-settings").write_text(
        json.dumps({"autosaveInterval": AUTOSAVE_SECONDS}))
    (user / "apputils-extension").mkdir(parents=True)
    (user / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    env = dict(os.environ, MICROAGG_QUICK="1",
               JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), JUPYTER_CONFIG_DIR=str(home / "config"))
    port, token = _free_port(), secrets.token_hex(16)
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
           f"--port={port}", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={CHAPTERS}", "--LabApp.expose_app_in_browser=True",
           "--allow-root"]  # fmt: skip
    log = open(home / "server.log", "w")
    server = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5)
                break
            except OSError:
                if server.poll() is not None:
                    pytest.fail(f"jupyter lab exited:\n{(home / 'server.log').read_text()}")
                time.sleep(0.5)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=browser_path, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            yield {"page": page, "url": lambda name: f"{base}/lab/tree/{name}?token={token}"}
            browser.close()
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
        for path, data in before.items():  # a failed test must not leave a file changed
            if path.read_bytes() != data:
                path.write_bytes(data)


def _open(lab, name: str):
    page = lab["page"]
    page.goto(lab["url"](name))
    page.wait_for_selector(".jp-Document:not(.lm-mod-hidden)", timeout=120_000)
    # The lab restores the last workspace first: the page closed by the previous test can be
    # the current widget for a moment (CI once checked genetic.md's cells as ivmdav.md's).
    page.wait_for_function("""name => {
        const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
        return Boolean(w && w.context && w.context.path === name);
    }""", arg=name, timeout=60_000)
    return page


def _dirty(page) -> bool:
    return page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.context.model.dirty")


def _command(page, command: str):
    return page.evaluate("c => window.jupyterapp.commands.execute(c)", command)


def test_chapter_runs_saves_and_stays_byte_identical(lab):
    path = CHAPTERS / CHAPTER
    original = path.read_bytes()
    page = _open(lab, CHAPTER)
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=60_000)
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.ready")
    assert page.locator(".jp-Dialog").count() == 0, "a dialog opened with the chapter"
    page.wait_for_timeout(1000)  # the kernel has reported its language_info by now
    assert not _dirty(page), f"{CHAPTER} shows as modified as soon as it opens"
    # A solution's code folds with its prose: its input is collapsed, the others are open.
    hidden = page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.widgets
        .filter(cell => cell.model.type === 'code').map(cell => cell.inputHidden)""")
    assert 0 < sum(hidden) < len(hidden)

    _check_references_read_as_text(page)

    started = time.monotonic()
    assert _command(page, "notebook:run-all-cells") is True, "a cell failed under Run All"
    left = AUTOSAVE_SECONDS + 1 - (time.monotonic() - started)
    if left > 0:  # a quick Run All: give autosave its chance with the outputs shown
        page.wait_for_timeout(1000 * left)
    assert page.locator(".jp-OutputArea-output[data-mime-type*='error']").count() == 0
    _command(page, "docmanager:save")
    page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    _command(page, "application:close")
    assert path.read_bytes() == original, f"{CHAPTER} changed on disk"
    assert _git_status() == ""


def _check_references_read_as_text(page) -> None:
    """A chapter reference reads "Chapter 2" and a citation "Domingo-Ferrer, 2006", not
    "Chapter %s" or a bibliography key (the first markdown cell with each is checked)."""
    shown = page.evaluate("""async () => {
        const nb = window.jupyterapp.shell.currentWidget.content;
        const out = {};
        for (const [kind, role] of [["numref", "{numref}"], ["cite", "{cite}"]]) {
            const i = nb.widgets.findIndex(c => c.model.type === "markdown"
                && c.model.sharedModel.getSource().includes(role));
            await nb.scrollToItem(i);
            const cell = nb.widgets[i];
            const selector = kind === "numref" ? "a.hover-link"
                : "span[title='Citation Not Found'], span[data-microagg-cite]";
            for (let t = 0; t < 60; t++) {
                const nodes = [...cell.node.querySelectorAll(selector)];
                const raw = n => /%s|[a-z]+[0-9]{4}[a-z]+/.test(n.textContent);
                if (nodes.length && !nodes.some(raw)) {
                    break;
                }
                await new Promise(r => setTimeout(r, 500));
            }
            out[kind] = [...cell.node.querySelectorAll(selector)].map(n => n.textContent);
        }
        return out;
    }""")
    assert shown["numref"] and all("%s" not in t for t in shown["numref"]), shown
    assert any(re.fullmatch(r"Chapters? \d+", t) for t in shown["numref"]), shown
    cites = " ".join(shown["cite"])
    assert shown["cite"] and not re.search(r"[a-z]+\d{4}[a-z]+", cites), shown
    assert re.search(r"[A-Z][\w-]+( and [A-Z][\w-]+| et al\.)?, \d{4}", cites), shown
    assert _unresolved(page) == []


def _unresolved(page) -> list:
    """The references of every markdown cell still shown raw: a label or "Chapter %s" (a
    notebook runner's review: references to pages, sections, figures and equations showed
    their labels, and a cell whose directive adds a link of its own kept "Chapter %s")."""
    return page.evaluate("""async () => {
        const nb = window.jupyterapp.shell.currentWidget.content;
        const left = [];
        for (let i = 0; i < nb.widgets.length; i++) {
            const cell = nb.widgets[i];
            if (cell.model.type !== "markdown"
                || !/\\{(numref|ref|eq)\\}`/.test(cell.model.sharedModel.getSource())) continue;
            await nb.scrollToItem(i);
            for (let t = 0; t < 40 && !(cell.node.querySelector(".myst") || {}).textContent;
                 t++) {
                await new Promise(r => setTimeout(r, 250));  // (rendered once in view)
            }
            let bad = [];
            // (up to 30 s: a reference to a label far below, such as an exercise's, resolves
            // only once the whole notebook is parsed, which a loaded machine can take 10 s for)
            for (let t = 0; t < 60; t++) {
                bad = [...cell.node.querySelectorAll(
                    "a.hover-link, span[title='Cross Reference Not Found']")]
                    .map(n => n.textContent).filter(x => /%s/.test(x)).concat(
                    [...cell.node.querySelectorAll("span[title='Cross Reference Not Found']")]
                    .map(n => "unresolved: " + n.textContent));
                if (!bad.length) break;
                await new Promise(r => setTimeout(r, 500));
            }
            if (bad.length) left.push([i, bad]);
        }
        return left;
    }""")


@pytest.mark.parametrize("chapter", ["mdav.md", "genetic.md", "ivmdav.md"])
def test_references_to_pages_figures_and_equations_read_as_text(lab, chapter):
    page = _open(lab, chapter)
    page.wait_for_function("() => (window.jupyterapp.shell.currentWidget.content.widgets || [])"
                           ".length > 0", timeout=60_000)
    assert _unresolved(page) == []
    _command(page, "application:close-all")


def test_text_page_opens_as_markdown_and_saves_unchanged(lab):
    path = CHAPTERS / PAGE
    original = path.read_bytes()
    page = _open(lab, PAGE)
    page.wait_for_selector(".jp-FileEditor", timeout=60_000)
    kind = page.evaluate("() => window.jupyterapp.shell.currentWidget.node.className")
    assert "jp-FileEditor" in page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.node.className"), kind
    assert "jp-NotebookPanel" not in kind, f"{PAGE} opened as a notebook"
    assert page.locator(".jp-Dialog").count() == 0, f"a dialog (kernel?) opened with {PAGE}"
    assert not _dirty(page)
    _command(page, "docmanager:save")
    _command(page, "application:close")
    time.sleep(1)
    assert path.read_bytes() == original, f"{PAGE} changed on disk"
    assert _git_status() == ""
