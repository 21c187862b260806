"""The command line's engine for large files: strata streamed, one unit in memory at a time.

``microagg protect --strata COL`` never holds the whole file. It makes two passes:

1. **Split.** The input is read in batches of :data:`BATCH_ROWS` rows (Parquet row
   batches; CSV chunks). Each batch updates the per-stratum statistics (records, means
   and sums of squares of the protected columns, :func:`microagg._strata.moments`) and
   is written, sorted by stratum, to one temporary Arrow IPC file in the run's private
   folder (beside the output, removed however the run ends: see
   :func:`microagg._cli_io.run_folder`): one record batch per stratum and input batch,
   with an index of which record batches hold which stratum.
2. **Protect.** The small-strata policy is applied to the statistics
   (:func:`microagg._strata.plan_strata`); then each unit (a stratum, with the small
   strata merged into it) is read back from the temporary file, microaggregated
   (:func:`microagg._strata.protect_block`) and appended to the output (a
   ``pyarrow.parquet.ParquetWriter``, or CSV), in stratum order, as soon as it and the
   units before it are done.

**Memory** is therefore set by the largest unit (times the number of jobs) plus one
batch, not by the file. A process protecting a unit fills the protected columns into one
array record batch by record batch, computes their z-scores (then drops the values),
runs the method on them (for MDAV's indexed engine, about 1.2 times the unit's bytes of
indexes and temporaries beside the z-scores), reads the values again for the centroids,
and only then reads the unit's other columns to build the released rows: about 2.3 times
the unit's bytes at 10 attributes (measured; more with fewer attributes). With several
jobs the units run on local processes (``ProcessPoolExecutor``) as tasks of consecutive
units (:func:`protect_task`: a unit of :data:`TASK_ROWS` rows or more on its own, smaller
ones together up to that many rows, so that thousands of tiny strata do not each pay a
task's round trip): a worker reads each unit of its task from the temporary file in turn
and appends the protected rows to a temporary Arrow IPC stream of the task's, which the
main process copies into the output record batch by record batch (at most
:data:`BATCH_ROWS` rows, so a larger unit takes several Parquet row groups), unit by
unit, and deletes; only file names and summaries travel between the processes. Every
process of the run gives freed memory straight back to the system (:func:`lean_memory`),
so no long-lived process keeps the largest unit's pages. With a Dask ``distributed``
executor each task's rows are sent to the cluster and the protected rows come back, so
the workers need not see the file.

**Output order**: grouped by unit, units in sorted stratum order, rows within a unit in
input order. Restoring the input order would need the whole output in memory (or an
external sort), which is what streaming avoids; keep an identifier column to join on.

**Roles**: before anything is written, a first pass over the whole file
(:func:`profile_file`) profiles every column, and the release contract of
:mod:`microagg._release` decides which are protected, kept or refused: never from a
sample. Parquet index columns (pandas metadata, :func:`stored_index`) are read as
columns and judged as a DataFrame's index is: kept if they number the rows, else asked about.

**CSV**: the protected columns are read as numbers; every other column (strata
included) is read and written as text, exactly as it stands in the input (so strata
values compare as text, ``"10"`` before ``"2"``). The output is written in the input's
:class:`~microagg._csv.CsvDialect` (delimiter and decimal mark).
"""

from __future__ import annotations

import concurrent.futures as cf
import ctypes
import os
import platform
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._csv import (
    COMPRESSED,
    DEFAULT_DIALECT,
    CsvDialect,
    csv_error,
    header_names,
    in_dialect,
    read_text_csv,
    writing_options,
    written_header,
)
from ._methods import get_method
from ._release import (
    MISSING_TEXT,
    check_names,
    check_release_k,
    profile_batches,
    protectable,
)
from ._strata import (
    check_not_constant,
    combine_moments,
    describe_key,
    moments,
    overall_loss,
    overall_sums,
    plan_strata,
    protect_block,
)
from ._validate import NonFinite, as_matrix, check_k, counted

__all__ = ["BATCH_ROWS", "ROW", "FORMATS", "PARQUET_SUFFIXES", "file_format", "existing_file",
           "require_pyarrow", "lean_memory", "profile_file", "stored_index",
           "StreamSettings", "UnitSummary", "protect_stream", "protect_unit", "protect_task",
           "read_unit", "merge_lines", "TASK_ROWS"]

#: Rows per batch when reading (memory per batch: this many rows of the file).
BATCH_ROWS = 65_536
#: Rows of consecutive units sent to a worker as one task (``--jobs``, a cluster); a unit
#: of this many rows or more is a task of its own. A task costs about 1 ms of CPU however
#: small (the round trip to the worker, its file written, read and deleted), as much as
#: protecting a unit of 10 rows: 4,000 strata of 10 rows took 13.6 s of CPU with
#: ``--jobs 2`` as 4,000 tasks, 9.0 s as 10 tasks of 4,096 rows (5.5 s with ``--jobs 1``;
#: the rest is the workers' start-up). A task of 4,096 rows of tiny units takes about
#: 0.4 s, so its own cost is under 1% of that, and a file of 40,000 rows still makes 10
#: tasks for the workers to share (at 65,536 rows it would make one); 1,024 to 65,536
#: rows measured alike on that file.
TASK_ROWS = 4096
#: The temporary column holding each record's input position.
ROW = "__microagg_row__"
#: The file formats microagg reads and writes (``--format``).
FORMATS = ("csv", "parquet")
#: The suffixes of the files read and written as Parquet (any other: CSV).
PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")


