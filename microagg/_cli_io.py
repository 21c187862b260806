"""Helpers of the command line (:mod:`microagg._cli`): files, method options, errors.

* Input and output files: the input must be a readable file (``-``: standard
  input); the output may not be the input, nor a device or a pipe (which publishing
  would replace). Every temporary file of a run lives in one private folder (mode
  0700, :func:`run_folder`) beside the output, removed
  however the run ends (a watchdog process removes it even after ``kill -9``). The
  output is written there, audited, and then published under its name without ever
  replacing a file that exists, even one another run created meanwhile (:func:`publish`);
  ``--force`` replaces it atomically. Standard output (``-o -``) gets a copy of the
  audited file. A failed or interrupted run leaves no half file and prints nothing.
* Compression follows the output name: ``.gz``, ``.bz2``, ``.xz`` or ``.zst``
  (:data:`COMPRESSIONS`); another compression suffix is an error.
* Method options: every option of every registered method (:data:`METHOD_OPTIONS`,
  one entry per name in the registry's ``options``) has a command-line flag; a flag
  the chosen method does not take is an error naming it.
* Formats: CSV, or Parquet (pyarrow) for a file ending in .parquet, .pq or .parq
  (``--format`` forces one); Parquet is never written to standard output. Every CSV
  file of a run, read or written, is in the one dialect of ``--delimiter`` and
  ``--decimal`` (:func:`csv_dialect`; without ``--delimiter``, tabs for files named
  ``.tsv``).
* Errors: one line on standard error.
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import gzip
import io
import lzma
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pandas as pd

from ._csv import (
    BOM,
    COMPRESSED,
    DEFAULT_DIALECT,
    ENCODING,
    CsvDialect,
    blank_names,
    dialect_for,
    in_dialect,
    read_text_csv,
    starts_with_bom,
    writing_options,
    written_header,
)
from ._defaults import GA, HYBRID, IVMDAV, MACROGROUP_SIZE, VMDAV
from ._entry import SIGNALS
from ._mdav.dispatch import ENGINE_NAMES
from ._methods import METHODS, check_option_values, seeded
from ._release import check_names
from ._stream import PARQUET_SUFFIXES, existing_file

__all__ = ["WINDOWS", "METHOD_OPTIONS", "COMPRESSIONS", "add_method_options", "method_params",
           "input_file", "output_target", "read_input", "InputTable", "write_table",
           "columns_arg", "list_arg", "add_csv_options", "csv_dialect",
           "run_folder", "guard", "atomic_target", "publish", "compression_of", "open_output",
           "signals_held", "one_line", "DAMAGED", "damaged_input", "disk_full", "detached",
           "copy_out", "check_name_length", "same_file", "printable"]

#: Whether this is Windows, where files, processes and signals differ (no groups or modes
#: to hand on, a rename that never replaces, no POSIX helper processes): the one place the
#: command line asks (the tests set it to check the Windows paths on any system).
WINDOWS = os.name == "nt"


def _yes_no(text: str) -> bool:
    value = text.strip().lower()
    if value in ("yes", "true", "1"):
        return True
    if value in ("no", "false", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected yes or no, got {text!r}")


def _seed(text: str) -> int:
    """A seed as the command line takes it: a whole number of at least 0."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 0, got {text!r}")
    return value


#: Every method option of the registry: its flag, how to read it, and its help text.
METHOD_OPTIONS: dict[str, tuple[str, Callable[[str], Any], str]] = {
    "gamma": ("--gamma", float, f"gain factor of vmdav (default {VMDAV.gamma}) and ivmdav "
              f"(default {IVMDAV.gamma})"),
    "leftover": ("--leftover", str, "vmdav: where the last records go, 'centroid' (nearest "
                 "group centroid) or 'record' (group of the nearest record); default "
                 f"{VMDAV.leftover!r}"),
    "engine": ("--engine", str, "mdav, mdav_single, vmdav, ivmdav: the engine, one of "
               f"{', '.join(ENGINE_NAMES)} (each gives the same labels; default 'auto': the "
               "indexed one from a few thousand records on, with numba)"),
    "candidates": ("--candidates", int, "ivmdav: neighbours considered for the extension "
                   "(default 2k)"),
    "self_neighbour": ("--self-neighbour", _yes_no, "ivmdav: yes or no, whether a candidate "
                       "counts as its own first neighbour (default "
                       f"{'yes' if IVMDAV.self_neighbour else 'no'})"),
    "K": ("--K", int, "hybrid: macrogroup size (default: the smallest multiple of k that "
          f"is at least {MACROGROUP_SIZE}; one-step: max({MACROGROUP_SIZE}, k))"),
    "partitioning": ("--partitioning", str, "hybrid: 'two-step' or 'one-step' (default "
                     f"{HYBRID.partitioning!r})"),
    "seed": ("--seed", _seed, "hybrid: random seed (same seed, same result; default: one drawn "
             "at random and named when the run ends)"),
    "n_jobs": ("--n-jobs", int, "hybrid: threads for the macrogroups (-1: one per CPU; "
               f"default {HYBRID.n_jobs})"),
    "population": ("--population", int, f"hybrid: chromosomes per GA (default {GA.population})"),
    "mutation_rate": ("--mutation-rate", float, "hybrid: per-gene mutation probability "
                      f"(default {GA.mutation_rate})"),
    "crossover_rate": ("--crossover-rate", float, "hybrid: crossover probability "
                       f"(default {GA.crossover_rate})"),
    "iterations": ("--iterations", int, "hybrid: GA generations per macrogroup "
                   f"(default {GA.iterations})"),
}


