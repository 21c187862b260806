"""The course assignments (chapters/assignments/, built by tools/assignments.py).

For every master notebook: (a) the master with its solutions passes every public and
hidden test; (b) the student version holds no solution line or hidden test and fails the
hidden tests; (c) the autograder zip's tests give a solved student copy full marks and the
unsolved notebook zero, and `otter run` (local, no Docker) grades a solved copy end to end
with full marks (for one assignment here, to keep `make test` short; `python
tools/assignments.py check` does it for all); (d) the student notebook runs top to bottom in a
fresh kernel without the data sets and each check cell says what is missing; (e) the public
tests are worth at most a quarter of each question, and for one question per assignment a
plausible wrong answer that passes the public tests scores at most that quarter; (f) the
mistakes that random data expose only now and then are caught by the hidden tests' fixed
cases alone, so on every grading run; (g) a failed hidden test names its seed and case, also
when the student's code raises; (h) the command line takes its options before or after the
names and prints paths that exist; (i) for one question per assignment, an answer that calls the
``microagg`` function it is compared with scores nothing, each failed test naming the call.

The assignments are built once per session, into a temporary folder (or into
``$MICROAGG_ASSIGNMENTS_OUT``, e.g. ``_build/assignments`` under ``make test``), and
the kernel-based checks run two at a time.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import assignments as A  # noqa: E402

pytest.importorskip("otter")
pytest.importorskip("jupytext")

NAMES = [p.stem for p in A.masters()]
OTTER_RUN = NAMES[0]


def test_one_assignment_per_chapter() -> None:
    assert [n.split("_")[0] for n in NAMES] == [f"a{i}" for i in range(1, 7)], NAMES
    for name in NAMES:
        topic = name.split("_", 1)[1]
        chapter = ROOT / "chapters" / f"{topic}.md"
        assert chapter.exists(), f"{name}: no chapter {chapter.name}"
        assert name in chapter.read_text(encoding="utf-8"), f"{chapter.name} does not link {name}"


@pytest.mark.parametrize("name", NAMES)
def test_master_format(name: str) -> None:
    """Every question mixes kinds; every hidden test draws its data from a seed of its own,
    the same on every run (``microagg.teaching.case_seed`` of its name)."""
    text = (A.MASTERS / f"{name}.md").read_text(encoding="utf-8")
    questions = re.findall(r"# BEGIN QUESTION\nname: (q\d+)\n(manual: true\n)?", text)
    assert 4 <= len(questions) <= 8, f"{name}: {len(questions)} questions"
    assert any(m for _, m in questions), f"{name}: no manually graded (open) question"
    assert sum(not m for _, m in questions) >= 3, f"{name}: fewer than 3 autograded questions"
    hidden = text.split("hidden: true")[1:]
    assert hidden, f"{name}: no hidden tests"
    seeds = re.findall(r'_seed = microagg\.teaching\.case_seed\("([^"]+)"\)', text)
    assert len(seeds) == len(hidden) == len(set(seeds)), (
        f"{name}: each hidden test needs a seed of its own from case_seed, got {seeds}")
    assert all(s.startswith(f"{name}/") for s in seeds), f"{name}: seeds named {seeds}"
    assert "os.urandom" not in text, f"{name}: a seed from os.urandom changes grades per run"
    for block in hidden:
        body = block.split("```", 1)[0]
        assert "case_seed(" in body and "_seed" in body, f"{name}: hidden test without its seed"
        # an error in the student's code is re-raised with the case and the seed
        assert "except Exception as _err:" in body and '({_case})") from _err' in body, (
            f"{name}: a hidden test does not name its seed when the student's code raises")
        # random cases are drawn in `for _i in range(N):` loops (A.RANDOM_LOOP), so that the
        # fixed cases can be graded alone
        loops = re.findall(r"for (\w+) in range\(", body)
        assert all(v == "_i" for v in loops), f"{name}: a hidden test loops with {loops}, not _i"


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, A.Built]:
    out = os.environ.get("MICROAGG_ASSIGNMENTS_OUT")
    out_dir = Path(out).resolve() if out else tmp_path_factory.mktemp("assignments")
    return {b.name: b for b in A.build(None, out_dir)}


@pytest.fixture(scope="session")
def reports(built: dict[str, A.Built]) -> dict[str, A.Report]:
    names = list(built)
    # `otter run` end to end for one assignment (the others: same zip layout, same runner)
    reports = A.check([built[n] for n in names], jobs=2, otter_run={OTTER_RUN})
    return dict(zip(names, reports, strict=True))


def test_build_outputs(built: dict[str, A.Built]) -> None:
    for b in built.values():
        assert b.student.exists() and b.solution.exists() and b.zip.exists(), b
        assert b.student.parent.name == "student"


def _problems(reports: dict[str, A.Report], name: str, letter: str) -> list[str]:
    probs = reports[name].problems
    if letter == "a":  # format problems found while checking the master count as (a)
        return [p for p in probs if not re.search(r"\([bcd]\)", p)]
    return [p for p in probs if f"({letter})" in p]


@pytest.mark.parametrize("name", NAMES)
def test_a_master_passes_public_and_hidden_tests(reports, name: str) -> None:
    assert not _problems(reports, name, "a"), "\n".join(_problems(reports, name, "a"))


@pytest.mark.parametrize("name", NAMES)
def test_b_student_version_has_no_solutions_and_fails_hidden(reports, name: str) -> None:
    assert not _problems(reports, name, "b"), "\n".join(_problems(reports, name, "b"))


@pytest.mark.parametrize("name", NAMES)
def test_c_grading_full_marks_solved_zero_unsolved(reports, name: str) -> None:
    assert not _problems(reports, name, "c"), "\n".join(_problems(reports, name, "c"))
    total, possible = reports[name].scores["solved"]
    assert possible > 0 and total == possible
    assert reports[name].scores["unsolved"][0] == 0
    if name == OTTER_RUN:
        assert reports[name].scores["otter run, solved"] == (total, possible)


@pytest.mark.parametrize("name", NAMES)
def test_d_student_notebook_runs_in_a_clean_kernel(reports, name: str) -> None:
    assert not _problems(reports, name, "d"), "\n".join(_problems(reports, name, "d"))


def test_checker_catches_a_leaked_solution(built: dict[str, A.Built], tmp_path: Path) -> None:
    """The (b) check is not vacuous: a student notebook with one solution line fails it."""
    import nbformat

    b = built[NAMES[0]]
    solution, _, other = A._master_blocks(b.master)
    leaked = A._significant(solution, other)[0]
    nb = A._read(b.student)
    nb.cells.append(nbformat.v4.new_markdown_cell(leaked))
    copy = tmp_path / b.student.name
    nbformat.write(nb, copy)
    rep = A.Report(b.name)
    A.check_b(A.Built(b.name, b.master, copy, b.solution, b.zip), rep)
    assert any("solution line" in p and leaked in p for p in rep.problems), rep.problems


#: For one question of each assignment, a plausible wrong answer that passes the public
#: tests: (question, function it defines, source of the answer cell).
WRONG_ANSWERS = {
    "a1_foundations": ("q1", "sse_by_hand", '''
def sse_by_hand(X, labels):
    """Wrong: squared distances to each group's median, not its mean."""
    X, labels = np.asarray(X, dtype=float), np.asarray(labels)
    return float(sum(((X[labels == g] - np.median(X[labels == g], axis=0)) ** 2).sum()
                     for g in np.unique(labels)))