#: Files microagg does not read or write, by suffix: what they are (for the error).
_OTHER_FORMATS = {
    **dict.fromkeys((".xlsx", ".xlsm", ".xls"), "an Excel workbook"),
    ".ods": "an OpenDocument spreadsheet", ".json": "JSON",
    **dict.fromkeys((".jsonl", ".ndjson"), "JSON lines"), ".sav": "an SPSS data file",
    ".dta": "a Stata data file", ".sas7bdat": "a SAS data set", ".xpt": "a SAS transport file",
    **dict.fromkeys((".rds", ".rda", ".rdata"), "an R data file"),
    **dict.fromkeys((".feather", ".arrow", ".ipc"), "an Arrow IPC (Feather) file"),
    ".orc": "an ORC file", ".avro": "an Avro file",
    **dict.fromkeys((".h5", ".hdf5", ".hdf"), "an HDF5 file"),
    **dict.fromkeys((".pkl", ".pickle"), "a Python pickle"),
    **dict.fromkeys((".db", ".sqlite", ".sqlite3"), "an SQLite database"),
}


def file_format(path: Path | str | None, forced: str | None) -> str:
    """``"parquet"`` for .parquet/.pq/.parq files (or ``forced``), else ``"csv"``; a name
    saying another format (``.xlsx``, ``.sav``, ``.json``, ...) is an error naming it.

    Examples
    --------
    >>> file_format(Path("survey.pq"), None), file_format(Path("survey.csv.gz"), None)
    ('parquet', 'csv')
    """
    if forced is not None:
        return forced
    if path is None:
        return "csv"
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        return "parquet"
    other = _OTHER_FORMATS.get(Path(path.stem).suffix.lower() if suffix in COMPRESSED
                               else suffix)
    if other:
        raise ValueError(f"{path.name} is {other} by its name, and microagg reads and "
                         "writes CSV and Parquet only: save an input as CSV UTF-8 or Parquet "
                         "(or read it with pandas and call microagg.microaggregate), name an "
                         "output .csv or .parquet, or give --format if the name misleads")
    return "csv"


def existing_file(name: str | os.PathLike[str], role: str, *, missing_hint: str = "",
                  folder_hint: str = "") -> Path:
    """``name`` as a path, once it is known to exist and not to be a folder: the errors name
    the file by its ``role`` (``input``, ``original``, ``released``), which pandas' "[Errno 2]
    No such file or directory" does not. The command line and :func:`microagg.audit` check
    their files here, each adding its own hints.

    Examples
    --------
    >>> existing_file("no-such.csv", "released")
    Traceback (most recent call last):
    ...
    FileNotFoundError: released file no-such.csv does not exist
    """
    path = Path(name)
    if not path.exists():
        raise FileNotFoundError(f"{role} file {name} does not exist{missing_hint}")
    if path.is_dir():
        raise IsADirectoryError(f"{role} {name} is a folder, not a CSV or Parquet "
                                f"file{folder_hint}")
    return path


def require_pyarrow(why: str) -> Any:
    """The ``pyarrow`` module, or an ImportError saying how to install it."""
    try:
        import pyarrow
        import pyarrow.ipc  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise ImportError(f"{why} needs pyarrow, which is not installed: "
                          "pip install pyarrow (or reinstall microagg)") from None
    try:  # pandas' Arrow types (period, interval), as pandas.read_parquet registers them:
        # without them a period column reads as its integer storage, which every path but
        # the API's would then protect as numbers
        import pandas.core.arrays.arrow.extension_types  # noqa: F401
    except ImportError:  # (another pandas layout: such a column is protected, fail closed)
        pass
    return pyarrow


def arrow_frame(data: Any) -> pd.DataFrame:
    """An Arrow table or record batch as a DataFrame, as every path of microagg reads one.

    Integer columns become pandas' nullable integers, so that a missing value does not
    turn a column of whole numbers into floats: ``87`` stays ``87`` (not ``87.0``) in
    every batch, with or without a missing value in it, and a kept column is released as
    it was read. Arrow's pandas metadata is ignored (index columns are columns).
    """
    return data.to_pandas(ignore_metadata=True, types_mapper=_nullable_integer)


