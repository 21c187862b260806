"""The release contract: which columns are protected, kept or refused, and the audit.

One rule, used by every path (:func:`microagg.microaggregate`, ``microagg protect`` in
memory and ``--strata`` streamed, :func:`microagg.dask.microaggregate`), decided on the
*whole* input, never on a sample:

1. Each column gets a :class:`ColumnProfile`, computed batch by batch (record batches,
   CSV chunks, Dask partitions) and combined exactly (:func:`profile_frame`,
   :func:`combine_profiles`): its kind (numbers, booleans, dates, timedeltas, nested
   values, text), how many rows hold numbers or digits in text and where the first ones
   are, and whether it counts 0, 1, ..., n-1 (a row index written into the file).
2. :func:`decide_roles` gives each column a role: *protected* (named, or by default
   every numeric column), a *stratum*, *kept* (named in ``keep``: released exactly as
   read), a *row index* (a first column counting 0..n-1, or, with no header, 1..n: kept,
   with a note; a first column with no header holding other numbers is asked about, an
   error naming it) or *passed through* (text that holds no digit; dates, with a note). A
   column that is numeric or looks numeric (text holding a digit of any script in any
   share of its rows: a number however written, or a code or identifier microagg cannot
   tell from one; timedeltas; nested numbers) and has none of these roles is an error naming it, its
   first offending rows and the fix; passing such columns through needs the explicit
   ``keep_rest=True`` (``--keep-rest``).
3. A DataFrame's index is returned with the release, so :func:`decide_index` judges it
   as a column (:class:`IndexProfile`, also combined partition by partition): an index
   that numbers the rows (pandas' default, 0..n-1, or unnamed 1..n) or holds text without
   digits passes;
   one holding other numbers (a filtered frame's original row numbers, an identifier,
   ``set_index("income")``) is an error naming it and the fix unless named in ``keep``.
   A file has no index (:data:`FILE_ROWS`; a Parquet file's pandas index is a column).

The release audit, which checks a release against these roles, is in
:mod:`microagg._audit`.
"""

from __future__ import annotations

import datetime
import numbers
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ._validate import SHOWN_ROWS, number_objects, object_floats, shown_names, shown_value

__all__ = ["RESERVED", "BLANK_HEADER", "MISSING_TEXT", "ColumnProfile", "Roles", "profile_frame",
           "combine_profiles", "profile_batches", "decide_roles", "check_names", "named_columns",
           "check_role_clash",
           "RowLabelColumns", "row_label_columns", "unused_categories_error",
           "numeric_text", "decorated_numbers", "undecorated", "text_to_numbers", "protectable",
           "row_index", "row_index_note", "stored_index_rows", "stored_index_note",
           "stored_index_error",
           "nothing_to_protect", "RELEASE_MIN_K",
           "check_release_k", "IndexProfile", "FILE_ROWS", "profile_index",
           "combine_index_profiles", "split_keep", "decide_index", "note_without_values"]

#: The smallest ``k`` of a release: at ``k = 1`` every record is a group of its own and its
#: protected values would be released as they are.
RELEASE_MIN_K = 2
#: The name of a column whose header cell is empty, before its position (``Unnamed: 0``):
#: pandas' ``read_csv`` and :mod:`microagg._csv` name it so.
BLANK_HEADER = "Unnamed: "
#: Column names the engines use internally; an input column with one of them is an error.
RESERVED = ("__microagg_row__", "__microagg_pos__", "__microagg_unit__", "__microagg_index__")
#: Currency signs: Unicode's category Sc in the Basic Multilingual Plane ($ € £ ¥ ₹ ₩ ₽ ...;
#: ``tests/test_release.py`` checks the list against :mod:`unicodedata`).
CURRENCY = ("$\u00a2-\u00a5\u058f\u060b\u07fe\u07ff\u09f2\u09f3\u09fb\u0af1\u0bf9\u0e3f"
            "\u17db\u20a0-\u20c0\ua838\ufdfc\ufe69\uff04\uffe0\uffe1\uffe5\uffe6")
#: Characters that make a number text: thousands separators (comma, blank, apostrophes),
#: currency signs, percent, blanks. (These patterns hold the signs themselves, not ``\u``
#: escapes: pandas hands them to pyarrow's RE2, which refused ``\u`` in older versions.)
DECORATION = f"[\\s,%_'\u2019\u02bc{CURRENCY}]"
#: A currency code or abbreviation before or after a number (``CHF 12``, ``12 EUR``,
#: ``Rs. 100``, ``50 kr``).
_MONEY = "(?:[A-Z]{3}|Rs|kr|Kr|Fr|z\u0142|K\u010d|Ft|lei|RM|Rp)\\.?"
MONEY_WORD = rf"^\s*{_MONEY}(?=[\s\d+\-.])|(?<=[\d\s]){_MONEY}\s*$"
#: What every value holding a number has: a digit (of any script), or an infinity.
_MAYBE = r"\d|(?i:inf)"
#: The characters besides ``\d`` that are numbers (``str.isnumeric``: superscripts and
#: subscripts, fractions, Roman, circled and dingbat numerals, CJK and other numerals such as
#: ``三``), infinity and the enclosed alphanumerics, as code point ranges
#: (``tests/test_release.py`` checks that they hold every numeric character Python knows).
_NUMERIC_RANGES = (
    (0xB2, 0xB3), (0xB9, 0xB9), (0xBC, 0xBE), (0x9F4, 0x9F9), (0xB72, 0xB77), (0xBF0, 0xBF2),
    (0xC78, 0xC7E), (0xD58, 0xD5E), (0xD70, 0xD78), (0xF2A, 0xF33), (0x1369, 0x137C),
    (0x16EE, 0x16F0), (0x17F0, 0x17F9), (0x19DA, 0x19DA), (0x2070, 0x2070), (0x2074, 0x2079),
    (0x2080, 0x2089), (0x2150, 0x2182), (0x2185, 0x2189), (0x221E, 0x221E), (0x2460, 0x24FF),
    (0x2776, 0x2793), (0x2CFD, 0x2CFD), (0x3007, 0x3007), (0x3021, 0x3029), (0x3038, 0x303A),
    (0x3192, 0x3195), (0x3220, 0x3229), (0x3248, 0x324F), (0x3251, 0x325F), (0x3280, 0x3289),
    (0x32B1, 0x32BF), (0x3405, 0x3405), (0x3483, 0x3483), (0x382A, 0x382A), (0x3B4D, 0x3B4D),
    (0x4E00, 0x4E00), (0x4E03, 0x4E03), (0x4E07, 0x4E07), (0x4E09, 0x4E09), (0x4E5D, 0x4E5D),
    (0x4E8C, 0x4E8C), (0x4E94, 0x4E94), (0x4E96, 0x4E96), (0x4EBF, 0x4EC0), (0x4EDF, 0x4EDF),
    (0x4EE8, 0x4EE8), (0x4F0D, 0x4F0D), (0x4F70, 0x4F70), (0x5104, 0x5104), (0x5146, 0x5146),
    (0x5169, 0x5169), (0x516B, 0x516B), (0x516D, 0x516D), (0x5341, 0x5341), (0x5343, 0x5345),
    (0x534C, 0x534C), (0x53C1, 0x53C4), (0x56DB, 0x56DB), (0x58F1, 0x58F1), (0x58F9, 0x58F9),
    (0x5E7A, 0x5E7A), (0x5EFE, 0x5EFF), (0x5F0C, 0x5F0E), (0x5F10, 0x5F10), (0x62FE, 0x62FE),
    (0x634C, 0x634C), (0x67D2, 0x67D2), (0x6F06, 0x6F06), (0x7396, 0x7396), (0x767E, 0x767E),
    (0x8086, 0x8086), (0x842C, 0x842C), (0x8CAE, 0x8CAE), (0x8CB3, 0x8CB3), (0x8D30, 0x8D30),
    (0x9621, 0x9621), (0x9646, 0x9646), (0x964C, 0x964C), (0x9678, 0x9678), (0x96F6, 0x96F6),
    (0xA6E6, 0xA6EF), (0xA830, 0xA835), (0xF96B, 0xF96B), (0xF973, 0xF973), (0xF978, 0xF978),
    (0xF9B2, 0xF9B2), (0xF9D1, 0xF9D1), (0xF9D3, 0xF9D3), (0xF9FD, 0xF9FD), (0x10107, 0x10133),
    (0x10140, 0x10178), (0x1018A, 0x1018B), (0x102E1, 0x102FB), (0x10320, 0x10323),
    (0x10341, 0x10341), (0x1034A, 0x1034A), (0x103D1, 0x103D5), (0x10858, 0x1085F),
    (0x10879, 0x1087F), (0x108A7, 0x108AF), (0x108FB, 0x108FF), (0x10916, 0x1091B),
    (0x109BC, 0x109BD), (0x109C0, 0x109CF), (0x109D2, 0x109FF), (0x10A40, 0x10A48),
    (0x10A7D, 0x10A7E), (0x10A9D, 0x10A9F), (0x10AEB, 0x10AEF), (0x10B58, 0x10B5F),
    (0x10B78, 0x10B7F), (0x10BA9, 0x10BAF), (0x10CFA, 0x10CFF), (0x10E60, 0x10E7E),
    (0x10F1D, 0x10F26), (0x10F51, 0x10F54), (0x10FC5, 0x10FCB), (0x11052, 0x11065),
    (0x111E1, 0x111F4), (0x1173A, 0x1173B), (0x118EA, 0x118F2), (0x11C5A, 0x11C6C),
    (0x11FC0, 0x11FD4), (0x12400, 0x1246E), (0x16B5B, 0x16B61), (0x16E80, 0x16E96),
    (0x1D2E0, 0x1D2F3), (0x1D360, 0x1D378), (0x1E8C7, 0x1E8CF), (0x1EC71, 0x1ECAB),
    (0x1ECAD, 0x1ECAF), (0x1ECB1, 0x1ECB4), (0x1ED01, 0x1ED2D), (0x1ED2F, 0x1ED3D),
    (0x1F100, 0x1F10C), (0x20001, 0x20001), (0x20064, 0x20064), (0x200E2, 0x200E2),
    (0x20121, 0x20121), (0x2092A, 0x2092A), (0x20983, 0x20983), (0x2098C, 0x2098C),
    (0x2099C, 0x2099C), (0x20AEA, 0x20AEA), (0x20AFD, 0x20AFD), (0x20B19, 0x20B19),
    (0x22390, 0x22390), (0x22998, 0x22998), (0x23B1B, 0x23B1B), (0x2626D, 0x2626D),
    (0x2F890, 0x2F890),
)
#: A digit of any script, or a number written as one sign (``²``, ``₃``, ``½``, ``Ⅻ``,
#: ``❶``, ``三``, ``∞``). Text holding one may be a number, however written, or a code or
#: identifier: it is asked about.
DIGIT = "[\\d" + "".join(f"{chr(a)}-{chr(b)}" for a, b in _NUMERIC_RANGES) + "]"
#: Digits and signs written otherwise: full-width (``１２``), Arabic-Indic, Devanagari;
#: the minus sign (U+2212) and dashes used as one.
_PLAIN_DIGITS = str.maketrans({
    **{chr(base + d): str(d) for base in (0xFF10, 0x0660, 0x06F0, 0x0966) for d in range(10)},
    **dict.fromkeys(map(chr, (0x2212, 0x2012, 0x2013, 0xFE63, 0xFF0D)), "-"),
    "\uff0b": "+", "\uff0e": ".", "\uff0c": ","})
