"""Autograding support: does a student's function do its own work, on which data?

The assignments' hidden tests (``chapters/assignments/``) compare a student's function
with ``microagg`` on random data. A function that simply calls the ``microagg``
function it is compared with would pass every one of them; :func:`own_work`, around each
public and hidden test, makes such a function fail them instead. :func:`answer` turns what
the function returned into a plain number, bool or array before a test compares it (an
object of the student's making could answer ``True`` to every ``==``). :func:`case_seed`
gives each hidden test its random data: the same on every grading run (a regrade gives the
same score), another course's with another ``MICROAGG_GRADING_SALT``.
:mod:`microagg.teaching` re-exports all three.

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

import numpy as np

__all__ = ["own_work", "answer", "case_seed", "SALT_ENV"]

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
    in the thread running the block; a ``function`` that calls ``sys.setprofile`` itself
    (to switch the watch off around a call) fails. Not seen: a compiled kernel called
    directly (a numba dispatcher runs no Python frame; every public function of
    ``microagg`` is Python code, and is seen), calls made in other threads or processes,
    and calls made after ``function`` returned, by an object it returned (pass the answer
    through :func:`answer` before comparing it: that runs none of its code). Nor can it see
    a notebook that replaces ``microagg``'s functions, ``own_work`` itself or the builtins
    a test uses: the check runs in the student's own process.

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
        if event == "c_call" and arg is sys.setprofile:  # the watch itself, switched off?
            caller: FrameType | None = frame  # (the frame making the call)
            while caller is not None:
                if caller.f_code is code and "sys.setprofile" not in called:
                    called.append("sys.setprofile")
                caller = caller.f_back
            return
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
    if "sys.setprofile" in called:
        raise AssertionError(f"{who} calls sys.setprofile, which switches off the check of "
                             "its calls: the question asks you to write it yourself (numpy only)")
    borrowed = [c for c in called if c not in ok]
    if borrowed:
        raise AssertionError(f"{who} calls {', '.join(borrowed)}: the question asks you to "
                             "write it yourself (numpy only)"
                             + (f"; it allows {', '.join(sorted(ok))}" if ok else ""))


#: The types a trusted number or bool has, exactly: a subclass (``class Always(float)``)
#: brings comparisons of the student's making, and so does any other object.
_INTS = frozenset({int, *(np.dtype(c).type for c in np.typecodes["AllInteger"])})
_FLOATS = frozenset({float, *(np.dtype(c).type for c in np.typecodes["Float"])})
_BOOLS = frozenset({bool, np.bool_})

#: What each kind of answer is, in a failed test's words.
_KINDS = {"int": "an int (a Python or NumPy integer)",
          "float": "a number (a Python or NumPy float or int)",
          "bool": "a bool (True or False)",
          "ints": "integers (in a list, a tuple or a NumPy array)",
          "floats": "numbers (in a list, a tuple or a NumPy array)"}


def _plain_numbers(value: Any) -> bool:
    """Whether ``value`` is numbers only, in exact lists, tuples and numeric NumPy arrays
    (looked at without running any method of ``value``'s: only exact types get in)."""
    kind = type(value)
    if kind is np.ndarray:
        return value.dtype.kind in "iuf"
    if kind is list or kind is tuple:
        return all(_plain_numbers(v) for v in value)
    return kind in _INTS or kind in _FLOATS


def _odd_one(value: Any) -> str:
    """The type of the first item of nested lists and tuples that is not a plain number."""
    for item in value:
        if type(item) in (list, tuple):
            if not _plain_numbers(item):
                return _odd_one(item)
        elif not _plain_numbers(item):
            return (f"an ndarray of {item.dtype} values" if type(item) is np.ndarray
                    else f"a {type(item).__name__}")
    return "something other than numbers"


def _array(value: Any, kind: str) -> np.ndarray:
    """A new array of ``value``'s numbers (``int64`` for ``"ints"``, ``float`` else)."""
    if type(value) not in (list, tuple, np.ndarray) or not _plain_numbers(value):
        got = type(value).__name__
        if type(value) is np.ndarray:
            got = f"an ndarray of {value.dtype} values"
        elif type(value) in (list, tuple):
            got = f"a {got} holding {_odd_one(value)}"
        raise AssertionError(f"return {_KINDS[kind]}, got {got}")
    try:
        arr = np.array(value, copy=True)
    except ValueError as error:  # rows of different lengths
        raise AssertionError(f"return {_KINDS[kind]} in rows of one length: {error}") from None
    if kind == "floats":
        return arr.astype(float)
    if arr.dtype.kind == "f" and not (np.isfinite(arr).all() and (arr == np.round(arr)).all()):
        raise AssertionError(f"return {_KINDS[kind]}, got numbers that are not whole")
    return arr.astype(np.int64)


def answer(value: Any, kind: str | tuple[Any, ...] | dict[str, Any]) -> Any:
    """A student's returned value as a plain value a test can trust, before any comparison.

    A test that compares what a student's function returned (``got == want``,
    ``abs(got - want) < 1e-9``, ``numpy.allclose(got, want)``) lets that value's own
    methods decide: an object whose ``__eq__`` says ``True`` to everything, a ``float``
    subclass whose subtraction gives 0, an array subclass or an object with ``__array__``
    passes without solving anything (and code run by those methods later, outside the
    function, is not seen by :func:`own_work`). This function accepts only values of exact
    built-in or NumPy types, runs none of their methods, and returns a new plain value:
    the test compares that. Anything else fails the test with a message the student
    understands. Call the student's function first, and compute the expected value after
    it, so that the function cannot read it from the test::

        _got = microagg.teaching.answer(my_mdav(_X.copy(), _k), "ints")
        _want = microagg.mdav(_X, _k)

    Book: :ref:`page-instructors`.

    Parameters
    ----------
    value : object
        What the student's function returned.
    kind : str, tuple or dict
        What it should be. ``"int"``: a Python or NumPy integer (not a bool), returned as
        an ``int``. ``"float"``: a Python or NumPy number (not a bool), returned as a
        ``float``. ``"bool"``: ``True`` or ``False`` (Python or NumPy), returned as a
        ``bool``. ``"ints"`` / ``"floats"``: a list, tuple or NumPy array of numbers (nested
        for more dimensions), returned as a new ``int64`` / ``float`` array (``"ints"``
        takes floats with no fractional part too). A tuple of kinds: a tuple or list of as
        many values, returned as a tuple, each item of its kind. A dict of kinds: a dict
        with exactly those keys (strings), returned as a dict, each value of its kind.

    Returns
    -------
    int, float, bool, numpy.ndarray, tuple or dict
        The plain value; an array is a new one (not ``value``).

    Raises
    ------
    AssertionError
        If ``value`` is not of the kind, or not of an exact built-in or NumPy type (a
        subclass of ``float``, of ``numpy.ndarray``, an object of the notebook's own).
    ValueError
        If ``kind`` is not one of the kinds above (the test's mistake, not the student's).

    Examples
    --------
    >>> answer(3, "int"), answer(np.float64(0.5), "float"), answer(np.bool_(True), "bool")
    (3, 0.5, True)
    >>> answer(([0, 1], 2.5), ("ints", "float"))
    (array([0, 1]), 2.5)
    >>> class Always(float):
    ...     def __eq__(self, other):
    ...         return True
    >>> try:
    ...     answer(Always(0), "float")
    ... except AssertionError as error:
    ...     print(error)
    return a number (a Python or NumPy float or int), got Always
    """
    if isinstance(kind, tuple):
        if type(value) not in (tuple, list) or len(value) != len(kind):
            size = len(value) if type(value) in (tuple, list) else None
            raise AssertionError(f"return a tuple of {len(kind)} values, got "
                                 + (f"{size} values" if size is not None
                                    else type(value).__name__))
        return tuple(_item(v, k, f"value {i + 1} of the tuple")
                     for i, (v, k) in enumerate(zip(value, kind, strict=True)))
    if isinstance(kind, dict):
        if type(value) is not dict or not all(type(key) is str for key in value):
            raise AssertionError(f"return a dict with keys {sorted(kind)}, got "
                                 f"{type(value).__name__}")
        if set(value) != set(kind):
            raise AssertionError(f"return a dict with keys {sorted(kind)}, got keys "
                                 f"{sorted(value)}")
        return {key: _item(value[key], k, f"value {key!r}") for key, k in kind.items()}
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {sorted(_KINDS)}, a tuple or a dict of them; "
                         f"got {kind!r}")
    if kind in ("ints", "floats"):
        return _array(value, kind)
    scalar = type(value) is np.ndarray and value.ndim == 0  # (what some NumPy calls return)
    accepted = {"int": _INTS, "float": _INTS | _FLOATS, "bool": _BOOLS}[kind]
    if (value.dtype.type if scalar else type(value)) not in accepted:
        raise AssertionError(f"return {_KINDS[kind]}, got {type(value).__name__}"
                             + (f" of {value.dtype}" if scalar else ""))
    plain = value.item() if scalar else value
    return {"int": int, "float": float, "bool": bool}[kind](plain)


def _item(value: Any, kind: Any, where: str) -> Any:
    """``answer(value, kind)``, its message saying which item of the answer it is."""
    try:
        return answer(value, kind)
    except AssertionError as error:
        raise AssertionError(f"{where}: {error}") from None


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