def stored_index(schema: Any) -> list[str]:
    """The columns of a Parquet file that hold a pandas DataFrame's index (named in its
    pandas metadata; ``__index_level_0__`` for an unnamed one): :func:`arrow_frame` reads
    them as columns, and the release contract asks about them as it asks about a
    DataFrame's index (:func:`microagg._release.decide_roles`).

    Examples
    --------
    >>> import pandas as pd, pyarrow as pa
    >>> stored_index(pa.Table.from_pandas(pd.DataFrame({"x": [1, 2, 3]}, index=[5, 9, 7])).schema)
    ['__index_level_0__']
    >>> stored_index(pa.Table.from_pandas(pd.DataFrame({"x": [1, 2, 3]})).schema)  # a range
    []
    """
    meta = schema.pandas_metadata or {}
    return [c for c in meta.get("index_columns", []) if isinstance(c, str)
            and c in schema.names]


def _nullable_integer(kind: Any) -> Any:
    """pandas' nullable dtype for an Arrow integer type (``None``: Arrow's default)."""
    pa = require_pyarrow("reading Parquet")
    if not pa.types.is_integer(kind):
        return None
    name = str(kind)  # int8 .. uint64
    return pd.api.types.pandas_dtype("U" + name[1:].capitalize() if name.startswith("u")
                                     else name.capitalize())


def lean_memory() -> None:
    """Make this process give freed memory straight back to the system.

    Arrow allocates from the C library (its system pool) instead of its default
    mimalloc pool, and glibc's threshold for serving an allocation by its own memory
    map is fixed at 128 kB (by default it rises after a large array is freed, so
    later arrays of that size come from a heap that is not returned). Measured on the
    2,000,000-record benchmark's largest unit (24,858 records x 10): a worker's peak
    fell from 3.8-6.2 to 2.2-2.3 times the unit's bytes. Used by ``microagg protect
    --strata`` for itself and its worker processes. With a C library other than glibc
    only Arrow's pool changes.
    """
    pa = require_pyarrow("protecting a file by strata")
    pa.set_memory_pool(pa.system_memory_pool())
    if platform.libc_ver()[0] == "glibc":
        libc = ctypes.CDLL(None)
        libc.mallopt(_M_MMAP_THRESHOLD, 128 * 1024)


#: glibc's ``mallopt`` parameter number for the mmap threshold (``malloc.h``).
_M_MMAP_THRESHOLD = -3


def profile_file(source: Path, fmt: str, *, na: Sequence[str] = (),
                 dialect: CsvDialect = DEFAULT_DIALECT, bar: Any = None
                 ) -> tuple[pd.DataFrame, list[Any]]:
    """A first pass over the whole file: an empty frame with its columns (typed as a
    whole-file read types them), and each column's profile
    (:func:`microagg._release.profile_frame`) over every row. A CSV file is read in
    ``dialect``; a row with more fields than the header is an error naming its line
    (:mod:`microagg._csv`). ``bar``: a tqdm bar counting the rows read (given the
    Parquet file's number of rows as its total)."""
    pa = require_pyarrow("reading the file")
    if fmt == "parquet":
        try:
            reader = _parquet(source)
            check_names(reader.schema_arrow.names)
            empty = arrow_frame(reader.schema_arrow.empty_table())
            if bar is not None:
                bar.reset(total=reader.metadata.num_rows)
            batches = (arrow_frame(b)
                       for b in reader.iter_batches(batch_size=BATCH_ROWS))
            _, profiles = profile_batches(_or_empty(_tallied(batches, bar), empty), na=na)
        except pa.ArrowException as err:
            raise ValueError(f"cannot read {source} as a Parquet file: {err}") from None
        return empty, profiles
    names, profiles = profile_batches(
        _tallied(read_text_csv(source, chunksize=BATCH_ROWS, dialect=dialect), bar), na=na,
        text_numbers=True, decimal=dialect.decimal)
    return pd.DataFrame(columns=names), profiles


def _tallied(batches: Iterator[pd.DataFrame], bar: Any) -> Iterator[pd.DataFrame]:
    """``batches``, each counted on ``bar`` (if any) once it has been profiled."""
    for b in batches:
        yield b
        if bar is not None:
            bar.update(len(b))


def _or_empty(batches: Iterator[pd.DataFrame], empty: pd.DataFrame) -> Iterator[pd.DataFrame]:
    seen = False
    for b in batches:
        seen = True
        yield b
    if not seen:
        yield empty


@dataclass(frozen=True)
class StreamSettings:
    """What to do: the method and its options, the columns, the strata and the policy;
    the dialect a CSV input is read and its output written in, and the columns a CSV
    output writes under an empty header cell, as the input had them
    (:func:`microagg._csv.blank_names`)."""

    k: int
    method: str
    params: dict[str, Any]
    columns: list[Any]
    strata: list[Any]
    policy: str
    standardize: bool
    na: tuple[str, ...] = ()
    dialect: CsvDialect = DEFAULT_DIALECT
    blank: frozenset[str] = frozenset()


@dataclass(frozen=True)
class UnitSummary:
    """What a worker reports about one protected unit."""

    groups: int
    smallest: int
    largest: int
    sse: float
    sst: float
    information_loss: float
    seconds: float
    column_sse: np.ndarray


def _parquet(source: Path) -> Any:
    """A Parquet reader that reads what is asked for (``pre_buffer`` would read the file)."""
    pa = require_pyarrow("reading Parquet")
    return pa.parquet.ParquetFile(source, pre_buffer=False)


