"""The package's shape: sizes, names, one method list, keyword-only options, docstrings.

These are the rules of the contributor's guide (``chapters/contributing.md``), checked:

* no package module over 600 lines, no function over 80 lines (docstring included) except
  compiled kernels, which carry a ``# long:`` comment saying why;
* no module shadowed by a function, no ``importlib`` detours to reach one;
* the method names are written down once (``microagg/_methods.py``);
* every public function takes its options (parameters with defaults, after the data and
  ``k``) as keyword-only;
* every public docstring names its chapter by label on a ``Book:`` line;
* ``ruff`` finds nothing (the same check as ``make lint``).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import microagg
from microagg._methods import METHODS

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "microagg"
SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
#: Public namespaces: the top level and the public subpackages / modules.
PUBLIC = ["microagg", "microagg.datasets", "microagg.published", "microagg.reproductions",
          "microagg.views", "microagg.teaching", "microagg.reference", "microagg.dask"]
MAX_MODULE, MAX_FUNCTION = 600, 80


def _public_objects():
    for modname in PUBLIC:
        module = importlib.import_module(modname)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                yield f"{modname}.{name}", obj


OBJECTS = dict(_public_objects())


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_size(path):
    n = len(path.read_text().splitlines())
    assert n <= MAX_MODULE, f"{path.name} has {n} lines (at most {MAX_MODULE}): split it by idea"


def _is_compiled(node: ast.FunctionDef) -> bool:
    return any("njit" in ast.unparse(d) for d in node.decorator_list)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_function_size(path):
    text = path.read_text()
    lines = text.splitlines()
    long = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        size = node.end_lineno - first + 1
        if size <= MAX_FUNCTION:
            continue
        reason = any("# long:" in lines[i] for i in range(first - 2, node.lineno))
        if not (_is_compiled(node) and reason):
            long.append(f"{node.name} ({size} lines)")
    assert not long, (f"{path.name}: functions over {MAX_FUNCTION} lines: {long} (only compiled "
                      "kernels may be longer, with a '# long: <reason>' comment)")


def test_functions_do_not_shadow_modules():
    assert inspect.isfunction(microagg.mdav) and inspect.isfunction(microagg.gomm)
    modules = {p.stem for p in SOURCES} | {p.name for p in PACKAGE.iterdir() if p.is_dir()}
    clash = [n for n in microagg.__all__ if n in modules]
    assert not clash, f"public names equal to module names: {clash}"


def test_no_importlib_detours():
    files = [*SOURCES, *ROOT.glob("chapters/**/*.md"), *ROOT.glob("tests/**/*.py"),
             *ROOT.glob("tools/*.py")]
    needle = "import_module(" + '"microagg.'
    hits = [str(p.relative_to(ROOT)) for p in files if needle in p.read_text()]
    assert not hits, f"importlib used to reach a microagg module: {hits}"


def _string_sets(text: str):
    tree = ast.parse(text)
    exports = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id in ("__all__", "_PUBLIC")
                       for t in n.targets)}
    for node in ast.walk(tree):
        # ``__all__`` (and ``microagg._PUBLIC``, each public name's module) names
        # functions: it is not a method list
        if id(node) in exports:
            continue
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            yield {e.value for e in node.elts if isinstance(e, ast.Constant)}
        elif isinstance(node, ast.Dict):
            yield {e.value for e in node.keys if isinstance(e, ast.Constant)}


def test_method_names_are_listed_once():
    names = set(METHODS)
    files = [p for p in [*SOURCES, *ROOT.glob("tests/**/*.py"), *ROOT.glob("tools/*.py")]
             if p.name != "_methods.py"]
    offenders = []
    for path in files:
        for found in _string_sets(path.read_text()):
            if len(found & names) >= 3:
                offenders.append(f"{path.relative_to(ROOT)}: {sorted(found & names)}")
    for path in ROOT.glob("chapters/**/*.md"):
        for line in path.read_text().splitlines():
            quoted = set(re.findall(r"[\"'](\w+)[\"']", line))
            if len(quoted & names) >= 3:
                offenders.append(f"{path.relative_to(ROOT)}: {line.strip()[:80]}")
    assert not offenders, "a list of method names outside microagg/_methods.py:\n" + "\n".join(
        offenders)


def test_cli_and_microaggregate_read_the_registry():
    from microagg._cli import _parser

    sub = next(a for a in _parser()._actions if a.dest == "command")
    protect = sub.choices["protect"]
    method = next(a for a in protect._actions if a.dest == "method")
    assert list(method.choices) == list(METHODS)


#: Required parameters may be positional; options may not (except ``k``, ``p`` and a
#: published table number, which say *which* data, and the first parameter).
POSITIONAL_OPTIONS_ALLOWED = {"k", "p", "table"}


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_options_are_keyword_only(name):
    obj = OBJECTS[name]
    if inspect.isclass(obj):
        pytest.skip("classes hold results; their fields are not options")
    params = list(inspect.signature(obj).parameters.values())
    bad = [p.name for i, p in enumerate(params)
           if p.kind == p.POSITIONAL_OR_KEYWORD and p.default is not p.empty
           and i > 0 and p.name not in POSITIONAL_OPTIONS_ALLOWED]
    assert not bad, f"{name}: options {bad} should be keyword-only (after a '*')"


BOOK_LINE = re.compile(r"^\s*Book: :ref:`(chap|page|sec)-[a-z0-9-]+`", re.MULTILINE)


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_docstring_names_its_chapter(name):
    doc = OBJECTS[name].__doc__ or ""
    assert doc.strip(), f"{name} has no docstring"
    assert BOOK_LINE.search(doc), f"{name}: docstring lacks a 'Book: :ref:`chap-...`' line"


def test_py_typed_is_shipped():
    assert (PACKAGE / "py.typed").exists()


def test_ruff_clean():
    """``make lint`` finds nothing: the package, the tests, the tools, the chapters' conftest."""
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (it comes with the [test] extra)")
    done = subprocess.run([ruff, "check", "--no-cache", "microagg", "tests", "tools",
                           "chapters/conftest.py"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]
