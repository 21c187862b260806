"""Reading CSV tables for the command line and the release audit.

Two rules hold for every CSV read here, whole or in batches:

* a row with more fields than the header is an error naming its line (pandas would
  otherwise take a first such row's first field as the row index and drop it, or cut
  the extra fields);
* a file that is not a CSV table with a header row is an error naming the file;
* a header that names a column twice is an error naming it
  (:func:`microagg._release.check_names`, as for a DataFrame or a Parquet file): pandas
  would rename the second ``age`` to ``age.1``, and the release would carry a header
  its input did not have.

A file's :class:`CsvDialect` says which character separates its fields and which one is
its decimal mark (``;`` and ``,`` in a spreadsheet saved under a European locale). The
command line reads and writes every CSV file of a run in the one dialect its
``--delimiter`` and ``--decimal`` name; without ``--delimiter``, files named ``.tsv`` are
read and written with tabs (:func:`dialect_for`).

:func:`read_text_csv` also reads every value as the text it is (nothing made missing,
no booleans), so that kept columns are released exactly as read.
"""

from __future__ import annotations

import csv
import io
import re
import warnings
from collections.abc import Collection, Iterator, Sequence
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ._release import BLANK_HEADER, check_names
from ._validate import number_objects

__all__ = ["read_csv", "read_text_csv", "csv_error", "COMPRESSED", "BOM", "starts_with_bom",
           "CsvDialect", "DEFAULT_DIALECT", "TAB_SEPARATED", "dialect_for", "in_dialect",
           "header_names", "blank_names", "written_header", "LINE_END", "writing_options",
           "ENCODING", "QUOTING"]

#: The suffixes of a compressed CSV input (pandas reads them by the name).
COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".zip")

#: The encoding of every CSV file read and written (not the system's code page); a
#: byte-order mark is skipped on reading, and written where :attr:`CsvDialect.bom` says.
ENCODING = "utf-8"
#: How a CSV release quotes its fields (:func:`writing_options`), in words: as Python's
#: ``csv.QUOTE_MINIMAL``, and every field of the rows written together with a value (or a
#: name) holding a carriage return.
QUOTING = "minimal; all in rows written with a carriage return in a value"

#: How a CSV is read as text: every value a string, nothing made missing.
_AS_TEXT = {"dtype": str, "keep_default_na": False, "na_filter": False}
#: Names a delimiter may be given by on the command line, besides the character itself.
_NAMED = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|",
          "space": " "}


@dataclass(frozen=True)
class CsvDialect:
    """How a CSV file is written: the character between fields and the decimal mark.

    Attributes
    ----------
    delimiter : str
        One character between the fields of a row: ``,`` (the default), ``;``, a tab,
        ``|`` or a blank (also given as ``tab``, ``\\t``, ``semicolon``, ``pipe``,
        ``space``); not a quote, a line break, a letter or a digit.
    decimal : str
        The decimal mark of the file's numbers: ``.`` (the default) or ``,``. With ``,``
        a number written ``52,5`` is 52.5, and one holding a ``.`` (``1.234,5``) is a
        number with thousands separators, which microagg does not guess at
        (:func:`microagg._release.text_to_numbers`).
    bom : bool
        Whether the file starts with UTF-8's byte-order mark, as Excel's "CSV UTF-8"
        does (without it Excel reads the file in the system's code page): a release is
        written with one when its input has one (:func:`starts_with_bom`). Reading skips
        it either way.

    Examples
    --------
    >>> CsvDialect(";", ",")
    CsvDialect(delimiter=';', decimal=',', bom=False)
    >>> CsvDialect("tab").delimiter
    '\\t'
    >>> CsvDialect(",", ",")
    Traceback (most recent call last):
    ValueError: the CSV delimiter ',' is also the decimal mark: with --decimal , give \
another delimiter, e.g. --delimiter ';'
    """

    delimiter: str = ","
    decimal: str = "."
    bom: bool = False

    def __post_init__(self) -> None:
        sep = _NAMED.get(str(self.delimiter).lower(), self.delimiter)
        if (not isinstance(sep, str) or len(sep) != 1 or sep in "\"\r\n" or sep.isalnum()
                or not sep.isascii()):
            raise ValueError(f"the CSV delimiter {self.delimiter!r} is not one ASCII character "
                             "other than a quote, a line break, a letter or a digit: give "
                             "e.g. --delimiter ';' or --delimiter tab")
        if self.decimal not in (".", ","):
            raise ValueError(f"the decimal mark {self.decimal!r} is neither '.' nor ',': "
                             "give --decimal . or --decimal ,")
        if sep == self.decimal:
            raise ValueError(f"the CSV delimiter {sep!r} is also the decimal mark: with "
                             f"--decimal {self.decimal} give another delimiter, e.g. "
                             f"--delimiter {';' if sep == ',' else ','!r}")
        object.__setattr__(self, "delimiter", sep)