def _csv_batches(source: Path, columns: list[Any], names: list[Any],
                 settings: StreamSettings) -> Iterator[pd.DataFrame]:
    text = {c: str for c in names if c not in set(columns)}
    reader = pd.read_csv(source, chunksize=BATCH_ROWS, dtype=text, keep_default_na=False,
                         na_values={c: [*MISSING_TEXT, *settings.na] for c in columns},
                         header=0, names=names, index_col=False,
                         sep=settings.dialect.delimiter, decimal=settings.dialect.decimal,
                         skip_blank_lines=len(names) > 1)  # (as read_text_csv reads them)
    try:
        with reader:  # (its file is closed, however the iteration ends)
            yield from reader
    except pd.errors.ParserError as err:  # a row further on than the first batch
        raise ValueError(csv_error(err, str(source), settings.dialect.delimiter)) from None


def _batches(source: Path, fmt: str, settings: StreamSettings) -> Iterator[tuple[pd.DataFrame,
                                                                                  Any]]:
    """``(frame of strata and protected columns, Arrow batch of every column)`` per batch."""
    pa = require_pyarrow("protecting a file by strata")
    keep = settings.strata + settings.columns
    if fmt == "parquet":
        reader = _parquet(source)
        for group in range(reader.num_row_groups):  # one row group in memory at a time
            for batch in reader.iter_batches(batch_size=BATCH_ROWS, row_groups=[group]):
                yield arrow_frame(batch.select(keep)), batch
        return
    names = header_names(source, str(source), settings.dialect)  # (as the profile named them)
    schema = pa.schema([(str(c), pa.float64() if c in set(settings.columns) else pa.string())
                        for c in names])
    for chunk in _csv_batches(source, settings.columns, names, settings):
        whole = [c for c in settings.columns if not pd.api.types.is_float_dtype(chunk[c].dtype)]
        if whole:  # integers (Python's beyond 64 bits) as floats, rounded to the nearest as
            # the text is read in memory (Arrow refuses to round one beyond 2**53 itself)
            chunk = chunk.astype(dict.fromkeys(whole, "float64"))
        frame = chunk[keep]
        yield frame, pa.RecordBatch.from_pandas(chunk, schema=schema, preserve_index=False)


def _split(source: Path, fmt: str, settings: StreamSettings, spill: Path,
           bar: Any) -> tuple[pd.DataFrame, dict[Any, list[int]]]:
    """Pass 1: statistics per stratum, and every row spilled to ``spill`` by stratum. NaN
    or infinite values are an error naming their rows in the whole file (the rest of it
    is read, not spilled, to count them)."""
    pa = require_pyarrow("protecting a file by strata")
    parts, writer, start, count = [], None, 0, 0
    where: dict[Any, list[int]] = {}
    bad = NonFinite()
    decimal = settings.dialect.decimal if fmt == "csv" else "."
    try:
        for frame, batch in _batches(source, fmt, settings):
            frame = protectable(frame, settings.columns, decimal=decimal)  # (text: numbers)
            X = as_matrix(frame[settings.columns], name="the protected columns", min_rows=0,
                          finite=False)
            bad = bad + NonFinite.of(X, start)
            if bad.count:
                start += len(frame)
                continue
            part = moments(frame, settings.strata, settings.columns)
            codes = _codes(frame, settings.strata, part.index)
            order = np.argsort(codes, kind="stable")
            rows = pa.array(np.arange(start, start + len(frame), dtype=np.int64)[order])
            ordered = batch.take(pa.array(order)).append_column(ROW, rows)
            if writer is None:
                writer = pa.ipc.new_file(str(spill), ordered.schema)
            bounds = np.searchsorted(codes[order], np.arange(len(part) + 1))
            for i, key in enumerate(part.index):
                writer.write_batch(ordered.slice(bounds[i], bounds[i + 1] - bounds[i]))
                where.setdefault(key, []).append(count)
                count += 1
            parts.append(part)
            start += len(frame)
            bar.update(len(frame))
    finally:
        if writer is not None:
            writer.close()
    if bad.count:
        raise bad.error("the protected columns", settings.columns)
    return combine_moments(parts), where


def _codes(frame: pd.DataFrame, strata: list[Any], index: pd.Index) -> np.ndarray:
    if len(strata) == 1:
        return index.get_indexer(frame[strata[0]])
    return index.get_indexer(pd.MultiIndex.from_frame(frame[strata]))


