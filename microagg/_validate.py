"""Input checks shared by every public function.

Every algorithm in :mod:`microagg` accepts "a 2-D float array" (or a pandas
DataFrame of numeric columns). The helpers here turn the input into a C-ordered
``float64`` array and refuse, with a message that names the problem, anything
that would otherwise give a silently wrong answer: NaN or infinite values,
non-numeric columns, masked entries, empty data, 1-D input, a ``k`` outside ``1..n``,
labels that are not integers.

Magnitudes. Squared distances of values beyond about ``1e154`` overflow and those
below about ``1e-154`` underflow. :func:`rescaled` multiplies such data by a power
of two, which is exact in binary floating point: every sum, difference, product,
quotient and square root of the rescaled data is the exactly rescaled result, so
every comparison an algorithm makes, hence its partition, is unchanged. Data whose
largest absolute value lies between ``2**-SAFE_EXPONENT`` and ``2**SAFE_EXPONENT``
(about ``1e-30`` to ``1e30``) are used exactly as given.
"""

from __future__ import annotations

import decimal
import math
import numbers
import re
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["as_matrix", "NonFinite", "SHOWN_ROWS", "plain", "check_k", "check_count",
           "check_real", "check_flag", "check_flags", "check_seed", "as_labels", "lined_up_labels",
           "number_objects", "object_floats", "rescaled", "scale_exponent", "unscale_square",
           "SAFE_EXPONENT"]

#: Data whose largest absolute value is within ``2**-SAFE_EXPONENT .. 2**SAFE_EXPONENT``
#: are never rescaled (their squares, sums of squares and centroids are all safe).
SAFE_EXPONENT = 100


@dataclass(frozen=True)
class NonFinite:
    """The rows of a table holding NaN or infinite values, gathered part by part (a whole
    array, a file's batches, a Dask frame's partitions) for one error naming them all.

    ``count`` rows; the ``first`` of them (0-based, in the whole table; at most
    :data:`SHOWN_ROWS`); the positions of the ``columns`` holding them.
    """

    count: int = 0
    first: tuple[int, ...] = ()
    columns: tuple[int, ...] = ()

    @classmethod
    def of(cls, arr: np.ndarray, start: int = 0) -> NonFinite:
        """The non-finite rows of the 2-D ``arr``, whose first row is row ``start``."""
        finite = np.isfinite(arr)
        if finite.all():
            return cls()
        rows = np.flatnonzero(~finite.all(axis=1))
        return cls(int(rows.size), tuple(int(r) + start for r in rows[:SHOWN_ROWS]),
                   tuple(int(c) for c in np.flatnonzero(~finite.all(axis=0))))

    def __add__(self, later: NonFinite) -> NonFinite:
        """These rows and those of a ``later`` part of the table."""
        return NonFinite(self.count + later.count, (self.first + later.first)[:SHOWN_ROWS],
                         tuple(sorted({*self.columns, *later.columns})))

    def shifted(self, offset: int) -> NonFinite:
        """The same rows, counted from ``offset`` on (a part's rows in the whole table)."""
        return NonFinite(self.count, tuple(r + offset for r in self.first), self.columns)

    def error(self, name: str, names: Sequence[Any] | None = None) -> ValueError:
        """The error naming the rows and the columns (by ``names``, else by position)."""
        where = [names[c] if names is not None else c for c in self.columns]
        rows = ", ".join(str(r + 1) for r in self.first)  # (as every error counts them)
        at = ("first at data rows" if self.count > len(self.first)
              else "at data rows" if len(self.first) > 1 else "at data row")
        more = f" and {len(where) - 5} more" if len(where) > 5 else ""
        return ValueError(
            f"NaN or infinite values in {name}: {self.count} row(s) "
            f"({at} {rows}, counted from 1; columns {where[:5]}{more}); "
            "drop or impute them before microaggregating")


#: Rows named in the error on NaN or infinite values.
SHOWN_ROWS = 5