#: The dialect of every CSV file unless told otherwise: commas, and a decimal point.
DEFAULT_DIALECT = CsvDialect()
#: The suffix naming a file of tab-separated values (before any compression suffix).
TAB_SEPARATED = ".tsv"


def dialect_for(delimiter: str | None, decimal: str, files: Any = ()) -> CsvDialect:
    """The dialect of a run's CSV files: ``delimiter`` if given; otherwise a tab if the
    named ones among ``files`` (paths, or ``None`` for standard input or output) end in
    ``.tsv`` (``.tsv.gz``, ...), a comma if none does. Names that disagree are an error:
    a run reads and writes one dialect, and which one would be a guess.

    Examples
    --------
    >>> dialect_for(None, ".", ["survey.tsv", None]).delimiter
    '\\t'
    >>> dialect_for(None, ".", ["survey.csv.gz"]).delimiter
    ','
    >>> dialect_for(";", ",", ["survey.tsv"])
    CsvDialect(delimiter=';', decimal=',', bom=False)
    >>> dialect_for(None, ".", ["survey.tsv", "protected.csv"])
    Traceback (most recent call last):
    ...
    ValueError: survey.tsv is tab-separated by its name, protected.csv is not: ...
    """
    if delimiter is not None:
        return CsvDialect(delimiter, decimal)
    named = [Path(f) for f in files if f is not None]
    tabs = [_tab_separated(f) for f in named]
    if any(tabs) and not all(tabs):
        tsv = ", ".join(f.name for f, t in zip(named, tabs, strict=True) if t)
        other = ", ".join(f.name for f, t in zip(named, tabs, strict=True) if not t)
        raise ValueError(f"{tsv} is tab-separated by its name, {other} is not: every CSV "
                         "file of a run is read and written with one delimiter; say which "
                         "with --delimiter tab or --delimiter ',' (delimiter= in Python), "
                         "or name the files alike")
    return CsvDialect("\t" if any(tabs) else ",", decimal)


#: UTF-8's byte-order mark.
BOM = b"\xef\xbb\xbf"


def starts_with_bom(path: Path | None) -> bool:
    """Whether the CSV file ``path`` starts with UTF-8's byte-order mark (read through its
    compression for ``.gz``, ``.bz2``, ``.xz``); ``False`` for standard input (``None``),
    a pipe, or a file it cannot read.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     excel = pathlib.Path(folder, "excel.csv")
    ...     _ = excel.write_bytes(BOM + b"town,age\\n")
    ...     starts_with_bom(excel), starts_with_bom(None)
    (True, False)
    """
    if path is None:
        return False
    import bz2
    import gzip
    import lzma

    opener: Any = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(
        path.suffix.lower(), open)
    if opener is open and (path.suffix.lower() in COMPRESSED or not path.is_file()):
        return False  # (.zst, .zip: not looked into; a pipe is read once, by the run)
    try:
        with opener(path, "rb") as fh:
            return bool(fh.read(len(BOM)) == BOM)
    except (OSError, EOFError, lzma.LZMAError):
        return False