class _SpillReaders:
    """The spill file's readers in this process, each opened once: opening the file reads
    its footer, which lists every record batch (one per stratum and input batch), so a
    unit that opened it anew took time growing with the number of strata, and the run
    their square (10,000 strata of 10 rows: 34 of its 62 s in opening the file, seven
    times a unit). One file is open at a time (a new spill, or one written again, closes
    the last; :func:`close_spill` closes it at the end of a run); a reader per set of
    columns asked for, so that only those are read."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._file: Any = None
        self._name: tuple[Any, ...] | None = None
        self._readers: dict[tuple[int, ...] | None, Any] = {}

    def get(self, spill: str, fields: list[int] | None = None) -> Any:
        """A reader of ``spill`` (only its columns ``fields`` if given)."""
        pa = require_pyarrow("protecting a file by strata")
        st = os.stat(spill)
        name = (os.fspath(spill), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        key = None if fields is None else tuple(fields)
        with self._lock:
            if name != self._name:
                self._close()
                self._file, self._name = pa.OSFile(spill, "rb"), name
            if key not in self._readers:
                options = (None if key is None
                           else pa.ipc.IpcReadOptions(included_fields=list(key)))
                self._readers[key] = pa.ipc.open_file(self._file, options=options)
            return self._readers[key]

    def close(self) -> None:
        """Close the open spill file, if any."""
        with self._lock:
            self._close()

    def _close(self) -> None:
        self._readers.clear()
        if self._file is not None:
            self._file.close()
        self._file = self._name = None


_SPILL = _SpillReaders()


def close_spill() -> None:
    """Close this process's readers of a spill file (:class:`_SpillReaders`)."""
    _SPILL.close()


def _read(spill: str, batches: list[int], columns: list[str]) -> Any:
    """Columns ``columns`` of the record batches ``batches``, in the spill file's order:
    only those columns are asked of the reader."""
    pa = require_pyarrow("protecting a file by strata")
    names = _SPILL.get(spill).schema.names
    reader = _SPILL.get(spill, [names.index(c) for c in columns])
    return pa.Table.from_batches([reader.get_batch(i) for i in batches])


def _input_order(spill: str, batches: list[int]) -> tuple[int, np.ndarray | None]:
    """A unit's number of rows, and the permutation putting its rows back in input
    order (``None`` if they are: only strata merged into one unit interleave)."""
    rows = _read(spill, batches, [ROW]).column(0).to_numpy()
    return rows.size, (np.argsort(rows) if (np.diff(rows) < 0).any() else None)


def read_unit(spill: str, batches: list[int], columns: list[str] | None = None) -> Any:
    """The rows of one unit from the spill file, in input order: only ``columns`` (without
    the row column) if given, the only columns asked of the reader then."""
    if columns is None:
        table = _read(spill, batches, _spill_columns(spill) + [ROW])
    else:
        table = _read(spill, batches, columns)
    _, order = _input_order(spill, batches)
    return table if order is None else table.take(order)


def _spill_columns(spill: str) -> list[str]:
    """The columns of the input, in its order, as the spill file holds them."""
    return [f.name for f in _SPILL.get(spill).schema if f.name != ROW]


def protect_unit(source: Any, settings: StreamSettings,
                 key: tuple[Any, ...] | None = None) -> tuple[Any, UnitSummary]:
    """Protect one unit (an Arrow table, or ``(spill file, record batches)``).

    ``key``: the strata values to release every row under (its unit's key:
    :func:`_release_key`); ``None`` keeps them.

    Returns the protected rows (the row column dropped, one chunk) and a summary.

    Memory, for a unit read from the spill file: what
    :func:`microagg._strata.protect_block` holds when given a function (the protected
    columns are read, record batch by record batch, for the z-scores and again for the
    centroids, and are not held while the method runs); the other columns are read
    only after that, to build the released rows.
    """
    pa = require_pyarrow("protecting a file by strata")
    names = [str(c) for c in settings.columns]
    if isinstance(source, pa.Table):
        order = [f.name for f in source.schema if f.name != ROW]

        def load() -> np.ndarray:
            return _matrix(source.column, source.num_rows, names)

        def others() -> Any:
            return source.drop_columns([ROW, *names]).combine_chunks()
    else:
        spill, batches = source
        order = _spill_columns(spill)
        size, rows = _input_order(spill, batches)

        def load() -> np.ndarray:
            X = _unit_matrix(spill, batches, names, size, rows)
            pa.default_memory_pool().release_unused()  # the pages read, not kept by the pool
            return X

        def others() -> Any:
            rest = _read(spill, batches, [c for c in order if c not in set(names)])
            if rows is not None:
                rest = rest.take(rows)
            return rest.combine_chunks()  # a copy, so what was read goes back to the pool
    res = protect_block(load, settings.k, get_method(settings.method).function,
                        settings.params, standardize=settings.standardize,
                        names=settings.columns)
    table = others()  # one chunk: record batches of BATCH_ROWS rows in the task's file
    if key is not None:
        for c, v in zip(settings.strata, key, strict=True):
            i = table.schema.get_field_index(str(c))
            field = table.schema.field(i)
            table = table.set_column(i, field, pa.array([v] * table.num_rows, type=field.type))
    for j, name in enumerate(names):
        table = table.append_column(pa.field(name, pa.float64()),
                                    pa.array(res.centroids[res.labels, j]))
    table = table.select(order)
    sizes = np.bincount(res.labels)
    summary = UnitSummary(groups=res.groups, smallest=int(sizes.min()),
                          largest=int(sizes.max()), sse=res.sse, sst=res.sst,
                          information_loss=res.information_loss, seconds=res.seconds,
                          column_sse=res.column_sse)
    return table, summary