def as_matrix(X: Any, name: str = "X", *, min_rows: int = 1, finite: bool = True
              ) -> np.ndarray:
    """Return ``X`` as a C-contiguous ``(n, p)`` float64 array, finite unless ``finite``
    is False (then the caller gathers the :class:`NonFinite` rows).

    Raises
    ------
    TypeError
        If ``X`` has non-numeric columns (strings, objects, datetimes).
    ValueError
        If ``X`` is not 2-D, has no rows or columns, or holds NaN/inf.
    """
    columns = None
    if getattr(X, "ndim", None) == 1 and hasattr(X, "to_frame"):  # a pandas Series
        raise ValueError(
            f"{name} must be 2-D (n records x p attributes), got a pandas Series of "
            f"{len(X)} values; use X.to_frame() (or df[[column]]) for a single attribute")
    if isinstance(X, np.ma.MaskedArray):
        X = _unmasked(X, name)
    if hasattr(X, "dtypes") and hasattr(X, "columns"):  # a pandas DataFrame
        objects = [j for j, t in enumerate(X.dtypes) if not _is_numeric_dtype(t)
                   and getattr(t, "kind", "") == "O" and number_objects(X.iloc[:, j])]
        bad = [str(c) for j, (c, t) in enumerate(X.dtypes.items())
               if not _is_numeric_dtype(t) and j not in objects]
        if bad:
            raise TypeError(
                f"{name}: non-numeric column(s) {bad}; microaggregation needs numbers "
                "(select numeric columns, or encode categories first)"
            )
        columns = list(X.columns)
        if objects:  # numbers held as objects (Decimal): as floats, missing values as NaN
            X = X.copy()
            for j in objects:
                X.isetitem(j, object_floats(X.iloc[:, j]))
        X = X.to_numpy(dtype=float)
    try:
        arr = np.asarray(X)
    except ValueError as err:  # (numpy's words: "setting an array element with a sequence")
        if "inhomogeneous" not in str(err):
            raise
        raise ValueError(f"{name} is not a table of numbers: its rows (or values) differ in "
                         "length; give every record the same number of attributes, one "
                         "number each") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must be numeric, got dtype {arr.dtype}"
            + (" (it holds strings or objects)" if arr.dtype.kind in "OUS" else "")
        )
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D (n records x p attributes), got shape {arr.shape}; "
            "use X.reshape(-1, 1) for a single attribute"
        )
    n, p = arr.shape
    if n < min_rows or p == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); nothing to microaggregate")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if finite and not np.isfinite(arr).all():
        raise NonFinite.of(arr).error(name, columns)
    return arr


def _unmasked(X: np.ma.MaskedArray, name: str) -> np.ndarray:
    """The data of a masked array without masked entries; masked entries are an error."""
    n_masked = int(np.ma.count_masked(X))
    if n_masked:
        raise ValueError(f"{name} is a masked array with {n_masked} masked value(s); "
                         "microaggregation needs every value: drop or impute those records "
                         "(e.g. X[~X.mask.any(axis=1)].data) first")
    return np.ma.getdata(X)


#: The values an object column may hold and still be a column of numbers: reals (Python's
#: int and float, numpy's numbers, fractions) and decimals (a database's NUMERIC, a Parquet
#: decimal column), not booleans.
_NUMBER_OBJECTS = (numbers.Real, decimal.Decimal)


def number_objects(column: Any) -> bool:
    """Whether a column of objects holds numbers only (missing values aside), such as the
    ``decimal.Decimal`` values of a database's NUMERIC column or a Parquet decimal column.

    Every value is looked at (a column is never judged on a sample); a boolean is not a
    number here.

    Examples
    --------
    >>> import decimal, pandas as pd
    >>> number_objects(pd.Series([decimal.Decimal("1.5"), None, 2], dtype=object))
    True
    >>> number_objects(pd.Series(["1.5", 2], dtype=object)), number_objects(
    ...     pd.Series([True, 2], dtype=object))
    (False, False)
    """
    values = column.to_numpy(dtype=object)
    present = 0
    for v in values:
        if v is None or _missing(v):
            continue
        if (isinstance(v, bool | np.bool_ | np.timedelta64 | np.datetime64)
                or not isinstance(v, _NUMBER_OBJECTS)):  # (numpy counts a timedelta64 an int)
            return False
        present += 1
    return present > 0