'''),
    "a2_mdav": ("q1", "mdav_round", '''
def mdav_round(X, remaining, k):
    """Wrong: s is the record farthest from the centroid, not from r."""
    X, remaining = np.asarray(X, dtype=float), np.asarray(remaining)
    c = X[remaining].mean(axis=0)
    def around(i, pool):
        others = pool[pool != i]
        d = ((X[others] - X[i]) ** 2).sum(axis=1)
        return np.concatenate([[i], others[np.argsort(d, kind="stable")[: k - 1]]])
    r = remaining[np.argmax(((X[remaining] - c) ** 2).sum(axis=1))]
    group_r = around(r, remaining)
    rest = remaining[~np.isin(remaining, group_r)]
    s = rest[np.argmax(((X[rest] - c) ** 2).sum(axis=1))]
    return group_r, around(s, rest)
'''),
    "a3_vmdav": ("q1", "closest_to_group", '''
def closest_to_group(X, group, outside):
    """Wrong: nearest to the last member added, not to any member."""
    X, group, outside = np.asarray(X, dtype=float), np.asarray(group), np.asarray(outside)
    d = np.sqrt(((X[outside] - X[group[-1]]) ** 2).sum(axis=1))
    return int(outside[np.argmin(d)]), float(d.min())
'''),
    "a4_ivmdav": ("q1", "iv_test", '''
def iv_test(X, r, y, others, k, gamma):
    """Wrong: d2 is the mean distance to the k-1 nearest, not the (k-1)-th distance."""
    X, others = np.asarray(X, dtype=float), np.asarray(others)
    d1 = float(np.linalg.norm(X[y] - X[r]))
    d2 = float(np.sort(np.sqrt(((X[others] - X[y]) ** 2).sum(axis=1)))[: k - 1].mean())
    return d1, d2, bool(d2 > gamma * d1)
'''),
    "a5_genetic": ("q2", "one_point_crossover", '''
def one_point_crossover(a, b, cut):
    """Wrong: cuts after position cut + 1."""
    a, b = np.asarray(a), np.asarray(b)
    return np.concatenate([a[: cut + 1], b[cut + 1:]]), np.concatenate([b[: cut + 1], a[cut + 1:]])
'''),
    "a6_gomm": ("q1", "standardize_pair", '''
def standardize_pair(X, P):
    """Wrong: each data set centred on its own mean."""
    X, P = np.asarray(X, dtype=float), np.asarray(P, dtype=float)
    return (X - X.mean(axis=0)) / X.std(axis=0), (P - P.mean(axis=0)) / X.std(axis=0)
'''),
}


def test_every_assignment_has_a_wrong_answer() -> None:
    assert sorted(WRONG_ANSWERS) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_a_wrong_answer_scores_at_most_a_quarter(built: dict[str, A.Built], name: str) -> None:
    """The hidden tests carry the points: passing only the public tests earns <= 1/4."""
    question, function, source = WRONG_ANSWERS[name]
    scores = A.grade_with_answer(built[name], function, source)
    got, possible = scores[question]
    assert 0 < got <= possible / 4, (
        f"{name} {question}: a wrong {function} scores {got} of {possible} "
        "(it should pass the public tests only, worth at most a quarter)")


def test_two_builds_give_the_same_notebooks(tmp_path: Path) -> None:
    """What was handed out can be compared with a rebuild: the generated notebooks are the
    same byte for byte (nbformat and otter drew random cell ids)."""
    first, second = (A.build_one(A.masters(["a2"])[0], tmp_path / d) for d in ("one", "two"))
    for a, b in ((first.student, second.student), (first.solution, second.solution)):
        assert a.read_bytes() == b.read_bytes(), f"{a.name} differs between two builds"


def test_grading_is_the_same_on_every_run(built: dict[str, A.Built], monkeypatch) -> None:
    """A regrade gives the same score and the same failed cases (the hidden tests' data come
    from case_seed, not from the clock or os.urandom); another course's salt draws other data."""
    question, function, source = WRONG_ANSWERS["a2_mdav"]
    runs = []
    for _ in range(2):
        outputs: dict[str, list[str]] = {}
        runs.append((A.grade_with_answer(built["a2_mdav"], function, source, outputs=outputs),
                     outputs))
    assert runs[0] == runs[1] and runs[0][1][question], runs[0]
    import microagg.teaching as teaching

    plain = teaching.case_seed("a2_mdav/q1")
    monkeypatch.setenv("MICROAGG_GRADING_SALT", "spring term")
    assert teaching.case_seed("a2_mdav/q1") != plain


#: Plausible wrong answers that pass the public tests but that the hidden tests' random data
#: expose only on some grading runs; each is caught by fixed cases of the hidden test, on
#: every run. (assignment, question, function, edits (old, new) of the reference answer.)
CAUGHT_ON_EVERY_RUN = {
    "a2 my_mdav: rounds while more than 3k records remain": (
        "a2_mdav", "q2", "my_mdav",
        [("while remaining.size >= 3 * k:", "while remaining.size > 3 * k:")]),
    "a2 my_mdav: final group around the record farthest from all records' centroid": (
        "a2_mdav", "q2", "my_mdav",
        [("far = remaining[np.argmax(((X[remaining] - X[remaining].mean(axis=0))",
          "far = remaining[np.argmax(((X[remaining] - X.mean(axis=0))")]),
    "a2 mdav_round: s's neighbours drawn from every remaining record but r": (
        "a2_mdav", "q1", "mdav_round",
        [("group_s = group_around(s, rest)",
          "group_s = group_around(s, remaining[~np.isin(remaining, [r])])")]),
    "a3 my_vmdav: centroids moved as each leftover record joins": (
        "a3_vmdav", "q3", "my_vmdav",
        [("    for i in left:\n",
          "    for i in left:\n        cents = np.array([X[labels == h].mean(axis=0) "
          "for h in range(g)])\n")]),
    "a3 my_vmdav: leftover records join the last group": (
        "a3_vmdav", "q3", "my_vmdav",
        [("labels[i] = int(np.argmin(((cents - X[i]) ** 2).sum(axis=1)))",
          "labels[i] = g - 1")]),
    "a3 extends: d_out squared": (
        "a3_vmdav", "q2", "extends",
        [("np.sqrt(((X[rest] - X[e_min]) ** 2).sum(axis=1)).min()",
          "((X[rest] - X[e_min]) ** 2).sum(axis=1).min()")]),
    "a4 my_ivmdav: stops at the first rejected candidate": (
        "a4_ivmdav", "q2", "my_ivmdav",
        [("                group.append(int(y))\n",
          "                group.append(int(y))\n            else:\n                break\n")]),
    "a4 my_ivmdav: lets a group grow to 2k": (
        "a4_ivmdav", "q2", "my_ivmdav",
        [("if len(group) >= 2 * k - 1:", "if len(group) >= 2 * k:")]),
    "a5 ga_after_mdav: the GA not seeded with MDAV's partition (the better of the two kept)": (
        "a5_genetic", "q5", "ga_after_mdav",
        [(", seed=seed, initial=start)", ", seed=seed)"),
         ("float(result.sse)", "float(min(result.sse, microagg.sse(X, start)))")]),
    "a6 dld_by_hand: distances on the raw scale": (
        "a6_gomm", "q2", "dld_by_hand",
        [("Z, Q = standardize_pair(X, P)",
          "Z, Q = np.asarray(X, dtype=float), np.asarray(P, dtype=float)")]),
}


def _edited_answer(b: A.Built, function: str, edits: list[tuple[str, str]]) -> str:
    """The reference answer cell defining ``function``, with ``edits`` applied."""
    nb = A._solved_or_not(b, solved=True)
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and A.ANSWER_TAG in A._tags(c)
               and f"def {function}(" in c.source]
    source = cell.source
    for old, new in edits:
        assert source.count(old) == 1, f"{b.name}: {old!r} is not once in {function}"
        source = source.replace(old, new)
    return source


@pytest.mark.parametrize("mistake", list(CAUGHT_ON_EVERY_RUN))
def test_fixed_cases_catch_a_wrong_answer_on_every_run(built: dict[str, A.Built],
                                                      mistake: str) -> None:
    """(f) Graded with the hidden tests' random loops emptied, the wrong answer still gets at
    most the public quarter: the fixed cases alone catch it, so no grading run can give it
    more, whatever its seed (and an ordinary run, random cases included, gives no more)."""
    name, question, function, edits = CAUGHT_ON_EVERY_RUN[mistake]
    source = _edited_answer(built[name], function, edits)
    for random_cases in (False, True):
        got, possible = A.grade_with_answer(built[name], function, source,
                                            random_cases=random_cases)[question]
        assert 0 < got <= possible / 4, (
            f"{mistake}: scores {got} of {possible} on {question} "
            f"({'with' if random_cases else 'without'} the random cases)")


@pytest.mark.parametrize("name", sorted({v[0] for v in CAUGHT_ON_EVERY_RUN.values()}))
def test_fixed_cases_give_the_reference_full_marks(built: dict[str, A.Built], name: str) -> None:
    """The fixed cases agree with microagg: the reference answers keep full marks on them."""
    b = built[name]
    scores = A._grade_here(A._solved_or_not(b, solved=True), b, random_cases=False)
    assert scores and all(got == possible for got, possible in scores.values()), scores


#: For one question of each assignment, an answer that calls the ``microagg`` function the
#: hidden tests compare it with (by its name, under another module name, or through a name
#: imported at the top of the notebook): right on every case, yet worth nothing
#: (``microagg.teaching.own_work`` in every public and hidden test).
BORROWED_ANSWERS = {
    "a1_foundations": ("q1", "sse_by_hand", '''
