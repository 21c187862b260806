"""Course assignments: generate the student and instructor versions, and check them.

The master notebooks are ``chapters/assignments/aN_<topic>.md`` (MyST Markdown, one per
chapter) written in otter-grader's master-notebook format. This script converts each to
``.ipynb`` (jupytext), runs ``otter assign`` on it (in this process, no Docker) and writes

    _build/assignments/<name>/student/<name>.ipynb            hand this out
    _build/assignments/<name>/autograder/<name>.ipynb         solutions + all tests
    _build/assignments/<name>/autograder/<name>-autograder.zip  grade with `otter run`

Usage::

    python tools/assignments.py build [--out DIR] [NAME ...]   # what `make assignments` runs
    python tools/assignments.py check [--out DIR] [NAME ...]   # build, then every check below
    python tools/assignments.py grade NAME SUBMISSION RESULTS  # what `make grade` runs
    python tools/assignments.py grade-all NAME SUBMISSIONS RESULTS [--jobs N] [--regrade]
                                                               # `make grade-all`: a class

``grade`` grades one submitted notebook with the assignment's autograder zip (building the
assignment first if its zip is missing), with `otter run` from this environment (no Docker):
it creates the folder RESULTS, writes otter's ``results.json`` into it and prints the score of
each question and the total.

The checks (also run by ``tests/test_assignments.py`` under ``make test``):

(a) the master, with its solutions, passes every public and hidden test, and in every
    autograded question the public tests are worth at most a quarter of the points (the
    hidden tests carry the rest, so an answer that only passes the public tests scores at
    most a quarter);
(b) the student notebook holds no solution line and no hidden test line, and its
    public tests are a subset of the master's; the unsolved student code (whose functions
    raise) fails every hidden test, and each of those failures prints the test's seed;
(c) grading a *solved* student copy (student notebook with the master's solution cells put
    back) with the autograder zip's tests gives full marks, and grading the unsolved
    student notebook gives zero on every autograded question (in this process, with
    otter's test runner); and `otter run` with the zip, in a subprocess and without
    Docker, gives the solved copy full marks (all assignments by default; ``--otter-run
    NAME ...`` limits this slower end-to-end step);
(d) the student notebook imports nothing but microagg, its dependencies and otter, and runs
    top to bottom in a fresh kernel, in an empty folder outside the repository and with no
    data sets available, without raising, and each
    ``grader.check("qN")`` cell prints a failure that names what is missing.

Hidden tests draw random inputs from a seed of their own,
``microagg.teaching.case_seed("<assignment>/<question>")``: data the students do not see,
the same on every grading run (a regrade gives the same score; ``MICROAGG_GRADING_SALT``
draws another course's). Where a plausible mistake shows on random data only now and then, a
hidden test also checks fixed, hand-built cases that expose it (against ``microagg``, like
the random ones), so the mistake loses the hidden points whatever the seed. A hidden test
draws its random cases in ``for _i in range(N):`` loops;
``grade_with_answer(..., random_cases=False)`` grades with those loops emptied, to check
what the fixed cases alone catch. A failed hidden test names its case and
seed, also when the student's code raises (the error is re-raised as an ``AssertionError``
that carries them).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MASTERS = ROOT / "chapters" / "assignments"
DEFAULT_OUT = ROOT / "_build" / "assignments"

ANSWER_TAG = "otter_answer_cell"
SOLUTION_TAG = "otter_assign_solution_cell"


def masters(names: list[str] | None = None) -> list[Path]:
    """The master notebooks, in order; ``names`` selects some, each by its full name
    (``a1_foundations``) or its number (``a1``) when only one master has that number (an
    instructor's variant beside a master, ``a2_mdav_private.md``, is named in full)."""
    found = sorted(MASTERS.glob("a[0-9]*_*.md"))
    if not names:
        return found
    picked: list[Path] = []
    for name in names:
        match = ([p for p in found if p.stem == name]
                 or [p for p in found if p.stem.split("_")[0] == name])
        if not match:
            raise SystemExit(f"no master notebook {name!r} in {MASTERS}; the assignments: "
                             f"{', '.join(p.stem for p in found)}")
        if len(match) > 1:
            raise SystemExit(f"{name!r} names {len(match)} master notebooks "
                             f"({', '.join(p.stem for p in match)}): give the full name")
        picked += [p for p in match if p not in picked]
    return sorted(picked)


@dataclass
class Built:
    """Paths of one generated assignment."""

    name: str
    master: Path
    student: Path
    solution: Path
    zip: Path
    seconds: float = 0.0


# --------------------------------------------------------------------------------------
# build
# --------------------------------------------------------------------------------------


def to_ipynb(md: Path, dest: Path) -> Path:
    """The master as a plain ``.ipynb`` (jupytext), without jupytext's pairing metadata."""
    import jupytext
    import nbformat

    nb = jupytext.read(md)
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python",
                                 "name": "python3"}
    dest.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dest)
    return dest


def build_one(md: Path, out: Path = DEFAULT_OUT) -> Built:
    """Run ``otter assign`` on one master; return the generated paths."""
    from otter.assign import main as otter_assign

    t0 = time.perf_counter()
    name = md.stem
    result = out / name
    shutil.rmtree(result, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix=f"{name}-master-") as tmp:
        master = to_ipynb(md, Path(tmp) / f"{name}.ipynb")
        log = io.StringIO()
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            otter_assign(str(master), str(result), no_pdfs=True, no_run_tests=True)
    zips = sorted((result / "autograder").glob("*.zip"))
    if len(zips) != 1:
        raise RuntimeError(f"{name}: expected one autograder zip, found {zips}")
    stable = result / "autograder" / f"{name}-autograder.zip"
    zips[0].rename(stable)
    built = Built(name, md, result / "student" / f"{name}.ipynb",
                  result / "autograder" / f"{name}.ipynb", stable, time.perf_counter() - t0)
    for notebook in (built.student, built.solution):
        _stable_ids(notebook)
    return built


