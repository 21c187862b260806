"""What the ``--against REV`` benchmarks share: an older commit checked out beside this one,
and a script run with either checkout's ``microagg``.

``bench_gomm.py``, ``bench_ga.py`` and ``bench_audit.py`` import it (they run as scripts from
this folder).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: This checkout (the repository the benchmarks belong to).
HERE = Path(__file__).resolve().parents[2]


@contextmanager
def old_checkout(rev: str) -> Iterator[Path]:
    """``rev`` in a temporary git worktree of this repository, removed afterwards.

    The worktree's parent folder is temporary too: callers may write their inputs there.
    """
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "-C", str(HERE), "worktree", "add", "--detach", str(base), rev],
                       check=True, capture_output=True)
        try:
            yield base
        finally:
            subprocess.run(["git", "-C", str(HERE), "worktree", "remove", "--force", str(base)],
                           check=True, capture_output=True)


def run_with(root: Path, script: str, *args: Any) -> Any:
    """Run the Python source ``script`` with the ``microagg`` under ``root`` and the given
    arguments; return its last line of output, read as JSON."""
    env = {"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", script, *map(str, args)], env=env, cwd=root,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def option(name: str, default: str) -> str:
    """The value given after ``name`` on the script's command line, else ``default``."""
    if name in sys.argv:
        at = sys.argv.index(name) + 1
        if at < len(sys.argv) and not sys.argv[at].startswith("--"):
            return sys.argv[at]
    return default