def _tab_separated(path: Path) -> bool:
    """Whether the name ends in ``.tsv``, before a compression suffix if any."""
    suffix = path.suffix.lower()
    if suffix in COMPRESSED:
        suffix = Path(path.stem).suffix.lower()
    return suffix == TAB_SEPARATED


def in_dialect(frame: pd.DataFrame, dialect: CsvDialect) -> pd.DataFrame:
    """``frame`` ready for ``to_csv(sep=, decimal=)`` in ``dialect``: pandas writes floats
    with the decimal mark, but not numbers held as objects (a Parquet decimal's
    ``Decimal`` values), which become text with the mark here (missing values stay)."""
    if dialect.decimal == ".":
        return frame
    out = frame
    for j in range(frame.shape[1]):
        col = frame.iloc[:, j]
        if col.dtype == object and number_objects(col):
            if out is frame:
                out = frame.copy()
            text = col.map(str).str.replace(".", dialect.decimal, regex=False)
            out.isetitem(j, text.where(col.notna(), None))
    return out


#: Every CSV release ends its lines with this, on every system (pandas' default is the
#: system's, ``\r\n`` on Windows): the same release is the same bytes everywhere.
LINE_END = "\n"


def writing_options(frame: pd.DataFrame, dialect: CsvDialect) -> dict[str, Any]:
    """The options of ``to_csv`` that write ``frame`` in ``dialect``: its delimiter and
    decimal mark, :data:`LINE_END`, and quotes where a value needs them. Python's CSV
    writer quotes a value holding the delimiter, a quote or a line end, but not a carriage
    return alone, which a reader takes for a line end; where a value (or a name) holds
    one, every field is quoted (:data:`QUOTING` says it in words).

    Examples
    --------
    >>> import csv
    >>> writing_options(pd.DataFrame({"a": ["x"]}), DEFAULT_DIALECT)["quoting"] == csv.QUOTE_MINIMAL
    True
    >>> writing_options(pd.DataFrame({"a": ["x\\ry"]}), DEFAULT_DIALECT)["quoting"] == csv.QUOTE_ALL
    True
    """
    import csv

    return {"sep": dialect.delimiter, "decimal": dialect.decimal, "lineterminator": LINE_END,
            "quoting": csv.QUOTE_ALL if _holds_carriage_return(frame) else csv.QUOTE_MINIMAL}


def _holds_carriage_return(frame: pd.DataFrame) -> bool:
    if any("\r" in str(name) for name in frame.columns):
        return True
    for j in range(frame.shape[1]):
        col = frame.iloc[:, j]
        if isinstance(col.dtype, pd.CategoricalDtype):
            col = pd.Series(col.cat.categories, dtype=object)
        elif pd.api.types.is_numeric_dtype(col.dtype) or not (
                col.dtype == object or pd.api.types.is_string_dtype(col.dtype)):
            continue
        try:  # (the values that are text; others, such as Decimal objects, are not)
            if col.str.contains("\r", regex=False, na=False).any():
                return True
        except AttributeError:  # no text at all
            continue
    return False