def _stable_ids(path: Path) -> None:
    """Number the cells of a generated notebook (nbformat and otter draw random ids), so
    that two builds of a master give the same notebooks, byte for byte: what was handed out
    can be compared with a rebuild."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i}"
    nbformat.write(nb, path)


def build(names: list[str] | None = None, out: Path = DEFAULT_OUT) -> list[Built]:
    out.mkdir(parents=True, exist_ok=True)
    return [build_one(md, out) for md in masters(names)]


# --------------------------------------------------------------------------------------
# reading notebooks
# --------------------------------------------------------------------------------------


def _read(path: Path):
    import nbformat

    return nbformat.read(path, as_version=4)


def _tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _tests(nb) -> dict[str, list[dict]]:
    """Question name -> its test cases (``code``, ``hidden``) from the notebook metadata."""
    tests = nb.metadata.get("otter", {}).get("tests", {})
    return {q: [case for suite in spec["suites"] for case in suite["cases"]]
            for q, spec in tests.items()}


#: The loops of a hidden test that draw its random cases (see the module's docstring).
RANDOM_LOOP = re.compile(r"(for _i in range\()[^)]*\)")

#: A failed hidden test's output names its seed: ``... seed 123456)``.
SEED_SHOWN = re.compile(r"\bseed \d+\)")

#: Largest share of a question's points its public tests may carry.
PUBLIC_SHARE = 0.25


def _weights(nb) -> dict[str, tuple[float, float]]:
    """Question name -> (points of its public tests, points of the question).

    Otter's rule: a ``points`` list gives each test case its points in order; a number
    is split evenly over the cases.
    """
    out = {}
    for q, spec in nb.metadata.get("otter", {}).get("tests", {}).items():
        cases = [case for suite in spec["suites"] for case in suite["cases"]]
        points = spec.get("points")
        if not isinstance(points, list):
            points = [(1.0 if points is None else float(points)) / len(cases)] * len(cases)
        public = sum(float(p) for p, c in zip(points, cases, strict=True) if not c["hidden"])
        out[q] = (public, sum(float(p) for p in points))
    return out


def _master_blocks(md: Path) -> tuple[list[str], list[str], set[str]]:
    """Solution lines, hidden-test lines and all other lines of a master notebook.

    Read from the ``.md`` text: code between ``# BEGIN SOLUTION`` and ``# END SOLUTION``
    (inside a cell or as raw-cell block boundaries), and the bodies of test cells whose
    config says ``hidden: true``.
    """
    import jupytext

    nb = jupytext.read(md)
    solution: list[str] = []
    hidden: list[str] = []
    other: set[str] = set()
    in_block = False
    for cell in nb.cells:
        src = cell.source
        first = src.lstrip().splitlines()[0] if src.strip() else ""
        if cell.cell_type == "raw":
            if re.match(r"#\s*BEGIN SOLUTION", first):
                in_block = True
            elif re.match(r"#\s*END SOLUTION", first):
                in_block = False
            continue
        lines = src.splitlines()
        if cell.cell_type == "code" and "BEGIN TEST CONFIG" in first and re.search(
                r"hidden:\s*true", src):
            end = next(i for i, ln in enumerate(lines) if "END TEST CONFIG" in ln)
            hidden += lines[end + 1:]
            continue
        if cell.cell_type == "markdown":
            (solution.extend if in_block else other.update)(ln.strip() for ln in lines)
            continue
        inside = False
        for line in lines:
            if line.rstrip().endswith("# END SOLUTION"):
                inside = False
                continue
            if re.match(r"\s*# BEGIN SOLUTION", line):
                inside = True
                continue
            if inside:
                solution.append(line)
            elif re.search(r"#\s*SOLUTION\s*$", line):
                solution.append(line.split("=")[-1] if "=" in line else line)
            else:
                other.add(line.strip())
    return solution, hidden, other


def _significant(lines: list[str], other: set[str], minimum: int = 12) -> list[str]:
    """Lines that identify a solution: long enough and never shown outside solutions."""
    keep = []
    for line in lines:
        s = line.strip()
        if len(s) < minimum or s.startswith("#") or s in other:
            continue
        if s.startswith(('"""', "'''")) or "BEGIN PROMPT" in s or "END PROMPT" in s:
            continue
        keep.append(s)
    return keep


def _student_lines(nb) -> set[str]:
    lines = set()
    for cell in nb.cells:
        lines.update(ln.strip() for ln in cell.source.splitlines())
    return lines


# --------------------------------------------------------------------------------------
# checks
# --------------------------------------------------------------------------------------


@dataclass
class Report:
    name: str
    problems: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    scores: dict[str, tuple[float, float]] = field(default_factory=dict)

    def fail(self, msg: str) -> None:
        self.problems.append(f"{self.name}: {msg}")


def _code_of(nb) -> str:
    """The notebook's code as one script, without otter's init/check cells and magics."""
    parts = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        src = "\n".join(ln for ln in cell.source.splitlines()
                        if not ln.lstrip().startswith(("%", "!", "grader", "import otter",
                                                       "# Initialize Otter")))
        parts.append(src)
    return "\n\n".join(parts)


def _execute_here(nb) -> dict:
    """Run the notebook's code in this process (quietly); return its global namespace."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    env: dict = {"__name__": "__main__"}
    try:
        with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp), \
                contextlib.redirect_stdout(io.StringIO()):
            exec(compile(_code_of(nb), "<notebook>", "exec"), env)  # noqa: S102 - our own notebooks
    finally:  # (plt.show() under Agg keeps a notebook's figures open; a kernel would end)
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")
    return env


def run_tests_in_process(nb, only_hidden: bool | None = None) -> dict[str, list[str]]:
    """Execute ``nb``'s code here and run its metadata tests; question -> failure texts."""
    from otter.test_files.ok_test import run_doctest

    env = _execute_here(nb)
    failures: dict[str, list[str]] = {}
    for q, cases in _tests(nb).items():
        for i, case in enumerate(cases):
            if only_hidden is not None and case["hidden"] != only_hidden:
                continue
            ok, out = run_doctest(f"{q} {i}", case["code"], env)
            if not ok:
                failures.setdefault(q, []).append(out)
    return failures


def check_a(built: Built, rep: Report) -> None:
    """(a) The master with its solutions passes every public and hidden test."""
    t0 = time.perf_counter()
    sol = _read(built.solution)
    tests = _tests(sol)
    if not tests:
        rep.fail("no autograded questions")
    for q, cases in tests.items():
        if not any(c["hidden"] for c in cases):
            rep.fail(f"{q} has no hidden test")
        if all(c["hidden"] for c in cases):
            rep.fail(f"{q} has no public test")
    for q, (public, total) in _weights(sol).items():
        if public > PUBLIC_SHARE * total + 1e-9:
            rep.fail(f"{q}: the public tests are worth {public:g} of {total:g} points, more "
                     f"than a quarter; give the hidden tests the rest (points: [...])")
    for q, outs in run_tests_in_process(sol).items():
        rep.fail(f"(a) master fails {q}:\n" + "\n".join(outs)[-1500:])
    rep.seconds["a"] = time.perf_counter() - t0


def check_b(built: Built, rep: Report) -> None:
    """(b) No solution text and no hidden test in the student notebook; hidden tests fail it."""
    t0 = time.perf_counter()
    student = _read(built.student)
    solution, hidden, other = _master_blocks(built.master)
    shown = _student_lines(student)
    sol_lines = _significant(solution, other)
    if not sol_lines:
        rep.fail("(b) found no solution lines in the master")
    for line in sol_lines:
        if line in shown:
            rep.fail(f"(b) solution line in the student notebook: {line!r}")
    for line in _significant(hidden, other):
        if line in shown:
            rep.fail(f"(b) hidden-test line in the student notebook: {line!r}")
    stests, mtests = _tests(student), _tests(_read(built.solution))
    for q, cases in stests.items():
        if any(c["hidden"] for c in cases):
            rep.fail(f"(b) student notebook carries a hidden test of {q}")
        if not all(c in mtests.get(q, []) for c in cases):
            rep.fail(f"(b) student tests of {q} differ from the master's public tests")
    if set(stests) != set(mtests):
        rep.fail(f"(b) questions differ: student {sorted(stests)}, master {sorted(mtests)}")
    failing = run_tests_in_process(_with_tests(built, solved=False), only_hidden=True)
    passed = set(mtests) - set(failing)
    if passed:
        rep.fail(f"(b) unsolved student code passes the hidden tests of {sorted(passed)}")
    for q, outs in failing.items():  # the unsolved functions raise: the seed must show
        for out in outs:
            if not SEED_SHOWN.search(out):
                rep.fail(f"(b) a hidden test of {q} fails on code that raises without "
                         f"printing its seed:\n{out[-800:]}")
    rep.seconds["b"] = time.perf_counter() - t0


