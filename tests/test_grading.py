"""``microagg.teaching.own_work``: the assignments' hidden tests fail a student's function that
calls ``microagg`` (by any route the notebook offers), and only such a function.
``microagg.teaching.answer``: no value of the student's making decides a test's comparison;
and the masters' test cells, run on answers that cheat, fail them."""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import microagg
import microagg as m
from microagg import mdav as imported_mdav
from microagg.teaching import answer, own_work

X = np.random.default_rng(0).normal(size=(12, 2))


def _own_mdav(X, k):
    """Not MDAV, but the student's own work: no microagg inside."""
    return np.arange(len(X)) // k


def _direct(X, k):
    return microagg.mdav(X, k)


def _aliased(X, k):
    return m.mdav(X, k)


def _imported(X, k):
    return imported_mdav(X, k)


def _helper(X, k):
    return np.asarray(X)


def _through_helper(X, k):
    def inner(Y):
        return _direct(_helper(Y, k), k)
    return inner(X)


def _private(X, k):
    from microagg._validate import as_matrix
    return np.arange(len(as_matrix(X))) // k


def test_own_work_passes_and_the_test_s_own_calls_do_not_count():
    with own_work(_own_mdav) as called:
        got = _own_mdav(X, 3)
        want = microagg.mdav(X, 3)  # the hidden test's reference
        microagg.sse(X, want)
    assert called == [] and got.shape == want.shape


@pytest.mark.parametrize("borrowed", [_direct, _aliased, _imported, _through_helper])
def test_every_route_to_microagg_mdav_is_named(borrowed):
    with pytest.raises(AssertionError, match=rf"^{borrowed.__name__} calls microagg\.mdav: "
                                             r"the question asks you to write it yourself"):
        with own_work(borrowed):
            assert np.array_equal(borrowed(X, 3), microagg.mdav(X, 3))  # right answers


def test_a_private_function_is_named_by_its_module():
    with pytest.raises(AssertionError, match=r"calls microagg\._validate\.as_matrix: "):
        with own_work(_private):
            _private(X, 3)


@pytest.mark.parametrize("answer", [microagg.mdav, functools.partial(microagg.mdav, k=3)])
def test_microagg_s_own_function_as_the_answer_fails_at_once(answer):
    with pytest.raises(AssertionError, match=r"microagg\.mdav itself|written in the notebook"):
        with own_work(answer):
            pytest.fail("the block must not run")


class _Borrowing:
    """A callable object that calls microagg.mdav, carrying a notebook function's code."""

    __code__ = _own_mdav.__code__

    def __call__(self, X, k):
        return microagg.mdav(X, k)


def _disguised_partial():
    answer = functools.partial(microagg.mdav)
    answer.__code__ = _own_mdav.__code__  # (a partial takes any attribute)
    return answer


def _object_mode_jit():
    numba = pytest.importorskip("numba")
    return numba.jit(forceobj=True)(_direct)  # (a dispatcher has its py_func's __code__)


@pytest.mark.parametrize("make", [_Borrowing, _disguised_partial, _object_mode_jit],
                         ids=["object-with-code", "partial-with-code", "numba-object-mode"])
def test_a_callable_given_a_function_s_code_fails_at_once(make):
    """Only a function object is watched: its code is what runs when it is called. A
    callable carrying a function's ``__code__`` called microagg unseen (full marks): an
    object, a partial given the attribute, a numba dispatcher compiled in object mode."""
    answer = make()
    with pytest.raises(AssertionError, match=r"must be a function written in the notebook"):
        with own_work(answer):
            pytest.fail("the block must not run")


def test_allowed_calls_are_recorded_not_failed():
    with own_work(_through_helper, allowed=["mdav"]) as called:
        _through_helper(X, 3)
    assert called == ["microagg.mdav"]
    with own_work(_direct, allowed=["microagg.mdav", "sse"]) as called:
        _direct(X, 3)
    assert called == ["microagg.mdav"]
    with pytest.raises(AssertionError, match=r"calls microagg\.mdav: .*it allows microagg\.sse"):
        with own_work(_direct, allowed=["sse"]):
            _direct(X, 3)


def test_the_profiler_is_restored_and_errors_pass_unchanged():
    seen = []

    def outer(frame, event, arg):
        seen.append(event)

    sys.setprofile(outer)
    try:
        with pytest.raises(ZeroDivisionError):
            with own_work(_direct):
                _direct(X, 3)
                raise ZeroDivisionError  # the test's own failure wins, not own_work's
        assert sys.getprofile() is outer
    finally:
        sys.setprofile(None)


def _switching_off(X, k):
    """Switches the profiler off around a call of microagg.mdav, and back on."""
    watch = sys.getprofile()
    sys.setprofile(None)
    labels = microagg.mdav(X, k)
    sys.setprofile(watch)
    return labels