def protect_task(sources: Sequence[Any], settings: StreamSettings,
                 keys: Sequence[tuple[Any, ...] | None], out: str | None = None
                 ) -> tuple[list[Any], list[UnitSummary]]:
    """Protect consecutive units, each by :func:`protect_unit`, in order; the worker task.

    Parameters
    ----------
    sources, keys
        Each unit's source and release key, as :func:`protect_unit` takes them.
    settings
        What to do.
    out
        A file to write every unit's protected rows to, one unit after another (each in
        record batches of at most :data:`BATCH_ROWS` rows), so that nothing of the units
        is sent back; ``None`` returns the rows. It is an Arrow IPC stream, not an IPC
        file: a file holds one dictionary per column, and a dictionary-encoded stratum
        column has one a unit (its key's: :func:`protect_unit`).

    Returns
    -------
    parts : list
        Each unit's protected rows (Arrow tables); with ``out``, the number of record
        batches each unit has in the file instead.
    summaries : list of UnitSummary
        Each unit's summary.
    """
    if out is None:
        done = [protect_unit(source, settings, key)
                for source, key in zip(sources, keys, strict=True)]
        return [table for table, _ in done], [summary for _, summary in done]
    pa = require_pyarrow("protecting a file by strata")
    counts: list[int] = []
    summaries: list[UnitSummary] = []
    writer: Any = None
    with pa.OSFile(out, "wb") as sink:
        try:
            for source, key in zip(sources, keys, strict=True):
                table, summary = protect_unit(source, settings, key)
                if writer is None:
                    writer = pa.ipc.new_stream(sink, table.schema)
                batches = table.to_batches(max_chunksize=BATCH_ROWS)
                for batch in batches:
                    writer.write_batch(batch)
                counts.append(len(batches))
                summaries.append(summary)
                del table, batches
                pa.default_memory_pool().release_unused()  # a worker keeps no unit's pages
        finally:
            if writer is not None:
                writer.close()
    return counts, summaries


def _matrix(column: Callable[[str], Any], rows: int, names: list[str]) -> np.ndarray:
    """The protected columns as one float64 array, filled column by column from
    ``column(name)`` (an Arrow array): one column beside the array at a time."""
    if not all(_numeric(column(c).type) for c in names):
        return _as_numbers(column, names)
    X = np.empty((rows, len(names)))
    for j, name in enumerate(names):
        X[:, j] = column(name).to_numpy()
    return _finite(X, names)


def _unit_matrix(spill: str, batches: list[int], names: list[str], rows: int,
                 order: np.ndarray | None) -> np.ndarray:
    """The protected columns of a unit in the spill file, as one float64 array in input
    order: filled record batch by record batch (one batch beside the array at a time),
    the file opened once in the process (:class:`_SpillReaders`)."""
    schema = _SPILL.get(spill).schema
    if not all(_numeric(schema.field(c).type) for c in names):
        table = read_unit(spill, batches, names)
        return _as_numbers(table.column, names)
    reader = _SPILL.get(spill, [schema.get_field_index(c) for c in names])
    X = np.empty((rows, len(names)))
    at = 0
    for i in batches:
        batch = reader.get_batch(i)
        for j, name in enumerate(names):
            X[at:at + batch.num_rows, j] = batch.column(name).to_numpy(zero_copy_only=False)
        at += batch.num_rows
        del batch
    if order is not None:  # merged strata: back to input order, a column at a time
        for j in range(X.shape[1]):
            X[:, j] = X[order, j]
    return _finite(X, names)


def _numeric(kind: Any) -> bool:
    pa = require_pyarrow("protecting a file by strata")
    return bool(pa.types.is_integer(kind) or pa.types.is_floating(kind))


def _as_numbers(column: Callable[[str], Any], names: list[str]) -> np.ndarray:
    """A column that is not numbers: the conversion (or the error naming the columns)
    of a whole-table read."""
    frame = pd.DataFrame({c: column(c).to_pandas() for c in names})
    return as_matrix(protectable(frame, names), name="the protected columns")


def _finite(X: np.ndarray, names: list[str]) -> np.ndarray:
    if not np.isfinite(X).all():  # the error names the columns
        as_matrix(pd.DataFrame(X, columns=names), name="the protected columns")
    return X


