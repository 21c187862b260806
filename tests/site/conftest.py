"""Fixtures for the check of the built book (``tests/site/``).

The pages are rendered by headless Chromium (``--dump-dom``): this runs MathJax and the
widget manager as a reader's browser would, with no network (all assets are vendored).
Where no Chromium binary is found the browser tests are skipped with a message.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

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
