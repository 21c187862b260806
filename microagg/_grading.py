"""Autograding support: does a student's function do its own work, on which data?

The assignments' hidden tests (``chapters/assignments/``) compare a student's function
with ``microagg`` on random data. A function that simply calls the ``microagg``
function it is compared with would pass every one of them; :func:`own_work`, around each
public and hidden test, makes such a function fail them instead. :func:`case_seed` gives
each hidden test its random data: the same on every grading run (a regrade gives the same
score), another course's with another ``MICROAGG_GRADING_SALT``.
:mod:`microagg.teaching` re-exports both.

Book: :ref:`page-instructors`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import CodeType, FrameType, FunctionType
from typing import Any

__all__ = ["own_work", "case_seed", "SALT_ENV"]

#: The environment switch naming a course's salt for :func:`case_seed` (default: none).
SALT_ENV = "MICROAGG_GRADING_SALT"

#: The package's folder, as imported and resolved: a frame running a file under it is
#: microagg's code.
_PACKAGE = str(Path(__file__).resolve().parent)
_FOLDERS = tuple({str(Path(__file__).parent) + os.sep, _PACKAGE + os.sep})


def _in_package(code: CodeType) -> bool:
    return code.co_filename.startswith(_FOLDERS)


@functools.cache
def _public_names() -> dict[CodeType, str]:
    """The code object of every public function of microagg and of the submodules holding
    algorithms a question could ask for, to the name a student would call it by (a function
    of another module is named by its module path: :func:`_name_of`; the book's views and
    reproductions are not imported for this)."""
    import microagg
    from microagg import datasets, reference, teaching

    modules = {"microagg": microagg, "microagg.datasets": datasets,
               "microagg.teaching": teaching, "microagg.reference": reference}
    names: dict[CodeType, str] = {}
    for prefix, module in reversed(modules.items()):  # the top level's names win
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            code = getattr(getattr(obj, "py_func", obj), "__code__", None)
            if isinstance(code, CodeType):
                names[code] = f"{prefix}.{name}"
    return names


def _name_of(code: CodeType) -> str:
    """``microagg.mdav`` for a public function, else the module path and qualified name."""
    public = _public_names().get(code)
    if public:
        return public
    rel = Path(code.co_filename).resolve().relative_to(_PACKAGE).with_suffix("")
    module = ".".join(("microagg", *rel.parts)).removesuffix(".__init__")
    return f"{module}.{getattr(code, 'co_qualname', code.co_name)}"


@contextlib.contextmanager
def own_work(function: Callable[..., Any], *, allowed: Iterable[str] = ()) -> Iterator[list[str]]:
    """Fail if, inside the block, ``function`` calls ``microagg`` other than ``allowed``.

    While the block runs, every call into ``microagg`` made from code outside it is
    checked: if ``function`` is on the call stack (directly, or through helpers the
    student wrote), the ``microagg`` function called is recorded. Calls the block makes
    itself (a hidden test computing its reference answer with ``microagg``) are not.
    When the block ends without an error, an :class:`AssertionError` names the recorded
    functions that are not in ``allowed``. Wrap a whole test in it::

        with microagg.teaching.own_work(my_mdav):
            for _i in range(15):
                ...  # compare my_mdav(X, k) with microagg.mdav(X, k)

    Book: :ref:`page-instructors`.

    Parameters
    ----------
    function : function
        The student's function (a plain Python function).
    allowed : iterable of str
        The ``microagg`` functions the question lets the student call, by their public
        names (``"sse"`` or ``"microagg.sse"``; ``"datasets.clustered"``).

    Yields
    ------
    list of str
        The ``microagg`` functions ``function`` called so far, in the order first called.

    Raises
    ------
    AssertionError
        At the end of the block, if ``function`` called any ``microagg`` function not in
        ``allowed``; at its start, if ``function`` is not a Python function (a
        ``functools.partial``, a compiled kernel, a callable object, even one given a
        ``__code__`` attribute) or is one of ``microagg``'s own (``my_mdav = microagg.mdav``).

    Notes
    -----
    The calls are seen through ``sys.setprofile``, which sees every call of Python code
    in the thread running the block. Not seen: a compiled kernel called directly (a numba
    dispatcher runs no Python frame; every public function of ``microagg`` is Python code,
    and is seen) and calls made in other threads.

    Examples
    --------
    >>> import numpy as np
    >>> import microagg
    >>> def own_sse(X, labels):
    ...     return float(sum(((X[labels == g] - X[labels == g].mean(axis=0)) ** 2).sum()
    ...                      for g in np.unique(labels)))
    >>> def borrowed_sse(X, labels):
    ...     return microagg.sse(X, labels)
    >>> X, lab = np.arange(6.0).reshape(3, 2), np.array([0, 0, 1])
    >>> with own_work(own_sse) as called:
    ...     answer = own_sse(X, lab)
    ...     reference = microagg.sse(X, lab)  # the test's own call: not counted
    >>> called, answer == reference
    ([], True)
    >>> try:
    ...     with own_work(borrowed_sse):
    ...         answer = borrowed_sse(X, lab)
    ... except AssertionError as error:
    ...     print(error)
    borrowed_sse calls microagg.sse: the question asks you to write it yourself (numpy only)
    >>> with own_work(borrowed_sse, allowed=["sse"]) as called:
    ...     answer = borrowed_sse(X, lab)
    >>> called
    ['microagg.sse']
    """
    who = getattr(function, "__name__", "the answer")
    # A function object, not whatever has a ``__code__`` (a numba dispatcher has its
    # py_func's; a partial or an instance can be given one): those call microagg with none
    # of that code's frames on the stack.
    if not isinstance(function, FunctionType):  # a partial, a compiled kernel, a class, ...
        raise AssertionError(f"{who} must be a function written in the notebook (def ...), "
                             f"got {function!r}")
    code = function.__code__
    if _in_package(code):  # e.g. my_mdav = microagg.mdav
        raise AssertionError(f"{who} is {_name_of(code)} itself: the question asks you to "
                             "write it yourself (numpy only)")
    ok = {a if a.startswith("microagg.") else f"microagg.{a}" for a in allowed}
    called: list[str] = []

    def watch(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or not _in_package(frame.f_code):
            return
        caller = frame.f_back
        if caller is None or _in_package(caller.f_code):
            return  # microagg calling itself
        while caller is not None:  # an entry into microagg: on behalf of ``function``?
            if caller.f_code is code:
                name = _name_of(frame.f_code)
                if name not in called:
                    called.append(name)
                return
            if _in_package(caller.f_code):
                return  # inside a microagg call already seen (e.g. a callback)
            caller = caller.f_back

    _public_names()  # (imports the submodules now, not inside the watched calls)
    before = sys.getprofile()
    sys.setprofile(watch)
    try:
        yield called
    finally:
        sys.setprofile(before)
    borrowed = [c for c in called if c not in ok]
    if borrowed:
        raise AssertionError(f"{who} calls {', '.join(borrowed)}: the question asks you to "
                             "write it yourself (numpy only)"
                             + (f"; it allows {', '.join(sorted(ok))}" if ok else ""))


def case_seed(test: str) -> int:
    """The seed of a hidden test's random cases: the same on every run, for every submission.

    A hash of ``test`` (the test's name, ``"a2_mdav/q1"``) and of the course's salt, the
    environment switch ``MICROAGG_GRADING_SALT`` (unset: none). Grading a notebook twice
    gives the same score, and every student of a course meets the same data; a new salt
    (set where the notebooks are graded) draws new data for a new course. A failed hidden
    test prints its seed, so that the failing case can be rebuilt.

    Book: :ref:`page-instructors`.

    Parameters
    ----------
    test : str
        The hidden test's name, unique in the course.

    Returns
    -------
    int
        A seed for ``numpy.random.default_rng``, below 2**32.

    Examples
    --------
    >>> case_seed("a2_mdav/q1") == case_seed("a2_mdav/q1") != case_seed("a2_mdav/q2")
    True
    """
    if not isinstance(test, str) or not test:
        raise TypeError(f"test must be a hidden test's name (a non-empty str), got {test!r}")
    salt = os.environ.get(SALT_ENV, "")
    digest = hashlib.sha256(f"{salt}\0{test}".encode()).digest()
    return int.from_bytes(digest[:4], "little")