def _with_tests(built: Built, solved: bool):
    """The student notebook (solved or not) carrying the master's tests, hidden included."""
    nb = _solved_or_not(built, solved)
    nb.metadata["otter"] = copy.deepcopy(_read(built.solution).metadata["otter"])
    return nb


def _solved_or_not(built: Built, solved: bool):
    """The student notebook; with ``solved`` its answer cells hold the master's solutions."""
    student = _read(built.student)
    if not solved:
        return student
    sol = _read(built.solution)
    answers = [c for c in student.cells if c.cell_type == "code" and ANSWER_TAG in _tags(c)]
    sources = [c.source for c in sol.cells if c.cell_type == "code" and SOLUTION_TAG in _tags(c)]
    if len(answers) != len(sources):
        raise RuntimeError(f"{built.name}: {len(answers)} answer cells, {len(sources)} solutions")
    for cell, src in zip(answers, sources, strict=True):
        cell.source = src
    return student


def _grade_here(nb, built: Built, random_cases: bool = True,
                outputs: dict[str, list[str]] | None = None) -> dict[str, tuple[float, float]]:
    """Grade ``nb`` with the test files of the autograder zip, in this process.

    This is what ``otter run`` does after executing the notebook (run each test file of
    the zip in the notebook's namespace), minus the kernel: the namespace comes from
    running the notebook's code here. Without ``random_cases`` the hidden tests' random
    loops (``RANDOM_LOOP``) run zero times, so only their fixed cases count. ``outputs``,
    when given, receives the output of every failed test case, by question.
    """
    import dataclasses
    import zipfile

    from otter.test_files.ok_test import OKTestFile

    env = _execute_here(nb)
    scores = {}
    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(built.zip) as zf:
            zf.extractall(tmp)
        for f in sorted(Path(tmp, "tests").glob("q*.py")):
            tf = OKTestFile.from_file(str(f))
            if not random_cases:
                tf.test_cases = [dataclasses.replace(c, body=RANDOM_LOOP.sub(r"\g<1>0)", c.body))
                                 if c.hidden else c for c in tf.test_cases]
            tf.run(env)
            scores[tf.name] = (float(tf.score), float(tf.possible))
            if outputs is not None:
                outputs[tf.name] = [r.message for r in tf.test_case_results if not r.passed]
    return scores


def grade_with_answer(built: Built, function: str, source: str, random_cases: bool = True,
                      outputs: dict[str, list[str]] | None = None
                      ) -> dict[str, tuple[float, float]]:
    """Scores of the solved student copy with the answer cell defining ``function`` replaced.

    Used to check that a plausible *wrong* answer (one that passes the public tests) gets
    at most the public tests' share of the question; without ``random_cases``, with the
    hidden tests' fixed cases alone (see ``_grade_here``).
    """
    nb = _solved_or_not(built, solved=True)
    cells = [c for c in nb.cells if c.cell_type == "code" and ANSWER_TAG in _tags(c)
             and f"def {function}(" in c.source]
    if len(cells) != 1:
        raise RuntimeError(f"{built.name}: {len(cells)} answer cells define {function}")
    cells[0].source = source
    return _grade_here(nb, built, random_cases, outputs)


def check_c_here(built: Built, rep: Report) -> None:
    """(c) With the autograder zip's tests: solved copy full marks, unsolved zero."""
    t0 = time.perf_counter()
    for solved in (True, False):
        key = "solved" if solved else "unsolved"
        scores = _grade_here(_solved_or_not(built, solved), built)
        if not scores:
            rep.fail("(c) the autograder zip has no test files")
        for q, (got, possible) in scores.items():
            if solved and got != possible:
                rep.fail(f"(c) solved copy scores {got}/{possible} on {q}")
            if not solved and got != 0:
                rep.fail(f"(c) unsolved notebook scores {got}/{possible} on {q}")
        rep.scores[key] = (sum(g for g, _ in scores.values()),
                           sum(p for _, p in scores.values()))
    rep.seconds["c"] = time.perf_counter() - t0


def _bin(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


def check_c_otter_run(built: Built, rep: Report, timeout: int = 600) -> None:
    """(c) End to end: `otter run` (local, no Docker) gives a solved student copy full marks."""
    import nbformat

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"{built.name}-solved-") as tmp:
        sub = Path(tmp) / f"{built.name}.ipynb"
        nbformat.write(_solved_or_not(built, solved=True), sub)
        autograder = str(Path(built.zip).resolve())  # the run's working folder is tmp
        proc = subprocess.run([_bin("otter"), "run", "-a", autograder, "-o", tmp,
                               "--no-logo", str(sub)], cwd=tmp, capture_output=True,
                              text=True, timeout=timeout, env=_clean_env(tmp))
        results = Path(tmp) / "results.json"
        if not results.exists():
            rep.fail(f"(c) otter run wrote no results: {proc.stdout[-800:]}{proc.stderr[-800:]}")
            return
        tests = [t for t in json.loads(results.read_text(encoding="utf-8"))["tests"]
                 if "max_score" in t]
    if not tests:
        rep.fail("(c) otter run graded no question")
    for t in tests:
        if t["score"] != t["max_score"]:
            rep.fail(f"(c) solved copy scores {t['score']}/{t['max_score']} on {t['name']}:\n"
                     + t.get("output", "")[-1500:])
    rep.scores["otter run, solved"] = (sum(t["score"] for t in tests),
                                       sum(t["max_score"] for t in tests))
    rep.seconds["c-otter-run"] = time.perf_counter() - t0


def _clean_env(tmp: str) -> dict[str, str]:
    """Environment for student runs: no data sets (none downloaded), headless matplotlib."""
    empty = Path(tmp) / "no-data"
    empty.mkdir(exist_ok=True)
    env = dict(os.environ, MICROAGG_DATA=str(empty), MICROAGG_OFFLINE="1", MPLBACKEND="Agg")
    env.pop("PYTHONPATH", None)
    return env


#: What a student needs: microagg (with its own dependencies) and otter-grader.
STUDENT_MODULES = {"numpy", "microagg", "matplotlib", "otter", "os"}


def _imported_modules(nb) -> set[str]:
    import ast

    found = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # IPython magics: not Python
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module.split(".")[0])
    return found


