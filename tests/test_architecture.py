"""The package's shape: sizes, names, one method list, keyword-only options, docstrings.

These are the rules of the contributor's guide (``chapters/contributing.md``), checked:

* modules are cut by concept, not by size: the sizes of modules and functions are printed
  as a report at the end of a run that includes this file (``tests/conftest.py``), not
  capped; no function takes more than 8 positional parameters;
* a leading underscore means private to its module (or subpackage);
* every ``MICROAGG_*`` switch is listed in ``microagg/_env.py``;
* no module shadowed by a function, no ``importlib`` detours to reach one;
* the method names are written down once (``microagg/_methods.py``);
* every public function takes its options (parameters with defaults, after the data and
  ``k``) as keyword-only;
* every public docstring names its chapter by label on a ``Book:`` line;
* every public function's numpydoc ``Parameters`` section names each of its parameters;
* ``ruff`` finds nothing (the same check as ``make lint``).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
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
          "microagg.views", "microagg.teaching", "microagg.reference",
          # (optional: the dask extra)
          *(["microagg.dask"] if importlib.util.find_spec("distributed") else [])]


def _public_objects():
    for modname in PUBLIC:
        module = importlib.import_module(modname)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                yield f"{modname}.{name}", obj


OBJECTS = dict(_public_objects())


def test_functions_do_not_shadow_modules():
    assert inspect.isfunction(microagg.mdav) and inspect.isfunction(microagg.gomm)
    modules = {p.stem for p in SOURCES} | {p.name for p in PACKAGE.iterdir() if p.is_dir()}
    clash = [n for n in microagg.__all__ if n in modules]
    assert not clash, f"public names equal to module names: {clash}"


def test_no_function_is_named_like_a_module_of_the_package():
    """A private function named like a module (``_audit`` in ``_audit.py``, ``_protect`` in
    the command line beside ``_protect.py``) reads as that module in a traceback or an
    import line: no function anywhere in the package takes a module's name."""
    modules = {p.stem for p in SOURCES} - {"__init__", "__main__"}
    clash = []
    for path in SOURCES:
        tree = ast.parse(path.read_text())
        clash += [f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"
                  for node in ast.walk(tree)
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.name in modules]
    assert not clash, f"functions named like modules: {clash}"


#: What decides a column's role (the release contract): written in ``_release.py`` only.
ROLE_LOGIC = re.compile(r"\b(row_index|stored_index_rows|first_record_as_names|"
                        r"_blank_header)\(")


def test_the_release_contract_decides_roles_in_one_module():
    """Every path (API, command line, streamed, Dask, the audit) takes the columns' roles
    from ``microagg/_release.py``; a second copy of a rule there (the audit had its own
    row-index, stored-index and header checks) drifts from it."""
    found = [f"{path.relative_to(ROOT)}:{n}" for path in SOURCES
             if path.name not in ("_release.py", "_validate.py")
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if ROLE_LOGIC.search(line) and not line.lstrip().startswith(("#", ">>>"))]
    assert not found, f"role rules called outside microagg/_release.py: {found}"


def test_on_off_switches_are_read_by_one_function():
    """``MICROAGG_*`` on/off switches are read by :func:`microagg._env.flag` (1, true, yes,
    on / 0, false, no, off): a switch compared with ``"1"`` by hand ignored ``true``
    (``MICROAGG_QUICK=true`` ran the full settings)."""
    by_hand = [f"{path.relative_to(ROOT)}:{n}"
               for path in [*SOURCES, *ROOT.glob("tests/*.py"), *ROOT.glob("tools/*.py")]
               for n, line in enumerate(path.read_text().splitlines(), 1)
               if re.search(r"environ(\.get\([^)]*\)|\[[^]]*\])\s*[=!]=\s*\"[01]\"", line)
               and "NUMBA_DISABLE_JIT" not in line]  # (numba's own switch, read as numba does)
    assert not by_hand, f"switches compared by hand (use microagg._env.flag): {by_hand}"


def test_no_importlib_detours():
    files = [*SOURCES, *ROOT.glob("chapters/**/*.md"), *ROOT.glob("tests/**/*.py"),
             *ROOT.glob("tools/*.py")]
    needle = "import_module(" + '"microagg.'
    hits = [str(p.relative_to(ROOT)) for p in files if needle in p.read_text()]
    assert not hits, f"importlib used to reach a microagg module: {hits}"