def add_method_options(parser: argparse.ArgumentParser) -> None:
    """A flag for every option of every registered method (a missing entry is an error)."""
    names = list(dict.fromkeys(o for m in METHODS.values() for o in m.options))
    missing = [o for o in names if o not in METHOD_OPTIONS]
    if missing:
        raise RuntimeError(f"method option(s) {missing} have no command-line flag")
    group = parser.add_argument_group(
        "method options", "each applies only to the methods named in its help")
    for name in names:
        flag, kind, text = METHOD_OPTIONS[name]
        group.add_argument(flag, dest=name, type=kind, default=None, help=text)


def method_params(args: argparse.Namespace) -> dict[str, Any]:
    """The method options given on the command line; one the method does not take is an error.

    A method that takes a seed but was given none gets one drawn here (``microagg protect``
    names it when the run ends), so that the release can be made again: the API's default,
    no seed, would give another release on every run.
    """
    spec = METHODS[args.method]
    given = {name: getattr(args, name) for name in METHOD_OPTIONS
             if getattr(args, name, None) is not None}
    wrong = [METHOD_OPTIONS[name][0] for name in given if name not in spec.options]
    if wrong:
        takes = ", ".join(METHOD_OPTIONS[o][0] for o in spec.options) or "no options"
        raise ValueError(f"{', '.join(wrong)} does not apply to --method {args.method} "
                         f"(it takes {takes})")
    try:  # (at start-up: a bad value is not found only after a long read of the input)
        check_option_values(args.method, args.k, given)
    except (TypeError, ValueError) as err:
        raise ValueError(_by_flag(str(err), given)) from None
    return seeded(args.method, given)[0]


def _by_flag(message: str, given: dict[str, Any]) -> str:
    """``message`` about an option, naming it by its flag (``gamma must be ...``:
    ``--gamma must be ...``)."""
    for name in given:
        if re.match(rf"{re.escape(name)}\b", message):
            return METHOD_OPTIONS[name][0] + message[len(name):]
    return message


def columns_arg(text: str | None) -> list[str] | None:
    """``--columns a,b`` as a list; an empty value is an error, not "every column"."""
    return list_arg(text, "--columns", "or leave out --columns to protect every numeric column")


#: One name of a comma-separated list: in double quotes as in a CSV line (``""`` for a quote
#: inside), or bare (no comma or quote; blanks around it are dropped).
_LISTED_NAME = re.compile(r'\s*(?:"((?:[^"]|"")*)"|([^,"]*?))\s*(,|$)')


def list_arg(text: str | None, flag: str, otherwise: str = "", what: str = "column"
             ) -> list[str] | None:
    """``FLAG a,b`` as a list of names; an empty name is an error.

    Names are separated by commas and stripped of the blanks around them. A name holding a
    comma, a double quote or blanks at its ends is written in double quotes, as in a CSV
    line: ``'"income, gross",age'``, ``'" spaced "'``.

    Examples
    --------
    >>> list_arg('age, "income, gross", " spaced "', "--columns")
    ['age', 'income, gross', ' spaced ']
    """
    if text is None:
        return None
    names: list[str] = []
    at = 0
    while True:
        found = _LISTED_NAME.match(text, at)
        if found is None:
            raise ValueError(f"{flag} {text!r}: a double quote may only enclose a whole "
                             f"name, as in a CSV line (e.g. {flag} '\"income, gross\",age'; "
                             "a quote inside a quoted name is doubled)")
        quoted, bare, comma = found.groups()
        names.append(quoted.replace('""', '"') if quoted is not None else bare)
        at = found.end()
        if not comma:
            break
    if any(not name for name in names):
        items = "names" if what == "column" else f"{what}s"
        raise ValueError(f"{flag} {text!r} names an empty {what}; give {items} separated by "
                         f"commas{', ' + otherwise if otherwise else ''}")
    return names