def object_floats(column: Any) -> np.ndarray:
    """A column of :func:`number_objects` as float64, missing values as NaN, and integers
    beyond float64's range as infinities (as ``Decimal`` values beyond it become).

    Examples
    --------
    >>> import pandas as pd
    >>> object_floats(pd.Series([2, None, -10**400], dtype=object)).tolist()
    [2.0, nan, -inf]
    """
    return np.array([np.nan if v is None or _missing(v) else _float(v)
                     for v in column.to_numpy(dtype=object)], dtype=float)


def _float(value: Any) -> float:
    try:
        return float(value)
    except OverflowError:  # an int beyond 1.8e308
        return math.inf if value > 0 else -math.inf


def _missing(value: Any) -> bool:
    """``NaN``, ``None``, ``pd.NA`` and ``NaT``: what pandas counts as missing."""
    try:
        return bool(value != value) or type(value).__name__ in ("NAType", "NaTType")
    except (TypeError, ArithmeticError):  # pd.NA != pd.NA is ambiguous; Decimal("sNaN")
        return True


def _is_numeric_dtype(t: Any) -> bool:
    kind = getattr(t, "kind", "O")
    return kind in "biuf"


def plain(value: Any) -> Any:
    """``value`` with a numpy scalar turned into its Python equivalent, for a message's
    ``{...!r}``: numpy 2 writes ``np.float64(3.0)`` where the user typed ``3.0``.

    Examples
    --------
    >>> repr(plain(np.float64(3.0))), repr(plain(np.True_)), repr(plain("3"))
    ('3.0', 'True', "'3'")
    """
    return value.item() if isinstance(value, np.generic) else value