def check_d(built: Built, rep: Report, timeout: int = 600) -> None:
    """(d) The student notebook runs in a fresh kernel; each check names what is missing."""
    t0 = time.perf_counter()
    extra = _imported_modules(_read(built.student)) - STUDENT_MODULES
    if extra:
        rep.fail(f"(d) the student notebook imports {sorted(extra)}: students have only "
                 f"{sorted(STUDENT_MODULES)}")
    with tempfile.TemporaryDirectory(prefix=f"{built.name}-student-") as tmp:
        shutil.copy(built.student, Path(tmp) / built.student.name)
        # (a kernel on a loaded two-core machine, the book building beside it, has taken
        # over nbclient's 60 s to answer: it gets as long as a cell)
        proc = subprocess.run([_bin("jupyter"), "nbconvert", "--to", "notebook", "--execute",
                               f"--ExecutePreprocessor.timeout={timeout}",
                               f"--ExecutePreprocessor.startup_timeout={timeout}",
                               "--output", "executed.ipynb", built.student.name],
                              cwd=tmp, capture_output=True, text=True, timeout=timeout + 60,
                              env=_clean_env(tmp))
        out = Path(tmp) / "executed.ipynb"
        if proc.returncode != 0 or not out.exists():
            rep.fail("(d) student notebook does not run top to bottom:\n" + proc.stderr[-2000:])
            return
        nb = _read(out)
    checks = 0
    for cell in nb.cells:
        m = re.fullmatch(r'grader\.check\("(\w+)"\)', cell.source.strip())
        if not m:
            continue
        checks += 1
        text = ""
        for o in cell.get("outputs", []):
            text += o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
        if "failed" not in text.lower():
            rep.fail(f"(d) grader.check({m[1]!r}) does not report a failure: {text[:300]!r}")
        elif not re.search(r"NotImplementedError|Ellipsis|AssertionError", text):
            rep.fail(f"(d) grader.check({m[1]!r}) does not say what is missing: {text[:300]!r}")
    if checks == 0:
        rep.fail("(d) no grader.check cells in the student notebook")
    rep.seconds["d"] = time.perf_counter() - t0


def check(built: list[Built], jobs: int = 2, otter_run: set[str] | None = None) -> list[Report]:
    """Every check on every built assignment; kernels run ``jobs`` at a time.

    ``otter_run`` names the assignments whose solved copy is also graded end to end by
    ``otter run`` in a subprocess (default: all; each costs a kernel and an otter start-up).
    """
    from concurrent.futures import ThreadPoolExecutor

    reports = [Report(b.name) for b in built]
    for b, rep in zip(built, reports, strict=True):  # in this process, one after another
        check_a(b, rep)
        check_b(b, rep)
        check_c_here(b, rep)
    jobs_list = [(check_d, b, rep) for b, rep in zip(built, reports, strict=True)]
    jobs_list += [(check_c_otter_run, b, rep) for b, rep in zip(built, reports, strict=True)
                  if otter_run is None or b.name in otter_run]
    with ThreadPoolExecutor(max_workers=jobs) as pool:  # each job is a subprocess
        for f in [pool.submit(fn, b, rep) for fn, b, rep in jobs_list]:
            f.result()
    return reports


#: How long ``otter run`` may take on one submission (a cell that never ends stops there).
GRADE_TIMEOUT = 900

#: Environment switch marking the processes of one grading run (see ``_stop_leftovers``).
RUN_TAG = "MICROAGG_GRADING_RUN"


def _stop_leftovers(tag: str) -> list[int]:
    """Kill the processes a grading run left behind; return their ids.

    Killing ``otter run`` at the timeout does not end its kernel (it runs in a session of
    its own): a kernel stuck in compiled code that holds the GIL (``sum(range(10**18))``, a
    numba loop) never sees its parent go and spins on, a core lost for every later student.
    A notebook may also start processes of its own. Each carries the run's ``tag`` in
    ``RUN_TAG`` (inherited from ``otter run``); one that cleared its environment escapes.
    """
    import psutil  # (installed with ipykernel, which otter runs the notebook in)

    killed = []
    for proc in psutil.process_iter():
        try:
            if proc.pid != os.getpid() and proc.environ().get(RUN_TAG) == tag:
                proc.kill()
                killed.append(proc.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return killed


def _built(md: Path, out: Path, say: bool = False) -> tuple[Path, Path]:
    """The autograder zip and the student notebook of master ``md`` in the build folder
    ``out``, building the assignment first when either is missing (``say``: with a line
    saying so). What :func:`grade` and :func:`grade_all` grade with."""
    autograder = out / md.stem / "autograder" / f"{md.stem}-autograder.zip"
    student = out / md.stem / "student" / f"{md.stem}.ipynb"
    if not autograder.exists() or not student.exists():
        if say:
            print(f"building {md.stem} (its autograder bundle is missing)", flush=True)
        build_one(md, out)
    return autograder, student


def grade(name: str, submission: Path, results: Path, out: Path = DEFAULT_OUT,
          timeout: int = GRADE_TIMEOUT, *, tag: str | None = None
          ) -> dict[str, tuple[float, float]]:
    """Grade ``submission`` for assignment ``name`` with ``otter run``; question -> scores.

    Creates ``results`` (otter's ``results.json`` goes there) and builds the assignment into
    ``out`` first when its autograder zip is missing. A notebook that lost otter's metadata
    (answers pasted into a new notebook, an editor that rewrote it) is graded with the
    assignment's; one whose metadata names another assignment is refused. Raises
    ``FileNotFoundError`` naming a missing submission, ``ValueError`` naming one that is not
    a notebook or belongs to another assignment, ``TimeoutError`` when grading takes longer
    than ``timeout`` seconds, ``RuntimeError`` with otter's last words when it writes no
    results: each a one-line reason (:func:`grade_all` records it for the student).

    ``tag`` marks the run's processes (``RUN_TAG``; default: a random one), so that a caller
    can stop them with :func:`_stop_leftovers` (:func:`grade_all` does when interrupted).
    """
    (md,) = masters([name])
    submission = Path(submission).expanduser().resolve()
    if not submission.is_file():
        what = "a folder, not a notebook" if submission.is_dir() else "missing"
        raise FileNotFoundError(f"no submitted notebook {submission} ({what})")
    autograder, student = (p.resolve() for p in _built(md, out))
    results = Path(results).expanduser().resolve()
    if results.exists() and not results.is_dir():
        raise FileExistsError(f"RESULTS {results} is a file; give a folder (it is created)")
    results.mkdir(parents=True, exist_ok=True)
    (results / "results.json").unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        graded = _with_metadata(submission, md.stem, student, Path(tmp))
        tag = tag or os.urandom(8).hex()
        try:
            proc = subprocess.run([_bin("otter"), "run", "-a", str(autograder), "-o",
                                   str(results), "--no-logo", str(graded)], cwd=results,
                                  capture_output=True, text=True, timeout=timeout,
                                  env=dict(_clean_env(str(results)), **{RUN_TAG: tag}))
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"grading {submission.name} took more than {timeout} s (a cell "
                               "that never ends?): nothing graded; run the notebook to find "
                               "the cell, or grade it by hand") from None
        finally:
            _stop_leftovers(tag)
            shutil.rmtree(results / "no-data", ignore_errors=True)
    found = results / "results.json"
    if not found.exists():
        last = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()][-1:]
        raise RuntimeError(f"otter run wrote no results for {submission.name}: "
                           f"{(last or ['(no output)'])[0][:300]}")
    tests = [t for t in json.loads(found.read_text(encoding="utf-8"))["tests"] if "max_score" in t]
    return {t["name"]: (float(t["score"]), float(t["max_score"])) for t in tests}