def input_file(name: str, role: str = "input", stdin: bool = True) -> Path | None:
    """A file the command reads (``None``: ``-``, standard input), checked before any work
    is done; ``role`` names it in the errors (the audit reads an input and a release);
    ``stdin`` False: a command that reads the file more than once (the audit) refuses
    ``-``."""
    if name == "-":
        if not stdin:
            raise ValueError(f"the {role} file cannot be standard input (-): the audit reads "
                             "each file more than once; save it to a file first and give its "
                             "name")
        return None
    path = Path(name)
    parts = path.is_dir() and any(p.suffix.lower() in PARQUET_SUFFIXES for p in path.iterdir())
    return existing_file(
        name, role, missing_hint=" (give - to read standard input)" if stdin else "",
        folder_hint="; for a folder of Parquet parts (Dask's to_parquet), audit it in Python: "
                    "microagg.audit(original, pandas.read_parquet(folder), k)" if parts else "")


def _redirected_from(out: Path) -> bool:
    """Whether standard input is the file ``out`` (``< out``)."""
    try:
        held = os.fstat(sys.stdin.fileno())
        return stat.S_ISREG(held.st_mode) and os.path.samestat(held, os.stat(out))
    except (AttributeError, OSError, ValueError):  # closed, no file below it, no such out
        return False


def check_name_length(out: Path, role: str = "output") -> None:
    """Refuse an output name longer than its folder allows: in bytes (``PC_NAME_MAX``, else
    255) on POSIX systems, in UTF-16 characters (255) on Windows (NTFS, exFAT); ``role``
    names the file in the error."""
    if WINDOWS:
        length = len(out.name.encode("utf-16-le", "surrogatepass")) // 2
        unit, limit = "characters", 255
    else:
        length, unit = len(os.fsencode(out.name)), "bytes"
        limit = (os.pathconf(out.parent, "PC_NAME_MAX")
                 if hasattr(os, "pathconf") and out.parent.is_dir() else 255)
    if length > limit:
        raise ValueError(f"the {role} file name is {length} {unit} long, more than the "
                         f"{limit} its folder allows: choose a shorter name")


def same_file(path: Path, other: Path) -> bool:
    """Whether ``path`` names the file ``other`` (spelled otherwise, through a link, or a
    hard link to it), whether or not it exists yet."""
    return path.resolve() == other.resolve() or (path.exists() and other.exists()
                                                  and os.path.samefile(path, other))


def output_target(name: str | None, source: Path | None, force: bool, *,
                  stdin: bool = False, role: str = "output", flag: str = "-o"
                  ) -> Path | None:
    """The output file (``None``: standard output), checked before any work is done.

    ``source`` is the input file; ``stdin``: the command reads standard input (``source``
    ``None``), which may be a file redirected with ``<``, refused as an output as well.
    ``role`` and ``flag`` name the file and its option in the errors (another file the
    run writes, such as ``protect --report``, is checked the same way)."""
    if name is None or name == "-":
        return None
    out = Path(name)
    check_name_length(out, role)
    if source is not None and same_file(out, source):
        raise ValueError(f"refusing to write over the input file {source}: choose another "
                         f"{role} file with {flag}")
    if stdin and source is None and _redirected_from(out):
        raise ValueError(f"refusing to write over the input file {name}, which standard input "
                         f"reads (< redirects it): choose another {role} file with {flag}")
    if out.is_dir():
        raise IsADirectoryError(f"{role} {name} is a folder; give a file name with {flag}")
    if out.exists() and not out.is_file():  # (followed: /dev/stdout is a link to a pipe)
        what, instead = (("release", f"write to standard output instead, -o - > {name}")
                         if flag == "-o" else (role, f"give {flag} a file name"))
        raise ValueError(f"{role} {name} is not a regular file (a device, a pipe or a socket),"
                         f" which the {what} would replace (the {role} is published by a "
                         f"rename), --force or not: {instead}")
    if not out.parent.is_dir():
        raise FileNotFoundError(f"the folder {out.parent} of the {role} file does not exist")
    if (out.exists() or out.is_symlink()) and not force:
        raise FileExistsError(f"{role} file {name} exists; use --force to replace it")
    compression_of(out)  # an unsupported compression is refused before any work
    return out