#: Text that is a date, perhaps with a time of day: ISO 8601 (1980-03-01,
#: 1980-03-01T12:30:00Z) or day, month and year with slashes or dots (01/03/1980, 1.3.80),
#: months 1-12, days 1-31, years 1800-2199 (or two digits); a time zone only after a time
#: (``1980-03-01-1037`` is a code, not a date).
_DAY, _MONTH, _YEAR = r"(0?[1-9]|[12]\d|3[01])", r"(0?[1-9]|1[0-2])", r"(1[89]|2[01])\d\d"
DATED = (rf"^\s*({_YEAR}-{_MONTH}-{_DAY}|({_DAY}[/.]{_MONTH}|{_MONTH}[/.]{_DAY})[/.]"
         rf"(\d\d|{_YEAR}))"
         r"([ T]\d{1,2}:\d{2}(:\d{2}(\.\d*)?)?(\s*(Z|[+-]\d{2}:?\d{2}))?)?\s*$")
#: Text that stands for a missing value in files: read as missing in a protected CSV
#: column streamed by strata (then an error naming its rows), and as a missing number when
#: the audit compares columns.
MISSING_TEXT = ["", "NA", "N/A", "NaN", "nan", "NULL", "null", "None", "<NA>"]
#: A number written with a decimal comma and no other mark (``52,5``, ``-0,25``).
_DECIMAL_COMMA = r"^\s*[+-]?\d+,\d+\s*$"
#: Containers whose numbers make a column "nested" (dicts too).
_NESTED = (list, tuple, set, frozenset, np.ndarray)
#: Durations (a timedelta is a number of seconds).
_DURATIONS = (pd.Timedelta, datetime.timedelta, np.timedelta64)
#: Decimal comma to decimal point: the two marks swap (``1.234,5`` becomes ``1,234.5``).
_SWAP = str.maketrans(",.", ".,")


@dataclass(frozen=True)
class ColumnProfile:
    """What a column holds over the whole input (or the rows profiled so far).

    ``kind``: ``"number"`` (a numeric type, or text whose every non-missing value is a
    plain number), ``"bool"``, ``"datetime"``, ``"timedelta"``, ``"nested"`` (lists,
    structs or maps holding numbers), ``"complex"``, ``"binary"`` (bytes, whatever they
    encode), ``"empty"`` (no value yet) or ``"text"``.
    ``numbers``: rows holding a number: a plain number, or text holding a digit of any
    script that is not a date (:func:`numeric_text`); ``number_rows``: the first of them
    (0-based data rows); ``number_samples``: the first values holding a number that are not
    plain numbers (numbers in disguise, codes), ``plain_samples`` the first plain number;
    ``samples``: the first values that are not plain numbers; ``dates``: rows of text
    that are dates (:data:`DATED`). ``first``, ``last`` and ``steps`` tell whether the
    column counts 0, 1, ..., n-1.
    """

    kind: str
    rows: int = 0
    missing: int = 0
    numbers: int = 0
    plain: int = 0
    number_rows: tuple[int, ...] = ()
    samples: tuple[Any, ...] = ()
    number_samples: tuple[Any, ...] = ()
    plain_samples: tuple[Any, ...] = ()
    dates: int = 0
    first: float | None = None
    last: float | None = None
    steps: bool = True
    categories: frozenset[Any] = frozenset()
    used_categories: frozenset[Any] = frozenset()

    @property
    def unused_categories(self) -> int:
        """How many of a categorical column's categories (a Parquet dictionary's values) no
        row holds: released with the column, they would show values of rows not released
        (those of a larger table the rows were taken from)."""
        return len(self.categories - self.used_categories)

    @property
    def numeric_like(self) -> bool:
        """Numbers, or numbers in disguise: a column that may not be released raw."""
        return (self.kind in ("number", "timedelta", "nested", "complex", "binary")
                or (self.kind == "text" and self.numbers > 0))

    @property
    def plain_numbers(self) -> bool:
        """Numbers, or text whose every value is a plain number: a column that can be
        protected as it is (:func:`protectable` reads the text)."""
        return self.kind in ("number", "empty") or (
            self.kind == "text" and self.plain == self.rows - self.missing)

    def counts_from(self, start: int) -> bool:
        """True if the column holds ``start``, ``start + 1``, ..., ``start + n - 1`` (n > 1)
        in order."""
        return (self.kind == "number" and self.rows > 1 and self.missing == 0
                and self.first == start and self.last == start + self.rows - 1 and self.steps)

    def counts_on(self) -> bool:
        """True if the column holds ``a``, ``a + 1``, ..., ``a + n - 1`` in order (n > 2),
        as a record identifier often does."""
        return (self.first is not None and self.rows > 2 and self.steps
                and float(self.first).is_integer() and self.counts_from(int(self.first)))

    def numbers_rows(self, unnamed: bool) -> bool:
        """Whether the column numbers the rows: 0..n-1, or with no name (an empty header,
        an unnamed index) also 1..n, as R's ``write.csv`` writes its row names."""
        return self.counts_from(0) or (unnamed and self.counts_from(1))

    @property
    def dates_only(self) -> bool:
        """Dates: a datetime column, or text whose every value is a date (:data:`DATED`)."""
        return self.kind == "datetime" or (
            self.kind == "text" and 0 < self.dates == self.rows - self.missing)