def check_k(k: Any, n: int, name: str = "k") -> int:
    """Check that ``k`` is an integer with ``1 <= k <= n`` and return it as ``int``."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {plain(k)!r}")
    k = int(k)
    if k < 1:
        raise ValueError(f"{name} must be at least 1, got {k}")
    if k > n:
        raise ValueError(
            f"{name}={k} is larger than the number of records n={n}: no {name}-partition exists"
        )
    return k


def check_count(value: Any, name: str, minimum: int) -> int:
    """Check that ``value`` is an integer (not a bool) of at least ``minimum``; return it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {plain(value)!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return int(value)


def check_real(value: Any, name: str, minimum: float = 0.0) -> float:
    """Check that ``value`` is a finite real number (not a bool) ``>= minimum``; return it."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {plain(value)!r}")
    if not np.isfinite(value) or value < minimum:
        raise ValueError(f"{name} must be a finite number >= {minimum:g}, got {value}")
    return float(value)


def check_flag(value: Any, name: str) -> bool:
    """Check that ``value`` is a bool (``True``/``False``, numpy bools included); return it.

    Strings such as ``"no"`` are refused: ``bool("no")`` is ``True``.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {plain(value)!r}")
    return bool(value)


def check_flags(**flags: Any) -> None:
    """:func:`check_flag` on each keyword: ``check_flags(keep_rest=keep_rest)``."""
    for name, value in flags.items():
        check_flag(value, name)


def check_texts(value: Any, name: str) -> tuple[str, ...]:
    """A string or a sequence of strings (e.g. the text that means a missing value), as a
    tuple; anything else is an error naming ``name``.

    Examples
    --------
    >>> check_texts("NA", "na"), check_texts(["-99", "NA"], "na")
    (('NA',), ('-99', 'NA'))
    """
    items = (value,) if isinstance(value, str) else value
    if not isinstance(items, Sequence) or not all(isinstance(v, str) for v in items):
        raise TypeError(f"{name} must be a string or a list of strings, got {value!r}")
    return tuple(items)


def check_seed(seed: Any, name: str = "seed") -> Any:
    """Check a random seed as ``numpy.random.default_rng`` takes it; return it unchanged.

    ``None``, a non-negative integer (or a sequence of them), a ``SeedSequence``, a
    ``BitGenerator`` or a ``Generator``.
    """
    if seed is None or isinstance(seed, (np.random.SeedSequence, np.random.BitGenerator,
                                         np.random.Generator)):
        return seed
    if isinstance(seed, (bool, str, bytes, float, np.floating)):
        raise TypeError(f"{name} must be None, a non-negative integer, a SeedSequence or a "
                        f"numpy Generator, got {plain(seed)!r}")
    try:
        np.random.SeedSequence(seed)
    except (TypeError, ValueError) as err:
        raise (ValueError if isinstance(err, ValueError) else TypeError)(
            f"{name} must be None, a non-negative integer, a SeedSequence or a numpy "
            f"Generator, got {seed!r} ({err})") from None
    return seed


#: Labels stored as floats must be whole numbers of at most this size (exact in float64).
_MAX_FLOAT_LABEL = 2.0**53


def as_labels(labels: Any, n: int | None = None) -> np.ndarray:
    """Return ``labels`` as an ``(n,)`` int64 array, checking its type, values and length.

    Integer arrays are taken as they are (unsigned ones must fit in int64); float
    arrays only when every value is a whole number of magnitude below ``2**53`` (so
    the conversion is exact). Anything else is a ``TypeError`` or ``ValueError``.
    """
    arr = np.asarray(labels)
    if arr.ndim == 0:
        raise TypeError(f"labels must be an array of one integer label per record, got the "
                        f"single value {plain(labels)!r}")
    if arr.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"labels has {arr.shape[0]} entries but the data has {n} records")
    if not arr.size:
        return arr.astype(np.int64)
    kind = arr.dtype.kind
    if kind == "u" and arr.dtype.itemsize >= 8 and int(arr.max()) > np.iinfo(np.int64).max:
        raise ValueError(f"labels must fit in int64, got a label of {int(arr.max())}")
    if kind == "f":
        if not np.isfinite(arr).all():
            raise ValueError("labels must be integers, got NaN or infinite values")
        if not np.all(arr == np.round(arr)):
            bad = arr[arr != np.round(arr)][0]
            raise TypeError(f"labels must be integers, got the non-integer value {bad.item()!r}")
        if np.abs(arr).max() >= _MAX_FLOAT_LABEL:
            raise ValueError(f"labels stored as floats must be below 2**53 in magnitude "
                             f"(exact integers), got {np.abs(arr).max():g}; pass integer labels")
    elif kind not in "iu":
        raise TypeError(f"labels must be integers, got dtype {arr.dtype}")
    return arr.astype(np.int64, copy=False)


def lined_up_labels(labels: Any, X: Any) -> Any:
    """``labels`` in the row order of ``X`` when both are pandas objects (a Series of labels
    and a DataFrame), matched by row label (index) as pandas matches them; anything else as
    given (matched by position). Row labels that cannot be matched one to one are an error,
    not a guess: taken by position, a Series in another row order (``df.sort_values(...)``,
    a filtered frame) would put records in the wrong groups without a word.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"a": [0.0, 2.0, 10.0]}, index=["x", "y", "z"])
    >>> lined_up_labels(pd.Series([1, 0, 0], index=["z", "x", "y"]), X).tolist()
    [0, 0, 1]
    """
    if not (hasattr(X, "columns") and hasattr(X, "index") and hasattr(labels, "index")
            and getattr(labels, "ndim", 0) == 1 and len(labels) == len(X)):
        return labels  # (a length that differs: as_labels names it)
    index = X.index
    if labels.index.equals(index):
        return labels
    if index.is_unique and labels.index.is_unique and index.isin(labels.index).all():
        return labels.loc[index]
    raise ValueError(
        "labels is a pandas Series whose index does not match the data's row labels "
        "(index), so its labels cannot be matched to the records: give the labels the "
        "data's index (labels.reindex(X.index), or labels.set_axis(X.index) if they are in "
        "the data's row order), or pass labels.to_numpy() to take them by position")