def test_a_function_switching_the_watch_off_fails():
    """Unseen before: own_work's profiler, switched off and on again by the function, saw
    no call (and the answer, microagg's own, was right on every case)."""
    with pytest.raises(AssertionError, match=r"^_switching_off calls sys\.setprofile, which "
                                             r"switches off the check of its calls"):
        with own_work(_switching_off):
            assert np.array_equal(_switching_off(X, 3), microagg.mdav(X, 3))


# --------------------------------------------------------------------------------------
# answer: what a student's function returned, as a plain value
# --------------------------------------------------------------------------------------


class _Always:
    """Equal to everything, and a bool that is always true."""

    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class _ZeroFloat(float):
    """A float whose difference with anything is 0 (so ``abs(got - want) < 1e-9``)."""

    def __sub__(self, other):
        return 0.0

    __rsub__ = __sub__

    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


class _AlwaysArray(np.ndarray):
    def __eq__(self, other):
        return np.ones(np.shape(other), dtype=bool)


class _Lazy:
    """An answer computed only when a test converts it, after the function returned:
    own_work, which watches the function's calls, sees nothing."""

    def __init__(self, X, k):
        self.X, self.k = X, k

    def __array__(self, dtype=None, copy=None):
        return microagg.mdav(self.X, self.k)

    def __len__(self):
        return len(self.X)


@pytest.mark.parametrize(("value", "kind", "passed_before"), [
    (_Always(), "int", lambda v: v == 3),
    (_ZeroFloat(1.0), "float", lambda v: isinstance(v, float) and abs(v - 4.0) < 1e-12),
    (np.zeros(6, dtype=int).view(_AlwaysArray), "ints", lambda v: bool((v == [0, 1]).all())),
    (_Lazy(X, 3), "ints", lambda v: np.array_equal(np.asarray(v), microagg.mdav(X, 3))),
    ([1.0, _ZeroFloat(2.0)], "floats",
     lambda v: all(a - b == 0 for a, b in zip(v, [1, 5], strict=True))),
    (True, "int", lambda v: v == 1),
    ((2, _Always()), ("int", "bool"), lambda v: v == (2, False)),
], ids=["always-equal", "float-subclass", "array-subclass", "lazy-array", "list-of-subclass",
        "bool-as-int", "tuple-holding-always-equal"])
def test_answer_refuses_a_value_whose_comparisons_are_its_own(value, kind, passed_before):
    """Each value passes the comparison a test made before (``passed_before``), without
    being the answer; ``answer`` refuses it, saying what to return."""
    with own_work(_own_mdav):  # (the lazy array's microagg.mdav is not seen)
        assert passed_before(value)
    with pytest.raises(AssertionError, match=r"return (an int|a number|integers|numbers|a bool)"
                                             r".*, got "):
        answer(value, kind)


def test_answer_runs_none_of_the_answer_s_code():
    """The lazy array is refused before numpy asks it for its values: nothing runs, so
    nothing can call microagg behind own_work's back."""
    calls = []

    class Spy(_Lazy):
        def __array__(self, dtype=None, copy=None):
            calls.append("__array__")
            return super().__array__(dtype, copy)

        def __len__(self):
            calls.append("__len__")
            return super().__len__()

        def __getitem__(self, i):
            calls.append("__getitem__")
            return 0

    for kind in ("ints", "floats", "int", ("ints",), {"labels": "ints"}):
        for value in (Spy(X, 3), [Spy(X, 3)], (Spy(X, 3),), {"labels": Spy(X, 3)}):
            with pytest.raises(AssertionError):
                answer(value, kind)
    assert calls == []


def test_answer_returns_new_plain_values():
    arr = np.array([[1, 2], [3, 4]], dtype=np.int32)
    got = answer(arr, "ints")
    assert type(got) is np.ndarray and got.dtype == np.int64 and got is not arr
    got[0, 0] = 9
    assert arr[0, 0] == 1  # a copy: the test may not change the student's array, nor back
    assert answer([0.0, 2.0], "ints").tolist() == [0, 2]  # labels kept in a float array
    assert answer((1, 2.5), "floats").dtype == float
    for value, kind, want in [(np.int64(3), "int", 3), (np.uint8(3), "float", 3.0),
                              (np.float32(0.5), "float", 0.5), (np.bool_(False), "bool", False),
                              (np.array(2.0), "float", 2.0)]:
        got = answer(value, kind)
        assert type(got) is type(want) and got == want
    got = answer({"together": 1, "separate": np.float64(2)},
                 {"together": "float", "separate": "float"})
    assert got == {"together": 1.0, "separate": 2.0}
    assert all(type(v) is float for v in got.values())
    assert answer([np.arange(2), [3, 4]], ("ints", "floats"))[1].tolist() == [3.0, 4.0]