def _kind(col: pd.Series) -> str:
    t = col.dtype
    if pd.api.types.is_bool_dtype(t):
        return "bool"
    if pd.api.types.is_timedelta64_dtype(t):
        return "timedelta"
    if pd.api.types.is_datetime64_any_dtype(t) or isinstance(t, pd.PeriodDtype):
        return "datetime"
    if pd.api.types.is_complex_dtype(t):
        return "complex"
    if pd.api.types.is_numeric_dtype(t):
        return "number"
    return "object"


def _nested_number(value: Any) -> bool:
    """True for a list, tuple, set, array, dict (struct or map) holding a number
    somewhere: a number of any type (``Decimal``, a Parquet decimal's values), a duration,
    bytes, or text holding a :data:`DIGIT` that is no date, as a text column's values are
    read."""
    if isinstance(value, dict):
        return any(_nested_number(v) for v in value.values())
    if isinstance(value, _NESTED):
        return any(_nested_number(v) for v in value)
    if isinstance(value, bool | np.bool_):
        return False
    if isinstance(value, (bytes, bytearray, memoryview)):
        return True  # (bytes may encode numbers in any way: asked about, as at the top level)
    if isinstance(value, str):
        return re.search(DIGIT, value) is not None and re.match(DATED, value) is None
    return isinstance(value, (numbers.Number, np.number, *_DURATIONS))


def _hidden_number(value: Any) -> bool:
    """True for an object among text that is a number in disguise: a duration, or a
    container holding a number."""
    return isinstance(value, _DURATIONS) or _nested_number(value)


def _scalar_kind(values: pd.Series) -> str | None:
    """The kind of an object column whose values all share one non-text kind."""
    # every value text (a CSV read as text): no value to look at one by one, which took a
    # third of a million-row audit's time
    if pd.api.types.infer_dtype(values, skipna=True) == "string":
        return None
    if values.map(lambda v: isinstance(v, (bytes, bytearray, memoryview))).any():
        return "binary"  # (bytes may hold numbers in any encoding: not read as text)
    probe = values.iloc[:1000]
    if probe.map(lambda v: isinstance(v, (dict, *_NESTED))).any():
        return "nested" if values.map(_nested_number).any() else "text"
    if probe.map(lambda v: isinstance(v, _DURATIONS)).all():
        return "timedelta"
    if number_objects(values):  # Decimal (a database's NUMERIC, Parquet decimal), ...
        return "number"
    return None


def _with_point(text: pd.Series, decimal: str) -> pd.Series:
    """``text`` written with a decimal point: with the decimal mark ``","`` the comma and
    the point swap, so that ``52,5`` reads as 52.5 and ``1.234,5`` as a number with a
    thousands separator (``1,234.5``), which is not a plain number."""
    return text if decimal == "." else text.str.translate(_SWAP)


def text_to_numbers(text: pd.Series, decimal: str = ".") -> np.ndarray:
    """Each value of a column of text as a float, NaN where it is not a number (or is
    empty): what ``pd.to_numeric(text, errors="coerce")`` reads. ``decimal``: the decimal
    mark, ``"."`` or ``","`` (then ``"52,5"`` is 52.5 and ``"3.5"`` is no plain number).

    Arrow's parser reads the column first, about seven times faster, empty text as
    missing; where it rejects a value (blanks around a number, words), pandas reads the
    whole column. Where both read a value they agree, with two exceptions that change no
    decision: Arrow rounds very long numerals correctly where pandas can be a unit in the
    last place off (a 288-digit integer part), and it keeps the sign of ``-0``, which
    compares equal to 0 (property-tested in ``tests/test_release.py``).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        arr = pa.array(text, type=pa.large_string())
        if decimal != ".":
            arr = _swapped_marks(arr)
        arr = pc.if_else(pc.equal(arr, ""), pa.scalar(None, pa.large_string()), arr)
        return np.asarray(pc.cast(arr, pa.float64()).to_numpy(zero_copy_only=False),
                          dtype=float)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return pd.to_numeric(_with_point(text, decimal), errors="coerce").to_numpy(dtype=float)


def _swapped_marks(arr: Any) -> Any:
    """The Arrow strings ``arr`` with every comma and point swapped, as
    :func:`_with_point` swaps them (``str.translate``, value by value in Python: four
    times slower on a million numbers); unchanged if no value holds either."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pc.any(pc.match_substring_regex(arr, "[.,]")).as_py():
        return arr  # (integers, words)
    parts = pc.split_pattern(arr, ",")  # (around each comma; then each point a comma,
    points = pc.replace_substring(parts.values, ".", ",")  # and the parts joined by points)
    return pc.binary_join(pa.LargeListArray.from_arrays(parts.offsets, points,
                                                         mask=parts.is_null()),
                          pa.scalar(".", pa.large_string()))


def _may_hold_number(text: pd.Series) -> np.ndarray:
    """Which values can hold a number however written: those with a digit (of any
    script) or an infinity. The others skip the (slow) cleaning."""
    return text.str.contains(_MAYBE, regex=True).to_numpy(dtype=bool)


def undecorated(text: pd.Series) -> pd.Series:
    """``text`` with what makes a number text removed: digits and minus signs written
    otherwise become ASCII (``１２``, ``−5``), a currency code (:data:`MONEY_WORD`) and the
    :data:`DECORATION` (thousands separators, currency and percent signs, blanks) go."""
    plain = text.str.translate(_PLAIN_DIGITS).str.replace(MONEY_WORD, "", regex=True)
    return plain.str.replace(DECORATION, "", regex=True)


def numeric_text(text: pd.Series, decimal: str = ".") -> tuple[np.ndarray, np.ndarray]:
    """For a column of text: which values are plain numbers (with the decimal mark
    ``decimal``), and which hold a number: a plain one, or text holding a :data:`DIGIT`
    of any script, however written (``$1,200``, ``170 cm``, ``5'11"``, ``1/2``, ``½``,
    ``<1000``, ``0 days 00:20:34``, ``[1.5, 2]``), and codes and identifiers with digits
    (``p12``, ``SW1A 1AA``), which microagg cannot tell from numbers. A date
    (:data:`DATED`: ``1980-03-01``, ``01.03.1980``) is no number, whatever the decimal
    mark.

    Examples
    --------
    >>> plain, numbers = numeric_text(pd.Series(["12", "5 ft", "north", "1980-03-01"]))
    >>> plain.tolist(), numbers.tolist()
    ([True, False, False, False], [True, True, False, False])
    """
    return _by_distinct(text, lambda values: _numeric_text(values, decimal))


def _numeric_text(text: pd.Series, decimal: str) -> tuple[np.ndarray, np.ndarray]:
    written = text
    plain = ~np.isnan(text_to_numbers(_with_point(text, decimal)))
    numbers = plain.copy()
    rest = np.flatnonzero(~plain)  # (a plain number is a number: only the rest are read)
    if rest.size:
        odd = written.iloc[rest]
        numbers[rest] = (odd.str.contains(DIGIT, regex=True).to_numpy(dtype=bool)
                         & ~odd.str.match(DATED).to_numpy(dtype=bool))
    return plain, numbers