@dataclass(frozen=True)
class InputTable:
    """A table read by :func:`read_input`: the frame, a Parquet file's Arrow schema
    (``None`` for CSV), whose column types a Parquet output keeps (a stored pandas index
    is written back as a column), and the names given to a CSV file's empty header cells,
    which a CSV output leaves empty (:func:`write_table`)."""

    frame: pd.DataFrame
    arrow_schema: Any = None
    blank: frozenset[str] = frozenset()
    #: Whether a CSV input, standard input and pipes included, starts with UTF-8's
    #: byte-order mark, which a CSV release then repeats.
    bom: bool = False

    @property
    def stored_index(self) -> list[str]:
        """A Parquet file's columns holding a pandas index
        (:func:`~microagg._stream.stored_index`)."""
        from ._stream import stored_index

        return [] if self.arrow_schema is None else stored_index(self.arrow_schema)


#: What reading a truncated or corrupt compressed file raises: gzip, xz, bz2 (an
#: ``OSError`` "Invalid data stream"), zstandard (``ZstdError``).
DAMAGED = (EOFError, zlib.error, lzma.LZMAError, gzip.BadGzipFile)


def damaged_input(err: BaseException, files: Sequence[Any]) -> str | None:
    """The one-line error for a compressed input that is truncated or corrupt, or a Parquet
    input that is none (naming those of ``files``, the run's inputs), or ``None`` if ``err``
    is another."""
    if "Parquet magic bytes not found" in str(err):  # (pyarrow's ArrowInvalid)
        named = [str(f) for f in files if f is not None
                 and Path(str(f)).suffix.lower() in PARQUET_SUFFIXES]
        said = one_line(err).split(" as a Parquet file: ", 1)[-1]  # (the name once only)
        return (f"{' or '.join(named) or 'the input'}: not a Parquet file, or a damaged one "
                f"({said}); copy or write it again, or give --format csv if it is a CSV file")
    if not (isinstance(err, DAMAGED) or type(err).__name__ == "ZstdError"
            or (isinstance(err, OSError) and str(err) == "Invalid data stream")):
        return None
    packed = [str(f) for f in files if f is not None and Path(str(f)).suffix.lower()
              in (*COMPRESSED, ".zst")]
    which = " or ".join(packed) or "the compressed input"
    return (f"{which}: the compressed data is truncated or corrupt ({one_line(err)}); copy "
            "or download the file again")


def disk_full(err: BaseException, target: Any = None, option: str = "-o") -> str | None:
    """The one-line error for a write that found the disk (or the user's quota) full,
    naming the folder the run was writing in, or ``None`` if ``err`` is another error.

    ``target`` is what the command writes, given by ``option``: an output file (the run's
    temporary files live beside it, :func:`run_folder`) or a folder (``--dest``; ``None``:
    the default data folder); ``None`` or ``-``, standard output, whose run writes in the
    system's temporary folder. The operating
    system names no file when a write runs out of space: without this the user reads only
    "[Errno 28] No space left on device".

    Examples
    --------
    >>> full = OSError(errno.ENOSPC, "No space left on device")
    >>> print(disk_full(full, "/srv/out.csv")[:71])
    no space left on the disk of /srv, where this run was writing (No space
    >>> disk_full(full, "/srv/out.csv").endswith("or give -o a file on another disk")
    True
    >>> disk_full(OSError(errno.EACCES, "Permission denied"), "/srv/out.csv") is None
    True
    """
    if not (isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT)):
        return None
    if target is None and option == "--dest":
        where = "the data folder ($MICROAGG_DATA, else the checkout's data/raw or the cache)"
        fix = "give --dest a folder on another disk"
    elif target is None or str(target) == "-":
        where = f"the temporary folder {tempfile.gettempdir()}"
        fix = f"point TMPDIR at another disk, or give {option} a file on another disk"
    else:
        path = Path(str(target))
        folder = path.is_dir() or option == "--dest"
        where = f"the disk of {path if folder else path.parent}"
        fix = f"give {option} a {'folder' if folder else 'file'} on another disk"
    done = ("the files verified before it stay, the one being copied is removed"
            if option == "--dest" else
            "nothing was published and the run's temporary files are removed")
    return (f"no space left on {where}, where this run was writing "
            f"({os.strerror(err.errno)}); {done}: free space there, or {fix}")


def add_csv_options(parser: argparse.ArgumentParser) -> None:
    """``--delimiter`` and ``--decimal``: the dialect of every CSV file of the run."""
    g = parser.add_argument_group("CSV dialect (of every CSV file the command reads or "
                                  "writes)")
    g.add_argument("--delimiter", default=None, metavar="CHAR",
                   help="the character between fields: , ';', tab, '|' ... (default: tab "
                   "for files named .tsv, else ,)")
    g.add_argument("--decimal", default=CsvDialect.decimal, choices=[".", ","],
                   metavar="MARK",
                   help="the decimal mark of the numbers: . (default) or , (52,5 is 52.5; "
                   "a number holding a '.' is then refused, not guessed at)")


