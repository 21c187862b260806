"""Type checkers see the real API through the lazy ``__init__`` (its stub ``__init__.pyi``).

``microagg/__init__.py`` loads its names on first use (PEP 562), so on its own a type checker
sees each of them as ``Any``. The stub ``microagg/__init__.pyi`` lists the public names and
subpackages once: type checkers and IDEs read it, and ``__init__.py`` reads it at run time.
These tests check a user's script with mypy (the real signatures, a wrong call reported), the
package itself with mypy (no error under the project's configuration), the stub's form (each
line re-exports its name) and that the wheel ships the stub.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import microagg

PACKAGE = Path(microagg.__file__).resolve().parent
STUB = PACKAGE / "__init__.pyi"
ROOT = Path(__file__).resolve().parents[1]
#: The public subpackages a type checker knows after ``import microagg`` (``microagg.dask``
#: needs an extra and is imported explicitly).
SUBPACKAGES = {"datasets", "published", "reproductions", "views", "teaching", "reference"}

needs_mypy = pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                                reason="mypy is not installed (it comes with the test extra: "
                                       "pip install -e '.[test]')")


def _stub_imports() -> list[ast.ImportFrom]:
    return [n for n in ast.parse(STUB.read_text()).body if isinstance(n, ast.ImportFrom)]


def _mypy(script: str, tmp_path: Path) -> list[tuple[int, str, str]]:
    """Check ``script`` as a user's file with mypy (no config file, a fresh cache, microagg's
    own modules followed silently so that only the script's errors count); the (line, kind,
    message) of each line of the report."""
    path = tmp_path / "user_script.py"
    path.write_text(script)
    env = dict(os.environ)
    # An editable install is an import hook mypy cannot follow: point it at the source tree
    # (a regular install is found in site-packages, which must not be on MYPYPATH).
    if PACKAGE.parent != Path(sysconfig.get_paths()["purelib"]).resolve():
        env["MYPYPATH"] = str(PACKAGE.parent)
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file=", "--cache-dir", str(tmp_path / "cache"),
         "--follow-imports=silent", "--no-error-summary", "--hide-error-context",
         "--show-error-codes", "--no-color-output", "--no-pretty", path.name],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr  # 2: mypy itself failed
    report = re.findall(r"^user_script\.py:(\d+): (note|error): (.*)$", proc.stdout, re.M)
    assert len(report) == len(proc.stdout.splitlines()), proc.stdout  # nothing from elsewhere
    return [(int(line), kind, message) for line, kind, message in report]


@needs_mypy
def test_a_users_script_sees_the_real_signatures(tmp_path):
    """mypy on ``import microagg``: ``microagg.mdav`` and ``microagg.datasets.load`` have their
    signatures (not ``Any``), a wrong call is reported, and every public name and subpackage
    is known (no "has no attribute") and typed (none is ``Any``)."""
    lines = ["from typing import reveal_type", "", "import microagg", "",
             "reveal_type(microagg.mdav)",
             "reveal_type(microagg.datasets.load)",
             'microagg.mdav("x", k="3")',
             *(f"reveal_type(microagg.{name})" for name in microagg.__all__),
             *(f"microagg.{name}.__name__" for name in sorted(SUBPACKAGES))]
    report = _mypy("\n".join(lines) + "\n", tmp_path)
    # mypy 1 writes ``builtins.int``, mypy 2 ``int``
    revealed = {lines[n - 1]: re.fullmatch(r'Revealed type is "(.*)"', m).group(1)
                .replace("builtins.", "") for n, kind, m in report if kind == "note"}
    errors = [(lines[n - 1], m) for n, kind, m in report if kind == "error"]

    assert revealed["reveal_type(microagg.mdav)"].startswith(
        "def (X: Any, k: int, *, engine: str =) -> numpy.ndarray"), revealed
    assert revealed["reveal_type(microagg.datasets.load)"].startswith(
        "def (name: str, *, folder: "), revealed
    assert errors == [('microagg.mdav("x", k="3")', 'Argument "k" to "mdav" has incompatible '
                       'type "str"; expected "int"  [arg-type]')], errors
    untyped = {line: t for line, t in revealed.items() if t == "Any"}
    assert not untyped, untyped
    assert sum(kind == "note" for _, kind, _ in report) == 2 + len(microagg.__all__), report


@needs_mypy
def test_the_package_type_checks(tmp_path):
    """``mypy`` with the project's configuration (``[tool.mypy]`` in pyproject.toml: every
    module of the package, every function annotated) reports no error, and checks each
    module of ``microagg/`` (none left out). A fresh cache: the whole package is checked."""
    source = ROOT / "microagg"
    modules = {p.relative_to(source).with_suffix("") for p in source.rglob("*.py*")
               if p.suffix in (".py", ".pyi")}  # __init__.py and its stub are one module
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(tmp_path / "cache"), "--no-color-output", "--no-pretty"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == f"Success: no issues found in {len(modules)} source files", \
        proc.stdout + proc.stderr


def test_each_stub_line_reexports_its_name():
    """Each import of the stub is ``from .module import name as name`` (or ``from . import
    sub as sub``): a stub re-exports only what it imports in that form (PEP 484), so a name
    written otherwise would load at run time and be unknown to type checkers. The stub
    declares neither ``__all__`` (mypy would then hide every name it does not list) nor a
    ``__getattr__`` (every misspelt name would type as ``Any``)."""
    tree = ast.parse(STUB.read_text())
    for node in _stub_imports():
        assert node.level == 1, ast.unparse(node)
        assert all(a.asname == a.name for a in node.names), ast.unparse(node)
    declared = {t.id for n in tree.body if isinstance(n, ast.AnnAssign | ast.Assign)
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target])}
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert declared == {"__version__"} and not functions, (declared, functions)


def test_the_stub_lists_the_public_subpackages():
    subpackages = [a.name for n in _stub_imports() if n.module is None for a in n.names]
    assert set(subpackages) == SUBPACKAGES
    for name in subpackages:
        assert getattr(microagg, name).__name__ == f"microagg.{name}"
        assert name in dir(microagg)


def test_the_wheel_ships_the_stub(tmp_path):
    """Without ``__init__.pyi`` in the wheel, an installed ``microagg`` would neither type
    nor load its names."""
    pytest.importorskip("setuptools")
    src = tmp_path / "src"
    shutil.copytree(PACKAGE, src / "microagg",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (ROOT / name).exists():
            shutil.copy(ROOT / name, src)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "--no-build-isolation", "-q", "-w", str(tmp_path / "wheel"), str(src)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = (tmp_path / "wheel").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"microagg/__init__.pyi", "microagg/py.typed"} <= names
    # as installed from the wheel, the package reads its names from the stub beside it
    zipfile.ZipFile(wheel).extractall(tmp_path / "site")
    site = str(tmp_path / "site")
    code = (f"import microagg; assert microagg.__file__.startswith({site!r}), microagg.__file__; "
            f"print(microagg.__all__ == {microagg.__all__!r}, microagg.mdav.__name__)")
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": site})
    assert run.stdout.split() == ["True", "mdav"], run.stdout + run.stderr