def _by_distinct(text: pd.Series, values_of: Callable[[pd.Series], Any]) -> Any:
    """``values_of(text)`` (an array, or a tuple of arrays, with one entry per value, each
    depending on that value alone), computed once per distinct value where values repeat:
    a column of codes (a million rows, seven regions) costs seven values' work.

    Examples
    --------
    >>> _by_distinct(pd.Series(["a", "b", "a", "a"]), lambda t: t.str.len().to_numpy())
    array([1, 1, 1, 1])
    """
    codes, distinct = pd.factorize(text, use_na_sentinel=False)
    if 2 * len(distinct) > len(text):  # (mostly distinct: no work saved)
        return values_of(text)
    out = values_of(pd.Series(distinct, dtype=text.dtype))
    return tuple(o[codes] for o in out) if isinstance(out, tuple) else out[codes]


def decorated_numbers(text: pd.Series, decimal: str = ".") -> np.ndarray:
    """Each value of a column of text (with the decimal mark ``decimal``) as a number
    once it is :func:`undecorated` (NaN where it is none; ``1.234.567`` too, as its
    value depends on a reading of the points).

    A value that already reads as a number is taken as read: of the decoration, a plain
    number can hold only blanks around it, which change nothing (``" 12"`` is 12 either
    way). Only the other values go through the (slow) removal.
    """
    text = _with_point(text, decimal)
    nums = np.array(text_to_numbers(text), dtype=float)  # (a writable copy)
    rest = np.flatnonzero(np.isnan(nums))
    rest = rest[_may_hold_number(text.iloc[rest])]
    if rest.size:
        nums[rest] = text_to_numbers(undecorated(text.iloc[rest]))
    return nums


def profile_frame(frame: pd.DataFrame, *, na: Sequence[str] = (), text_numbers: bool = False,
                  decimal: str = ".") -> list[ColumnProfile]:
    """One :class:`ColumnProfile` per column of ``frame`` (in order).

    ``na``: text read as a missing value (besides ``NaN``/``None`` and empty text).
    ``text_numbers``: the frame is a file read as text (CSV), so a column whose every
    value is a plain number is of kind ``"number"`` (as a reader typing the file would
    make it); otherwise (a typed table) numbers held as text are text. A column of number
    objects (``decimal.Decimal``, Python ints; not booleans) is a column of numbers.
    ``decimal``: the decimal mark of numbers written as text, ``"."`` or ``","``.
    """
    missing_text = {"", *na}
    out = []
    for j in range(frame.shape[1]):
        col = frame.iloc[:, j]
        kind = _kind(col)
        rows = len(col)
        if kind != "object":
            miss = int(col.isna().sum())
            out.append(ColumnProfile(kind=kind if rows > miss else "empty", rows=rows,
                                     missing=miss, **_range(col, kind)))
            continue
        try:
            present = col[col.notna().to_numpy()]
        except ArithmeticError:  # Decimal("sNaN"): pandas cannot tell whether it is missing
            raise ValueError(f"column {frame.columns[j]!r} holds a signalling NaN "
                             "(Decimal('sNaN')), which pandas cannot compare: replace it, "
                             "e.g. with None") from None
        special = _scalar_kind(present) if len(present) else None
        if special == "number":  # numbers held as objects: profiled as the floats they are
            floats = pd.Series(object_floats(col))
            out.append(ColumnProfile(kind="number", rows=rows, missing=rows - len(present),
                                     **_range(floats, "number")))
            continue
        if special is not None:
            out.append(ColumnProfile(kind=special, rows=rows, missing=rows - len(present)))
            continue
        text = present.astype(str)
        declared = text.isin(missing_text).to_numpy()
        text = text[~declared]
        miss = rows - len(text)
        plain, numbers = (numeric_text(text, decimal) if len(text)
                          else (np.zeros(0, bool),) * 2)
        if pd.api.types.infer_dtype(present, skipna=True) != "string":  # objects among text
            numbers |= present[~declared].map(_hidden_number).to_numpy(dtype=bool)
        positions = np.flatnonzero(col.notna().to_numpy())[~declared]
        odd = text[~plain]
        profile = ColumnProfile(
            kind="empty" if not len(text) else "text", rows=rows, missing=miss,
            numbers=int(numbers.sum()), plain=int(plain.sum()),
            number_rows=tuple(int(i) for i in positions[numbers][:SHOWN_ROWS]),
            samples=tuple(dict.fromkeys(odd.iloc[:50]))[:3],
            number_samples=tuple(dict.fromkeys(text[numbers & ~plain].iloc[:50]))[:3],
            plain_samples=tuple(text[plain].iloc[:1]),
            dates=int(_by_distinct(odd, lambda t: t.str.match(DATED).to_numpy(dtype=bool)).sum())
            if len(odd) else 0)
        if text_numbers and len(text) and plain.all():
            values = text_to_numbers(text, decimal)  # (every value is a number: plain.all())
            profile = replace(profile, kind="number",
                              **_range_values(values, miss == 0))
        out.append(profile)
    for j in range(frame.shape[1]):
        col = frame.iloc[:, j]
        if isinstance(col.dtype, pd.CategoricalDtype):
            codes = col.cat.codes.to_numpy()
            cats = col.cat.categories
            out[j] = replace(out[j], categories=frozenset(cats),
                             used_categories=frozenset(cats[np.unique(codes[codes >= 0])]))
    return out


def _range(col: pd.Series, kind: str) -> dict[str, Any]:
    if kind != "number" or not len(col) or col.isna().any():
        return {"steps": kind == "number" and not len(col)}
    return _range_values(col.to_numpy(dtype=float), True)


def _range_values(values: np.ndarray, complete: bool) -> dict[str, Any]:
    if not complete or not values.size:
        return {"steps": False}
    with np.errstate(over="ignore", invalid="ignore"):  # 1e308 - (-1e308): not a step
        steps = bool((np.diff(values) == 1).all())
    return {"first": float(values[0]), "last": float(values[-1]), "steps": steps}


def combine_profiles(parts: Iterable[Sequence[ColumnProfile]]) -> list[ColumnProfile]:
    """The profiles of the rows of ``parts`` taken in order (batches of one table)."""
    result: list[ColumnProfile] | None = None
    for part in parts:
        result = list(part) if result is None else [
            _combine(a, b) for a, b in zip(result, part, strict=True)]
    if result is None:
        raise ValueError("the table is empty: nothing to microaggregate")
    return result


def _combine(a: ColumnProfile, b: ColumnProfile) -> ColumnProfile:
    if b.rows == 0:
        return a
    if a.rows == 0:
        return b
    if a.kind == "empty" or b.kind == "empty":
        kind = b.kind if a.kind == "empty" else a.kind
    elif a.kind == b.kind:
        kind = a.kind
    elif {a.kind, b.kind} <= {"number", "text"}:
        kind = "text"
    else:
        kind = "text" if "text" in (a.kind, b.kind) else max(a.kind, b.kind)
    if kind == "nested" or "nested" in (a.kind, b.kind) or "timedelta" in (a.kind, b.kind):
        kind = "nested" if "nested" in (a.kind, b.kind) else "timedelta"
    if "binary" in (a.kind, b.kind):
        kind = "binary"
    numbers = _as_text_numbers(a) + _as_text_numbers(b)
    rows_b = tuple(a.rows + i for i in _number_rows(b))
    return ColumnProfile(
        kind=kind, rows=a.rows + b.rows, missing=a.missing + b.missing,
        numbers=numbers, plain=a.plain + b.plain,
        number_rows=(_number_rows(a) + rows_b)[:SHOWN_ROWS],
        samples=tuple(dict.fromkeys(a.samples + b.samples))[:3],
        number_samples=tuple(dict.fromkeys(a.number_samples + b.number_samples))[:3],
        plain_samples=(a.plain_samples or b.plain_samples)[:1],
        categories=a.categories | b.categories,
        used_categories=a.used_categories | b.used_categories,
        dates=a.dates + b.dates,
        first=a.first, last=b.last,
        steps=(a.steps and b.steps and a.last is not None and b.first == a.last + 1))