def _string_sets(text: str):
    tree = ast.parse(text)
    exports = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets)}
    for node in ast.walk(tree):
        # ``__all__`` names functions: it is not a method list
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
    # before the numpydoc sections: after one, napoleon reads it as part of that section
    # (after "Raises", as an exception named Book: a strict build's warning)
    section = re.search(r"^\s*-{3,}\s*$", doc, re.MULTILINE)
    assert section is None or BOOK_LINE.search(doc).start() < section.start(), (
        f"{name}: its 'Book:' line comes after a numpydoc section; put it before them")


#: A numpydoc section heading: its title, then a line of dashes.
SECTION = re.compile(r"^(\S[^\n]*)\n-{3,}[ \t]*$", re.MULTILINE)


def documented_parameters(doc: str | None) -> set[str]:
    """The names a numpydoc ``Parameters`` section lists (empty without one).

    A parameter line starts at the section's indentation: ``name : type``, ``a, b : type``
    (two names) or a bare ``name``; ``*args`` and ``**kwargs`` count as ``args`` and
    ``kwargs``. The indented lines below it describe it.
    """
    doc = inspect.cleandoc(doc or "")
    sections = list(SECTION.finditer(doc))
    for i, heading in enumerate(sections):
        if heading.group(1).strip() == "Parameters":
            end = sections[i + 1].start() if i + 1 < len(sections) else len(doc)
            body = doc[heading.end():end]
            break
    else:
        return set()
    names: set[str] = set()
    for line in body.splitlines():
        if not line.strip() or line[0].isspace():  # blank, or a description
            continue
        names.update(n.strip().lstrip("*") for n in line.split(" : ", 1)[0].split(","))
    return names


def test_documented_parameters_reads_numpydoc():
    def documented(X, k, *, low=0.0, high=1.0, **options):
        """Summary.

        Parameters
        ----------
        X : array_like, shape (n, p)
            The records; ``k : int`` in a description names nothing.
        k
        low, high : float, default 0.0, 1.0
        **options
            Passed on.

        Returns
        -------
        seed : int
        """

    assert documented_parameters(documented.__doc__) == {"X", "k", "low", "high", "options"}
    assert documented_parameters("Summary.\n\nExamples\n--------\n>>> 1\n1\n") == set()
    assert documented_parameters(None) == set()


FUNCTIONS = sorted(name for name, obj in OBJECTS.items() if inspect.isfunction(obj))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_docstring_documents_every_parameter(name):
    """Each public function's ``Parameters`` section names all its parameters: the API page
    shows a signature and, for each name in it, what it means."""
    obj = OBJECTS[name]
    params = list(inspect.signature(obj).parameters)
    documented = documented_parameters(obj.__doc__)
    missing = [p for p in params if p not in documented]
    assert not missing, (f"{name}: its docstring's numpydoc 'Parameters' section does not "
                         f"name {missing}" + ("" if documented else " (it has no such section)"))


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