def sse_by_hand(X, labels):
    """Borrowed: microagg's own SSE."""
    return float(microagg.sse(X, labels))
'''),
    "a2_mdav": ("q2", "my_mdav", '''
def my_mdav(X, k):
    """Borrowed: microagg.mdav, relabelled by a helper of the student's own."""
    def tidy(labels):
        return np.unique(labels, return_inverse=True)[1]
    return tidy(microagg.mdav(X, k))
'''),
    "a3_vmdav": ("q3", "my_vmdav", '''
def my_vmdav(X, k, gamma):
    """Borrowed: microagg.vmdav."""
    return microagg.vmdav(X, k, gamma=gamma)
'''),
    "a4_ivmdav": ("q2", "my_ivmdav", '''
import microagg as m

def my_ivmdav(X, k, gamma):
    """Borrowed under another module name: microagg.ivmdav."""
    return m.ivmdav(X, k, gamma=gamma)
'''),
    "a5_genetic": ("q3", "is_feasible", '''
def is_feasible(labels, k):
    """Borrowed: microagg.is_k_partition."""
    return bool(microagg.is_k_partition(labels, k, max_size=2 * k - 1))
'''),
    "a6_gomm": ("q2", "dld_by_hand", '''
def dld_by_hand(X, P):
    """Borrowed through the name imported at the top: distance_linkage_disclosure."""
    return float(distance_linkage_disclosure(X, P))
'''),
}


def test_every_assignment_has_a_borrowed_answer() -> None:
    assert sorted(BORROWED_ANSWERS) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_an_answer_calling_microagg_scores_nothing(built: dict[str, A.Built],
                                                  name: str) -> None:
    """An answer that calls the microagg function it is compared with passes every
    comparison; its public and hidden tests fail it anyway, each naming the call (so the
    student learns it from ``grader.check`` already)."""
    question, function, source = BORROWED_ANSWERS[name]
    outputs: dict[str, list[str]] = {}
    got, possible = A.grade_with_answer(built[name], function, source,
                                        outputs=outputs)[question]
    assert got == 0, f"{name} {question}: {function} calling microagg scores {got} of {possible}"
    assert len(outputs[question]) >= 2, outputs[question]  # the public tests and the hidden
    for out in outputs[question]:
        assert f"{function} calls microagg." in out and "write it yourself" in out, out[-1500:]


def test_a_hidden_test_names_its_seed_when_the_code_raises(built: dict[str, A.Built]) -> None:
    """(g) An answer that raises on some inputs fails the hidden test with the error, the
    case and the seed in its output (so the failure can be reproduced)."""
    source = '''
def my_ivmdav(X, k, gamma):
    """Raises on data sets of more than 6 records (the public test has 6)."""
    X = np.asarray(X, dtype=float)
    if len(X) > 6:
        return undefined_name
    return np.array([0, 0, 0, 1, 1, 1])  # the public test's answer