class _Output:
    """The output file, written unit by unit: Parquet or CSV (``blank``: the columns
    written under an empty header cell, as in the input).

    A part of :data:`BATCH_ROWS` rows or more is written at once; smaller parts (units of
    small strata) wait and are written together once they hold that many rows (or at the
    end). In Parquet that keeps many small strata from making a row group each (10,000
    strata of 10 rows: 10,000 row groups, a file 6.7 times larger and 20 times slower to
    read); in CSV from paying the writer's set-up per unit (4,000 strata of 10 rows: 13 of
    a run's 21 s). A part whose columns have other types than those waiting is written
    after them, not with them, so each value is written as its own unit's types say.
    """

    def __init__(self, target: Any, fmt: str, dialect: CsvDialect,
                 blank: frozenset[str] = frozenset()):
        self.target, self.fmt, self.dialect, self.first = target, fmt, dialect, True
        self.blank = blank
        self.writer: Any = None  # a pyarrow ParquetWriter once the first unit is written
        self._pending: list[Any] = []  # small parts not yet written
        self._pending_rows = 0

    def write_file(self, path: str, counts: Sequence[int],
                   each: Callable[[int], None]) -> None:
        """Append the units a worker wrote one after another to the Arrow IPC stream
        ``path`` (:func:`protect_task`; ``counts``: each unit's record batches), copied
        record batch by record batch; ``each(i)`` once the file's unit ``i`` is written.
        The file is deleted at the end."""
        pa = require_pyarrow("writing the output")
        with pa.OSFile(path, "rb") as fh:
            reader = pa.ipc.open_stream(fh)
            for i, count in enumerate(counts):
                for _ in range(count):
                    self.write(pa.Table.from_batches([reader.read_next_batch()]))
                each(i)
            del reader
        os.remove(path)
        pa.default_memory_pool().release_unused()

    def write(self, table: Any) -> None:
        """Append ``table``: a unit's protected rows, or part of them (an Arrow table)."""
        if self.fmt == "parquet":
            pq = require_pyarrow("writing Parquet").parquet
            if self.writer is None:
                self.schema = table.schema.remove_metadata()
                self.writer = pq.ParquetWriter(self.target, self.schema)
            table = table.cast(self.schema)
        elif self._pending and not table.schema.equals(self._pending[0].schema):
            self._flush()  # (CSV: one frame of one set of types)
        if table.num_rows >= BATCH_ROWS:
            self._flush()
            self._put(table)
        else:
            self._pending.append(table)
            self._pending_rows += table.num_rows
            if self._pending_rows >= BATCH_ROWS:
                self._flush()

    def _put(self, table: Any) -> None:
        """Write ``table``: a row group (or more), or CSV lines (the header first)."""
        if self.fmt == "parquet":
            self.writer.write_table(table)
            return
        frame = arrow_frame(table)
        in_dialect(frame, self.dialect).to_csv(
            self.target, header=written_header(frame.columns, self.blank) if self.first
            else False, index=False, **writing_options(frame, self.dialect))
        self.first = False

    def _flush(self) -> None:
        """Write the small parts waiting, together."""
        if self._pending:
            pa = require_pyarrow("writing the output")
            pending, self._pending, self._pending_rows = self._pending, [], 0
            self._put(pa.concat_tables(pending).combine_chunks())

    def close(self) -> None:
        try:
            self._flush()
        finally:
            if self.writer is not None:
                self.writer.close()


def protect_stream(source: Path, fmt: str, target: Any, out_fmt: str,
                   settings: StreamSettings, *, executor: cf.Executor | None = None,
                   window: int = 1, remote: bool = False, progress: Callable[..., Any],
                   workdir: Path | None = None) -> dict[str, Any]:
    """Protect ``source`` by strata into ``target`` (an open file); return the report.

    ``progress(total=, desc=, unit=)`` makes a tqdm-like bar. ``remote``: send each
    unit's rows to the executor's workers (they cannot read the spill file).
    ``workdir``: the private folder the spill and unit files go to (the caller removes
    it); by default a temporary folder removed at the end.
    """
    check_release_k(settings.k)
    pa = require_pyarrow("protecting a file by strata")
    folder = (nullcontext(str(workdir)) if workdir is not None
              else tempfile.TemporaryDirectory(prefix=".microagg-"))
    with folder as tmp:
        spill = Path(tmp) / "strata.arrow"
        total = _row_count(source, fmt)
        with progress(total=total, desc="reading", unit="rows") as bar:
            stats, where = _split(source, fmt, settings, spill, bar)
        pa.default_memory_pool().release_unused()  # the split's buffers, kept by the pool
        k = check_k(settings.k, int(stats["n"].sum()))
        if settings.standardize:
            check_not_constant(stats, settings.columns)
        plan = plan_strata(stats, k, settings.policy, standardize=settings.standardize,
                           columns=settings.columns)
        jobs = [sorted(b for i in unit for b in where[plan.keys[i]]) for unit in plan.units]
        try:
            summaries = _run(jobs, plan, str(spill), _Output(target, out_fmt, settings.dialect,
                                                             settings.blank),
                             settings, executor=executor, window=window, remote=remote,
                             progress=progress)
        finally:
            close_spill()  # (before the folder goes: an open file is not removed on Windows)
    column_sse = np.sum([s.column_sse for s in summaries], axis=0)
    sse, sst = overall_sums(stats, column_sse, standardize=settings.standardize)
    return {"plan": plan, "stats": stats, "summaries": summaries,
            "information_loss": overall_loss(stats, column_sse,
                                             standardize=settings.standardize),
            "sse": sse, "sst": sst}


def _row_count(source: Path, fmt: str) -> int | None:
    if fmt == "parquet":
        pa = require_pyarrow("reading Parquet")
        return pa.parquet.ParquetFile(source).metadata.num_rows
    return None