def csv_dialect(args: argparse.Namespace, files: Sequence[Path | None]) -> CsvDialect:
    """The dialect ``--delimiter`` and ``--decimal`` name (an error if they clash); without
    ``--delimiter``, the one the names of the run's CSV ``files`` say
    (:func:`microagg._csv.dialect_for`)."""
    return dialect_for(args.delimiter, args.decimal, files)


def read_input(path: Path | None, fmt: str = "csv", dialect: CsvDialect = DEFAULT_DIALECT
               ) -> InputTable:
    """The whole table as read (``path`` ``None``: standard input, read in full first): a
    CSV file's every value as the text it is (fields separated as ``dialect`` says;
    nothing made missing, no booleans; a row with more fields than the header is an
    error naming its line), a Parquet file with its index columns as ordinary columns."""
    source: Any = path
    piped = path is not None and not path.is_file() and path.suffix.lower() not in COMPRESSED
    if path is None or (fmt == "csv" and piped):  # (/dev/stdin, a pipe: read once, in full)
        data = (getattr(sys.stdin, "buffer", sys.stdin).read() if path is None
                else path.read_bytes())
        # a text stream without a binary buffer (e.g. io.StringIO) reads str: encoded as UTF-8
        source = io.BytesIO(data.encode() if isinstance(data, str) else data)
    name = "standard input" if path is None else str(path)
    if fmt == "parquet":
        from ._stream import arrow_frame, require_pyarrow

        pa = require_pyarrow("reading Parquet")
        try:
            check_names(pa.parquet.read_schema(source).names)
            if path is None:
                source.seek(0)
            table = pa.parquet.read_table(source)
            return InputTable(arrow_frame(table), table.schema)
        except pa.ArrowException as err:
            raise ValueError(f"cannot read {name} as a Parquet file: {one_line(err)}") from None
    bom = (source.getvalue().startswith(BOM) if isinstance(source, io.BytesIO)
           else starts_with_bom(path))
    return InputTable(read_text_csv(source, name, dialect=dialect),
                      blank=blank_names(source, name, dialect), bom=bom)


#: Compressions of a CSV output, by the output's last suffix: the codec pandas names.
COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd"}
#: Suffixes of compressions (or archives) that are not written: an error naming them.
_UNWRITTEN = (".zip", ".tar", ".tgz", ".tbz2", ".txz", ".z", ".lz4", ".7z", ".br", ".lzma",
              ".zz", ".sz", ".snappy")


def compression_of(out: Path | None) -> str | None:
    """The compression of the output file ``out``, from its name (``None``: plain)."""
    if out is None:
        return None
    suffix = out.suffix.lower()
    if suffix in _UNWRITTEN:
        raise ValueError(f"output {out.name}: {suffix} is not written; name the output .csv, "
                         f"or compress it with {', '.join(COMPRESSIONS)} (e.g. out.csv.gz)")
    codec = COMPRESSIONS.get(suffix)
    if codec == "zstd":
        try:
            import zstandard  # noqa: F401
        except ImportError:
            raise ImportError(f"output {out.name}: writing .zst needs the zstandard package, "
                              "which is not installed: pip install zstandard (or use .gz or "
                              ".xz)") from None
    return codec


@contextmanager
def open_output(path: str | Path, compression: str | None, *, bom: bool = False
                ) -> Iterator[IO[str]]:
    """A text file to write CSV to at ``path``, compressed as ``compression`` (a codec of
    :data:`COMPRESSIONS`), in UTF-8, starting with its byte-order mark if ``bom``. The
    gzip header holds no name or time, so the same table gives the same bytes."""
    encoding = f"{ENCODING}-sig" if bom else ENCODING  # (not the system's code page: as read)
    if compression is None:
        with open(path, "w", encoding=encoding, newline="") as fh:
            yield fh
        return
    if compression == "gzip":
        import gzip

        raw: Any = open(path, "wb")
        binary: Any = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0)
    elif compression == "bz2":
        import bz2

        raw, binary = None, bz2.open(path, "wb")
    elif compression == "xz":
        import lzma

        raw, binary = None, lzma.open(path, "wb")
    else:
        import zstandard

        raw, binary = None, zstandard.open(path, "wb")
    try:
        with io.TextIOWrapper(binary, encoding=encoding, newline="") as fh:
            yield fh
    finally:
        if raw is not None:
            raw.close()