def scale_exponent(arr: np.ndarray, axis: int | None = None) -> Any:
    """The power of two ``e`` making ``arr`` (floats) times ``2**e`` safe to square: 0 for
    ordinary data.

    With ``axis=0``, one exponent per column. Where the largest absolute value
    ``m`` lies outside ``2**-SAFE_EXPONENT .. 2**SAFE_EXPONENT``, ``e`` brings it
    into ``[0.5, 1)``; a zero (or empty) array needs no scaling.
    """
    if arr.size == 0:
        return 0 if axis is None else np.zeros(arr.shape[1 - axis], dtype=np.int64)
    m = np.maximum(np.max(arr, axis=axis), -np.min(arr, axis=axis))  # no |arr| temporary
    _, e = np.frexp(m)
    e = np.where((m == 0) | (np.abs(e) <= SAFE_EXPONENT), 0, -e).astype(np.int64)
    return int(e) if axis is None else e


def rescaled(arr: np.ndarray) -> np.ndarray:
    """``arr`` times the power of two of :func:`scale_exponent` (``arr`` itself if none).

    Exact: decisions made on the result are those exact arithmetic would make on
    ``arr``. Values more than ``2**1021`` times smaller than the largest become
    subnormal or zero, far below what any distance can resolve.
    """
    e = scale_exponent(arr)
    return np.ldexp(arr, e) if e else arr


def unscale_square(value: float, e: int, what: str) -> float:
    """A sum of squares measured on data rescaled by ``2**e``, in the original units.

    Raises ``ValueError`` if it exceeds the float64 range (above about ``1e308``); a
    value below about ``1e-308`` comes back as the nearest float (subnormal or 0.0).
    """
    if not e or value == 0:
        return float(value)
    try:
        return math.ldexp(float(value), -2 * e)
    except OverflowError:
        raise ValueError(
            f"{what} is about 2**{math.frexp(value)[1] - 2 * e}, beyond the range of float64 "
            f"(the data's values are near 2**{-e}); divide the data by a constant to "
            "measure it (information_loss, a ratio, works at any scale)"
        ) from None


#: A column name that reads as a number (``34``, ``-1.5``, ``52300,50``, ``1e3``), as the
#: values of a record do.
_NUMBER_NAME = re.compile(r"\s*[+-]?(\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?\s*")


def reads_as_number(name: Any) -> bool:
    """Whether a column name reads as a number, as a record's value would: a plain number
    (``34``, ``1e3``), or numerals with no letter (``$52,300``, ``12%``, ``½``, ``1 234``);
    not ``income_2019`` or ``Q1``."""
    if not isinstance(name, str):
        return False
    return bool(_NUMBER_NAME.fullmatch(name)) or (
        any(ch.isnumeric() for ch in name) and not any(ch.isalpha() for ch in name))