def _with_metadata(submission: Path, name: str, student: Path, folder: Path) -> Path:
    """``submission``, or a copy in ``folder`` carrying otter's metadata of assignment
    ``name`` (from the student notebook ``student``) if it lost it."""
    import nbformat

    try:  # (JSON that is no notebook, a list or a "metadata": [], fails inside nbformat)
        nb = nbformat.read(submission, as_version=4)
        nbformat.validate(nb)
    except (ValueError, TypeError, AttributeError, KeyError,
            nbformat.ValidationError) as err:  # (NotJSONError is a ValueError)
        raise ValueError(f"{submission} is not a notebook that can be read: "
                         f"{(str(err).splitlines() or [type(err).__name__])[0][:200]}") from None
    otter = nb.metadata.get("otter", {})
    if not isinstance(otter, dict):
        raise ValueError(f"{submission} is not a notebook that can be read: its otter "
                         f"metadata is {type(otter).__name__}, not a mapping")
    found = otter.get("assignment_name")
    if found == name:
        return submission
    if found is not None:
        raise ValueError(f"{submission.name} is assignment {found} (its notebook says so), not "
                         f"{name}: grade it with ASSIGNMENT={found}")
    nb.metadata["otter"] = nbformat.read(student, as_version=4).metadata["otter"]
    copy = folder / submission.name
    nbformat.write(nb, copy)
    return copy


#: How many notebooks :func:`grade_all` grades at once unless told (``--jobs``, ``JOBS=``).
GRADE_JOBS = 1

#: A graded student's record beside its ``results.json``: what was graded (digests of the
#: notebook, the autograder bundle and the salt), with what (:func:`_versions`) and the
#: scores; see :func:`grade_all`.
RECORD = "graded.json"

#: The environment switch that draws another course's hidden test data
#: (``microagg._grading.SALT_ENV``): other data, other scores, so part of the record.
SALT_ENV = "MICROAGG_GRADING_SALT"

#: A text cell starting with one of these is a formula to a spreadsheet (OWASP, "CSV
#: injection"); grades.csv puts a ``'`` before it.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

#: The status of a student that a table written during the run (or after it was stopped)
#: has not graded yet.
PENDING = "not graded yet (grade-all is running, or was stopped before this student)"


#: The lock of a RESULTS folder that a :func:`grade_all` run holds while it writes there
#: (two runs into one folder would race on grades.csv and the records); see :func:`_lock`.
LOCK = "grade-all.lock"


class ResultsInUse(FileExistsError):
    """RESULTS is locked by another :func:`grade_all` run (see :func:`_lock`)."""


def _process_started(pid: int) -> float | None:
    """When process ``pid`` of this machine started (seconds since the epoch); None when no
    such process runs (a zombie has ended), NaN when it runs but cannot be asked."""
    import psutil  # (installed with ipykernel, which otter runs the notebook in)

    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return proc.create_time()
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return None
    except psutil.AccessDenied:
        return float("nan")


def _holder(lock: Path) -> tuple[dict[str, Any] | None, str]:
    """Who holds ``lock``, as its JSON says, and whether that run is gone: ``"gone"`` (a
    process of this machine that no longer runs, or whose id now belongs to another
    process), ``"running"`` (of this machine, the same process), ``"elsewhere"`` (another
    machine's: it cannot be seen from here), ``"unreadable"``, or ``"missing"`` (released
    since)."""
    import socket

    try:
        holder = json.loads(lock.read_text(encoding="utf-8"))
        pid, host = int(holder["pid"]), str(holder["host"])
        started = holder.get("process_started")
    except FileNotFoundError:
        return None, "missing"
    except (OSError, ValueError, KeyError, TypeError):
        return None, "unreadable"
    if host != socket.gethostname():
        return holder, "elsewhere"
    now = _process_started(pid)
    if now is None:
        return holder, "gone"
    if isinstance(started, (int, float)) and abs(now - started) > 1:  # (NaN: not > 1)
        return holder, "gone"
    return holder, "running"


@contextlib.contextmanager
def _lock(results: Path) -> Iterator[Path]:
    """Hold ``results``'s :data:`LOCK` while the block runs; released at its end however it
    ends (an error, Ctrl-C), and left only when the process is killed.

    The lock file is created only if no other exists (``O_CREAT | O_EXCL``, on POSIX and
    Windows alike) and holds JSON: the process id, the machine, the user, when the run
    started and when its process started (with the id, this tells the process from a later
    one given the same id). A lock whose process is gone (on this machine) is taken over
    with a notice; any other raises :class:`ResultsInUse`, naming the folder, the lock, who
    holds it and what to do. (Two runs taking over one stale lock at the same instant could
    both go on: a stale lock is rare, two runs starting within the same second after one
    rarer still.)
    """
    import datetime
    import getpass
    import socket

    lock = results / LOCK
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - (no user name in the environment: only a label)
        user = "?"
    mine = json.dumps({
        "pid": os.getpid(), "host": socket.gethostname(), "user": user,
        "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "process_started": _process_started(os.getpid()),
        "command": " ".join(sys.argv)}, indent=1).encode()
    for _ in range(3):  # (a lock released or taken over meanwhile: look again)
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY
                         | getattr(os, "O_BINARY", 0), 0o644)  # (Windows: no \r\n for \n)
        except FileExistsError:
            holder, state = _holder(lock)
            if state == "gone" and holder is not None:
                print(f"taking over the lock {_printed(str(lock))}: process {holder['pid']} "
                      f"that took it at {_printed(str(holder.get('started', '?')))} no longer "
                      "runs", flush=True)
                lock.unlink(missing_ok=True)
            elif state != "missing":
                raise ResultsInUse(_in_use(results, lock, holder, state)) from None
            continue
        try:
            with open(fd, "wb") as fh:
                fh.write(mine)
        except BaseException:  # (a full disk: leave no empty lock that stops the next run)
            lock.unlink(missing_ok=True)
            raise
        break
    else:
        raise ResultsInUse(f"RESULTS {results} is in use: its lock {lock} keeps coming back; "
                           "is another grade-all run starting there? Run again in a moment")
    try:
        yield lock
    finally:
        with contextlib.suppress(OSError):  # (only ours: never a lock taken over since)
            if lock.read_bytes() == mine:
                lock.unlink()


def _in_use(results: Path, lock: Path, holder: dict[str, Any] | None, state: str) -> str:
    """The message of :class:`ResultsInUse`."""
    delete = f"delete {lock} and run again"
    if holder is None:
        return (f"RESULTS {results} is in use or was: its lock {lock} exists but cannot be "
                "read (a grade-all run starting this instant, or one killed as it started). "
                f"If no other grade-all run writes into this folder, {delete}")
    who = (f"process {holder.get('pid')} of {holder.get('user', '?')} on "
           f"{holder.get('host')}, started {holder.get('started', '?')}")
    if state == "elsewhere":
        return (f"RESULTS {results} is in use by another grade-all run ({who}): its lock "
                f"{lock} is held from another machine, where this one cannot see whether it "
                "still runs. Wait for it to end, or grade into another RESULTS; if it ended "
                f"without releasing the lock (the machine was switched off), {delete}")
    return (f"RESULTS {results} is in use by another grade-all run ({who}), which holds "
            f"its lock {lock} and still runs. Wait for it to end, or grade into another "
            f"RESULTS. If it is stuck, stop it (Ctrl-C where it runs, or end process "
            f"{holder.get('pid')}): a lock whose process has ended is taken over by the next "
            "run")


def _nobody_s(path: Path) -> bool:
    """A file or folder of the submissions that is nobody's work: a hidden folder (``.git``,
    ``.ipynb_checkpoints``), the ``__MACOSX`` folder of a zip made on a Mac, or one of the
    resource files it holds (``._alice.ipynb``, no notebook)."""
    name = path.name
    return (name == "__MACOSX" or name.startswith("._")
            or (name.startswith(".") and path.is_dir()))