def read_csv(source: Any, name: str, *, dialect: CsvDialect = DEFAULT_DIALECT, **options: Any
             ) -> pd.DataFrame:
    """``pd.read_csv(source, **options)`` with the fields separated as ``dialect`` says; a
    file that is not a CSV table with a header row is an error naming ``name``, and so is
    a row with more fields than the header (naming its line) and a name the header
    repeats (:func:`_header`)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            raw = pd.read_csv(source, header=None, index_col=False, sep=dialect.delimiter,
                              **options)
    except pd.errors.ParserWarning:
        raise ValueError(_long_row(source, name, dialect.delimiter)) from None
    except (ValueError, pd.errors.ParserError) as err:
        raise ValueError(csv_error(err, name, dialect.delimiter)) from None
    return _rows(raw.iloc[1:], _header(raw, name), 0)


def read_text_csv(source: Any, name: str | None = None, *, chunksize: int | None = None,
                  dialect: CsvDialect = DEFAULT_DIALECT) -> Any:
    """The CSV table ``source`` (fields separated as ``dialect`` says) with every value
    read as the text it is; with ``chunksize``, an iterator of tables of up to that many
    rows (checked as they are read)."""
    shown = name or str(source)
    # an empty line is a record whose one value is missing in a table of one column (pandas
    # would drop it: a lost record); with more columns it holds no field and is skipped
    lone = len(_header_row(source, shown, dialect).columns) == 1
    if chunksize is None:
        return read_csv(source, shown, dialect=dialect, skip_blank_lines=not lone, **_AS_TEXT)
    return _text_chunks(source, shown, chunksize, dialect.delimiter, not lone)


def _text_chunks(source: Any, name: str, chunksize: int, delimiter: str,
                 skip_blank_lines: bool = True) -> Iterator[pd.DataFrame]:
    try:
        with warnings.catch_warnings(), ExitStack() as stack:
            warnings.simplefilter("error", pd.errors.ParserWarning)
            reader = stack.enter_context(pd.read_csv(  # (its file is closed, however it ends)
                source, header=None, index_col=False, chunksize=chunksize, sep=delimiter,
                skip_blank_lines=skip_blank_lines, **_AS_TEXT))
            chunks = iter(reader)
            first = next(chunks)  # (an empty file raises when the reader is made)
            columns = _header(first, name)
            chunk, done = first.iloc[1:], 0
            while True:
                with warnings.catch_warnings():  # the caller's code runs unfiltered
                    warnings.simplefilter("default", pd.errors.ParserWarning)
                    yield _rows(chunk, columns, done)
                done += len(chunk)
                try:
                    chunk = next(chunks)
                except StopIteration:
                    return
    except pd.errors.ParserWarning:
        raise ValueError(_long_row(source, name, delimiter)) from None
    except (ValueError, pd.errors.ParserError) as err:
        raise ValueError(csv_error(err, name, delimiter)) from None


def header_names(source: Any, name: str, dialect: CsvDialect = DEFAULT_DIALECT) -> list[str]:
    """The column names of the CSV file ``source`` (its header row, :func:`_header`)."""
    return _header(_header_row(source, name, dialect), name)


def blank_names(source: Any, name: str, dialect: CsvDialect = DEFAULT_DIALECT
                ) -> frozenset[str]:
    """The names :func:`_header` gives the empty cells of the CSV file's header row: a
    release written as CSV leaves those cells empty again (:func:`written_header`)."""
    raw = _header_row(source, name, dialect)
    return frozenset(c for c, cell in zip(_header(raw, name), raw.iloc[0], strict=True)
                     if not cell)


def written_header(columns: Sequence[Any], blank: Collection[Any]) -> list[str]:
    """The header row a CSV release is written with: each column's name, and an empty cell
    for the columns named for an empty cell of the input's header (``blank``).

    Examples
    --------
    >>> written_header(["Unnamed: 0", "age"], frozenset({"Unnamed: 0"}))
    ['', 'age']
    """
    return ["" if c in blank else str(c) for c in columns]


def _header_row(source: Any, name: str, dialect: CsvDialect) -> pd.DataFrame:
    """The header row of the CSV file ``source``, as text (an empty cell as ``""``)."""
    if hasattr(source, "seek"):
        source.seek(0)
    try:
        return pd.read_csv(source, header=None, nrows=1, index_col=False,
                           sep=dialect.delimiter, **_AS_TEXT)
    except (ValueError, pd.errors.ParserError) as err:
        raise ValueError(csv_error(err, name, dialect.delimiter)) from None
    finally:
        if hasattr(source, "seek"):
            source.seek(0)


def _header(raw: pd.DataFrame, name: str) -> list[str]:
    """The column names of a table read with its header row as row 0 (so that pandas does
    not rename a repeated ``age`` to ``age.1``): as pandas names them, an empty name
    ``Unnamed: <position>`` (``Unnamed: <position>.1`` if a header cell already says
    ``Unnamed: <position>``, as in a file saved twice by pandas), none repeated
    (:func:`microagg._release.check_names`).

    Examples
    --------
    >>> _header(pd.DataFrame([["", "Unnamed: 0", "age"]]), "in.csv")
    ['Unnamed: 0.1', 'Unnamed: 0', 'age']
    """
    cells = list(raw.iloc[0])
    taken = {cell for cell in cells if cell}
    columns = []
    for i, cell in enumerate(cells):
        if not cell:
            cell, more = f"{BLANK_HEADER}{i}", 0
            while cell in taken:
                more += 1
                cell = f"{BLANK_HEADER}{i}.{more}"
            taken.add(cell)
        columns.append(cell)
    try:
        check_names(columns)
    except ValueError as err:
        raise ValueError(f"{name}: {err}") from None
    return columns


def _rows(rows: pd.DataFrame, columns: list[str], start: int) -> pd.DataFrame:
    """``rows`` named ``columns`` and numbered from ``start`` (as pandas numbers them), in
    place: the values are not copied."""
    rows.columns = pd.Index(columns)
    rows.index = pd.RangeIndex(start, start + len(rows))
    return rows


def csv_error(err: Exception, name: str, delimiter: str = ",") -> str:
    """The message for pandas' error ``err`` reading the CSV file ``name`` with
    ``delimiter``."""
    if isinstance(err, UnicodeDecodeError):
        return (f"{name} is not UTF-8 text (it holds the byte {err.object[err.start]:#04x}, "
                "which UTF-8 does not allow there): convert it to UTF-8 first, e.g. with "
                "iconv -f cp1252 -t utf-8, or save it from a spreadsheet as CSV UTF-8")
    text = " ".join(str(err).split())
    if isinstance(err, pd.errors.EmptyDataError):
        return (f"{name} is empty (or holds blank lines only): a CSV table starts with a "
                "header row naming its columns")
    unclosed = re.search(r"EOF inside string starting at row (\d+)", text)
    if unclosed:
        return (f"{name}: a double quote in row {int(unclosed.group(1)) + 1} of the file (the "
                "header is row 1) opens a quoted value that is never closed: add the closing "
                "quote, or write a quote inside a quoted value twice (\"\")")
    found = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", text)
    if found:
        fields, line, saw = found.groups()
        return (f"{name}, line {line}: {saw} fields where the header has {fields}: fix the row "
                "(a value holding the delimiter must be quoted)"
                f"{_one_field(int(fields), delimiter)}")
    if text.startswith(f"{name}") or text.startswith("cannot read"):
        return text
    return f"cannot read {name} as a CSV table with a header row: {text}"


def _one_field(fields: int, delimiter: str) -> str:
    """A hint when the header is one field: the file may use another delimiter."""
    if fields != 1:
        return ""
    other = "','" if delimiter != "," else "';', and --decimal , for numbers written 52,5"
    return (f", or name the file's delimiter if it is not {delimiter!r} (e.g. --delimiter "
            f"{other})")


def _long_row(source: Any, name: str, delimiter: str) -> str:
    """The error for the first row of ``source`` with more fields than its header."""
    import bz2
    import gzip
    import lzma

    try:
        if isinstance(source, io.BytesIO):
            source.seek(0)
            handle: Any = nullcontext(io.TextIOWrapper(source, encoding=ENCODING,
                                                         errors="replace", newline=""))
        else:  # plain, or compressed as the name says (as pandas reads it)
            opener: Any = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(
                Path(source).suffix.lower(), open)
            handle = opener(source, "rt", encoding=ENCODING, errors="replace", newline="")
        with handle as opened:
            rows = csv.reader(opened, delimiter=delimiter)
            header = next(rows, [])
            for row in rows:
                if len(row) > len(header):
                    return (f"{name}, line {rows.line_num}: {len(row)} fields where the "
                            f"header has {len(header)}: fix the row (a value holding the "
                            f"delimiter must be quoted){_one_field(len(header), delimiter)}")
    except (OSError, csv.Error, UnicodeDecodeError, EOFError, lzma.LZMAError):
        pass  # read once only (a pipe), or another compression: the row is not located
    return (f"{name}: the first row has more fields than the header: fix it (a value "
            "holding the delimiter must be quoted)")