def write_table(df: pd.DataFrame, out: Path | None, stdout: Any, fmt: str = "csv", *,
                folder: Path | None = None, force: bool = False,
                check: Callable[[str], Any] = lambda tmp: None,
                types: Any = None, changed: Sequence[Any] = (),
                dialect: CsvDialect = DEFAULT_DIALECT, blank: frozenset[str] = frozenset()
                ) -> None:
    """Write ``df`` to ``out`` (compressed as its name says), or CSV (in ``dialect``) to
    ``stdout``.

    The file is written in ``folder`` (a :func:`run_folder`; one is made if not given)
    and published under its name, or copied to ``stdout``, only once it is whole
    (:func:`atomic_target`). ``check(tmp)`` runs on the written temporary file before
    that (the release audit); an error removes it. ``types``: the input's Arrow schema,
    whose column types a Parquet output keeps for every column but ``changed`` (the
    protected ones), as the streamed path does (a ``decimal128(8, 4)`` stays one, not the
    narrowest decimal its values fit). ``blank``: the columns a CSV output names with an
    empty header cell, as its input did (:func:`microagg._csv.written_header`).
    """
    if folder is None:
        with run_folder(out) as made:
            write_table(df, out, stdout, fmt, folder=made, force=force, check=check,
                        types=types, changed=changed, dialect=dialect, blank=blank)
        return
    if fmt == "parquet":
        from ._stream import require_pyarrow

        pa = require_pyarrow("writing Parquet")
    with atomic_target(out, folder, force=force, stdout=stdout) as tmp:
        if fmt == "parquet":
            table = pa.Table.from_pandas(df, preserve_index=False)
            if types is not None:
                table = _as_read(table, types, changed)
            pa.parquet.write_table(table, tmp)
        else:
            with open_output(tmp, compression_of(out), bom=dialect.bom) as fh:
                in_dialect(df, dialect).to_csv(fh, index=False,
                                               header=written_header(df.columns, blank),
                                               **writing_options(df, dialect))
        check(tmp)


def _as_read(table: Any, types: Any, changed: Sequence[Any]) -> Any:
    """``table`` with the columns not ``changed`` cast back to their types in ``types``
    (the values are those read, so the cast loses nothing; one that fails keeps its
    column as it is)."""
    from ._stream import require_pyarrow

    pa = require_pyarrow("writing Parquet")
    skip = {str(c) for c in changed}
    for i, field in enumerate(table.schema):
        if field.name in skip or types.get_field_index(field.name) < 0:
            continue
        kind = types.field(field.name).type
        if kind != field.type:
            try:
                table = table.set_column(i, field.with_type(kind), table.column(i).cast(kind))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass
    return table


# --------------------------------------------------------------------------------------
# the run's private folder, and publishing the output
# --------------------------------------------------------------------------------------

#: The watchdog: reads, until end of file, the ids of the run's worker processes; its
#: standard input is a pipe whose write end only the run holds, so end of file means the
#: run has ended, however it ended (``kill -9`` included). Unless the run said ``end``
#: (it ended its workers and removed its folder itself), it kills the workers still
#: there and removes the run's folder. It never takes a signal itself (they are held).
_WATCHDOG = """import os, shutil, signal, sys, time
lines = sys.stdin.read().split()
if lines[-1:] != ["end"]:
    for pid in map(int, lines):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                ours = b"multiprocessing" in fh.read()
        except OSError:
            ours = not os.path.isdir("/proc")
        if ours:
            try:
                os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
            except OSError:
                pass
for _ in range(50):
    shutil.rmtree(sys.argv[1], ignore_errors=True)
    if not os.path.lexists(sys.argv[1]):
        break
    time.sleep(0.1)
"""
#: The watchdog of each run folder (see :func:`guard`).
_WATCHDOGS: dict[Path, subprocess.Popen[bytes]] = {}


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold back :data:`SIGNALS` in this thread (delivered at the end): a process started
    meanwhile begins with them blocked, so Ctrl-C cannot kill it half started, with a
    traceback, before it sets up its own handling."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