@pytest.mark.parametrize(("value", "kind", "message"), [
    (3.0, "int", r"^return an int \(a Python or NumPy integer\), got float$"),
    (np.array([0.5]), "ints", r"got numbers that are not whole"),
    ([[1, 2], [3]], "floats", r"in rows of one length"),
    ([1, "2"], "floats", r"got a list holding a str$"),
    ([1, 2], ("ints", "ints"), r"^value 1 of the tuple: return integers .*, got int$"),
    ((1, 2, 3), ("int", "int"), r"^return a tuple of 2 values, got 3 values$"),
    ({"together": 1.0}, {"together": "float", "separate": "float"},
     r"^return a dict with keys \['separate', 'together'\], got keys \['together'\]$"),
    (np.array([True, False]), "ints", r"got an ndarray of bool values$"),
    (None, "bool", r"^return a bool \(True or False\), got NoneType$"),
])
def test_answer_says_what_to_return(value, kind, message):
    with pytest.raises(AssertionError, match=message):
        answer(value, kind)


def test_answer_refuses_an_unknown_kind():
    with pytest.raises(ValueError, match=r"kind must be one of \['bool', 'float', 'floats', "
                                         r"'int', 'ints'\]"):
        answer(3, "integer")


# --------------------------------------------------------------------------------------
# the assignments' test cells, run on cheating answers
# --------------------------------------------------------------------------------------

MASTERS = Path(__file__).resolve().parents[1] / "chapters" / "assignments"


def _run_tests(name: str, question: str, answer_source: str) -> list[str | None]:
    """Run a question's test cells, public then hidden, from its master notebook, after the
    notebook's first cell and ``answer_source``; each cell's failure message (None if it
    passed)."""
    jupytext = pytest.importorskip("jupytext")
    setup, cells, current, inside = None, [], None, False
    for cell in jupytext.read(MASTERS / f"{name}.md").cells:
        text = cell.source.strip()
        if cell.cell_type == "raw":
            if text.startswith("# BEGIN QUESTION"):
                current = re.search(r"name:\s*(\S+)", text)[1]
            inside = text.startswith("# BEGIN TESTS") or (inside and text != "# END TESTS")
        elif cell.cell_type == "code" and setup is None:
            setup = cell.source
        elif cell.cell_type == "code" and inside and current == question:
            cells.append(cell.source)
    assert setup and cells, (name, question)
    env: dict = {"__name__": "__main__"}
    exec(compile(setup, "<notebook>", "exec"), env)  # noqa: S102 - our own notebooks
    exec(compile(answer_source, "<notebook>", "exec"), env)  # noqa: S102
    failures: list[str | None] = []
    for cell in cells:
        try:
            exec(compile(cell, "<test>", "exec"), env)  # noqa: S102
            failures.append(None)
        except AssertionError as error:
            failures.append(str(error))
    return failures


#: Answers that solve nothing, each of which passed every test of its question (public and
#: hidden) before the tests passed the answer through ``answer`` and computed the expected
#: value after the call: (assignment, question, answer cell, what each failure says).
CHEATS = {
    "an int equal to everything": ("a2_mdav", "q3", '''
class Always(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__

def largest_group(n, k):
    return Always(0)
''', r"return an int \(a Python or NumPy integer\), got Always"),
    "a float whose differences are 0": ("a1_foundations", "q1", '''
class Zero(float):
    def __sub__(self, other):
        return 0.0
    __rsub__ = __sub__

def sse_by_hand(X, labels):
    return Zero(0.0)
''', r"return a number .*, got Zero"),
    "labels computed by microagg after the function returned": ("a2_mdav", "q2", '''
class Lazy:
    def __init__(self, X, k):
        self.X, self.k = X, k
    def __array__(self, dtype=None, copy=None):
        return microagg.mdav(self.X, self.k)  # (own_work watches my_mdav, which has returned)

def my_mdav(X, k):
    return Lazy(X, k)
''', r"return integers .*, got Lazy"),
    "the expected value read from the test's frame": ("a5_genetic", "q1", '''
import sys
from pathlib import Path

def roulette(fitness, u):
    frame = sys._getframe(1)
    while frame is not None and "_want" not in frame.f_locals:
        frame = frame.f_back
    return frame.f_locals["_want"] if frame is not None else 0
''', r"should be|slices"),
}


@pytest.mark.parametrize("cheat", list(CHEATS))
def test_a_cheating_answer_fails_every_test_of_its_question(cheat):
    name, question, source, message = CHEATS[cheat]
    failures = _run_tests(name, question, source)
    assert len(failures) >= 2 and all(failures), f"{cheat}: a test passed ({failures})"
    for failure in failures:
        assert re.search(message, failure), failure


def test_an_answer_changing_the_test_s_data_gains_nothing():
    """The expected value is computed after the call, from the test's data: the function
    gets copies, so zeroing what it was given does not make the reference agree with it."""
    failures = _run_tests("a1_foundations", "q1", '''
def sse_by_hand(X, labels):
    X = np.asarray(X)
    if X.dtype == float:
        X[:] = 0.0  # every group's SSE is then 0
    return 0.0
''')
    assert all(failures), failures


def test_the_reference_answers_pass_the_test_cells():
    """(The harness above runs the cells as the notebook would: the reference passes.)"""
    source = '''
def largest_group(n, k):
    return k + n % k
'''
    assert _run_tests("a2_mdav", "q3", source) == [None, None]
