"""numba's on-disk cache of the package's kernels follows edits of the kernels they call.

numba keys a cached function on its own bytecode and its own file's timestamp; a kernel
that calls a kernel of another file compiles it in, so after an edit of the callee it used
to load the old machine code (a stale answer). ``microagg._jit.njit`` keys the cache also
on the package's kernel sources. The tests build a two-file package in a temporary folder
and run it in fresh processes, as a contributor's test runs would.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numba")

CALLEE = """
from microagg._jit import njit


@njit
def step(x):
    return x + {inc}
"""
CALLER = """
from microagg._jit import njit

from .callee import step


@njit
def twice(x):
    return 2 * step(x)
"""
RUN = ("import kpkg.caller as c; print(c.twice(1), len(c.twice.stats.cache_hits), "
       "len(c.twice.stats.cache_misses))")


def _package(root, inc):
    pkg = root / "kpkg"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "callee.py").write_text(textwrap.dedent(CALLEE.format(inc=inc)))
    (pkg / "caller.py").write_text(textwrap.dedent(CALLER))
    return pkg


def _run(root):
    """``twice(1)`` in a fresh process, and whether it came from the cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["PYTHONPATH"] = str(root)
    out = subprocess.run([sys.executable, "-c", RUN], env=env, cwd=root, capture_output=True,
                         text=True, check=True, timeout=120).stdout.split()
    value, hits, misses = map(int, out)
    return value, hits > 0 and misses == 0


def test_an_edited_callee_in_another_file_is_compiled_in_again(tmp_path):
    _package(tmp_path, 1)
    assert _run(tmp_path) == (4, False)  # compiled and cached
    assert _run(tmp_path) == (4, True)  # loaded from the cache
    pkg = _package(tmp_path, 10)  # the callee changes; the caller's file does not
    stamp = (pkg / "callee.py").stat().st_mtime + 5
    os.utime(pkg / "callee.py", (stamp, stamp))
    assert _run(tmp_path) == (22, False)  # before: (4, True), the old callee's code
    assert _run(tmp_path) == (22, True)


def test_an_edit_outside_the_kernel_files_keeps_the_cache(tmp_path):
    pkg = _package(tmp_path, 1)
    assert _run(tmp_path) == (4, False)
    (pkg / "notes.py").write_text("TEXT = 'no kernels here'\n")
    assert _run(tmp_path) == (4, True)
