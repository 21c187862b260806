"""The ``microagg`` command's first moments: signals handled before any heavy import.

``microagg`` (the console script) and ``python -m microagg`` call :func:`main`, which
installs handlers for :data:`SIGNALS` and only then imports the command line
(:mod:`microagg._cli`, with numpy, pandas, pyarrow, numba: about a second). A signal
in that second ends the process at once with one line on standard error and exit
status 128 plus its number (130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP): nothing
has been written yet, so there is nothing to clean up, and no traceback. Once a
command runs, :func:`microagg._cli.main` takes over the signals (except one ignored
when the process started, e.g. SIGHUP under ``nohup``, which stays ignored) (a clean shutdown that
removes the run's temporary files) and gives them back after. This module imports
only the standard library; ``import microagg`` imports nothing heavy (its names load
lazily), so the handlers are in place a few milliseconds after Python starts.
"""

from __future__ import annotations

import os
import signal

__all__ = ["SIGNALS", "interrupted", "main"]

#: The signals a run handles as a clean shutdown (Ctrl-C, ``kill``, a closed terminal;
#: Ctrl-Break on Windows).
SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK")
                if hasattr(signal, name))


def interrupted(signum: int) -> str:
    """The one line an interrupted run prints."""
    return (f"microagg: interrupted ({signal.Signals(signum).name}): stopped, temporary "
            "files removed, no output file written")


def _stop_now(signum: int, frame: object) -> None:
    os.write(2, (interrupted(signum) + "\n").encode())
    os._exit(128 + signum)


def main() -> int:
    """Entry point of the ``microagg`` command: signals first, then the command line."""
    handled = [sig for sig in SIGNALS if signal.getsignal(sig) != signal.SIG_IGN]
    for sig in handled:  # a signal ignored from the start (nohup, a background job of a
        signal.signal(sig, _stop_now)  # script) stays ignored, as POSIX programs do
    import sys
    import warnings

    with warnings.catch_warnings(record=True) as early:  # (e.g. a switch's odd value)
        from ._cli import main as run
        from ._cli import one_line_warning
    for w in early:  # one line each, as the run's warnings are (--debug: Python's form)
        show = warnings.showwarning if "--debug" in sys.argv[1:] else one_line_warning
        show(w.message, w.category, w.filename, w.lineno)
    code = run()
    for sig in handled:  # the run is over (its output published): a late signal ends
        signal.signal(sig, signal.SIG_DFL)  # the exit silently, as by default
    return code