def _notebooks_in(folder: Path) -> list[Path]:
    """The notebooks of a student's folder: those at its top or, if none is, those further
    down (a learning platform's download nests them); see :func:`_nobody_s`."""
    top = sorted(p for p in folder.iterdir()
                 if p.suffix.lower() == ".ipynb" and p.is_file() and not _nobody_s(p))
    if top:
        return top
    found = []
    for p in sorted(folder.rglob("*")):
        inside = p.relative_to(folder).parents
        if (p.suffix.lower() == ".ipynb" and p.is_file() and not _nobody_s(p)
                and not any(_nobody_s(folder / d) for d in inside if d != Path("."))):
            found.append(p)
    return found


def _class_list(submissions: Path) -> dict[str, list[Path]]:
    """Student -> their notebooks: a folder of ``submissions`` and what :func:`_notebooks_in`
    finds in it, or a notebook directly in it, named after the student (``alice/`` and
    ``alice.ipynb`` make one student with two notebooks). Says what it skips."""
    found: dict[str, list[Path]] = {}
    for entry in sorted(submissions.iterdir()):
        if _nobody_s(entry):
            print(f"skipped {_printed(entry.name)} (hidden, or macOS's resource files)", flush=True)
        elif entry.is_dir():
            found.setdefault(entry.name, []).extend(_notebooks_in(entry))
        elif entry.suffix.lower() == ".ipynb":
            found.setdefault(entry.stem, []).append(entry)
        else:
            print(f"skipped {_printed(entry.name)} (no notebook and no folder)", flush=True)
    return found


def _text(text: str) -> str:
    """``text`` as it can be printed and written as UTF-8: the bytes of a name that is not
    UTF-8 (Python reads them as surrogates) shown as ``\\xNN``."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # (a lone surrogate that stands for no byte)
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


#: Characters a terminal obeys rather than shows (as ``microagg._cli_io._CONTROL``): the C0
#: controls but the tab, DEL, the C1 controls, the bidirectional overrides and isolates.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

#: A terminal's colour or cursor sequence (``ESC [0;31m``), as in a traceback of otter's.
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def _printed(text: str) -> str:
    """``text`` for a line on the terminal: :func:`_text`, and every control character
    written as its escape (a student's folder named ``ESC [2J`` would clear the screen)."""
    return _CONTROL.sub(lambda m: repr(m[0])[1:-1], _text(text))


def _cell(text: str) -> str:
    """A text cell of grades.csv: printable (:func:`_text`), and with a ``'`` before it when
    a spreadsheet would run it as a formula (``=HYPERLINK(...)`` as a student's name)."""
    text = _text(text)
    return "'" + text if text.startswith(FORMULA_START) else text


def _number(x: float) -> str:
    """A score as grades.csv writes it: ``3``, ``0.75`` (never ``-0``)."""
    return f"{x + 0.0:g}"


def _natural(name: str) -> list:
    """Sort key putting ``q2`` before ``q10``."""
    return [int(t) if i % 2 else t for i, t in enumerate(re.split(r"(\d+)", name))]


def _write_atomically(path: Path, write) -> None:
    """Call ``write(fh)`` on a temporary file beside ``path``, then put it in ``path``'s
    place in one step: a run stopped half-way leaves the old file, never half a new one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", newline="", encoding="utf-8") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_table(table: Path, rows: list[dict[str, Any]]) -> None:
    """Write the class table ``grades.csv`` (atomically): one row per student, see
    :func:`grade_all`."""
    questions = sorted({q for r in rows for q in r["scores"]}, key=_natural)

    def write(fh) -> None:
        writer = csv.writer(fh)
        writer.writerow([_cell(h) for h in ("student", "notebook", *questions, "autograded",
                                            "possible", "manual", "status")])
        for r in rows:
            scores = r["scores"]
            totals = ([_number(sum(v[i] for v in scores.values())) for i in (0, 1)]
                      if r["status"] == "graded" else ["", ""])
            writer.writerow([_cell(r["student"]), _cell(r["notebook"]),
                             *(_number(scores[q][0]) if q in scores else "" for q in questions),
                             *totals, "", _cell(" ".join(_ANSI.sub("", r["status"]).split()))])

    _write_atomically(table, write)


def _digest(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _bundle_digest(path: Path) -> str:
    """SHA-256 of an autograder zip's members, names and contents (not their dates, which a
    rebuild changes); of its bytes if it is no zip."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            h = hashlib.sha256()
            for member in sorted(zf.namelist()):
                h.update(member.encode() + b"\0" + hashlib.sha256(zf.read(member)).digest())
            return h.hexdigest()
    except zipfile.BadZipFile:
        return _digest(path)


def _versions() -> dict[str, str]:
    """The versions of what grades a notebook besides the bundle: microagg (the hidden
    tests compare with it), otter-grader and Python (``otter run`` and its kernel are this
    environment's)."""
    import platform
    from importlib.metadata import version

    import microagg

    return {"microagg": microagg.__version__, "otter-grader": version("otter-grader"),
            "Python": platform.python_version()}


def _changed(then: Any, now: dict[str, str]) -> str | None:
    """What differs between the versions a record holds (``then``) and ``now``
    (:func:`_versions`), as ``microagg 0.1.0 -> 0.2.0``; None when nothing does."""
    if not isinstance(then, dict):
        return ("their graded.json records no versions of microagg, otter-grader and Python "
                "(an older grade-all wrote it)")
    changes = [f"{what} {then.get(what, '(none)')} -> {v}" for what, v in now.items()
               if then.get(what) != v]
    return ", ".join(changes) if changes else None


def _earlier(folder: Path, key: dict[str, str], versions: dict[str, str]
             ) -> tuple[dict[str, tuple[float, float]] | None, str | None]:
    """The scores an earlier run recorded in ``folder`` (:data:`RECORD`) for what ``key``
    describes (the same notebook, bundle and salt), if its ``results.json`` is still there
    and they were graded with the same ``versions`` (:func:`_versions`): ``(scores, None)``.
    ``(None, why)`` when only the versions differ (:func:`_changed`); else ``(None,
    None)``."""
    try:
        record = json.loads((folder / RECORD).read_text(encoding="utf-8"))
        if record["key"] != key or not (folder / "results.json").is_file():
            return None, None
        scores = {q: (float(got), float(possible))
                  for q, (got, possible) in record["scores"].items()}
        why = _changed(record.get("versions"), versions)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None, None
    return (None, why) if why is not None else (scores, None)


def _record(folder: Path, key: dict[str, str], versions: dict[str, str],
            scores: dict[str, tuple[float, float]]) -> None:
    """Write a graded student's :data:`RECORD` (atomically); one that cannot be written
    (a full disk) is said, and the student is graded again by the next run."""
    record = {"key": key, "versions": versions, "scores": scores}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _write_atomically(folder / RECORD, lambda fh: json.dump(record, fh, indent=1))
    except OSError as err:
        print(f"could not record {_printed(str(folder / RECORD))} ({_printed(str(err))}): "
              "the next run grades this student again", flush=True)


def _grade_one(name: str, notebook: Path, folder: Path, out: Path, timeout: int,
               tag: str) -> tuple[dict[str, tuple[float, float]] | None, str]:
    """One student's scores (None when not graded) and status, for :func:`grade_all`."""
    try:
        (folder / RECORD).unlink(missing_ok=True)  # (a stopped run must leave no old record)
        return grade(name, notebook, folder, out, timeout, tag=tag), "graded"
    except (OSError, ValueError, RuntimeError) as err:  # (TimeoutError is an OSError)
        return None, f"not graded: {err}"
    except Exception as err:  # noqa: BLE001 - one student's notebook never stops the class
        return None, f"not graded: {type(err).__name__}: {str(err)[:300]}"


