"""The release audit: a second pair of eyes on a release, by microagg or any other tool.

:func:`audit` checks a released table against its input: every released combination of
strata keys and protected columns is shared by ``k`` rows or more, no released column
equals an input numeric(-like) column unless that column was kept (or is k-anonymous on
its own), and the row count and kept columns equal the input's; a released DataFrame's
index is judged as :func:`microagg.microaggregate` judges it. It reads both tables batch
by batch (order-free fingerprints of each column, counts of each released combination), so
it runs on files larger than memory and on rows in any order. ``microagg protect`` calls it
(:func:`check_release`) on every file it writes, before the file gets its name; ``microagg
audit`` offers it on the command line. The columns' roles are those of
:mod:`microagg._release`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._csv import DEFAULT_DIALECT, CsvDialect, dialect_for, read_text_csv
from ._progress import counter
from ._release import (
    FILE_ROWS,
    MISSING_TEXT,
    Roles,
    check_names,
    check_release_k,
    decide_index,
    decorated_numbers,
    named_columns,
    nothing_to_protect,
    profile_batches,
    profile_index,
    row_label_columns,
    split_keep,
    text_to_numbers,
    unused_categories_error,
)
from ._stream import arrow_frame, existing_file, file_format, require_pyarrow, stored_index
from ._validate import check_flags, check_texts, column_labels, number_objects

__all__ = ["ReleaseAudit", "audit", "table_batches", "check_release"]


@dataclass(frozen=True)
class ReleaseAudit:
    """What :func:`audit` found.

    Book: :ref:`chap-mdav`.

    Attributes
    ----------
    passed : bool
        True if every check passed.
    failures : list of str
        One sentence per failed check, naming it (``"k-anonymity"``, ``"raw column"``,
        ``"rows"``, ``"kept column"``, ``"passed column"``, ``"columns"``, ``"index"``,
        ``"categories"``).
    rows : int
        Rows of the input.
    protected, strata, kept : list
        The columns audited in each role.
    smallest : int
        The fewest rows sharing one released combination of strata keys and protected
        columns (0 without protected columns).
    notes : list of str
        What the audit decided by itself, as :func:`microagg.microaggregate` decides it: a
        first column that is a row index (0..n-1, or 1..n under an empty header) is audited
        as kept.

    Examples
    --------
    >>> import pandas as pd, microagg
    >>> df = pd.DataFrame({"age": [23, 25, 24, 61, 64, 60], "town": list("abcdef")})
    >>> report = microagg.audit(df, microagg.microaggregate(df, k=3), k=3)
    >>> report.passed, report.rows, report.protected, report.smallest
    (True, 6, ['age'], 3)
    """

    passed: bool
    failures: list[str]
    rows: int
    protected: list[Any]
    strata: list[Any]
    kept: list[Any]
    smallest: int
    notes: list[str] = field(default_factory=list)


def table_batches(table: Any, fmt: str | None = None, rows: int = 65_536,
                  dialect: CsvDialect = DEFAULT_DIALECT) -> Iterator[pd.DataFrame]:
    """A DataFrame (one batch), or a CSV (as text, in ``dialect``) or Parquet file (index
    columns as ordinary columns) batch by batch."""
    if isinstance(table, pd.DataFrame):
        yield table
        return
    path = Path(table)
    fmt = file_format(path, fmt)
    if fmt == "parquet":
        pq = require_pyarrow("reading Parquet").parquet  # (with pandas' Arrow types)
        reader = pq.ParquetFile(path)
        check_names(reader.schema_arrow.names)
        empty = True
        for batch in reader.iter_batches(batch_size=rows):
            empty = False
            yield arrow_frame(batch)
        if empty:
            yield arrow_frame(reader.schema_arrow.empty_table())
        return
    yield from read_text_csv(path, chunksize=rows, dialect=dialect)


def audit(original: Any, released: Any, k: int, *, strata: Any = None, columns: Any = None,
          keep: Any = None, keep_rest: bool = False, na: Any = (),
          formats: tuple[str | None, str | None] = (None, None),
          delimiter: str | None = None, decimal: str = CsvDialect.decimal,
          progress: bool = False) -> ReleaseAudit:
    """Check a released table against its input: a second pair of eyes on any release.

    Book: :ref:`chap-mdav`.

    Checks (each failure is named in ``failures``):

    * **k-anonymity**: every released combination of the strata keys and the protected
      columns is shared by at least ``k`` rows;
    * **raw column**: no released column equals (as a multiset of values, in any row
      order) an input column that is numeric or looks numeric, unless that column is
      kept, a stratum, or shares each of its values (within strata) with ``k`` rows (then
      it is k-anonymous on its own: an unchanged 0/1 flag passes);
    * **unprotected column** (with ``columns``): every other numeric or numeric-looking
      column is kept (``keep``, ``keep_rest``) or a stratum, as
      :func:`microagg.microaggregate` asks of it;
    * **rows**, **kept column** and **passed column**: the row count, and the values of
      each kept column and of each column passed through (text without digits, dates,
      booleans), equal the input's; **columns**: every input column is released, and no other;
    * **index** (a released DataFrame): its index numbers the rows or holds text without
      digits, or is kept (named in ``keep``, or under ``keep_rest``) and holds the input
      table's labels, as :func:`microagg.microaggregate` returns it (``to_csv`` writes it
      with the table); a categorical index lists no category that no row holds;
    * **categories**: no categorical column of the release (pandas categories, a Parquet
      dictionary) lists a category that no released row holds, such as a merged small
      stratum's key or a value of rows not in the table.

    The audit checks what was released, not how: it does not recompute the groups, so
    values set to any one row of their group, rather than to its centroid, pass too. A
    Parquet input's stored pandas index (``__index_level_0__``) that counts the rows is
    kept, as ``microagg protect`` keeps it.

    Parameters
    ----------
    original, released : pandas.DataFrame or path
        The input and the release: tables, or CSV (compared as text) or Parquet files,
        read batch by batch; rows may be in any order.
    k : int
        The promised minimum group size, at least 2.
    strata, columns, keep : column label or list, optional
        Strata columns (their released values may be recoded); the protected columns
        (default: every input column that looks numeric, except strata and kept ones);
        the columns (and a released DataFrame's named index levels) released unchanged on
        purpose (and, unless named in ``columns``, a first column that is a row index, as
        :func:`microagg.microaggregate` keeps it, and a Parquet file's stored index that
        counts the rows).
    keep_rest : bool, default False
        Every column that is not protected, a stratum or a row index was released unchanged
        on purpose, as ``keep_rest=True`` in :func:`microagg.microaggregate` and
        ``microagg protect --keep-rest`` release it (without ``columns`` the protected
        columns are then those holding numbers, as there); ``microagg audit --keep-rest``.
    na : str or list of str, default ()
        Text that means a missing value in the input (``"-99"``, ``"NA"``), as given to
        ``microagg protect --na``; ``microagg audit --na`` on the command line.
    formats : (str or None, str or None)
        Formats of the two files, ``"csv"`` or ``"parquet"``, where their names do not
        tell (default: Parquet for .parquet, .pq, .parq, else CSV).
    delimiter : str, optional
        The character between the fields of a CSV file, for both files (``";"`` under many
        European locales); by default a tab for files named ``.tsv``, else ``","``.
        ``microagg audit --delimiter ';'`` on the command line.
    decimal : str, default ``"."``
        The decimal mark of the numbers of a CSV file (``","`` under many European
        locales), for both files; ``--decimal ,`` on the command line.
    progress : bool, default False
        Count the rows read, pass by pass (the input twice, the release once), on a tqdm
        bar shown once the audit has taken a second.

    Returns
    -------
    ReleaseAudit

    Examples
    --------
    >>> import pandas as pd, microagg
    >>> df = pd.DataFrame({"age": [23, 25, 24, 61, 64, 60], "town": list("abcdef")})
    >>> microagg.audit(df, microagg.microaggregate(df, k=3), k=3).passed
    True
    >>> bad = microagg.audit(df, df, k=3)  # released raw
    >>> bad.passed, bad.failures[0].split(":")[0]
    (False, 'k-anonymity')
    """
    k = check_release_k(k)
    check_flags(keep_rest=keep_rest)
    na = check_texts(na, "na")
    for name, table in (("original", original), ("released", released)):
        if not isinstance(table, (pd.DataFrame, str, PathLike)):
            raise TypeError(f"{name} must be a pandas DataFrame or the path of a CSV or "
                            f"Parquet file, got {type(table).__name__}; for an array, "
                            "pd.DataFrame(array) (both with the same columns)")
        if not isinstance(table, pd.DataFrame):
            existing_file(table, name, folder_hint="; for a folder of Parquet parts, give "
                                                   "pandas.read_parquet(folder)")
    fin, fout = formats
    dialect = dialect_for(delimiter, decimal, [
        f for f, fmt in ((original, fin), (released, fout))
        if isinstance(f, (str, Path)) and file_format(f, fmt) == "csv"])
    with counter("audit", enabled=progress) as bar:
        return _audit_tables(original, released, k, _Reader(dialect, bar), strata=strata,
                             columns=columns, keep=keep, keep_rest=keep_rest, na=na,
                             formats=formats)


@dataclass
class _Reader:
    """Reads the audit's tables batch by batch, in ``dialect``, counting each pass's rows
    on ``bar`` (out of ``rows``, the input's, once the first pass has counted them)."""

    dialect: CsvDialect
    bar: Any
    rows: int | None = None
    passes: int = 0

    def batches(self, table: Any, fmt: str | None, what: str) -> Iterator[pd.DataFrame]:
        """:func:`table_batches`, with the bar saying ``what`` is read."""
        self.passes += 1
        self.bar.set_description_str(f"audit, pass {self.passes}: {what}", refresh=False)
        self.bar.reset(total=self.rows)
        for batch in table_batches(table, fmt, dialect=self.dialect):
            yield batch
            self.bar.update(len(batch))


def _audit_tables(original: Any, released: Any, k: int, reader: _Reader, *, strata: Any,
                  columns: Any, keep: Any, keep_rest: bool, na: tuple[str, ...],
                  formats: tuple[str | None, str | None]) -> ReleaseAudit:
    """:func:`audit` once its arguments are checked."""
    fin, fout = formats
    dialect = reader.dialect
    csv_input = (not isinstance(original, pd.DataFrame)  # (as protect types its input: a
                 and file_format(Path(original), fin) == "csv")  # CSV's text, not Parquet's)
    names, profiles = profile_batches(reader.batches(original, fin, "reading the input"),
                                      na=na, text_numbers=csv_input,
                                      decimal=_reading(original, fin, dialect))
    prof = dict(zip(names, profiles, strict=True))
    rows = prof[names[0]].rows if names else 0
    reader.rows = rows if names else None  # (the later passes count out of the input's rows)
    strata_cols = [] if strata is None else column_labels(strata, names, "strata")
    out_index = (profile_index(released.index) if isinstance(released, pd.DataFrame)
                 else FILE_ROWS)
    kept, kept_index = split_keep(keep, names, out_index)
    named, kept = named_columns(names, prof, columns=columns, strata=strata_cols, keep=kept)
    stored = ([] if isinstance(original, pd.DataFrame) or file_format(Path(original), fin)
              != "parquet" else stored_index(require_pyarrow("reading Parquet").parquet
                                             .read_schema(original)))
    rest = [c for c in names if c not in strata_cols and c not in kept]
    labels = row_label_columns(names, prof, rest, named, stored,  # as protect keeps them
                               keep_rest=keep_rest)
    kept += labels.kept
    notes = list(labels.notes)
    rest = [c for c in rest if c not in kept and c not in (named or [])]
    # The protected columns: those named, else those holding numbers (as protect, under
    # keep_rest), else every one that looks numeric: a column protect would have asked
    # about (text codes, a row index that does not count the rows) is audited as protected.
    protected = named if named is not None else [
        c for c in rest if (prof[c].kind == "number" if keep_rest else prof[c].numeric_like)]
    if keep_rest:  # (as protect --keep-rest releases them)
        kept += [c for c in rest if c not in protected]
    if not protected or (named is None and not any(prof[c].kind == "number"
                                                   for c in protected)):
        raise nothing_to_protect(names, prof, "audit")  # (a file read wrongly? a pass
        # would say nothing)
    seen = _read_release(reader, released, fout, names, strata_cols, protected)
    failures = seen.failures
    # A released index kept on purpose (keep, keep_rest) must be the input's, as
    # microaggregate returns it: any other (the raw values of a column) is judged as an
    # index no one kept.
    as_input = _same_labels(original, released)
    try:
        notes += decide_index(out_index, keep=kept_index if as_input else [],
                              keep_rest=keep_rest and as_input)
    except ValueError as err:
        failures.append(f"index: {err}")
    protected, strata_cols = ([c for c in cols if c in seen.hashes]
                              for cols in (protected, strata_cols))
    passed = [c for c in names if not prof[c].numeric_like and c not in kept
              and c not in strata_cols and c not in protected]  # (text, dates: as read)
    in_hash = _fingerprints(reader, original, fin, [c for c in names
                                           if prof[c].numeric_like or c in kept + passed])
    if seen.rows != rows:
        failures.append(f"rows: the release has {seen.rows} rows, the input {rows}")
    smallest = seen.counts.smallest()
    if seen.counts.rows and smallest < k:
        failures.append(f"k-anonymity: released combination(s) of {strata_cols + protected} "
                        f"are shared by fewer than k={k} rows (the smallest by {smallest})")
    failures += [f"kept column: {c!r} is not released exactly as it was read" for c in kept
                 if c in seen.hashes and not _same(in_hash[c], seen.hashes[c], text_only=True)]
    failures += [f"passed column: {c!r} is not released exactly as it was read (a column "
                 "neither protected nor kept is passed through unchanged)" for c in passed
                 if c in seen.hashes and not _same(in_hash[c], seen.hashes[c], text_only=True)]
    if named is not None:  # as microaggregate and protect refuse such a column
        failures += [f"unprotected column: {c!r} is numeric(-like) but neither protected "
                     "(columns) nor kept (keep, keep_rest): microagg protect refuses to "
                     f"release it; name it in keep (--keep {c}) if it is released as is on "
                     "purpose" for c in names if prof[c].numeric_like and c not in named
                     and c not in kept and c not in strata_cols]
    raw = [(r, c) for c in names if prof[c].numeric_like and c not in kept
           and c not in strata_cols for r in seen.hashes if _same(in_hash[c], seen.hashes[r])]
    failures += [f"raw column: released column {r!r} equals the input column {c!r}, which is "
                 "numeric(-like) and was not kept" for r, c in raw
                 if not _k_anonymous_alone(reader, released, fout, r, strata_cols, k)]
    return ReleaseAudit(passed=not failures, failures=failures, rows=rows, protected=protected,
                        strata=strata_cols, kept=kept, smallest=smallest, notes=notes)


def _same_labels(original: Any, released: Any) -> bool:
    """Whether ``released`` is a table whose index holds the input table's labels (in any
    order, as the audit takes rows in any order)."""
    if not isinstance(original, pd.DataFrame) or not isinstance(released, pd.DataFrame):
        return False
    a, b = original.index, released.index
    if len(a) != len(b) or a.nlevels != b.nlevels or list(a.names) != list(b.names):
        return False
    try:
        return bool(a.sort_values().equals(b.sort_values()))
    except TypeError:  # (labels of types that do not sort together)
        return Counter(map(repr, a)) == Counter(map(repr, b))


def _reading(table: Any, fmt: str | None, dialect: CsvDialect) -> str:
    """The decimal mark of numbers written as text in ``table``: the dialect's in a CSV
    file or a table (read from one), a point in a Parquet file."""
    if isinstance(table, pd.DataFrame) or file_format(Path(table), fmt) != "parquet":
        return dialect.decimal
    return "."


def _fingerprints(reader: _Reader, table: Any, fmt: str | None, columns: list[Any]
                  ) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    mark = reader.dialect.decimal
    reading = _reading(table, fmt, reader.dialect)
    for batch in reader.batches(table, fmt, "the input's values"):
        for c in columns:
            out[c] = _add(out.get(c), _hashes(batch[c], reading, mark))
    return out


@dataclass
class _Seen:
    """One pass over the release: rows, combination counts, column fingerprints."""

    rows: int = 0
    counts: Combinations = field(default_factory=lambda: Combinations())
    hashes: dict[Any, Any] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    #: each categorical column's categories, and those some row holds
    categories: dict[Any, tuple[set[Any], set[Any]]] = field(default_factory=dict)

    def add_categories(self, name: Any, column: pd.Series) -> None:
        """Note the categories of a categorical column of one batch, and the used ones."""
        cats = column.cat.categories
        codes = column.cat.codes.to_numpy()
        listed, used = self.categories.setdefault(name, (set(), set()))
        listed.update(cats)
        used.update(cats[np.unique(codes[codes >= 0])])

    def unused_categories(self) -> str | None:
        """The failure for categorical columns listing categories no released row holds."""
        padded = {c: len(listed - used) for c, (listed, used) in self.categories.items()
                  if listed - used}
        if not padded:
            return None
        return f"categories: {unused_categories_error(list(padded), sum(padded.values()))}"


def _read_release(reader: _Reader, released: Any, fmt: str | None, names: list[Any],
                  strata: list[Any], protected: list[Any]) -> _Seen:
    seen = _Seen()
    key: list[Any] | None = None
    mark = reader.dialect.decimal
    reading = _reading(released, fmt, reader.dialect)
    for batch in reader.batches(released, fmt, "reading the release"):
        if key is None:
            missing = [c for c in names if c not in batch.columns]
            if missing:
                seen.failures.append(f"columns: input column(s) {missing} are not in the "
                                     "release")
            extra = [c for c in batch.columns if c not in set(names)]
            if extra:  # fail closed: nothing says what they hold
                seen.failures.append(f"columns: release column(s) {extra} are not in the "
                                     "input, so the audit cannot tell what they hold; drop "
                                     "them, or audit against the table they came from")
            key = [c for c in strata + protected if c in batch.columns]
        seen.rows += len(batch)
        if key and len(batch):
            seen.counts.add(batch[key])
        for c in batch.columns:
            seen.hashes[c] = _add(seen.hashes.get(c), _hashes(batch[c], reading, mark))
            if isinstance(batch[c].dtype, pd.CategoricalDtype):
                seen.add_categories(c, batch[c])
    padded = seen.unused_categories()
    if padded:
        seen.failures.append(padded)
    return seen


#: The text key of every missing value (NaN objects differ, and a NaN is not even equal
#: to itself, so a dict would give each its own code).
_MISSING = object()


class _Codes:
    """Integer codes ``0, 1, ...`` for the keys met batch after batch, in order of first
    meeting: numbers (float64 or int64; NaN is one key) in sorted arrays, text in a dict.

    Each batch costs its distinct keys' lookups and one copy of the sorted arrays (at
    memory speed) to insert the new ones. A ``pandas.Index`` grown batch by batch rebuilt
    its hash table with each batch: for a file with many distinct values (a release of n
    rows in groups of k has about n/k) that took time quadratic in n.
    """

    def __init__(self) -> None:
        self.size = 0
        self._sorted: dict[str, tuple[np.ndarray, np.ndarray]] = {}  #: kind: keys, codes
        self._text: dict[Any, int] = {}

    def of(self, keys: np.ndarray) -> np.ndarray:
        """The code of each of ``keys`` (float64, int64 or str objects), new keys numbered
        on; a float key, an integer key and a text key never match."""
        local, distinct = pd.factorize(keys, use_na_sentinel=False)
        if keys.dtype == object:
            where = np.empty(len(distinct), dtype=np.int64)
            for i, key in enumerate(distinct.tolist()):
                if key != key:  # a missing value (pandas keeps NaN through astype(str))
                    key = _MISSING
                code = self._text.get(key)
                if code is None:
                    code = self._text[key] = self.size
                    self.size += 1
                where[i] = code
            return where[local]
        return self._numbers(np.asarray(distinct, dtype=keys.dtype))[local]

    def _numbers(self, distinct: np.ndarray) -> np.ndarray:
        known, codes = self._sorted.get(distinct.dtype.char,
                                        (distinct[:0], np.empty(0, dtype=np.int64)))
        at = np.searchsorted(known, distinct)  # (NaN sorts last, and is found there)
        hit = np.zeros(len(distinct), dtype=bool)
        inside = np.flatnonzero(at < len(known))
        found = known[at[inside]]
        same = found == distinct[inside]
        if distinct.dtype.kind == "f":  # one NaN key
            same |= np.isnan(found) & np.isnan(distinct[inside])
        hit[inside[same]] = True
        where = np.empty(len(distinct), dtype=np.int64)
        where[hit] = codes[at[hit]]
        new = np.flatnonzero(~hit)
        if len(new):
            where[new] = self.size + np.arange(len(new))
            self.size += len(new)
            order = new[np.argsort(distinct[new], kind="stable")]
            self._sorted[distinct.dtype.char] = (np.insert(known, at[order], distinct[order]),
                                                 np.insert(codes, at[order], where[order]))
        return where


class Combinations:
    """How many rows share each combination of released values, batch after batch.

    A value's key is its number for a float column (``-0.0`` is ``0.0``, as pandas groups
    them when it forms strata; NaNs are one value), its text otherwise. Each column's
    distinct keys get integer codes, kept across batches (:class:`_Codes`); a combination
    of columns ``0..j`` is numbered by the pair (the combination of ``0..j-1``, the code of
    column ``j``), packed exactly into one integer and coded the same way. So each row
    ends with one combination number, and the counts are a running count per number:
    about ``16 * columns`` bytes a distinct combination (a release of n rows in groups of
    k: about n/k), no sorting of rows and no merging of batches.
    """

    #: Rows counted at most: every code is below it, so a pair of codes packs into an int64.
    LIMIT = 2**31

    def __init__(self) -> None:
        self.rows = 0
        self._columns: list[_Codes] = []  #: each column's codes
        self._prefixes: list[_Codes] = []  #: codes of the combinations of columns 0..j
        self._counts = np.zeros(0, dtype=np.int64)  #: rows of each combination, by number

    def add(self, frame: pd.DataFrame) -> None:
        """Count the rows of ``frame`` (the same columns in every batch)."""
        if self.rows + len(frame) >= self.LIMIT:  # (no code reaches the rows counted)
            raise ValueError(f"the audit counts the combinations of fewer than "
                             f"{self.LIMIT:,} rows")
        if not self._columns:
            self._columns = [_Codes() for _ in range(frame.shape[1])]
            self._prefixes = [_Codes() for _ in range(frame.shape[1] - 1)]
        ids = np.zeros(len(frame), dtype=np.int64)
        for j, codes in enumerate(self._columns):
            code = codes.of(_keys(frame.iloc[:, j]))
            ids = code if j == 0 else self._prefixes[j - 1].of((ids << 32) | code)
        counts = np.bincount(ids)
        if len(counts) > len(self._counts):
            self._counts = np.concatenate([self._counts, np.zeros(len(counts) - len(
                self._counts), dtype=np.int64)])
        self._counts[:len(counts)] += counts
        self.rows += len(frame)

    def smallest(self) -> int:
        """The fewest rows sharing one combination (0 if there is none)."""
        return int(self._counts.min()) if len(self._counts) else 0


def _keys(column: pd.Series) -> np.ndarray:
    """A column's keys for :class:`Combinations`: its numbers (``-0.0`` as ``0.0``) for a
    float column, else its values' text."""
    if pd.api.types.is_float_dtype(column.dtype):
        return column.to_numpy(dtype=float, na_value=np.nan) + 0.0
    return column.astype(str).to_numpy(dtype=object)


#: A column's order-free fingerprints: of its text, of its values read as numbers in each
#: of two ways (None where some value is not a number), and its length.
Fingerprints = tuple[int, tuple[int | None, ...], int]


def _hashes(col: pd.Series, reading: str, mark: str) -> Fingerprints:
    """The :data:`Fingerprints` of a column whose text writes numbers with the decimal
    mark ``reading``, in a run whose CSV files write them with ``mark``.

    The text of typed numbers (floats, decimals) is written with ``mark``, as microagg
    writes them to a CSV file. The numbers are read as the file says (with thousands
    separators, currency signs, ...), and also as plain numbers with the other mark, so
    that a raw column written in either convention is found. Missing values (and
    :data:`MISSING_TEXT`) count as one missing number.
    """
    text = col.astype(str).where(col.notna(), "")
    typed = pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(
        col.dtype)
    if mark != "." and (pd.api.types.is_float_dtype(col.dtype) or (
            col.dtype == object and number_objects(col.dropna()))):
        text = text.str.replace(".", mark, regex=False)
    h_text = int(pd.util.hash_array(text.to_numpy(dtype=object)).sum(dtype=np.uint64))
    missing = col.isna().to_numpy(dtype=bool) | text.isin(MISSING_TEXT).to_numpy(dtype=bool)
    if typed:
        hashes = [_number_hash(col.to_numpy(dtype=float, na_value=np.nan), missing)]
    else:  # (nullable ints too, above)
        hashes = [_text_number_hash(text, missing,
                                    lambda t: decorated_numbers(t, reading))]
        if not text.str.contains(reading, regex=False).any():  # (else none is plain there)
            other = "," if reading == "." else "."
            hashes.append(_text_number_hash(text, missing,
                                            lambda t: text_to_numbers(t, other)))
    return h_text, (hashes[0], hashes[-1] if len(hashes) > 1 else None), len(col)


#: How many of a text column's first values are read before the whole column: one that is
#: no number settles that the column has no such reading.
_PROBE = 64


def _text_number_hash(text: pd.Series, missing: np.ndarray,
                      read: Any) -> int | None:
    """:func:`_number_hash` of ``text`` read as numbers by ``read`` (value by value), or
    None without reading the whole column when one of its first :data:`_PROBE` values
    that are not missing is no number (a column of codes or words: reading a million of
    them took most of an audit's time)."""
    head = text[~missing].iloc[:_PROBE]
    if len(head) and np.isnan(read(head)).any():
        return None
    return _number_hash(read(text), missing)


def _number_hash(nums: np.ndarray, missing: np.ndarray) -> int | None:
    """An order-free hash of the numbers (None if a value that is not missing is no
    number): one NaN for every missing value, -0.0 as 0.0."""
    if np.isnan(nums[~missing]).any() or missing.all():
        return None
    return int(pd.util.hash_array(np.where(missing, np.nan, nums + 0.0)).sum(dtype=np.uint64))


def _add(acc: Fingerprints | None, h: Fingerprints) -> Fingerprints:
    if acc is None:
        return h
    mask = (1 << 64) - 1
    nums = tuple(None if a is None or b is None else (a + b) & mask
                 for a, b in zip(acc[1], h[1], strict=True))
    return (acc[0] + h[0]) & mask, nums, acc[2] + h[2]


def _same(a: Fingerprints | None, b: Fingerprints | None, *, text_only: bool = False
          ) -> bool:
    """Whether two columns hold the same values (in any order): the same text, or (unless
    ``text_only``) the same numbers in some reading of each."""
    if a is None or b is None or a[2] != b[2] or a[2] == 0:
        return False
    if a[0] == b[0]:
        return True
    return not text_only and bool({*a[1]} & {*b[1]} - {None})


def _k_anonymous_alone(reader: _Reader, released: Any, fmt: str | None, column: Any,
                       strata: list[Any], k: int) -> bool:
    """True if every released value of ``column`` (within strata) is shared by k rows."""
    counts = Combinations()
    for b in reader.batches(released, fmt, f"the release's {column!r} alone"):
        if len(b):
            counts.add(b[strata + [column]])
    return not counts.rows or counts.smallest() >= k


def check_release(original: Any, released: Any, k: int, roles: Roles,
                  formats: tuple[str | None, str | None] = (None, None),
                  dialect: CsvDialect = DEFAULT_DIALECT, progress: bool = False,
                  na: tuple[str, ...] = ()) -> ReleaseAudit:
    """:func:`audit` a release written by microagg (``released``: a file, an open file
    that is flushed first, or a table; CSV files in ``dialect``; ``progress``: count the
    rows read; ``na``: the text read as a missing value); a failed check is an error
    naming it."""
    if hasattr(released, "flush"):
        released.flush()
        released = released.name
    kept = roles.keep + roles.passed  # passed through: text, or everything with keep_rest
    result = audit(original, released, k, strata=roles.strata or None,
                   columns=roles.protect, keep=kept or None, formats=formats, na=na,
                   delimiter=dialect.delimiter, decimal=dialect.decimal, progress=progress)
    if not result.passed:
        raise ValueError("the release audit failed, nothing was written: "
                         + "; ".join(result.failures))
    return result