'''
    outputs: dict[str, list[str]] = {}
    got, possible = A.grade_with_answer(built["a4_ivmdav"], "my_ivmdav", source,
                                        outputs=outputs)["q2"]
    assert got == possible / 4, (got, possible)
    (out,) = outputs["q2"]
    assert re.search(r"NameError while checking my_ivmdav: .*undefined_name.* \(fixed case: "
                     r"[^()]*k=2, gamma=1\.0, n=11, seed \d+\)", out), out[-1500:]


def test_command_line_options_before_or_after_names(tmp_path: Path, capsys,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """(h) `build --out DIR NAME` works as documented, and so does `build NAME --out DIR`;
    the paths printed are relative to the current folder (or absolute) and exist."""
    monkeypatch.chdir(tmp_path)
    for argv in (["build", "--out", "here", "a1"], ["build", "a1", "--out", str(tmp_path / "b")]):
        assert A.main(argv) == 0
        printed = capsys.readouterr().out
        paths = re.findall(r"(?:student|autograder) ([^\s,]+)", printed)
        assert len(paths) == 2, printed
        for shown in paths:
            assert Path(shown).is_file(), f"{argv}: printed {shown}, which does not exist"
        assert not Path(paths[0]).is_absolute(), paths


def _page_commands(section: str) -> list[str]:
    """The ```bash blocks of a section of chapters/instructors.md, as the page prints them."""
    text = (ROOT / "chapters" / "instructors.md").read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)```", body, flags=re.DOTALL)


def test_instructors_grading_commands_work_as_printed(built: dict[str, A.Built],
                                                      tmp_path: Path) -> None:
    """The page's grading commands, run verbatim in a shell from the clone, grade a correct
    and a wrong submission as the page says: full marks, and at most a quarter of the
    question the wrong function answers; the class's grades.csv says the same."""
    import csv
    import json
    import subprocess

    import nbformat

    whole_class, by_hand = _page_commands("Grading")
    assert "make grade-all" in whole_class
    assert "make grade " in by_hand and "otter run" in by_hand
    name = "a2_mdav"
    assert name in whole_class and name in by_hand, "the test grades the assignment the page names"
    good, bad = "alice", "bob"
    assert f"submissions/{good}/" in by_hand, "the page grades alice by hand"
    question, function, source = WRONG_ANSWERS[name]
    nb = A._solved_or_not(built[name], solved=True)
    for who, answer in ((good, None), (bad, source)):
        copy = nb if answer is None else nbformat.from_dict(nbformat.from_dict(nb))
        if answer is not None:
            (cell,) = [c for c in copy.cells if c.cell_type == "code"
                       and A.ANSWER_TAG in A._tags(c) and f"def {function}(" in c.source]
            cell.source = answer
        sub = tmp_path / "course" / "submissions" / who / f"{name}.ipynb"
        sub.parent.mkdir(parents=True)
        nbformat.write(copy, sub)
    env = dict(os.environ, HOME=str(tmp_path))  # the page's ~/course/... is under tmp_path
    env.pop("MAKEFLAGS", None)

    def scores(who: str) -> dict[str, tuple[float, float]]:
        found = tmp_path / "course" / "results" / who / "results.json"
        tests = json.loads(found.read_text())["tests"]
        return {t["name"]: (t["score"], t["max_score"]) for t in tests if "max_score" in t}

    for block in (whole_class, by_hand):
        done = subprocess.run(["bash", "-e", "-c", block], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=1800)
        assert done.returncode == 0, f"{block}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        right, wrong = scores(good), scores(bad)
        assert right and all(got == possible for got, possible in right.values()), right
        assert set(wrong) == set(right)
        got, possible = wrong[question]
        assert got <= possible / 4, wrong
        assert all(wrong[q][0] <= right[q][0] for q in right), wrong
    with open(tmp_path / "course" / "results" / "grades.csv", newline="") as fh:
        rows = {r["student"]: r for r in csv.DictReader(fh)}
    assert set(rows) == {good, bad} and {r["status"] for r in rows.values()} == {"graded"}
    assert float(rows[good]["autograded"]) == float(rows[good]["possible"]) > 0
    assert float(rows[bad][question]) == wrong[question][0] and rows[bad]["manual"] == ""


def test_grading_a_class_records_why_a_notebook_got_no_score(built: dict[str, A.Built],
                                                             tmp_path: Path) -> None:
    """make grade-all never stops at one student: a notebook that runs too long, one of
    another assignment and a folder of two notebooks each get a one-line status in
    grades.csv, and a notebook that lost otter's metadata is graded with the assignment's
    (otter refused it: "Received submission for assignment 'None'")."""
    import csv

    import nbformat

    name = "a2_mdav"
    solved = A._solved_or_not(built[name], solved=True)
    subs = tmp_path / "submissions"
    bare = nbformat.from_dict(nbformat.from_dict(solved))
    bare.metadata.pop("otter")
    forever = nbformat.from_dict(nbformat.from_dict(solved))
    forever.cells.insert(1, nbformat.v4.new_code_cell("while True:\n    pass"))
    other = nbformat.read(built["a3_vmdav"].student, as_version=4)
    for who, nbs in {"ann": [bare], "ben": [forever], "cy": [other], "di": [bare, bare]}.items():
        (subs / who).mkdir(parents=True)
        for i, nb in enumerate(nbs):
            nbformat.write(nb, subs / who / f"{name}{'' if i == 0 else i}.ipynb")
    out = built[name].zip.parents[2]  # (the session's build: <out>/<name>/autograder/zip)
    table = A.grade_all(name, subs, tmp_path / "results", out, timeout=30)
    with open(table, newline="") as fh:
        rows = {r["student"]: r for r in csv.DictReader(fh)}
    assert rows["ann"]["status"] == "graded"
    assert float(rows["ann"]["autograded"]) == float(rows["ann"]["possible"]) > 0
    assert rows["ben"]["status"].startswith("not graded: grading a2_mdav.ipynb took more than")
    assert "is assignment a3_vmdav" in rows["cy"]["status"]
    assert rows["di"]["status"] == ("not graded: 2 notebooks for this student, not one: "
                                    f"di/{name}.ipynb, di/{name}1.ipynb")
    assert all(rows[w]["autograded"] == "" for w in ("ben", "cy", "di"))


def test_make_help_lists_every_target() -> None:
    """`make help` names every target of the Makefile (instructors look there first)."""
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("no make")
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([A-Za-z][\w-]*):(?!=)", text, flags=re.MULTILINE)) - {"help"}
    shown = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout
    listed = set(re.findall(r"^make ([\w-]+)", shown, flags=re.MULTILINE))
    assert {"assignments", "grade", "lab"} <= targets
    assert targets <= listed, f"not in `make help`: {sorted(targets - listed)}"


def test_grading_a_bad_submission_is_one_line(tmp_path: Path, capsys) -> None:
    """A missing submission, or a file that is not a notebook, is one line on stderr and
    exit status 2 (it was a traceback), before anything is built or run."""
    bad = tmp_path / "a2_mdav.ipynb"
    bad.write_text("not a notebook")
    for sub in (tmp_path / "none.ipynb", bad):
        assert A.main(["grade", "a2", str(sub), str(tmp_path / "results")]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and str(sub) in err, err
        assert "Traceback" not in err


def test_an_instructor_s_variant_is_named_in_full(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A private variant beside a master (a2_mdav_private.md) is picked by its full name;
    the number alone (a2) is then ambiguous and says so (it crashed `make grade`)."""
    for p in A.MASTERS.glob("a[0-9]*_*.md"):
        (tmp_path / p.name).write_text(p.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "a2_mdav_private.md").write_text("", encoding="utf-8")
    monkeypatch.setattr(A, "MASTERS", tmp_path)
    assert [p.stem for p in A.masters(["a2_mdav_private"])] == ["a2_mdav_private"]
    assert [p.stem for p in A.masters(["a2_mdav", "a1"])] == ["a1_foundations", "a2_mdav"]
    with pytest.raises(SystemExit, match=r"'a2' names 2 master notebooks \(a2_mdav, "
                       r"a2_mdav_private\): give the full name"):
        A.masters(["a2"])


def test_no_submission_stops_the_class(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """JSON that is no notebook (a list, ``"metadata": []``, ``"cells": 5``, otter's metadata
    a string) and a submission named so that its results folder would be RESULTS, its parent
    or grades.csv each get a one-line status; the others are graded and grades.csv is
    written. Each of them stopped `make grade-all` for the whole class, with no table."""
    import csv
    import json
    import subprocess

    import nbformat

    out = tmp_path / "build"
    nb = nbformat.v4.new_notebook(metadata={"otter": {"assignment_name": "a2_mdav"}})
    (out / "a2_mdav" / "student").mkdir(parents=True)
    (out / "a2_mdav" / "autograder").mkdir()
    nbformat.write(nb, out / "a2_mdav" / "student" / "a2_mdav.ipynb")
    (out / "a2_mdav" / "autograder" / "a2_mdav-autograder.zip").write_bytes(b"")

    def otter_run(cmd, cwd, **kwargs):  # (otter itself is not what this test is about)
        tests = [{"name": "q1", "score": 3.0, "max_score": 3.0}]
        Path(cwd, "results.json").write_text(json.dumps({"tests": tests}), encoding="utf-8")
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(A.subprocess, "run", otter_run)
    subs = tmp_path / "course" / "submissions"
    subs.mkdir(parents=True)
    nbformat.write(nb, subs / "alice.ipynb")
    no_notebooks = {"list": "[]",
                    "meta": '{"cells": [], "metadata": [], "nbformat": 4, "nbformat_minor": 5}',
                    "cells": '{"cells": 5, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}',
                    "otter": '{"cells": [], "metadata": {"otter": "x"}, "nbformat": 4, '
                             '"nbformat_minor": 5}'}
    for who, text in no_notebooks.items():
        (subs / f"{who}.ipynb").write_text(text, encoding="utf-8")
    for who in ("grades.csv", ".", ".."):
        nbformat.write(nb, subs / f"{who}.ipynb")
    # A folder and a notebook of the same name were one student, the folder's notebook
    # silently dropped; JupyterLab's checkpoints folder was graded as a student.
    (subs / "bob").mkdir()
    nbformat.write(nb, subs / "bob" / "a2_mdav.ipynb")
    nbformat.write(nb, subs / "bob.ipynb")
    (subs / ".ipynb_checkpoints").mkdir()
    nbformat.write(nb, subs / ".ipynb_checkpoints" / "alice-checkpoint.ipynb")
    results = tmp_path / "course" / "results"
    table = A.grade_all("a2_mdav", subs, results, out)
    assert table.is_file()
    with open(table, newline="") as fh:
        rows = {r["student"]: r for r in csv.DictReader(fh)}
    assert rows["alice"]["status"] == "graded" and rows["alice"]["autograded"] == "3"
    assert rows["bob"]["status"] == ("not graded: 2 notebooks for this student, not one: "
                                     "bob/a2_mdav.ipynb, bob.ipynb"), rows["bob"]
    assert ".ipynb_checkpoints" not in rows
    for who in no_notebooks:
        assert "is not a notebook that can be read" in rows[who]["status"], rows[who]
    for who in ("grades.csv", ".", ".."):
        assert "cannot be a results folder" in rows[who]["status"], rows[who]
    assert not (results.parent / "results.json").exists()


def test_a_timed_out_notebook_leaves_no_kernel_behind(built: dict[str, A.Built],
                                                      tmp_path: Path) -> None:
    """A cell stuck in compiled code that holds the GIL (here ``sum(range(10**18))``) ran on
    after the timeout: killing ``otter run`` left its kernel spinning, a core lost for every
    later student of the class. The run's processes are ended with it."""
    import nbformat
    import psutil

    name = "a2_mdav"
    pid_file = tmp_path / "kernel.pid"
    nb = nbformat.read(built[name].student, as_version=4)
    nb.cells.insert(1, nbformat.v4.new_code_cell(
        f"import os\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "sum(range(10**18))"))
    sub = tmp_path / "submissions" / "eve" / f"{name}.ipynb"
    sub.parent.mkdir(parents=True)
    nbformat.write(nb, sub)
    out = built[name].zip.parents[2]
    with pytest.raises(TimeoutError, match="took more than 60 s"):
        A.grade(name, sub, tmp_path / "results", out, timeout=60)
    assert pid_file.exists(), "the kernel did not reach the cell in 60 s: raise the timeout"
    kernel = int(pid_file.read_text())
    try:
        gone, alive = psutil.wait_procs([psutil.Process(kernel)], timeout=5)
    except psutil.NoSuchProcess:
        alive = []
    try:
        assert not alive, f"the kernel {kernel} still runs after the timeout"
    finally:
        for proc in alive:
            proc.kill()


# --------------------------------------------------------------------------------------
# grade-all's bookkeeping, with a stand-in for grade() (no kernel): resuming, a table kept
# up to date and safe to open in a spreadsheet, several notebooks at once
# --------------------------------------------------------------------------------------


def _stand_in_build(tmp_path: Path) -> Path:
    """A build folder holding what grade_all looks for (a student notebook, a bundle)."""
    import zipfile

    import nbformat

    out = tmp_path / "build"
    (out / "a2_mdav" / "student").mkdir(parents=True)
    (out / "a2_mdav" / "autograder").mkdir()
    nbformat.write(nbformat.v4.new_notebook(), out / "a2_mdav" / "student" / "a2_mdav.ipynb")
    with zipfile.ZipFile(out / "a2_mdav" / "autograder" / "a2_mdav-autograder.zip", "w") as zf:
        zf.writestr("tests/q1.py", "OK_FORMAT = True\n")
    return out


def _class_of(folder: Path, students: list[str]) -> Path:
    """A submissions folder: ``students`` each with a folder holding ``a2_mdav.ipynb``."""
    import nbformat

    for who in students:
        (folder / who).mkdir(parents=True)
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"x = {len(who)}")])
        nbformat.write(nb, folder / who / "a2_mdav.ipynb")
    return folder


class _StandIn:
    """grade() without otter: scores from the notebook's text, results.json written; the
    students it graded in ``graded`` (and their runs' tags in ``tags``)."""

    def __init__(self, stop_at: str | None = None, fail: str | None = None,
                 delay: float = 0.0) -> None:
        self.graded: list[str] = []
        self.tags: list[str] = []
        self.stop_at, self.fail, self.delay = stop_at, fail, delay

    def __call__(self, name, submission, results, out=None, timeout=None, *, tag=None):
        import json
        import random
        import time

        who = Path(results).name
        if who == self.stop_at:
            raise KeyboardInterrupt  # (Ctrl-C while this student is graded)
        self.graded.append(who)
        self.tags.append(tag)
        if self.delay:
            time.sleep(random.uniform(0, self.delay))
        if who == self.fail:
            raise RuntimeError("otter run wrote no results for a2_mdav.ipynb: boom")
        Path(results).mkdir(parents=True, exist_ok=True)
        Path(results, "results.json").write_text(json.dumps({"tests": []}), encoding="utf-8")
        size = len(Path(submission).read_bytes()) % 7
        return {"q1": (size / 4, 2.0), "q10": (-0.0, 1.0), "q2": (1.0, 1.0)}


def _table(path: Path) -> dict[str, dict[str, str]]:
    import csv

    with open(path, newline="", encoding="utf-8") as fh:
        return {r["student"]: r for r in csv.DictReader(fh)}


def test_a_stopped_class_keeps_its_table_and_resumes(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C at the fourth of six students left no grades.csv (it was written after the
    last), and a rerun graded everyone again. Now the table holds the students graded so
    far and says who is not graded yet; a rerun grades only those, the student who got no
    score and the one whose notebook changed (never reusing a stale score), and gives the
    same table as grading everyone; a changed salt, a missing results.json or --regrade
    grade again."""
    import nbformat

    out = _stand_in_build(tmp_path)
    students = ["ann", "ben", "cy", "di", "eve", "fay"]
    subs = _class_of(tmp_path / "subs", students)
    results = tmp_path / "results"
    first = _StandIn(stop_at="di", fail="ben")
    monkeypatch.setattr(A, "grade", first)
    with pytest.raises(KeyboardInterrupt):
        A.grade_all("a2_mdav", subs, results, out)
    rows = _table(results / "grades.csv")
    assert list(rows) == students
    assert rows["ann"]["status"] == "graded" and rows["ann"]["autograded"] != ""
    assert rows["ben"]["status"].startswith("not graded: otter run wrote no results")
    assert rows["cy"]["status"] == "graded"
    assert all(rows[w]["status"] == A.PENDING for w in ("di", "eve", "fay"))
    assert [p.name for p in results.iterdir() if p.name.endswith(".tmp")] == []

    nb = nbformat.read(subs / "ann" / "a2_mdav.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("y = 2  # a late change"))
    nbformat.write(nb, subs / "ann" / "a2_mdav.ipynb")
    second = _StandIn()
    monkeypatch.setattr(A, "grade", second)
    table = A.grade_all("a2_mdav", subs, results, out)
    assert second.graded == ["ann", "ben", "di", "eve", "fay"]  # (not cy)
    again = table.read_bytes()

    fresh = _StandIn()
    monkeypatch.setattr(A, "grade", fresh)
    A.grade_all("a2_mdav", subs, tmp_path / "fresh", out)
    assert (tmp_path / "fresh" / "grades.csv").read_bytes() == again

    for change in ("nothing", "results.json", "salt", "regrade"):
        run = _StandIn()
        monkeypatch.setattr(A, "grade", run)
        if change == "results.json":
            (results / "di" / "results.json").unlink()
        if change == "salt":
            monkeypatch.setenv("MICROAGG_GRADING_SALT", "spring term")
        A.grade_all("a2_mdav", subs, results, out, regrade=change == "regrade")
        assert run.graded == {"nothing": [], "results.json": ["di"], "salt": students,
                              "regrade": students}[change], change
        assert table.read_bytes() == again


def test_grades_csv_is_never_half_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run stopped while it writes the table leaves the previous table whole (the table
    is written beside it and put in its place in one step), and no temporary file."""
    out = _stand_in_build(tmp_path)
    subs = _class_of(tmp_path / "subs", ["ann", "ben", "cy"])
    results = tmp_path / "results"
    monkeypatch.setattr(A, "grade", _StandIn())
    table = A.grade_all("a2_mdav", subs, results, out)
    before = table.read_bytes()
    import csv

    real_writer = csv.writer

    class Stopped:  # a writer whose third row is cut short by Ctrl-C
        def __init__(self, fh, *args, **kwargs):
            self.inner, self.n = real_writer(fh, *args, **kwargs), 0

        def writerow(self, row):
            self.n += 1
            if self.n == 3:
                raise KeyboardInterrupt
            return self.inner.writerow(row)

        def writerows(self, rows):
            for row in rows:
                self.writerow(row)

    monkeypatch.setattr(csv, "writer", Stopped)  # (csv.DictWriter writes with it too)
    with pytest.raises(KeyboardInterrupt):
        A.grade_all("a2_mdav", subs, results, out)
    assert table.read_bytes() == before
    assert sorted(p.name for p in results.iterdir()) == ["ann", "ben", "cy", "grades.csv"]


def test_grades_csv_is_safe_to_open_in_a_spreadsheet(tmp_path: Path, capsys,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A student's folder or notebook named like a formula (=HYPERLINK(...), +1, -2, @SUM,
    a tab first) would run as one in Excel or LibreOffice: its cell starts with ' instead.
    Scores stay numbers (0, never -0) and questions sort as q1, q2, q10. A folder name that
    is not UTF-8 stopped the class at the table (UnicodeEncodeError): its bytes show as \\xNN,
    and a name holding a terminal's escape sequence is printed with it escaped."""
    import nbformat

    out = _stand_in_build(tmp_path)
    formulas = ['=HYPERLINK("https:x","click")', "+1", "-2", "@SUM(A1)", "\tx", "=1+2"]
    subs = _class_of(tmp_path / "subs", ["ann", *formulas])
    nbformat.write(nbformat.v4.new_notebook(), subs / "=cmd.ipynb")  # (a notebook, no folder)
    (subs / "=cmd").mkdir()
    nbformat.write(nbformat.v4.new_notebook(), subs / "=cmd" / "=cmd.ipynb")  # two notebooks
    os.mkdir(os.fsencode(subs) + b"/caf\xe9")
    nbformat.write(nbformat.v4.new_notebook(), subs / os.fsdecode(b"caf\xe9") / "a2_mdav.ipynb")
    (subs / "\x1b[2Jeve").mkdir()  # (clears the screen when printed as it is)
    monkeypatch.setattr(A, "grade", _StandIn())
    table = A.grade_all("a2_mdav", subs, tmp_path / "results", out)
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and "\\x1b[2Jeve: not graded: 0 notebooks" in shown, shown
    rows = _table(table)
    for name in formulas:
        assert rows["'" + name]["status"] == "graded", rows
    assert rows["'=cmd"]["status"].startswith("not graded: 2 notebooks")
    assert rows["caf\\xe9"]["status"] == "graded"
    for row in rows.values():
        for column in ("student", "notebook", "status"):
            assert not row[column].startswith(A.FORMULA_START), row
        assert row["q10"] in ("", "0") and not row["autograded"].startswith("-"), row
    with open(table, encoding="utf-8") as fh:
        assert fh.readline().strip() == ("student,notebook,q1,q2,q10,autograded,possible,"
                                         "manual,status")
    assert (tmp_path / "results" / formulas[0] / "results.json").is_file()  # (its real name)


def test_grading_a_class_several_at_a_time_gives_the_same_results(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """--jobs 3 grades three notebooks at once, each run with its own tag (what stops its
    processes): the table is the same, row for row, as one at a time, however the runs
    finish. Progress says how long is left; the run ends with a summary."""
    out = _stand_in_build(tmp_path)
    students = [f"s{i:02d}" for i in range(12)]
    subs = _class_of(tmp_path / "subs", students)
    tables = {}
    for jobs in (1, 3):
        run = _StandIn(fail="s04", delay=0.05 * (jobs > 1))
        monkeypatch.setattr(A, "grade", run)
        tables[jobs] = A.grade_all("a2_mdav", subs, tmp_path / f"results{jobs}", out,
                                   jobs=jobs).read_bytes()
        assert sorted(run.graded) == students and len(set(run.tags)) == len(students)
    assert tables[1] == tables[3]
    shown = capsys.readouterr().out
    assert re.search(r"\[1/12\] s\d\d: .*; about \d+ s left", shown), shown
    assert "done after" in shown and "11 of 12 students graded, 1 not graded" in shown
    assert "  not graded: s04" in shown
    assert f"grades: {tmp_path / 'results3' / 'grades.csv'}" in shown
    with pytest.raises(ValueError, match="jobs must be 1 or more"):
        A.grade_all("a2_mdav", subs, tmp_path / "results", out, jobs=0)


def test_stopping_a_class_ends_every_run_in_progress(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while two notebooks are graded at once: the other run's processes (here a
    ``sleep`` carrying its tag, as a kernel does) are ended, not waited for."""
    import subprocess
    import threading
    import time

    import psutil

    out = _stand_in_build(tmp_path)
    subs = _class_of(tmp_path / "subs", ["ann", "ben"])
    started, pids = threading.Event(), []

    def grade(name, submission, results, out=None, timeout=None, *, tag=None):
        if Path(results).name == "ben":
            started.wait(30)
            raise KeyboardInterrupt
        proc = subprocess.Popen(["sleep", "600"], env=dict(os.environ, **{A.RUN_TAG: tag}))
        pids.append(proc.pid)
        started.set()
        proc.wait()
        raise RuntimeError("otter run wrote no results")

    monkeypatch.setattr(A, "grade", grade)
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        A.grade_all("a2_mdav", subs, tmp_path / "results", out, jobs=2)
    assert time.monotonic() - t0 < 60
    assert pids and not psutil.pid_exists(pids[0]), "the sleep of ann's run still runs"
    rows = _table(tmp_path / "results" / "grades.csv")
    assert {r["status"] for r in rows.values()} == {A.PENDING}


def test_what_instructors_trip_over_in_a_class_folder(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A zip made on a Mac adds __MACOSX/ and ._alice.ipynb files (a student of their own,
    and a second "notebook" that left alice ungraded); a learning platform nests a notebook
    in a subfolder (0 notebooks); alice/ and Alice/ share one results folder on macOS; a
    notebook named .IPYNB was dropped without a word; RESULTS inside SUBMISSIONS was read
    as a student on the next run."""
    import nbformat

    out = _stand_in_build(tmp_path)
    subs = _class_of(tmp_path / "subs", ["alice", "bob", "Bob"])
    nb = nbformat.v4.new_notebook()
    (subs / "alice" / "._a2_mdav.ipynb").write_bytes(b"\x00\x05\x16\x07")
    (subs / "__MACOSX" / "alice").mkdir(parents=True)
    (subs / "__MACOSX" / "alice" / "._a2_mdav.ipynb").write_bytes(b"\x00\x05\x16\x07")
    (subs / "._dan.IPYNB").write_bytes(b"\x00\x05\x16\x07")
    (subs / "carol" / "submission" / ".ipynb_checkpoints").mkdir(parents=True)
    nbformat.write(nb, subs / "carol" / "submission" / "a2_mdav.ipynb")
    nbformat.write(nb, subs / "carol" / "submission" / ".ipynb_checkpoints" / "a-checkpoint.ipynb")
    nbformat.write(nb, subs / "dan.IPYNB")
    (subs / "notes.txt").write_text("not a notebook")
    monkeypatch.setattr(A, "grade", _StandIn())
    rows = _table(A.grade_all("a2_mdav", subs, tmp_path / "results", out))
    assert sorted(rows) == ["Bob", "alice", "bob", "carol", "dan"]
    assert rows["alice"]["status"] == rows["carol"]["status"] == rows["dan"]["status"] == "graded"
    assert rows["carol"]["notebook"] == "submission/a2_mdav.ipynb"
    for who, other in (("Bob", "'bob'"), ("bob", "'Bob'")):
        assert rows[who]["status"] == (f"not graded: the name differs from {other} only in "
                                       "case or accents (one results folder on macOS and "
                                       "Windows): rename one of them")
    for results in (subs, subs / "results"):
        with pytest.raises(ValueError, match="SUBMISSIONS .*: its folders would be read as"):
            A.grade_all("a2_mdav", subs, results, out)


def test_a_question_not_named_qN_gets_a_column(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """An instructor's variant may name a question ``round``: the table kept only ``qN``
    columns and stopped the class at the end with ValueError (a header and no rows)."""
    out = _stand_in_build(tmp_path)
    subs = _class_of(tmp_path / "subs", ["ann", "ben"])

    def grade(name, submission, results, out=None, timeout=None, *, tag=None):
        Path(results).mkdir(parents=True, exist_ok=True)
        Path(results, "results.json").write_text("{}", encoding="utf-8")
        return {"q1": (1.0, 1.0), "round": (0.5, 2.0)}

    monkeypatch.setattr(A, "grade", grade)
    rows = _table(A.grade_all("a2_mdav", subs, tmp_path / "results", out))
    assert rows["ben"]["round"] == "0.5" and rows["ben"]["autograded"] == "1.5", rows


def test_grade_all_on_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys) -> None:
    """`grade-all --jobs N --regrade` as `make grade-all JOBS=N REGRADE=1` passes them; Ctrl-C
    ends with status 130 and the table kept; --jobs 0 is one line and status 2."""
    out = _stand_in_build(tmp_path)
    subs = _class_of(tmp_path / "subs", ["ann", "ben"])
    results = tmp_path / "results"
    argv = ["grade-all", "a2_mdav", str(subs), str(results), "--out", str(out)]
    run = _StandIn()
    monkeypatch.setattr(A, "grade", run)
    assert A.main([*argv, "--jobs", "2"]) == 0 and sorted(run.graded) == ["ann", "ben"]
    assert A.main(argv) == 0 and len(run.graded) == 2  # (both kept: none graded again)
    assert A.main([*argv, "--regrade"]) == 0 and len(run.graded) == 4
    monkeypatch.setattr(A, "grade", _StandIn(stop_at="ann"))
    assert A.main([*argv, "--regrade"]) == 130
    assert (results / "grades.csv").is_file()
    capsys.readouterr()
    assert A.main([*argv, "--jobs", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "assignments.py grade-all: jobs must be 1 or more, not 0", err


def test_two_runs_into_one_results_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys) -> None:
    """Two grade-all runs into one RESULTS (two terminals, a cron job and a person) raced on
    grades.csv and the records. Now the second stops at once, naming the folder, the lock
    and who holds it; the lock goes at the end of a run, also one stopped by Ctrl-C."""
    import socket

    out = _stand_in_build(tmp_path)
    subs = _class_of(tmp_path / "subs", ["ann", "ben"])
    results = tmp_path / "results"
    lock = results / A.LOCK
    refused: list[str] = []
    stand_in = _StandIn()

    def grade(name, submission, results_, out_=None, timeout=None, *, tag=None):
        if Path(results_).name == "ann":  # (a second run while the first grades ann)
            assert lock.is_file()
            with pytest.raises(A.ResultsInUse) as err:
                A.grade_all("a2_mdav", subs, results, out)
            refused.append(str(err.value))
            assert A.main(["grade-all", "a2_mdav", str(subs), str(results),
                           "--out", str(out)]) == 2
        return stand_in(name, submission, results_, out_, timeout, tag=tag)

    monkeypatch.setattr(A, "grade", grade)
    A.grade_all("a2_mdav", subs, results, out)
    (message,) = refused
    assert message.startswith(f"RESULTS {results} is in use by another grade-all run "
                              f"(process {os.getpid()} of "), message
    assert f" on {socket.gethostname()}, started 20" in message
    assert f"holds its lock {lock} and still runs" in message
    assert "a lock whose process has ended is taken over by the next run" in message
    shown = capsys.readouterr().err.strip()
    assert shown.startswith("assignments.py grade-all: RESULTS ") and "\n" not in shown, shown
    assert not lock.exists() and sorted(stand_in.graded) == ["ann", "ben"]  # (released)
    monkeypatch.setattr(A, "grade", _StandIn(stop_at="ben"))
    with pytest.raises(KeyboardInterrupt):
        A.grade_all("a2_mdav", subs, results, out, regrade=True)
    assert not lock.exists()
    monkeypatch.setattr(A, "_write_table", lambda *a: (_ for _ in ()).throw(OSError("full")))
    with pytest.raises(OSError, match="full"):
        A.grade_all("a2_mdav", subs, results, out)
    assert not lock.exists()


def test_a_lock_left_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """A lock whose process is gone (killed, the machine restarted) is taken over with a
    notice, also when its process id now belongs to another process (told apart by when
    each started). One held from another machine, or that cannot be read, stops the run
    with what to do."""
    import json
    import socket
    import subprocess

    import psutil

    out = _stand_in_build(tmp_path)
    subs = _class_of(tmp_path / "subs", ["ann"])
    results = tmp_path / "results"
    results.mkdir()
    lock = results / A.LOCK
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert not psutil.pid_exists(gone.pid)
    me = psutil.Process().create_time()
    here = socket.gethostname()
    cases = {"gone": {"pid": gone.pid, "host": here, "process_started": me},
             "reused": {"pid": os.getpid(), "host": here, "process_started": me - 3600}}
    for case, holder in cases.items():
        lock.write_text(json.dumps(dict(holder, started="2026-11-30T09:00:00+00:00")))
        run = _StandIn()
        monkeypatch.setattr(A, "grade", run)
        A.grade_all("a2_mdav", subs, results, out, regrade=True)
        assert run.graded == ["ann"] and not lock.exists(), case
        assert (f"taking over the lock {lock}: process {holder['pid']} that took it at "
                "2026-11-30T09:00:00+00:00 no longer runs\n") in capsys.readouterr().out, case
    refusals = {json.dumps({"pid": os.getpid(), "host": "lab-pc-2", "user": "kim",
                            "started": "2026-11-30T09:00:00+00:00"}):
                f"(process {os.getpid()} of kim on lab-pc-2, started 2026-11-30T09:00:00+00:00)"
                f": its lock {lock} is held from another machine",
                "": f"its lock {lock} exists but cannot be read"}
    for text, expected in refusals.items():
        lock.write_text(text)
        monkeypatch.setattr(A, "grade", _StandIn())
        with pytest.raises(A.ResultsInUse, match="is in use") as err:
            A.grade_all("a2_mdav", subs, results, out, regrade=True)
        assert expected in str(err.value) and f"delete {lock} and run again" in str(err.value)
        assert lock.read_text() == text  # (someone else's: left as it was)
    lock.unlink()
    nb = subs / "ann" / "a2_mdav.ipynb"
    (subs / A.LOCK).mkdir()
    nb.rename(subs / A.LOCK / "a2_mdav.ipynb")
    rows = _table(A.grade_all("a2_mdav", subs, results, out))
    assert "cannot be a results folder" in rows[A.LOCK]["status"], rows


def test_a_rerun_regrades_what_other_versions_graded(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys) -> None:
    """A rerun kept a student whose digests matched although microagg, otter-grader or
    Python had changed since: scores by other code. The record now holds the versions; a
    student graded with others, or whose record (an older one) has none, is graded again,
    and the output says how many and why."""
    import json

    out = _stand_in_build(tmp_path)
    students = ["ann", "ben", "cy"]
    subs = _class_of(tmp_path / "subs", students)
    results = tmp_path / "results"
    monkeypatch.setattr(A, "grade", _StandIn())
    table = A.grade_all("a2_mdav", subs, results, out)
    before = table.read_bytes()
    now = A._versions()
    assert set(now) == {"microagg", "otter-grader", "Python"}
    assert json.loads((results / "ann" / A.RECORD).read_text())["versions"] == now
    capsys.readouterr()

    newer = dict(now, microagg="9.9.9")
    monkeypatch.setattr(A, "_versions", lambda: newer)
    run = _StandIn()
    monkeypatch.setattr(A, "grade", run)
    A.grade_all("a2_mdav", subs, results, out)
    assert run.graded == students and table.read_bytes() == before
    shown = capsys.readouterr().out
    change = f"microagg {now['microagg']} -> 9.9.9"
    assert (f"regrading 3 students graded by an earlier run from the same notebook: {change}\n"
            in shown), shown
    assert f"\n  regraded 3: {change}\n" in shown, shown

    record = json.loads((results / "ben" / A.RECORD).read_text())
    del record["versions"]  # (as grade-all wrote it before)
    (results / "ben" / A.RECORD).write_text(json.dumps(record))
    run = _StandIn()
    monkeypatch.setattr(A, "grade", run)
    A.grade_all("a2_mdav", subs, results, out)
    assert run.graded == ["ben"]
    shown = capsys.readouterr().out
    assert ("regrading 1 student graded by an earlier run from the same notebook: their "
            "graded.json records no versions of microagg, otter-grader and Python (an older "
            "grade-all wrote it)\n") in shown, shown
    run = _StandIn()
    monkeypatch.setattr(A, "grade", run)
    A.grade_all("a2_mdav", subs, results, out)
    shown = capsys.readouterr().out
    assert run.graded == [] and "regrading" not in shown and "  regraded" not in shown


def test_a_missing_bundle_is_built_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys) -> None:
    """grade-all builds a missing bundle once, before grading (not in each grading
    thread), and says so; grade() alone builds it too, quietly."""
    import json
    import subprocess

    builds: list[Path] = []
    real_grade = A.grade

    def build_one(md, out):
        builds.append(out)
        _stand_in_build(Path(out).parent)

    def otter_run(cmd, cwd, **kwargs):
        tests = [{"name": "q1", "score": 1.0, "max_score": 1.0}]
        Path(cwd, "results.json").write_text(json.dumps({"tests": tests}), encoding="utf-8")
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(A, "build_one", build_one)
    monkeypatch.setattr(A.subprocess, "run", otter_run)
    subs = _class_of(tmp_path / "subs", ["ann", "ben", "cy"])
    monkeypatch.setattr(A, "grade", _StandIn())
    A.grade_all("a2_mdav", subs, tmp_path / "results", tmp_path / "build", jobs=2)
    assert builds == [tmp_path / "build"]
    assert capsys.readouterr().out.count("building a2_mdav (its autograder bundle is "
                                         "missing)\n") == 1
    import nbformat

    nb = nbformat.v4.new_notebook(metadata={"otter": {"assignment_name": "a2_mdav"}})
    nbformat.write(nb, tmp_path / "alice.ipynb")
    (tmp_path / "single").mkdir()
    scores = real_grade("a2_mdav", tmp_path / "alice.ipynb", tmp_path / "r",
                     tmp_path / "single" / "build")
    assert scores == {"q1": (1.0, 1.0)} and builds[1:] == [tmp_path / "single" / "build"]
    assert "building" not in capsys.readouterr().out
