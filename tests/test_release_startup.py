"""Signals in the first moments of a run (issue "Release safety": interrupted runs).

A signal while ``microagg`` is still importing numpy, pandas, pyarrow and numba ends it
as one at any later moment does: exit 130 (SIGINT), 143 (SIGTERM) or 129 (SIGHUP), one
line on standard error, no traceback, nothing written. The command's entry point
(``microagg._entry``) installs its handlers before the heavy imports, which ``import
microagg`` does not do (its names load lazily).

The moments are counted from when the handlers are in place, which the tests read from
``/proc/PID/status`` (the signals the process catches); that is some 2 ms of ours after
Python's own start-up (10-30 ms, mostly ``site`` and the environment's ``.pth`` files),
and about a second before the imports end. Before Python has installed any handler a
signal kills the process by that signal, with nothing printed (the test "at once"). In
between, during Python's ``site`` start-up, a Ctrl-C is Python's own KeyboardInterrupt,
before any code of the package runs: that window is not ours to close, and no test
aims into it.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import as_from_a_terminal

import microagg
from microagg._entry import SIGNALS, interrupted

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(),
                                reason="reads the caught signals from /proc (Linux)")

#: Seconds after the handlers are in place: through the imports (about a second on a quiet
#: machine) and after them; None: at once, as the process starts.
DELAYS = [None, 0.0, 0.01, 0.03, 0.1, 0.2, 0.4, 0.7, 1.0, 1.5]
CASES = [(signal.SIGINT, 130), (signal.SIGTERM, 143)]
SCRIPT = Path(sys.executable).with_name("microagg")


def _caught(pid: int, sig: signal.Signals) -> bool:
    """Whether process ``pid`` catches ``sig`` (read from ``/proc/PID/status``)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return bool(int(re.search(r"SigCgt:\s*([0-9a-f]+)", status).group(1), 16) >> (int(sig) - 1) & 1)


def _handled(pid: int) -> bool:
    """True once process ``pid`` catches every one of :data:`SIGNALS` (Python alone catches
    only SIGINT): the entry point's handlers are in place."""
    return all(_caught(pid, sig) for sig in SIGNALS)


def _run_until(how: signal.Signals, delay: float | None, folder: Path, via_module: bool
               ) -> tuple[int, str]:
    """Start ``microagg protect - -k 3 -o folder/out.csv`` reading a standard input that
    stays open (so the run waits for it after starting, however quick the machine), send
    ``how`` ``delay`` seconds after its handlers are in place; the exit code and standard
    error."""
    command = ([sys.executable, "-m", "microagg"] if via_module or not SCRIPT.exists()
               else [str(SCRIPT)])
    proc = subprocess.Popen([*command, "protect", "-", "-k", "3", "-o", str(folder / "out.csv")],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, preexec_fn=as_from_a_terminal)
    try:
        if delay is not None:
            start = time.monotonic()
            while not _handled(proc.pid):
                assert time.monotonic() - start < 30, "the handlers were never installed"
                time.sleep(0.001)
            time.sleep(delay)
        proc.send_signal(how)
        rc = proc.wait(timeout=60)
    finally:
        proc.kill()
        proc.stdin.close()
        err = proc.stderr.read().decode()
        proc.stderr.close()
    return rc, err


@pytest.mark.parametrize("delay", DELAYS)
@pytest.mark.parametrize(("how", "code"), CASES, ids=lambda v: getattr(v, "name", str(v)))
def test_a_signal_while_starting_ends_the_run_cleanly(tmp_path, how, code, delay):
    """The console script (``python -m microagg`` for every other delay) gets the signal:
    exit 128 + the signal's number with the one line, or (at once, before Python installs
    any handler) death by the signal, silently; never a traceback; no file written."""
    rc, text = _run_until(how, delay, tmp_path, DELAYS.index(delay) % 2 == 1)
    assert "Traceback" not in text, text
    if delay is None and rc == -how:  # before Python started: killed by the signal
        assert text == "", text
    else:
        assert rc == code, (rc, text)
        assert text.splitlines() == [interrupted(how)]
    assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())


def test_a_closed_terminal(tmp_path):
    """SIGHUP during the imports: exit 129 and the one line."""
    rc, text = _run_until(signal.SIGHUP, 0.3, tmp_path, False)
    assert rc == 129 and text.splitlines() == [interrupted(signal.SIGHUP)], (rc, text)
    assert list(tmp_path.iterdir()) == []


def test_a_signal_ignored_from_the_start_stays_ignored(tmp_path):
    """Under ``nohup`` (SIGHUP ignored when the process starts) a closed terminal does not
    stop the run: the handlers leave an ignored signal alone, and the output is written."""
    def nohup() -> None:
        as_from_a_terminal()
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    out = tmp_path / "out.csv"
    proc = subprocess.Popen([str(SCRIPT) if SCRIPT.exists() else sys.executable, *(
        [] if SCRIPT.exists() else ["-m", "microagg"]), "protect", "-", "-k", "3", "-o",
        str(out)], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        preexec_fn=nohup)
    try:
        start = time.monotonic()
        while not all(_caught(proc.pid, sig) for sig in (signal.SIGINT, signal.SIGTERM)):
            assert time.monotonic() - start < 30, "the handlers were never installed"
            time.sleep(0.001)
        assert not _caught(proc.pid, signal.SIGHUP)
        proc.send_signal(signal.SIGHUP)
        time.sleep(0.2)
        _, err = proc.communicate(b"a,b\n1,2\n2,3\n3,4\n10,11\n11,12\n12,13\n", timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0, err.decode()
    assert out.read_text().count("\n") == 7


def test_the_handlers_come_before_the_heavy_imports():
    """``import microagg`` (and the command's entry point) import no numpy, pandas, numba,
    pyarrow or scipy; when the command line (``microagg._cli``) starts to import, the entry
    point's handlers are in place and still no numpy or pandas is loaded; the public names
    and subpackages load on first use."""
    code = """if True:
        import signal, sys
        import microagg, microagg._entry as entry
        heavy = [m for m in ("numpy", "pandas", "numba", "pyarrow", "scipy")
                 if m in sys.modules]
        assert heavy == [], heavy
        seen = []
        class Probe:
            def find_spec(self, name, path=None, target=None):
                if name == "microagg._cli":
                    seen.append(([signal.getsignal(s) for s in entry.SIGNALS],
                                 [m for m in ("numpy", "pandas") if m in sys.modules]))
        sys.meta_path.insert(0, Probe())
        sys.argv = ["microagg", "--version"]
        try:
            entry.main()
        except SystemExit:
            pass
        handlers, heavy = seen[0]
        assert all(h is entry._stop_now for h in handlers), handlers
        assert heavy == [], heavy
        from microagg import mdav
        assert mdav.__module__ == "microagg._mdav.dispatch"
        assert microagg.datasets.__name__ == "microagg.datasets"
        assert set(microagg.__all__) <= set(dir(microagg))
    """
    # as from a terminal: a signal ignored at start (nohup's SIGHUP) would stay ignored
    subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL,
                   preexec_fn=as_from_a_terminal)


def test_every_public_name_loads():
    """Each name of ``__all__`` loads from its module, and unknown names are errors."""
    for name in microagg.__all__:
        assert getattr(microagg, name).__name__ == name
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        microagg.no_such_name  # noqa: B018