def _run(jobs: list[list[int]], plan: Any, spill: str, output: _Output,
         settings: StreamSettings, *, executor: cf.Executor | None, window: int, remote: bool,
         progress: Callable[..., Any]) -> list[UnitSummary]:
    """Protect every unit and write them in order to ``output`` (closed at the end): here,
    or on ``executor`` as tasks of consecutive units (:func:`_tasks`, :func:`protect_task`),
    each unit's summary kept and counted on the progress bar as it is written."""
    summaries: list[UnitSummary] = []
    try:
        with progress(total=len(plan.keys), desc="strata", unit="stratum") as bar:
            def written(u: int, summary: UnitSummary) -> None:
                summaries.append(summary)
                bar.update(len(plan.units[u]))

            keys = [_release_key(plan, u, settings.strata) for u in range(len(jobs))]
            if executor is None:
                for u, batches in enumerate(jobs):
                    table, summary = protect_unit((spill, batches), settings, keys[u])
                    output.write(table)
                    written(u, summary)
            else:
                tasks = _tasks([int(plan.sizes[unit].sum()) for unit in plan.units], TASK_ROWS)

                def task_file(t: int) -> str:
                    return str(Path(spill).with_name(f"task{t}.arrows"))

                def submit(t: int) -> cf.Future:
                    task_keys = [keys[u] for u in tasks[t]]
                    if remote:
                        return executor.submit(protect_task, [read_unit(spill, jobs[u])
                                                              for u in tasks[t]],
                                               settings, task_keys)
                    return executor.submit(protect_task, [(spill, jobs[u]) for u in tasks[t]],
                                           settings, task_keys, task_file(t))

                def done(result: tuple[list[Any], list[UnitSummary]], t: int) -> None:
                    parts, task_summaries = result
                    if remote:
                        for u, table, summary in zip(tasks[t], parts, task_summaries,
                                                     strict=True):
                            output.write(table)
                            written(u, summary)
                    else:
                        output.write_file(task_file(t), parts,
                                          lambda i: written(tasks[t][i], task_summaries[i]))
                _pipeline(len(tasks), submit, max(1, window), done, drain=not remote)
    finally:
        output.close()
    return summaries


def _release_key(plan: Any, u: int, strata: list[Any]) -> tuple[Any, ...]:
    """The strata values every row of unit ``u`` is released under: its own stratum's key
    (that of a small stratum merged into it, and a value equal to the key but written
    otherwise, such as Parquet's ``-0.0`` for ``0.0``, would single its rows out)."""
    key = plan.keys[plan.units[u][0]]
    values = key if len(strata) > 1 else (key,)
    return tuple(v.item() if isinstance(v, np.generic) else v for v in values)


def _tasks(sizes: Sequence[int], rows: int) -> list[range]:
    """Consecutive units gathered into tasks: each task's units, in order.

    A task takes units until they hold ``rows`` rows; a unit of ``rows`` rows or more
    (``sizes``: each unit's) is a task of its own.

    Examples
    --------
    >>> _tasks([3, 3, 3, 9, 3, 3], rows=6)
    [range(0, 2), range(2, 3), range(3, 4), range(4, 6)]
    """
    tasks: list[range] = []
    start = held = 0
    for u, size in enumerate(sizes):
        if size >= rows and held:  # (the units before it: a task of their own)
            tasks.append(range(start, u))
            start, held = u, 0
        held += size
        if held >= rows:
            tasks.append(range(start, u + 1))
            start, held = u + 1, 0
    if start < len(sizes):
        tasks.append(range(start, len(sizes)))
    return tasks


def _pipeline(n: int, submit: Callable[[int], cf.Future], window: int,
              done: Callable[[Any, int], None], *, drain: bool) -> None:
    """Tasks ``0..n-1`` run by ``submit(t)``, at most ``window`` of them submitted or
    waiting; each result handed to ``done(result, t)`` in order.

    ``drain``: on an error, wait for the tasks already running (they write into the
    temporary folder, which is removed next).
    """
    running: dict[cf.Future, int] = {}
    finished: dict[int, Any] = {}
    submitted = written = 0
    try:
        while written < n:
            while submitted < n and len(running) + len(finished) < window:
                running[submit(submitted)] = submitted
                submitted += 1
            ready, _ = cf.wait(list(running), return_when=cf.FIRST_COMPLETED)
            for fut in ready:
                finished[running.pop(fut)] = fut.result()
            while written in finished:
                done(finished.pop(written), written)
                written += 1
    except Exception:
        for fut in running:
            fut.cancel()
        if drain:
            cf.wait(list(running))
        raise


def merge_lines(plan: Any, strata: list[Any]) -> list[str]:
    """One line per merged small stratum, for standard error."""
    pos = {key: i for i, key in enumerate(plan.keys)}
    return [f"merged stratum {describe_key(strata, small)} "
            f"({counted(plan.sizes[pos[small]], 'record')}) "
            f"into {describe_key(strata, target)} (nearest centroid): its rows are "
            f"released as {describe_key(strata, target)}"
            for small, target in plan.merged.items()]
