"""Reading CSV tables for the command line and the release audit.

Two rules hold for every CSV read here, whole or in batches:

* a row with more fields than the header is an error naming its line (pandas would
  otherwise take a first such row's first field as the row index and drop it, or cut
  the extra fields);
* a file that is not a CSV table with a header row is an error naming the file.

:func:`read_text_csv` also reads every value as the text it is (nothing made missing,
no booleans), so that kept columns are released exactly as read.
"""

from __future__ import annotations

import csv
import io
import re
import warnings
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["read_csv", "read_text_csv", "csv_error"]

#: How a CSV is read as text: every value a string, nothing made missing.
_AS_TEXT = {"dtype": str, "keep_default_na": False, "na_filter": False}


def read_csv(source: Any, name: str, **options: Any) -> pd.DataFrame:
    """``pd.read_csv(source, **options)``; a file that is not a CSV table with a header
    row is an error naming ``name``, and so is a row with more fields than the header
    (naming its line)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            return pd.read_csv(source, index_col=False, **options)
    except pd.errors.ParserWarning:
        raise ValueError(_long_row(source, name)) from None
    except (ValueError, pd.errors.ParserError) as err:
        raise ValueError(csv_error(err, name)) from None


def read_text_csv(source: Any, name: str | None = None, *, chunksize: int | None = None
                  ) -> Any:
    """The CSV table ``source`` with every value read as the text it is; with
    ``chunksize``, an iterator of tables of that many rows (checked as they are read)."""
    shown = name or str(source)
    if chunksize is None:
        return read_csv(source, shown, **_AS_TEXT)
    return _text_chunks(source, shown, chunksize)


def _text_chunks(source: Any, name: str, chunksize: int) -> Iterator[pd.DataFrame]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            reader = pd.read_csv(source, index_col=False, chunksize=chunksize, **_AS_TEXT)
            chunks = iter(reader)
            while True:
                try:
                    chunk = next(chunks)
                except StopIteration:
                    return
                with warnings.catch_warnings():  # the caller's code runs unfiltered
                    warnings.simplefilter("default", pd.errors.ParserWarning)
                    yield chunk
    except pd.errors.ParserWarning:
        raise ValueError(_long_row(source, name)) from None
    except (ValueError, pd.errors.ParserError) as err:
        raise ValueError(csv_error(err, name)) from None


def csv_error(err: Exception, name: str) -> str:
    """The message for pandas' error ``err`` reading the CSV file ``name``."""
    text = " ".join(str(err).split())
    found = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", text)
    if found:
        fields, line, saw = found.groups()
        return (f"{name}, line {line}: {saw} fields where the header has {fields}: fix the row "
                "(a value holding the delimiter must be quoted)")
    if text.startswith(f"{name}") or text.startswith("cannot read"):
        return text
    return f"cannot read {name} as a CSV table with a header row: {text}"


def _long_row(source: Any, name: str) -> str:
    """The error for the first row of ``source`` with more fields than its header."""
    import bz2
    import gzip
    import lzma

    try:
        if isinstance(source, io.BytesIO):
            source.seek(0)
            handle: Any = nullcontext(io.TextIOWrapper(source, newline=""))
        else:  # plain, or compressed as the name says (as pandas reads it)
            opener: Any = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(
                Path(source).suffix.lower(), open)
            handle = opener(source, "rt", newline="")
        with handle as opened:
            rows = csv.reader(opened)
            header = next(rows, [])
            for row in rows:
                if len(row) > len(header):
                    return (f"{name}, line {rows.line_num}: {len(row)} fields where the "
                            f"header has {len(header)}: fix the row (a value holding the "
                            "delimiter must be quoted)")
    except (OSError, csv.Error, UnicodeDecodeError, EOFError, lzma.LZMAError):
        pass  # read once only (a pipe), or another compression: the row is not located
    return (f"{name}: the first row has more fields than the header: fix it (a value "
            "holding the delimiter must be quoted)")