def shown_value(value: Any) -> str:
    """``repr`` of a value an error shows, every numeric character written ``#``: the form
    of a confidential number (``'$##,###'``), not the number, reaches a terminal or a log.

    Examples
    --------
    >>> print(shown_value("$52,300"), shown_value("SSN 123-45-6789"), shown_value("n/a"))
    '$##,###' 'SSN ###-##-####' 'n/a'
    """
    return repr("".join("#" if ch.isnumeric() else ch for ch in str(value)))


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is one, as the messages count things.

    Examples
    --------
    >>> counted(1, "group"), counted(3, "row")
    ('1 group', '3 rows')
    """
    return f"{n} {noun}{'' if n == 1 else 's'}"


def shown_names(names: Sequence[Any]) -> str:
    """``names`` as an error lists them, each name that reads as a number as
    :func:`shown_value` shows it (it may be a record's value: a file without a header row)."""
    return "[" + ", ".join(shown_value(c) if reads_as_number(c) else repr(c) for c in names) + "]"


def first_record_as_names(names: Sequence[Any], numeric: Sequence[Any] = ()
                          ) -> ValueError | None:
    """The error for a table that seems to have lost its header row (a CSV file without
    one: its first record became the names), or ``None``: every column name reads as a
    number, or a column among ``numeric`` (those holding numbers) has a name that does."""
    if not names:
        return None
    if all(reads_as_number(c) for c in names):
        what = f"every column name ({len(names)}) reads"
    else:
        odd = [c for c in numeric if reads_as_number(c)]
        if not odd:
            return None
        what = f"{len(odd)} column(s) of numbers have a name that reads"
    return ValueError(f"{what} as a number, as the values of a record do: the input seems to "
                      "have no header row, so its first record would be released as the column "
                      "names, unprotected, and left out of the data. Add a header row naming "
                      "the columns; if these are the column names, name the columns to "
                      "protect (columns=[...], --columns) or to keep (keep=, --keep)")


def column_labels(value: Any, table_columns: Sequence[Any], name: str) -> list[Any]:
    """The column labels ``value`` names (one label or a list), each in ``table_columns``.

    A single label means one column (``"age"`` is not the columns ``a``, ``g``, ``e``;
    a tuple that is a column's label, as a DataFrame with MultiIndex columns has them, is
    that column; a set, which has no order of its own, names its columns in the table's
    order, so the result does not change with Python's hash seed from one run to the
    next); an empty, repeated or unknown choice is an error naming the argument ``name``.

    Examples
    --------
    >>> column_labels(("n", "age"), [("n", "age"), ("n", "inc")], "columns")
    [('n', 'age')]
    >>> column_labels(("age", "inc"), ["age", "inc"], "columns")
    ['age', 'inc']
    >>> column_labels({"inc", "age"}, ["id", "age", "inc"], "columns")
    ['age', 'inc']
    >>> column_labels(np.array(["inc"]), ["id", "age", "inc"], "columns")  # not np.str_('inc')
    ['inc']
    """
    if isinstance(value, tuple) and _is_label(value, table_columns):
        value = [value]
    known = list(table_columns)
    if isinstance(value, set | frozenset):  # the table's order (unknown names after, sorted)
        value = ([c for c in known if c in value]
                 + sorted((c for c in value if c not in known), key=repr))
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        if not isinstance(value, Hashable):
            raise TypeError(f"{name} must be a column label or a list of them, got {value!r}")
        value = [value]
    chosen = list(value)
    if not chosen:
        raise ValueError(f"{name} is empty: name at least one column (or leave {name} out)")
    what = "column(s)" if name == "columns" else f"{name} column(s)"
    twice = list(dict.fromkeys(c for i, c in enumerate(chosen) if c in chosen[:i]))
    if twice:
        raise ValueError(f"{what} {twice} are named more than once in {name}")
    missing = [c for c in chosen if c not in known]
    headless = first_record_as_names(known) if missing else None
    if headless is not None:  # (names that are all numbers: a record's values, not shown)
        raise headless
    if missing:
        raise ValueError(f"{what} {missing} are not in the table; it has {shown_names(known)}"
                         + _quoting_hint(missing, known))
    return [known[known.index(c)] for c in chosen]  # the table's own labels (not np.str_)


def _is_label(value: Any, table_columns: Sequence[Any]) -> bool:
    """Whether ``value`` is one of ``table_columns`` (a label that cannot be compared is not)."""
    try:
        return any(value == c for c in table_columns if isinstance(c, tuple))
    except (TypeError, ValueError):
        return False


def _quoting_hint(missing: Sequence[Any], known: Sequence[Any]) -> str:
    """A hint for a name the command line split or trimmed: the table's columns with a
    comma, a quote or blanks at their ends that a missing name is part of."""
    odd = [c for c in known if isinstance(c, str) and (c != c.strip() or "," in c or '"' in c)]
    meant = [c for c in odd if any(isinstance(m, str) and m.strip() and m.strip() in c
                                   for m in missing)]
    if not meant:
        return ""
    return (f"; did you mean {', '.join(map(repr, meant))}? On the command line, a name "
            "holding a comma, a quote or blanks at its ends is written in double quotes, as "
            "in a CSV line: '\"income, gross\",age'")