def _refusal(student: str, notebooks: list[Path], submissions: Path, results: Path,
             spellings: list[str]) -> str | None:
    """Why ``student`` cannot be graded before anything runs, or None."""
    folder = results / student
    if (student.casefold() in (".", "..", "grades.csv", LOCK) or folder == submissions
            or folder in submissions.parents):
        return (f"{student!r} cannot be a results folder (it is RESULTS, its parent, the "
                "class table, the lock or SUBMISSIONS): rename the submission")
    others = [s for s in spellings if s != student]
    if others:
        return (f"the name differs from {', '.join(map(repr, others))} only in case or accents "
                "(one results folder on macOS and Windows): rename one of them")
    if len(notebooks) != 1:
        names = [str(p.relative_to(submissions)) for p in notebooks]
        return f"{len(notebooks)} notebooks for this student, not one: {', '.join(names) or 'none'}"
    return None


def _duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``2 h 05 min``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def grade_all(name: str, submissions: Path, results: Path, out: Path = DEFAULT_OUT,
              timeout: int = GRADE_TIMEOUT, *, jobs: int = GRADE_JOBS,
              regrade: bool = False) -> Path:
    """Grade a class: every student's notebook under ``submissions``, into ``results``.

    Parameters
    ----------
    name : str
        The assignment (``a2`` or ``a2_mdav``).
    submissions : Path
        One folder per student holding one ``.ipynb`` (at its top, or else anywhere below
        it), or a notebook directly in it, named after the student. Hidden folders and
        what a zip made on a Mac adds (``__MACOSX``, ``._*``) are skipped.
    results : Path
        Created; not ``submissions`` nor inside it.
    out : Path
        Where the assignment is built (first, if its autograder bundle is missing).
    timeout : int
        Seconds one notebook may take (:func:`grade`).
    jobs : int
        Notebooks graded at once, each in its own kernel (about one per core at most). The
        results and the table do not depend on it.
    regrade : bool
        Grade every student again, also those an earlier run graded from the same notebook.

    Returns
    -------
    Path
        ``results/grades.csv``: one row per student, in the order of their names, with each
        autograded question's score, the total and the possible total, an empty ``manual``
        column for the questions graded by hand, and ``status``: ``graded``, or why the
        notebook got no score (it ran too long, it is another assignment's, it is no
        notebook, ...), so that no student is missed and no submission stops the class.
        The table is rewritten (atomically) after every student; one not graded yet says so.
        A text cell a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab,
        carriage return first) starts with ``'``; bytes of a name that are not UTF-8 show
        as ``\\xNN``.

    Each graded student gets ``results/<student>/results.json`` and :data:`RECORD`, which
    holds the scores, the SHA-256 digests of the notebook, of the bundle's files and of
    ``MICROAGG_GRADING_SALT``, and the versions of microagg, otter-grader and Python. A
    later run (stopped by Ctrl-C, a crash, or run again after a late submission) takes a
    student's scores from that record when the three digests and the versions are the
    same, without grading the notebook again; a changed or new notebook is graded, and so
    is one that got no score. A student graded again only because the versions differ
    (or the record, an older one, has none) is counted, with what changed, in a line
    before the grading and in the summary. ``regrade`` grades everyone. Ctrl-C stops the
    notebooks being graded, writes the table and raises ``KeyboardInterrupt``.

    While it runs, ``results`` holds :data:`LOCK` (:func:`_lock`): a second run into the
    same folder raises :class:`ResultsInUse` (a ``FileExistsError``) at once, naming the
    run that holds it; a lock left by a process that no longer runs is taken over.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be 1 or more, not {jobs}")
    submissions = Path(submissions).expanduser().resolve()
    if not submissions.is_dir():
        raise FileNotFoundError(f"SUBMISSIONS {submissions} is not a folder (one folder, or "
                                "one .ipynb, per student)")
    results = Path(results).expanduser().resolve()
    if results == submissions or submissions in results.parents:
        raise ValueError(f"RESULTS {results} is {'' if results == submissions else 'inside '}"
                         f"SUBMISSIONS {submissions}: its folders would be read as students; "
                         "give a folder outside it")
    if results.exists() and not results.is_dir():
        raise FileExistsError(f"RESULTS {results} is a file; give a folder (it is created)")
    found = _class_list(submissions)
    if not found:
        raise FileNotFoundError(f"no student folder or notebook in {submissions}")
    (md,) = masters([name])
    results.mkdir(parents=True, exist_ok=True)
    with _lock(results):
        return _grade_class(name, md, found, submissions, results, out, timeout, jobs, regrade)


def _grade_class(name: str, md: Path, found: dict[str, list[Path]], submissions: Path,
                 results: Path, out: Path, timeout: int, jobs: int, regrade: bool) -> Path:
    """:func:`grade_all` once its arguments are checked and it holds the lock of
    ``results``: the students ``found`` (:func:`_class_list`) of master ``md``."""
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    bundle, _ = _built(md, out, say=True)  # (here, not in each grading thread)
    common = {"assignment": md.stem, "autograder": _bundle_digest(bundle),
              "salt": hashlib.sha256(os.environ.get(SALT_ENV, "").encode()).hexdigest()}
    versions = _versions()
    table = results / "grades.csv"

    spellings: dict[str, list[str]] = {}
    for student in found:
        spellings.setdefault(unicodedata.normalize("NFC", student).casefold(), []).append(student)
    rows: list[dict[str, Any]] = []
    todo: list[tuple[dict[str, Any], Path, dict[str, str]]] = []
    reused = 0
    regraded: dict[str, int] = {}  # (why -> how many, of those the records would keep)
    for student, notebooks in found.items():
        row: dict[str, Any] = {"student": student, "notebook": "", "status": PENDING,
                               "scores": {}}
        rows.append(row)
        problem = _refusal(student, notebooks, submissions, results,
                           spellings[unicodedata.normalize("NFC", student).casefold()])
        if problem is None:
            notebook = notebooks[0]
            row["notebook"] = (str(notebook.relative_to(submissions / student))
                               if notebook.parent != submissions else notebook.name)
            try:
                key = dict(common, notebook=_digest(notebook))
            except OSError as err:
                problem = f"cannot read it: {err}"
        if problem is not None:
            row["status"] = f"not graded: {problem}"
            print(f"{_printed(student)}: {_printed(row['status'])}", flush=True)
            continue
        earlier, why = (None, None) if regrade else _earlier(results / student, key, versions)
        if earlier is not None:
            row.update(status="graded", scores=earlier)
            reused += 1
        else:
            todo.append((row, notebook, key))
            if why is not None:
                regraded[why] = regraded.get(why, 0) + 1
    if reused:
        print(f"{reused} students graded by an earlier run from the same notebook: kept "
              "(--regrade, or REGRADE=1 with make, grades them again)", flush=True)
    for why, n in regraded.items():
        print(f"regrading {n} student{'s' if n != 1 else ''} graded by an earlier run from "
              f"the same notebook: {why}", flush=True)
    print(f"grading {len(todo)} of {len(found)} students"
          + (f", {jobs} at a time" if jobs > 1 and len(todo) > 1 else ""), flush=True)
    _write_table(table, rows)

    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        running: dict[Any, tuple[dict[str, Any], dict[str, str], str]] = {}
        warned = False
        try:
            for row, notebook, key in todo:
                tag = os.urandom(8).hex()  # (one per notebook: stopping one stops no other)
                running[pool.submit(_grade_one, name, notebook, results / row["student"], out,
                                    timeout, tag)] = (row, key, tag)
            order = {f: i for i, f in enumerate(running)}
            done = 0
            pending = set(running)
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in sorted(finished, key=order.__getitem__):
                    row, key, _ = running[f]
                    scores, row["status"] = f.result()
                    if scores is not None:
                        row["scores"] = scores
                        _record(results / row["student"], key, versions, scores)
                    done += 1
                    left = (time.monotonic() - t0) / done * (len(todo) - done)
                    total = (f"{_number(sum(v[0] for v in scores.values()))} / "
                             f"{_number(sum(v[1] for v in scores.values()))}"
                             if scores is not None else "-")
                    print(f"[{done}/{len(todo)}] {_printed(row['student'])}: {total} "
                          f"({_printed(row['status'])})"
                          + (f"; about {_duration(left)} left" if done < len(todo) else ""),
                          flush=True)
                try:
                    _write_table(table, rows)
                except OSError as err:  # (open in a spreadsheet that locks it, on Windows)
                    if not warned:
                        print(f"could not update {_printed(str(table))} ({_printed(str(err))}); "
                              "grading goes on, and tries again after each student", flush=True)
                    warned = True
        except BaseException:
            _stop(running, pool)
            with contextlib.suppress(OSError):
                _write_table(table, rows)
            print(_summary(rows, reused, table, time.monotonic() - t0, regraded,
                           stopped=True),
                  file=sys.stderr, flush=True)
            raise
    _write_table(table, rows)  # (the scores are in the records: a rerun writes it at once)
    print(_summary(rows, reused, table, time.monotonic() - t0, regraded), flush=True)
    return table


def _stop(running: dict[Any, tuple[dict[str, Any], dict[str, str], str]], pool: Any) -> None:
    """Stop a class's grading: drop the notebooks not started and end the runs of those
    being graded (``otter run`` and its kernel, by their tags), until none is left."""
    from concurrent.futures import wait

    for f in running:
        f.cancel()
    left = {f for f in running if not f.done()}
    while left:  # (a run starting as we stop it is caught on the next round)
        for f in left:
            _stop_leftovers(running[f][2])
        left = wait(left, timeout=1).not_done
    pool.shutdown(wait=True)


def _summary(rows: list[dict[str, Any]], reused: int, table: Path, seconds: float,
             regraded: dict[str, int] | None = None, stopped: bool = False) -> str:
    """The last words of :func:`grade_all`: how many students were graded, who was not
    and why, who was graded again although the notebook was the same (``regraded``: why ->
    how many), where the table is."""
    graded = sum(r["status"] == "graded" for r in rows)
    failed = [r for r in rows if r["status"] not in ("graded", PENDING)]
    waiting = sum(r["status"] == PENDING for r in rows)
    lines = [("stopped" if stopped else "done") + f" after {_duration(seconds)}: "
             f"{graded} of {len(rows)} students graded"
             + (f" ({reused} by an earlier run)" if reused else "")
             + (f", {len(failed)} not graded" if failed else "")
             + (f", {waiting} not graded yet" if waiting else "")]
    lines += [f"  regraded {n}: {why}" for why, n in (regraded or {}).items()]
    lines += [f"  not graded: {_printed(r['student'])}" for r in failed[:10]]
    if len(failed) > 10:
        lines.append(f"  ... and {len(failed) - 10} more (see the status column)")
    lines.append(f"grades: {_printed(str(table))}")
    if stopped or waiting:
        lines.append("run the same command again to grade the rest (notebooks graded "
                     "already are not graded again)")
    return "\n".join(lines)


def _shown(path: Path) -> str:
    """``path`` relative to the current folder when it is inside it, else absolute."""
    path = Path(path).resolve()
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    if (argv if argv is not None else sys.argv[1:])[:1] == ["grade-all"]:
        parser.add_argument("command", choices=["grade-all"])
        parser.add_argument("name", help="the assignment (e.g. a2 or a2_mdav)")
        parser.add_argument("submissions", type=Path,
                            help="folder with one folder (or one .ipynb) per student")
        parser.add_argument("results", type=Path, help="folder for the results (created)")
        parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
        parser.add_argument("--jobs", type=int, default=GRADE_JOBS,
                            help=f"notebooks graded at once (default {GRADE_JOBS})")
        parser.add_argument("--regrade", action="store_true",
                            help="grade every student again, also those an earlier run "
                            "graded from the same notebook")
        args = parser.parse_intermixed_args(argv)
        try:
            grade_all(args.name, args.submissions, args.results, args.out,
                      jobs=args.jobs, regrade=args.regrade)
        except (OSError, ValueError) as err:
            print(f"assignments.py grade-all: {_printed(str(err))}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:  # (grade_all said what it kept)
            return 130
        return 0
    if (argv if argv is not None else sys.argv[1:])[:1] == ["grade"]:
        parser.add_argument("command", choices=["grade"])
        parser.add_argument("name", help="the assignment (e.g. a2 or a2_mdav)")
        parser.add_argument("submission", type=Path, help="the student's .ipynb")
        parser.add_argument("results", type=Path, help="folder for results.json (created)")
        parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
        args = parser.parse_intermixed_args(argv)
        try:
            scores = grade(args.name, args.submission, args.results, args.out)
        except (OSError, ValueError, RuntimeError) as err:  # one line, no trace
            print(f"assignments.py grade: {err}", file=sys.stderr)
            return 2
        for q, (got, possible) in scores.items():
            print(f"{q}: {got:g} / {possible:g}")
        total, possible = (sum(v[i] for v in scores.values()) for i in (0, 1))
        print(f"total: {total:g} / {possible:g} (autograded; manual questions not included)")
        print(f"details: {args.results / 'results.json'}")
        return 0
    parser.add_argument("command", choices=["build", "check", "grade"])
    parser.add_argument("names", nargs="*", help="assignments (e.g. a1); default: all")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--jobs", type=int, default=2, help="kernels run at a time")
    parser.add_argument("--otter-run", nargs="*", metavar="NAME", default=None,
                        help="grade the solved copy with `otter run` only for these "
                        "assignments (default: all; give no name for none)")
    # intermixed: options may come before the names (`build --out DIR a1`) or after them
    args = parser.parse_intermixed_args(argv)
    built = build(args.names, args.out)
    for b in built:
        print(f"{b.name}: student {_shown(b.student)}, autograder {_shown(b.zip)} "
              f"({b.seconds:.1f} s)")
    if args.command == "build":
        return 0
    problems = []
    otter_run = None if args.otter_run is None else set(args.otter_run)
    for b, rep in zip(built, check(built, args.jobs, otter_run), strict=True):
        problems += rep.problems
        times = ", ".join(f"{k} {v:.1f} s" for k, v in rep.seconds.items())
        print(f"{b.name}: {'OK' if not rep.problems else 'FAILED'} "
              f"(scores {rep.scores}; {times})")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