def _as_text_numbers(p: ColumnProfile) -> int:
    return p.rows - p.missing if p.kind == "number" and not p.numbers else p.numbers


def _number_rows(p: ColumnProfile) -> tuple[int, ...]:
    if p.number_rows or p.kind != "number":
        return p.number_rows
    return tuple(range(min(SHOWN_ROWS, p.rows)))


def profile_batches(batches: Iterable[pd.DataFrame], *, na: Sequence[str] = (),
                    text_numbers: bool = False, decimal: str = "."
                    ) -> tuple[list[Any], list[ColumnProfile]]:
    """The column names and whole-input profiles of a table given batch by batch."""
    names: list[Any] | None = None
    parts = []
    for batch in batches:
        if names is None:
            names = list(batch.columns)
        parts.append(profile_frame(batch, na=na, text_numbers=text_numbers, decimal=decimal))
    if names is None:
        raise ValueError("the table has no columns")
    return names, combine_profiles(parts)


@dataclass(frozen=True)
class Roles:
    """The role of every column: protected, strata, kept (with row indexes), passed through
    (text holding no digit, or everything else under ``keep_rest``); ``notes`` for the
    report; ``kept_index``: the DataFrame's index levels named in ``keep``."""

    protect: list[Any]
    strata: list[Any]
    keep: list[Any]
    passed: list[Any]
    notes: list[str] = field(default_factory=list)
    keep_rest: bool = False
    kept_index: list[Any] = field(default_factory=list)

    @property
    def kept(self) -> list[Any]:
        """Everything released exactly as read on purpose: the kept columns (with a row
        index), then the index levels named in ``keep``."""
        return [*self.keep, *self.kept_index]


def check_release_k(k: Any) -> int:
    """``k`` of a release, checked before any data is read: an integer of at least
    :data:`RELEASE_MIN_K` (the upper bound, the number of records, is checked once they
    are counted). The heuristics themselves (``microagg.mdav(X, 1)``) accept ``k = 1``.

    Examples
    --------
    >>> check_release_k(3)
    3
    >>> check_release_k(1)
    Traceback (most recent call last):
    ...
    ValueError: k=1 releases each record as it is (a group of one): a release needs k >= 2
    """
    from ._validate import check_count

    if isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k == 1:
        raise ValueError(f"k={k} releases each record as it is (a group of one): a release "
                         f"needs k >= {RELEASE_MIN_K}")
    return check_count(k, "k", RELEASE_MIN_K)


def check_names(names: Sequence[Any]) -> None:
    """Duplicate, boolean and reserved column names are errors naming them and the fix."""
    seen: set[Any] = set()
    repeated: dict[Any, None] = {}  # in the order of their second occurrence
    for c in names:
        if c in seen:
            repeated[c] = None
        seen.add(c)
    dup = list(repeated)
    if dup:
        raise ValueError(f"the table has duplicate column names {shown_names(dup)}: a repeated "
                         "name cannot be protected or reported unambiguously; rename the "
                         "columns first")
    flags = [c for c in names if isinstance(c, (bool, np.bool_))]
    if flags:  # (pandas reads a list of True/False as a row mask, never as labels)
        raise ValueError(f"column name(s) {flags} are True/False, which pandas reads as a "
                         "mask of rows, not as column names, when selecting columns; rename "
                         "the columns first, e.g. df.columns = df.columns.map(str)")
    taken = [c for c in names if c in RESERVED]
    if taken:
        raise ValueError(f"column(s) {taken} have names microagg uses internally "
                         f"({', '.join(RESERVED)}); rename them first")


def named_columns(names: Sequence[Any], prof: dict[Any, ColumnProfile], *, columns: Any,
                  strata: Sequence[Any], keep: Any) -> tuple[list[Any] | None, list[Any]]:
    """The columns named as protected (``None``: none named) and as kept, checked: the
    column names (:func:`check_names`), an input read without its header row
    (:func:`microagg._validate.first_record_as_names`, unless a column is named: naming one
    confirms the names), and a column named in two roles. :func:`decide_roles` and the
    audit (:func:`microagg.audit`) both start here."""
    from ._validate import column_labels, first_record_as_names

    check_names(names)
    kept = [] if keep is None else column_labels(keep, names, "keep")
    named = None if columns is None else column_labels(columns, names, "columns")
    headless = None if named or kept or strata else first_record_as_names(
        names, [c for c in names if prof[c].numeric_like])
    if headless is not None:
        raise headless
    check_role_clash(named, kept, strata)
    return named, kept


def check_role_clash(columns: Sequence[Any] | None, keep: Sequence[Any],
                     strata: Sequence[Any]) -> None:
    """A column named in two roles (protected and strata, or kept and another) is an
    error naming it: by :func:`named_columns`, and by ``microagg protect`` on the
    options themselves before the input is read."""
    both = [c for c in (columns or []) if c in strata]
    if both:
        raise ValueError(f"column(s) {both} are strata and cannot also be protected: a "
                         "strata column is released unchanged; leave it out of columns")
    clash = [c for c in keep if c in strata or c in (columns or [])]
    if clash:
        raise ValueError(f"column(s) {clash} are named in keep and also as protected or "
                         "strata columns; name each column once")


@dataclass(frozen=True)
class RowLabelColumns:
    """Columns that may hold the rows' labels, by :func:`row_label_columns`.

    ``kept``: a first column that is a row index (:func:`row_index`; also ``index``, else
    ``None``) and the stored index columns that number the rows
    (:func:`stored_index_rows`), released unchanged, with ``notes`` on them;
    ``blank_first``: a first column with no header holding other numbers (``None``: there
    is none); ``asked``: stored index columns holding other numbers (kept too under
    ``keep_rest``, as a DataFrame's index is). :func:`decide_roles` asks about the last
    two; the audit counts them as protected unless named.
    """

    kept: list[Any]
    notes: list[str]
    index: Any
    blank_first: Any
    asked: list[Any]


def row_label_columns(names: Sequence[Any], prof: dict[Any, ColumnProfile],
                      rest: Sequence[Any], named: Sequence[Any] | None,
                      stored_index: Sequence[Any], *, keep_rest: bool = False
                      ) -> RowLabelColumns:
    """The :class:`RowLabelColumns` among ``rest`` (the columns not strata and not kept),
    with ``named`` the columns named as protected (``None``: none named)."""
    kept, notes = [], []
    index = row_index(names, prof, list(rest))
    blank_first = None
    if index is not None and (named is None or index not in named):
        kept.append(index)
        notes.append(row_index_note(index))
    else:
        index = None
    if (index is None and named is None and names and names[0] in rest
            and _blank_header(names[0]) and prof[names[0]].numeric_like):
        blank_first = names[0]
    counting, asked = stored_index_rows(
        stored_index, prof, [c for c in rest if c not in kept and c not in (named or [])])
    kept += counting
    notes += [stored_index_note(c) for c in counting]
    if keep_rest:  # (as keep_rest keeps a DataFrame's index, whatever it holds)
        kept += asked
        notes += [_stored_index_kept_note(c) for c in asked]
        asked = []
    return RowLabelColumns(kept=kept, notes=notes, index=index, blank_first=blank_first,
                           asked=asked)