@contextmanager
def run_folder(near: Path | None) -> Iterator[Path]:
    """A private folder (mode 0700 on POSIX systems; on Windows the folder's own permissions)
    for every temporary file of a run: beside ``near``
    (the output file, so the output is published by a rename on one file system), else
    in the system's temporary folder.

    It is removed when the block ends, however it ends; if this process is killed
    (``kill -9``, of this process or of its whole process group), a watchdog process
    (:data:`_WATCHDOG`, in a session of its own) removes it.
    """
    where = None if near is None else near.parent
    try:
        folder = Path(tempfile.mkdtemp(prefix=".microagg-", dir=where))
    except OSError as err:
        raise type(err)(f"cannot write in the folder {where or tempfile.gettempdir()} of the "
                        f"output ({err.strerror}): choose another output folder") from None
    watchdog = None
    try:
        with signals_held():
            try:
                # in a session of its own: a kill of the run's whole process group
                # (timeout -s KILL, kill -9 -PGID, a job control kill) leaves it to clean up
                watchdog = subprocess.Popen(
                    [sys.executable, "-I", "-S", "-c", _WATCHDOG, str(folder)],
                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    **detached())
            except OSError:  # no Python to start (an embedded interpreter): no watchdog
                watchdog = None
        if watchdog is not None:
            _WATCHDOGS[folder] = watchdog
        yield folder
    finally:
        _WATCHDOGS.pop(folder, None)
        shutil.rmtree(folder, ignore_errors=True)
        if watchdog is not None:
            try:
                watchdog.communicate(b"end\n")
            except OSError:  # the watchdog is gone (killed): nothing to tell it
                watchdog.wait()


def detached() -> dict[str, Any]:
    """How the watchdog is started apart from the run, so that what stops the run does not
    stop it: a session of its own on POSIX systems; on Windows a process group of its own
    (Ctrl-C and Ctrl-Break go to the console's group) without a console (closing the
    window ends the console's processes)."""
    if WINDOWS:
        return {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200)
                | getattr(subprocess, "DETACHED_PROCESS", 0x8)}
    return {"start_new_session": True}


def guard(folder: Path, pids: list[int]) -> None:
    """Have the watchdog of the run ``folder`` kill these worker processes if the run is
    killed before it ends them itself."""
    watchdog = _WATCHDOGS.get(folder)
    if watchdog is not None and watchdog.stdin is not None:
        watchdog.stdin.write("".join(f"{pid}\n" for pid in pids).encode())
        watchdog.stdin.flush()


@contextmanager
def atomic_target(out: Path | None, folder: Path, *, force: bool = False,
                  stdout: Any = None) -> Iterator[str]:
    """A temporary file in the run's ``folder``, published as ``out`` when the block
    succeeds (:func:`publish`), or, if ``out`` is ``None``, then copied to ``stdout``
    (default :data:`sys.stdout`): standard output gets the file the release audit read,
    and nothing if the block fails.

    A failure leaves ``out`` as it was and no temporary file behind. The temporary
    file's name is short, so any name legal for ``out`` works.
    """
    tmp = str(folder / ("output" + ("".join(out.suffixes[-2:])[:40] if out else ".csv")))
    try:
        yield tmp
        if out is None:
            copy_out(tmp, sys.stdout if stdout is None else stdout)
            return
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # as an ordinary new file
        publish(tmp, out, force=force)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def copy_out(tmp: str, target: Any) -> None:
    """Copy the finished file ``tmp`` to ``target`` (standard output) byte for byte: its
    UTF-8 and its line ends as written, whatever the console's encoding and newline
    translation (Windows turns ``\n`` into ``\r\n``); a stream with no bytes below it
    (``io.StringIO``) gets the text.

    Every byte is written, however few a write takes (an unbuffered standard output, a
    non-blocking pipe); a write that fails says that the reader holds part of a release
    only (a closed reader, ``BrokenPipeError``, is left to end the run quietly)."""
    if target is None:  # (python started with standard output closed: >&-)
        raise OSError("standard output is closed, so the release has nowhere to go: give "
                      "a file with -o, or run with standard output open")
    size, sent = os.path.getsize(tmp), 0
    try:
        target.flush()
        buffer = getattr(target, "buffer", None)
        if buffer is None:
            with open(tmp, encoding="utf-8", newline="") as fh:
                shutil.copyfileobj(fh, target)
            target.flush()
            return
        with open(tmp, "rb") as fh:
            while chunk := fh.read(1 << 16):
                sent += _write_all(buffer, chunk)
        _flush_all(buffer)
    except BrokenPipeError:
        raise
    except OSError as err:
        raise OSError(f"cannot write the release to standard output ({err.strerror or err}): "
                      f"{sent:,} of its {size:,} bytes went out, so the reader holds part of a "
                      "release only; write it to a file with -o") from None


def _write_all(buffer: Any, data: bytes) -> int:
    """Write every byte of ``data`` to ``buffer``, waiting while a non-blocking stream is
    full (a write returning ``None``, or ``BlockingIOError``); the bytes written."""
    view = memoryview(data)
    while view:
        try:
            n = buffer.write(view)
        except BlockingIOError as err:
            n = err.characters_written
            time.sleep(0.01)
        if n is None:
            time.sleep(0.01)
            continue
        view = view[n:]
    return len(data)


def _flush_all(buffer: Any) -> None:
    """``buffer.flush()``, waiting while a non-blocking stream is full."""
    while True:
        try:
            buffer.flush()
            return
        except BlockingIOError:
            time.sleep(0.01)


