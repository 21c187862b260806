"""A downloaded chapter runs on a plain install of the package, outside the repository.

The reader's route: a fresh virtual environment holding only the microagg wheel (its own
dependencies, no book toolchain: no MyST-NB, no numba), ``nbclient`` and ``ipykernel``; the
exported ``.ipynb`` of a chapter, run in a folder outside the checkout; the reference data
fetched on first use from ``MICROAGG_DATA_URL``, here a local HTTP server started by the test
(no internet). The foundations and IV-MDAV chapters must execute without an error. The
environment is installed from the wheels ``make env`` keeps in ``.venv/wheelhouse``
(``pip install --no-index``), so the test itself needs no network. The chapters run through
``tests/kernel_runner.py``, whose kernel client waits for messages in 1 s slices, so that a
missed wake-up costs a second instead of the 900 s cell timeout.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Wheels of the plain install's dependencies, made by `make env` (no network in the test).
WHEELHOUSE = ROOT / ".venv" / "wheelhouse"
CHAPTERS = ("foundations", "ivmdav")
#: Executes the chapters in the fresh environment (nbclient, waits in 1 s slices).
RUNNER = Path(__file__).with_name("kernel_runner.py")

pytestmark = pytest.mark.data


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd[:4]))} ... failed:\n{done.stdout[-3000:]}\n"
                    f"{done.stderr[-3000:]}")
    return done


@pytest.fixture(scope="module")
def data_server(tmp_path_factory):
    """Serve copies of the reference files over HTTP on 127.0.0.1 (the test's own server)."""
    from microagg import datasets

    folder = tmp_path_factory.mktemp("served")
    for name in datasets.FILES:
        shutil.copy2(datasets.data_dir() / name, folder / name)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                            functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()  # (shutdown stops serving; this closes the listening socket)


def test_exported_chapters_run_on_a_plain_install(tmp_path, data_server):
    jupytext = pytest.importorskip("jupytext")
    if not WHEELHOUSE.is_dir():
        pytest.skip(f"no {WHEELHOUSE.relative_to(ROOT)}: `make env` downloads the wheels of a "
                    "plain install once, so that this test needs no network")
    sys.path.insert(0, str(ROOT / "tools"))
    from export_notebooks import install_cell

    # the wheel, built without the book extras from a copy of the package's sources (a build
    # in the checkout would leave setuptools' build/ folder behind)
    source = tmp_path / "source"
    shutil.copytree(ROOT / "microagg", source / "microagg",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    wheels = tmp_path / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
          "-w", str(wheels), str(source)])
    wheel = next(wheels.glob("microagg-*.whl"))
    # a fresh environment: the wheel (and its dependencies), nbclient, ipykernel
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", "--no-index", "--find-links",
          str(WHEELHOUSE), str(wheel), "nbclient", "ipykernel"])
    probe = _run([str(python), "-c", "import importlib.util as u; "
                  "print(u.find_spec('myst_nb') is None, u.find_spec('numba') is None)"])
    assert probe.stdout.split() == ["True", "True"], "the plain install has book extras"
    _run([str(python), "-m", "ipykernel", "install", "--user", "--name", "python3"],
         env={**os.environ, "HOME": str(tmp_path / "home")})
    # the chapters as a reader downloads them (first cell: install microagg if missing)
    work = tmp_path / "reader"
    work.mkdir()
    paths = []
    for name in CHAPTERS:
        nb = jupytext.read(ROOT / "chapters" / f"{name}.md")
        nb.metadata.pop("jupytext", None)
        nb.cells.insert(0, install_cell())
        target = work / f"{name}.ipynb"
        jupytext.write(nb, target, fmt="ipynb")
        paths.append(str(target))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MICROAGG_", "VIRTUAL_ENV", "PYTHON"))}
    env.update(HOME=str(tmp_path / "home"), MICROAGG_DATA_URL=data_server,
               XDG_CACHE_HOME=str(tmp_path / "cache"), PATH=f"{venv / 'bin'}:{env['PATH']}")
    done = _run([str(python), str(RUNNER), *paths], cwd=work, env=env, timeout=1800)
    print(done.stdout)  # the time of each chapter (shown with -s)
    late = int(done.stdout.rsplit(":", 1)[-1])
    if late:  # a missed reply would otherwise have waited out the cell timeout
        warnings.warn(f"{late} kernel message(s) were read only by the check at the end of a "
                      "1 s wait (missed wake-ups, see tests/kernel_runner.py)", stacklevel=1)
    assert done.stdout.count("ran ") == len(CHAPTERS), done.stdout
    fetched = list((tmp_path / "cache").rglob("*.rda"))
    assert fetched, "the chapters did not fetch the data through MICROAGG_DATA_URL"