def test_text_files_name_their_encoding():
    """Every text file the package and the tools open names its encoding: without one,
    Python uses the system's code page (cp1252 on many Windows machines), and a release
    with a non-ASCII name was written in it (ruff's PLW1514, a preview rule)."""
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (it comes with the [test] extra)")
    done = subprocess.run([ruff, "check", "--no-cache", "--preview", "--select", "PLW1514",
                           "microagg", "tools"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]
    unnamed = []  # (and Path.read_text / write_text, which the rule does not look at)
    for path in [*SOURCES, *sorted(ROOT.joinpath("tools").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("read_text", "write_text")
                    and not any(k.arg == "encoding" for k in node.keywords)):
                unnamed.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not unnamed, "read_text / write_text without an encoding: " + ", ".join(unnamed)


def _module_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_private_names(path: Path):
    """(target module, name) for every underscore name ``path`` imports from a microagg module."""
    here = _module_of(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package[: len(package) - node.level + 1]
            target = ".".join([*base, *(node.module.split(".") if node.module else [])])
        elif (node.module or "").split(".")[0] == "microagg":
            target = node.module
        else:
            continue
        for alias in node.names:
            name = alias.name
            if not name.startswith("_") or name.startswith("__"):
                continue
            folder = ROOT.joinpath(*target.split("."))
            if (folder / f"{name}.py").exists() or (folder / name).is_dir():
                continue  # a private *module* of the package: importing it is how it is used
            yield target, name


def test_underscore_names_stay_in_their_module_or_subpackage():
    """A leading underscore means private: only its own module uses the name, or, in a
    subpackage below ``microagg`` (``microagg/_mdav/``, ``microagg/views/``, ...), the
    other modules of that subpackage. What other modules need has a plain name."""
    offenders = []
    for path in SOURCES:
        importer = _module_of(path)
        for target, name in _imported_private_names(path):
            sub = target.rsplit(".", 1)[0] if ROOT.joinpath(*target.split(".")).with_suffix(
                ".py").exists() else target
            inside = sub != "microagg" and (importer == sub or importer.startswith(sub + "."))
            if not inside:
                offenders.append(f"{importer} imports {name} from {target}")
    assert not offenders, "underscore names used outside their module:\n" + "\n".join(offenders)


def test_chapters_use_the_public_api():
    """The book's code cells and the assignments are what readers copy: they reach the
    package through its public names (``microagg``, its public subpackages), never a
    private module (``microagg._mdav``), so a refactoring inside cannot break them."""
    private = re.compile(r"\bmicroagg\._[a-z]\w*|from microagg import _\w+")
    pages = [*ROOT.joinpath("chapters").rglob("*.md"), *ROOT.joinpath("chapters").rglob("*.py")]
    offenders = []
    for page in pages:
        if "_build" in page.parts or page.name in {"contributing.md", "conftest.py"}:
            continue  # (the contributor's guide names the private modules to edit)
        cells = re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", page.read_text("utf-8"),
                           flags=re.S) if page.suffix == ".md" else [page.read_text("utf-8")]
        offenders += [f"{page.relative_to(ROOT)}: {m}" for cell in cells
                      for m in private.findall(cell)]
    assert not offenders, "private modules used by the book's code:\n" + "\n".join(offenders)


def test_at_most_eight_positional_parameters():
    """Phase functions take a few structured arguments (named tuples), not long lists."""
    many = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                count = len(node.args.posonlyargs) + len(node.args.args)
                name = f"{_module_of(path)}.{node.name}"
                if count > 8:
                    many.append(f"{name} ({count})")
    assert not many, f"functions with more than 8 positional parameters: {many}"


def test_every_environment_switch_is_listed_once():
    """``microagg/_env.py`` lists every ``MICROAGG_*`` switch; the README documents each."""
    from microagg._env import SWITCHES, TEST_SWITCHES

    files = [*SOURCES, *ROOT.glob("tests/**/*.py"), *ROOT.glob("tools/*"), ROOT / "Makefile"]
    used = set()
    for path in files:
        if path.is_file():
            used |= set(re.findall(r"\bMICROAGG_[A-Z0-9_]*[A-Z0-9]\b", path.read_text()))
    missing = sorted(used - set(SWITCHES) - set(TEST_SWITCHES))
    assert not missing, f"switches not listed in microagg/_env.py: {missing}"
    readme = (ROOT / "README.md").read_text()
    undocumented = [name for name in SWITCHES if name not in readme]
    assert not undocumented, f"switches the README does not document: {undocumented}"


#: A passage is this many consecutive code lines (blank lines, comments and docstrings
#: left out, indentation ignored).
PASSAGE = 6


def _code_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, stripped text) of the lines of ``path`` that are code."""
    text = path.read_text()
    docstrings = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                docstrings.update(range(first.lineno, first.end_lineno + 1))
    return [(i, line.strip()) for i, line in enumerate(text.splitlines(), 1)
            if line.strip() and not line.strip().startswith("#") and i not in docstrings]


def test_no_passage_is_written_twice():
    """No run of six or more code lines appears twice inside ``microagg/`` (shared
    docstring sections are allowed: docstrings are left out)."""
    seen: dict[str, str] = {}
    repeated = []
    for path in SOURCES:
        lines = _code_lines(path)
        for j in range(len(lines) - PASSAGE + 1):
            passage = "\n".join(text for _, text in lines[j:j + PASSAGE])
            where = f"{path.relative_to(ROOT)}:{lines[j][0]}"
            if passage in seen:
                repeated.append(f"{where} repeats {seen[passage]}")
            else:
                seen[passage] = where
    assert not repeated, "passages written twice:\n" + "\n".join(repeated)