#: Errors of a hard link that mean the file system has none (a FAT or exFAT drive, some
#: network shares): ``publish`` then claims the name and renames onto it. (``ENOTSUP`` is
#: ``EOPNOTSUPP`` on Linux, another number on macOS; Windows reports ``EINVAL``.)
_NO_HARD_LINKS = frozenset({errno.EPERM, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EPERM),
                            errno.EMLINK, errno.EINVAL})

#: ``renameat2``'s flag: fail if the target exists (``linux/fs.h``); ``AT_FDCWD``.
_RENAME_NOREPLACE, _AT_FDCWD = 1, -100


def publish(tmp: str, out: Path, *, force: bool = False) -> None:
    """Give the finished file ``tmp`` its name ``out``, atomically.

    Without ``force`` an existing ``out`` is never replaced, even one created by another
    run a moment ago: ``renameat2(RENAME_NOREPLACE)`` (Linux), else a hard link (which
    fails if the name exists) then removing ``tmp``; the error names the file. With
    ``force``, :func:`os.replace`, the file replaced lending its group and permissions (a
    release kept at 0640 for one group stays so; if its group cannot be given, nothing is
    replaced). On Windows a rename never replaces a file, so it is the one step; with
    ``force`` the new file keeps the folder's permissions (its access control list).
    """
    if force:
        try:
            old = None if WINDOWS else os.stat(out)
        except OSError:  # no file to replace (or one we cannot read): the new file's own
            old = None
        if old is not None:
            try:
                os.chown(tmp, -1, old.st_gid)  # (its group first: then its mode's group bits)
            except OSError:
                raise PermissionError(f"cannot give the new {out.name} the group of the file "
                                      f"it replaces (group id {old.st_gid}), so other people "
                                      "could read it: nothing was replaced; remove the old "
                                      "file first, or write to another name") from None
            os.chmod(tmp, old.st_mode & 0o7777)
        os.replace(tmp, out)
        return
    try:
        if WINDOWS:  # (fails if the name exists)
            os.rename(tmp, out)
        elif not _rename_noreplace(tmp, out):
            try:
                os.link(tmp, out)
            except OSError as err:
                if err.errno not in _NO_HARD_LINKS:
                    raise
                _claim_then_replace(tmp, out)  # no hard links here
            else:
                os.remove(tmp)
    except FileExistsError:
        raise FileExistsError(f"output file {out} exists (another run wrote it meanwhile?); "
                              "nothing was replaced: use --force to replace it, or choose "
                              "another name") from None


def _claim_then_replace(tmp: str, out: Path) -> None:
    """Publish ``tmp`` as ``out`` where neither ``renameat2`` nor a hard link is available
    (a FAT or exFAT drive, some network shares): claim the name first with an exclusive
    create, which fails if the name exists, then rename onto the (empty) claimed file, so
    a file another run writes meanwhile is never replaced."""
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # FileExistsError
    os.close(fd)
    try:
        os.replace(tmp, out)
    except BaseException:
        os.remove(out)  # (our empty claim, not anyone's file)
        raise


def _rename_noreplace(tmp: str, out: Path) -> bool:
    """``renameat2(tmp, out, RENAME_NOREPLACE)``; ``False`` where it is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        rename = libc.renameat2
    except (OSError, AttributeError):  # a C library without it (glibc < 2.28, musl < 1.2.?)
        return False
    rename.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                       ctypes.c_uint]
    if rename(_AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(out), _RENAME_NOREPLACE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):  # not on this file system
        return False
    raise OSError(code, os.strerror(code), str(out))


def one_line(err: BaseException) -> str:
    """The message of ``err`` on one line."""
    text = " ".join(str(err).split())
    if isinstance(err, KeyError) and len(err.args) == 1:
        text = f"no such key {err.args[0]!r}"
    return text or type(err).__name__


#: Characters a terminal obeys rather than shows: the C0 controls but the tab, DEL, the C1
#: controls, and the bidirectional overrides and isolates, which reorder what follows.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    r"""``text`` with every control character written as its escape (``\x1b``), for a line
    on the terminal that names what a file holds (its column names, a stratum's key, a
    value): an escape sequence there (``ESC [2J``, a window title, a carriage return) would
    clear the screen, retitle the window or overwrite the line, e.g. the one listing the
    columns passed through unprotected.

    Examples
    --------
    >>> print(printable("kept unchanged: \x1b[2Jname\r"))
    kept unchanged: \x1b[2Jname\r
    """
    return _CONTROL.sub(lambda m: repr(m[0])[1:-1], text)