def decide_roles(names: Sequence[Any], profiles: Sequence[ColumnProfile], *,
                 columns: Any = None, strata: Sequence[Any] = (), keep: Any = None,
                 keep_rest: bool = False, stored_index: Sequence[Any] = ()) -> Roles:
    """Each column's role by the release contract (see the module docstring).

    ``stored_index``: the columns that hold a DataFrame's index stored with the file (a
    Parquet file's pandas metadata): judged as :func:`decide_index` judges an index, kept
    if they number the rows, else asked about unless named (:func:`stored_index_rows`).
    """
    from ._validate import check_flag

    keep_rest = check_flag(keep_rest, "keep_rest")  # ("no" would keep every column raw)
    prof = dict(zip(names, profiles, strict=True))
    strata = list(strata)
    named, kept = named_columns(names, prof, columns=columns, strata=strata, keep=keep)
    padded = [c for c in names if prof[c].unused_categories]
    if padded:  # whatever their role: the categories go out with the column
        raise unused_categories_error(padded, sum(prof[c].unused_categories for c in padded))
    rest = [c for c in names if c not in strata and c not in kept]
    labels = row_label_columns(names, prof, rest, named, stored_index, keep_rest=keep_rest)
    if labels.blank_first is not None:
        raise _blank_first_column(labels.blank_first)  # not protected by default: asked
    kept += labels.kept
    notes = list(labels.notes)
    rest = [c for c in rest if c not in labels.kept and c not in labels.asked]
    # (a stored index holding other numbers is asked about after the columns, as an index)
    if named is None:
        protect = [c for c in rest if prof[c].kind == "number"]
        if not protect:
            raise nothing_to_protect(names, prof, index=labels.index)
        notes += [_identifier_note(c, prof[c]) for c in protect if prof[c].counts_on()]
    else:
        protect = named
        for c in protect:
            p = prof[c]
            if p.kind in ("datetime", "timedelta") or (p.kind == "text" and p.dates_only):
                raise TypeError(_not_numbers_of_kind(c, p.kind))  # (no --na to declare)
            if p.kind == "text" and p.rows - p.missing > p.plain:  # values not plain numbers
                raise TypeError(_not_numbers(c, p.rows - p.missing - p.numbers,
                                             p.numbers - p.plain, p.samples))
    passed = []
    refused = []
    for c in rest:
        if c in protect:
            continue
        if prof[c].numeric_like and not keep_rest:
            refused.append(c)
        else:
            passed.append(c)
    if refused:
        raise ValueError(_refusal(refused, prof))
    if labels.asked:
        raise stored_index_error(labels.asked[0], prof[labels.asked[0]])
    notes += [_dates_note(c) for c in passed if prof[c].dates_only]
    return Roles(protect=list(protect), strata=strata, keep=kept, passed=passed, notes=notes,
                 keep_rest=keep_rest)


def unused_categories_error(columns: Sequence[Any], unused: int, what: str = "column(s)"
                            ) -> ValueError:
    """The error (or, in an audit, the failure) for categorical ``columns`` (``what``:
    ``"index level(s)"`` for a DataFrame's index) with ``unused`` categories that no row
    holds: they would be released with them."""
    fix = ("df.index = df.index.remove_unused_categories()" if what.startswith("index")
           else "df[c] = df[c].cat.remove_unused_categories()")
    return ValueError(
        f"{what} {list(columns)} are categorical, with {unused} categories that no row "
        "holds: they would be released with them (pandas categories, a Parquet "
        f"dictionary), showing values of rows not in this table; drop them first: {fix} "
        "(a Parquet file: read it with pandas, drop them, write it again)")


def _identifier_note(column: Any, profile: ColumnProfile) -> str:
    """The note on a column protected by default that counts the records, one step a row."""
    return (f"{column!r} counts {profile.first:.0f}..{profile.last:.0f}, one more each row, "
            "as a record identifier does: it was protected with the other numeric columns; "
            "an identifier is dropped before release, not microaggregated (name the columns "
            "to protect: columns=[...], --columns)")


#: What the note on an identifier-like column quotes of the file: its first and last value
#: (:func:`_identifier_note`).
_COUNTED_RANGE = re.compile(r" counts -?\d+\.\.-?\d+, one more each row, ")


def note_without_values(note: str) -> str:
    """``note`` (one of :attr:`Roles.notes`) quoting no value of the file, for a record of
    the release that holds none (``microagg protect --report``): the first and last value
    of an identifier-like column are left out; the other notes name columns only.

    Examples
    --------
    >>> note_without_values("'id' counts 1001..1030, one more each row, as a record ...")
    "'id' counts from its first value to its last, one more each row, as a record ..."
    """
    return _COUNTED_RANGE.sub(" counts from its first value to its last, one more each row, ",
                              note)


def _dates_note(column: Any) -> str:
    """The note on a column of dates released unchanged (allowed, but rarely harmless)."""
    return (f"{column!r} holds dates and is released unchanged: a date (of birth, of an "
            "event) can identify a person together with other columns; coarsen it first "
            "(e.g. to the year) or protect it as a number (e.g. days since a date), or name "
            f"it in keep to release it on purpose (keep=[...], --keep {column})")


def _blank_header(name: Any) -> bool:
    """Whether ``name`` is what a reader gives a column whose header cell is empty
    (:data:`BLANK_HEADER` and its position, as pandas' ``read_csv`` and
    :mod:`microagg._csv` name it)."""
    return str(name).startswith(BLANK_HEADER)


def row_index(names: Sequence[Any], prof: dict[Any, ColumnProfile], rest: list[Any]) -> Any:
    """The first column if it is a row index among ``rest`` (the columns not yet given a
    role), else None: kept, not protected, unless named.

    A row index counts the rows, 0, 1, ..., n-1 in order; one with no header (what
    pandas' ``to_csv`` and R's ``write.csv`` write) may also count 1, ..., n. A first
    column with no header that holds anything else is not a row index:
    :func:`decide_roles` asks about it (:func:`_blank_first_column`).
    """
    if not names or names[0] not in rest:
        return None
    first = names[0]
    return first if prof[first].numbers_rows(_blank_header(first)) else None


