"""Running the command line in-process, for the CLI tests."""

from __future__ import annotations

import signal

import pytest

from microagg._cli import main
from microagg._entry import SIGNALS


def run(argv: list, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``microagg argv`` (argparse exits included)."""
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return rc, out, err


def one_line_error(rc: int, err: str) -> str:
    """The one line a user error prints (exit status 2, no traceback)."""
    assert rc == 2, f"a user error must exit with status 2, got {rc}: {err}"
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got {lines}"
    assert "Traceback" not in err
    return lines[0]


def as_from_a_terminal() -> None:
    """``preexec_fn`` of a ``microagg`` subprocess: every one of its signals at the default,
    as a command typed at a terminal starts. (A test run started in the background by a
    script inherits SIGINT ignored, and microagg leaves an ignored signal ignored.)"""
    for sig in SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
