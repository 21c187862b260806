"""``microagg.teaching.own_work``: the assignments' hidden tests fail a student's function that
calls ``microagg`` (by any route the notebook offers), and only such a function."""

from __future__ import annotations

import functools
import sys

import numpy as np
import pytest

import microagg
import microagg as m
from microagg import mdav as imported_mdav
from microagg.teaching import own_work

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