def stored_index_rows(stored: Sequence[Any], prof: dict[Any, ColumnProfile],
                      rest: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """The ``stored`` index columns among ``rest`` (not yet given a role) that number the
    rows, to keep, and those that hold other numbers, to ask about
    (:func:`stored_index_error`; an audit counts them as protected instead).

    pandas stores a DataFrame's index with a Parquet file, as columns (``__index_level_0__``
    when unnamed): a filtered frame's original row numbers, or an identifier set as the
    index. Like a DataFrame's index (:func:`decide_index`), it is kept if it only numbers
    the rows; otherwise microagg cannot tell row numbers from identifiers or data, and asks.
    """
    kept, asked = [], []
    for c in (c for c in stored if c in rest):
        p = prof[c]
        if p.numbers_rows(re.fullmatch(r"__index_level_\d+__", str(c)) is not None):
            kept.append(c)
        elif p.numeric_like:
            asked.append(c)
    return kept, asked


def stored_index_error(column: Any, p: ColumnProfile) -> ValueError:
    """The error for a stored index column holding numbers that do not count the rows."""
    return ValueError(
        f"{column!r}, the index pandas stored in the Parquet file,{_holds(p)}, not the row "
        "numbers 0, 1, ..., n-1: microagg cannot tell the original table's row numbers (which "
        "link each released row to its record) from identifiers or data. Keep it unchanged "
        f"on purpose (--keep '{column}', keep=[{column!r}]), protect it (name it in "
        "--columns), or write the file without it (df.to_parquet(path, index=False))")


def stored_index_note(column: Any) -> str:
    """The note on a stored index column kept because it numbers the rows."""
    return (f"{column!r} is the index pandas stored in the Parquet file, counting the rows: "
            "kept unchanged, not protected; name it in columns to protect it")


def _stored_index_kept_note(column: Any) -> str:
    """The note on a stored index column holding other numbers, kept under keep_rest."""
    return (f"{column!r} is the index pandas stored in the Parquet file, holding numbers that "
            "are not the row numbers: kept unchanged, as keep_rest keeps every column not "
            "protected (name it in columns to protect it)")


def row_index_note(index: Any) -> str:
    """The note on a first column kept as a row index (:func:`row_index`)."""
    how = "with no header, counting the rows" if _blank_header(index) else "counting 0..n-1"
    return (f"{index!r} looks like a row index (the first column, {how}): kept unchanged, "
            "not protected; name it in columns to protect it")


@dataclass(frozen=True)
class IndexProfile:
    """A table's row labels (a DataFrame's index) over the whole input.

    ``names``: the levels' names (``None`` for an unnamed level); ``profiles``: one
    :class:`ColumnProfile` per level, as if it were a column; ``positions``: the labels
    only number the rows by position (pandas' default ``RangeIndex``, or each partition's
    own ``RangeIndex`` from 0, as ``dask.dataframe.read_csv`` makes them): nothing to
    release.
    """

    names: tuple[Any, ...]
    profiles: tuple[ColumnProfile, ...]
    positions: bool

    def numbered_from(self) -> int | None:
        """The first row number if the index only numbers the rows (positions, or one level
        counting 0..n-1; unnamed, also 1..n), else ``None``.

        Examples
        --------
        >>> profile_index(pd.RangeIndex(5)).numbered_from()
        0
        >>> print(profile_index(pd.Index([f"p{i}" for i in range(5)])).numbered_from())
        None
        """
        if self.positions:
            return 0
        if len(self.profiles) == 1 and self.profiles[0].numbers_rows(self.names[0] is None):
            return 0 if self.profiles[0].counts_from(0) else 1
        return None


#: The rows of a table read from a file (CSV, Parquet): numbered by position, no index is
#: released (a Parquet file's pandas index is one of its columns).
FILE_ROWS = IndexProfile((), (), True)


def profile_index(index: pd.Index) -> IndexProfile:
    """The :class:`IndexProfile` of a DataFrame's (or one partition's) ``index``.

    Examples
    --------
    >>> profile_index(pd.RangeIndex(4)).positions
    True
    >>> ix = profile_index(pd.Index([3, 7, 12], name="row"))
    >>> ix.names, ix.positions, ix.profiles[0].kind
    (('row',), False, 'number')
    """
    if isinstance(index, pd.RangeIndex) and len(index) > 1:  # (not materialised)
        counts = ColumnProfile(kind="number", rows=len(index), first=float(index[0]),
                               last=float(index[-1]), steps=index.step == 1)
        return IndexProfile((index.name,), (counts,), index.start == 0 and index.step == 1)
    levels = pd.DataFrame({i: index.get_level_values(i) for i in range(index.nlevels)})
    return IndexProfile(tuple(index.names), tuple(profile_frame(levels)),
                        isinstance(index, pd.RangeIndex) and index.start == 0)


def combine_index_profiles(parts: Iterable[IndexProfile]) -> IndexProfile:
    """The :class:`IndexProfile` of the rows of ``parts`` taken in order (partitions)."""
    parts = list(parts)
    if not parts:
        raise ValueError("the table is empty: nothing to microaggregate")
    return IndexProfile(parts[0].names, tuple(combine_profiles(p.profiles for p in parts)),
                        all(p.positions for p in parts))


def split_keep(keep: Any, columns: Sequence[Any], index: IndexProfile
               ) -> tuple[list[Any] | None, list[Any]]:
    """``keep`` (one label or a list) as the columns it names (``None``: none) and the
    named index levels it names; a label naming neither is an error."""
    from ._validate import column_labels

    if keep is None:
        return None, []
    levels = [n for n in index.names if n is not None]
    chosen = column_labels(keep, [*columns, *(n for n in levels if n not in columns)], "keep")
    return [c for c in chosen if c in columns] or None, [c for c in chosen if c in levels]


def decide_index(index: IndexProfile, *, keep: Sequence[Any] = (),
                 keep_rest: bool = False) -> list[str]:
    """Whether a DataFrame's index may be returned with the release: the notes on it, or an
    error naming it (the contract of :func:`decide_roles`, applied to the row labels).

    An index (level) that numbers the rows (positions, or labels 0..n-1 in order; unnamed,
    also 1..n, as a first column with no header) carries nothing. Otherwise each level is
    judged as a column would be: numbers, or numbers in disguise, are asked about unless the level
    is named in ``keep`` (or ``keep_rest``): microagg cannot tell the row numbers of the
    original file (which link each released row to its record) from identifiers or data;
    dates get a note; text holding no digit passes.

    Examples
    --------
    >>> decide_index(profile_index(pd.RangeIndex(3)))
    []
    >>> decide_index(profile_index(pd.Index([3, 7, 12], name="row")), keep=["row"])
    []
    >>> decide_index(profile_index(pd.Index([3, 7, 12], name="row")))
    Traceback (most recent call last):
    ...
    ValueError: the index 'row' is numeric (3 numbers), not the row numbers 0, 1, ..., n-1: \
a DataFrame's index is returned with the release ...
    """
    if index.positions:
        return []
    padded = [(_index_label(level, name, len(index.names)), p.unused_categories)
              for level, (name, p) in enumerate(zip(index.names, index.profiles, strict=True))
              if p.unused_categories]
    if padded:  # (whatever the level's role: its categories go out with it)
        raise unused_categories_error([label for label, _ in padded],
                                      sum(n for _, n in padded), "index level(s)")
    notes = []
    refused = []
    for level, (name, p) in enumerate(zip(index.names, index.profiles, strict=True)):
        if p.numbers_rows(name is None) or keep_rest or (name is not None and name in keep):
            continue
        label = _index_label(level, name, len(index.names))
        if p.numeric_like:
            refused.append(label + _holds(p))
        elif p.dates_only:
            how = ("keep=[its name]" if name is not None
                   else "name it, e.g. df.rename_axis('date'), and keep it")
            notes.append(f"{label} holds dates and is returned unchanged with the release: a "
                         "date can identify a person together with other columns; coarsen "
                         f"it, or release it on purpose ({how})")
    if refused:
        alone = ", not the row numbers 0, 1, ..., n-1" if len(index.names) == 1 else ""
        raise ValueError(
            "; ".join(refused) + alone + ": a DataFrame's index is returned with the release "
            "(and to_csv writes it), and microagg cannot tell the original file's row "
            "numbers (which link each released row to its record) from identifiers or data. "
            "Drop it (df.reset_index(drop=True)), protect it as a column (df.reset_index(), "
            "then columns=[...]), or keep it unchanged on purpose (keep=[its name]; name an "
            "unnamed index first, e.g. df.rename_axis('row'))")
    return notes


def _index_label(level: int, name: Any, levels: int) -> str:
    """How an error or a note names an index level."""
    if levels == 1:
        return "the index" if name is None else f"the index {name!r}"
    return f"level {level} of the index" + ("" if name is None else f" ({name!r})")


def _holds(p: ColumnProfile) -> str:
    """What a numeric-looking column or index level holds, after its name in an error."""
    if p.kind == "text":
        rows = ", ".join(str(i + 1) for i in p.number_rows)
        shown = p.number_samples or p.plain_samples
        eg = f" (e.g. {shown_value(shown[0])}, digits shown as #)" if shown else ""
        other = [v for v in p.samples if re.search(DIGIT, str(v)) is None]
        also = f"; other values such as {other[0]!r}" if other else ""
        at = ("first at data rows" if p.numbers > len(p.number_rows)
              else "data rows" if len(p.number_rows) > 1 else "data row")
        return (f"{eg} holds numbers or digits in text in {p.numbers} of {p.rows} rows ({at} "
                f"{rows}{also}){_comma_hint(p.number_samples)}")
    if p.kind == "number":
        return f" is numeric ({p.rows - p.missing} numbers)"
    return f" holds {_HOLDS.get(p.kind, p.kind + 's')}"


def _blank_first_column(column: Any) -> ValueError:
    """The error for a first column with no header that holds numbers but does not count
    the rows: a row index written after rows were dropped or reordered, or data whose
    header was left empty; microagg cannot tell which, so it asks."""
    return ValueError(
        f"{column!r}, the first column, has no header and holds numbers that do not count "
        "the rows (0, 1, ..., n-1 or 1, ..., n): microagg cannot tell a row index written "
        "after rows were dropped or reordered from data whose header was left empty. Name "
        f"it in keep to release it unchanged (keep=[{column!r}], --keep '{column}'), or "
        "in columns to protect it, or drop it first")


def nothing_to_protect(names: Sequence[Any], prof: dict[Any, ColumnProfile],
                       what: str = "protect", *, index: Any = None) -> ValueError:
    """The error for a table with no numeric column (to ``what``: protect, audit) but the
    row ``index`` set aside, if any; a file read with the wrong delimiter is one column,
    whose name gives the hint."""
    rows = max((p.rows for p in prof.values()), default=0)
    if not len(names):
        return ValueError(f"the table has no columns: there is nothing to {what}")
    if rows == 0:
        return ValueError(f"the table has no rows (only the header {list(names)}): there is "
                          f"nothing to {what}")
    hint = ""
    seps = [s for s in ";\t|," if len(names) == 1 and s in str(names[0])]
    if seps:
        given = "tab" if seps[0] == "\t" else repr(seps[0])
        hint = (f" (its one column {names[0]!r} suggests the delimiter {given}: read the file "
                f"with it, --delimiter {given} on the command line, sep= in pandas.read_csv)")
    if index is not None:
        hint += (f" (its numeric column {index!r} counts the rows 0, 1, ..., so it is kept as "
                 "a row index: name it in columns to protect it)")
    return ValueError(f"the table has no numeric column to {what}{hint}; its columns are "
                      f"{shown_names(list(names)[:10])}: name the columns to {what} "
                      "(columns=[...], --columns on the command line)")


def _refusal(refused: list[Any], prof: dict[Any, ColumnProfile]) -> str:
    """The error for columns neither protected nor kept: what each holds, and a fix that
    works for it (a timedelta or a nested value cannot be protected as it is), in
    sentences that say "it" of one column and "they" of several."""
    one = len(refused) == 1
    kinds: dict[str, list[Any]] = {}
    for c in refused:
        kinds.setdefault(prof[c].kind if prof[c].kind in _FIXES else "number", []).append(c)
    na = _na_example([prof[c] for c in refused if prof[c].kind == "text"])
    fixes = []
    for kind, cols in kinds.items():
        single = len(cols) == 1
        fix = _FIXES[kind].format(it="it" if single else "them", sub="it" if single else "they",
                                  holds="holds" if single else "hold", na=na)
        if len(kinds) > 1:
            fix = f"for {', '.join(map(repr, cols))}, {fix}"
        fixes.append(fix[0].upper() + fix[1:] + ".")
    return (f"{'column' if one else 'columns'} "
            + "; ".join(repr(c) + _holds(prof[c]) for c in refused)
            + f": {'it is' if one else 'they are'} neither protected nor kept, so "
            f"{'it' if one else 'they'} would be released unprotected. " + " ".join(fixes)
            + f" Or keep {'it' if one else 'them'} unchanged on purpose (keep=[...], --keep "
            f"{','.join(map(str, refused))})")


def _na_example(texts: list[ColumnProfile]) -> str:
    """Text among ``texts``' values that is no number and could mean a missing value (an
    example for ``--na``), else ``refused``."""
    for p in texts:
        for v in p.samples:
            if re.fullmatch(r"[A-Za-z][A-Za-z./_-]*", str(v)):
                return str(v)
    return "refused"


#: What a refused column holds, by kind, where "<kind>s" does not say it.
_HOLDS = {"nested": "nested numbers", "complex": "complex numbers", "binary": "bytes"}
#: A fix that works for refused columns, by kind (for one column or several: ``{it}`` "it"
#: or "them", ``{sub}`` "it" or "they", ``{holds}`` "holds" or "hold"; ``{na}``: an example
#: of text meaning a missing value).
_FIXES = {
    "number": "protect {it} (columns=[...], --columns)",
    "text": "if {sub} {holds} numbers, protect {it} (columns=[...], --columns), converting "
            "{it} first if they are written otherwise, e.g. pd.to_numeric after removing ',' "
            "and '$' (or a unit, as in '170 cm'), and declaring text that means a missing "
            "value (e.g. --na {na}), whose rows are then dropped or imputed; if {sub} {holds} "
            "codes or identifiers, drop {it}",
    "timedelta": "convert {it} to numbers first (e.g. df[c].dt.total_seconds()) and protect "
                 "those",
    "nested": "put each number in a column of its own and protect those",
    "complex": "split {it} into real and imaginary parts (two columns each) and protect those",
    "binary": "decode {it} first (to text, e.g. df[c].str.decode('utf-8'), or to numbers) "
              "and protect the numbers",
}


def protectable(frame: pd.DataFrame, columns: Sequence[Any], *, na: Sequence[str] = (),
                decimal: str = ".") -> pd.DataFrame:
    """``frame`` with the text columns among ``columns`` (a file read as text, numbers
    written with the decimal mark ``decimal``) as numbers: empty text and the declared
    missing-value text ``na`` become NaN (then an error naming the rows, as
    microaggregation needs every value); other columns untouched (``frame`` itself is
    returned when no column is text)."""
    out = frame
    missing = {"", *na}
    for c in columns:
        col = out[c]
        if not pd.api.types.is_numeric_dtype(col.dtype) and not number_objects(col):
            text = col.astype(str).where(col.notna(), "")
            declared = text.isin(missing).to_numpy()
            values = text_to_numbers(text.where(~declared, ""), decimal)  # ("": missing)
            bad = np.flatnonzero(np.isnan(values) & ~declared)
            if bad.size:
                odd = text.iloc[bad]
                texts = int(np.isnan(decorated_numbers(odd, decimal)).sum())
                raise TypeError(_not_numbers(c, texts, bad.size - texts,
                                             list(dict.fromkeys(odd.iloc[:50])), bad))
            if out is frame:
                out = frame.copy()
            out[c] = values
    return out


def _not_numbers_of_kind(column: Any, kind: str) -> str:
    """The error (a TypeError's) for a column to protect that holds timedeltas (``kind``
    ``"timedelta"``) or dates (a datetime or period type, or text whose every value is a
    date): what to convert them to."""
    if kind == "timedelta":
        what, fix = "timedeltas", "e.g. df[c].dt.total_seconds()"
    else:
        what, fix = "dates", ("e.g. days since a date, or the year: df[c].dt.year, after "
                              "pd.to_datetime for dates written as text")
    return (f"column {column!r} is to be protected but holds {what}, not numbers: "
            f"convert it to numbers first ({fix}) and protect those. Or keep the column "
            f"unchanged on purpose (keep=[...], --keep {column})")


def _comma_hint(samples: Sequence[Any]) -> str:
    """A hint for values such as ``52,5``: numbers written with a decimal comma."""
    if not any(re.match(_DECIMAL_COMMA, str(v)) for v in samples):
        return ""
    return (" (if ',' is the decimal mark, as in 52,5, say so: --decimal , on the command "
            "line, decimal=',' in pandas.read_csv)")


def _not_numbers(column: Any, texts: int, decorated: int, examples: Sequence[Any],
                 rows: Sequence[int] | np.ndarray = ()) -> str:
    """The error (a TypeError's) for a column to protect with ``texts`` values that are no
    numbers and ``decorated`` numbers written with separators or signs (``rows``: 0-based
    data rows of the first offending values, when known). Decorated numbers are not
    guessed at."""
    shown = ([", ".join(map(shown_value, examples[:3])) + " (digits shown as #)"] if len(examples)
             else [])
    if len(rows):
        shown.append(f"first at data rows {', '.join(str(i + 1) for i in rows[:SHOWN_ROWS])}")
    problems = []
    if texts:
        problems.append(f"{texts} of them text that is not a number (declare missing-value "
                        "text with --na on the command line, or fix them)")
    if decorated:
        problems.append(f"{decorated} of them text with digits that is not a plain number: "
                        "a code (such as 'A12': then the column is no number to protect) or "
                        "a number written with separators, a unit, a currency or percent "
                        "sign, which microagg does not guess at (is '1,234' a thousand or "
                        "one point two?): write such numbers as plain numbers first (e.g. "
                        "52000.5, or 52000,5 in a file read with --decimal ,)"
                        f"{_comma_hint(examples)}")
    return (f"column {column!r} is to be protected but is non-numeric: it holds values that "
            "are not plain numbers"
            + (f" ({'; '.join(shown)})" if shown else "") + ": " + "; ".join(problems)
            + f". Or keep the column unchanged on purpose (keep=[...], --keep {column})")
