"""Helpers of the command line (:mod:`microagg._cli`): files, method options, errors.

* Input and output files: the input must be a readable file; the output may not be
  the input, an existing file is replaced only with ``--force``, and it is written
  to a temporary file in the same folder and then renamed over the target, so a
  failed run never leaves half a file.
* Method options: every option of every registered method (:data:`METHOD_OPTIONS`,
  one entry per name in the registry's ``options``) has a command-line flag; a flag
  the chosen method does not take is an error naming it.
* Formats: CSV, or Parquet (pyarrow) for a file ending in .parquet, .pq or .parq
  (``--format`` forces one); Parquet is never written to standard output.
* Errors: one line on standard error.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from ._methods import METHODS
from ._release import check_names, read_text_csv

__all__ = ["METHOD_OPTIONS", "add_method_options", "method_params", "input_file",
           "output_target", "read_table", "write_table", "columns_arg", "list_arg",
           "atomic_target", "one_line"]


def _yes_no(text: str) -> bool:
    value = text.strip().lower()
    if value in ("yes", "true", "1"):
        return True
    if value in ("no", "false", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected yes or no, got {text!r}")


#: Every method option of the registry: its flag, how to read it, and its help text.
METHOD_OPTIONS: dict[str, tuple[str, Callable[[str], Any], str]] = {
    "gamma": ("--gamma", float, "gain factor of vmdav (default 0.2) and ivmdav (default 1.16)"),
    "leftover": ("--leftover", str, "vmdav: where the last records go, 'centroid' (nearest "
                 "group centroid, default) or 'record' (group of the nearest record)"),
    "candidates": ("--candidates", int, "ivmdav: neighbours considered for the extension "
                   "(default 2k)"),
    "self_neighbour": ("--self-neighbour", _yes_no, "ivmdav: yes (default) or no, whether "
                       "a candidate counts as its own first neighbour"),
    "K": ("--K", int, "hybrid: macrogroup size (default: the smallest multiple of k that "
          "is at least 21; one-step: max(21, k))"),
    "partitioning": ("--partitioning", str, "hybrid: 'two-step' (default) or 'one-step'"),
    "seed": ("--seed", int, "hybrid: random seed (same seed, same result)"),
    "n_jobs": ("--n-jobs", int, "hybrid: threads for the macrogroups (-1: one per CPU)"),
    "population": ("--population", int, "hybrid: chromosomes per GA (default 10)"),
    "mutation_rate": ("--mutation-rate", float, "hybrid: per-gene mutation probability "
                      "(default 0.1)"),
    "crossover_rate": ("--crossover-rate", float, "hybrid: crossover probability "
                       "(default 0.5)"),
    "iterations": ("--iterations", int, "hybrid: GA generations per macrogroup "
                   "(default 10000)"),
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
    """The method options given on the command line; one the method does not take is an error."""
    spec = METHODS[args.method]
    given = {name: getattr(args, name) for name in METHOD_OPTIONS
             if getattr(args, name, None) is not None}
    wrong = [METHOD_OPTIONS[name][0] for name in given if name not in spec.options]
    if wrong:
        takes = ", ".join(METHOD_OPTIONS[o][0] for o in spec.options) or "no options"
        raise ValueError(f"{', '.join(wrong)} does not apply to --method {args.method} "
                         f"(it takes {takes})")
    return given


def columns_arg(text: str | None) -> list[str] | None:
    """``--columns a,b`` as a list; an empty value is an error, not "every column"."""
    return list_arg(text, "--columns", "or leave out --columns to protect every numeric column")


def list_arg(text: str | None, flag: str, otherwise: str = "") -> list[str] | None:
    """``FLAG a,b`` as a list of names; an empty name is an error."""
    if text is None:
        return None
    names = [c.strip() for c in text.split(",")]
    if not text.strip() or any(not c for c in names):
        raise ValueError(f"{flag} {text!r} names an empty column; give names separated by "
                         f"commas{', ' + otherwise if otherwise else ''}")
    return names


def input_file(name: str) -> Path:
    path = Path(name)
    if not path.exists():
        raise FileNotFoundError(f"input file {name} does not exist")
    if not path.is_file():
        raise IsADirectoryError(f"input {name} is a folder, not a CSV file")
    return path


def output_target(name: str | None, source: Path | None, force: bool) -> Path | None:
    """The output file (``None``: standard output), checked before any work is done."""
    if name is None or name == "-":
        return None
    out = Path(name)
    if source is not None and (out.resolve() == source.resolve()
                               or (out.exists() and os.path.samefile(out, source))):
        raise ValueError(f"refusing to write over the input file {source}: choose another "
                         "output file with -o")
    if out.is_dir():
        raise IsADirectoryError(f"output {name} is a folder; give a file name with -o")
    if not out.parent.is_dir():
        raise FileNotFoundError(f"the folder {out.parent} of the output file does not exist")
    if out.exists() and not force:
        raise FileExistsError(f"output file {name} exists; use --force to replace it")
    return out


def read_table(path: Path, fmt: str = "csv") -> pd.DataFrame:
    """The whole table as read: a CSV file's every value as the text it is (nothing made
    missing, no booleans), a Parquet file with its index columns as ordinary columns."""
    if fmt == "parquet":
        from ._stream import require_pyarrow

        pa = require_pyarrow("reading Parquet")
        try:
            check_names(pa.parquet.read_schema(path).names)
            return pa.parquet.read_table(path).to_pandas(ignore_metadata=True)
        except pa.ArrowException as err:
            raise ValueError(f"cannot read {path} as a Parquet file: {one_line(err)}") from None
    try:
        return read_text_csv(path)
    except (ValueError, pd.errors.ParserError) as err:  # empty, malformed, not text
        raise ValueError(f"cannot read {path} as a CSV table with a header row: "
                         f"{one_line(err)}") from None


def write_table(df: pd.DataFrame, out: Path | None, stdout: Any, fmt: str = "csv",
                check: Callable[[str], Any] = lambda tmp: None) -> None:
    """Write ``df`` to ``out`` atomically (temporary file, then rename), or CSV to stdout.

    ``check(tmp)`` runs on the written temporary file before it gets its final name (the
    release audit); an error removes it.
    """
    if out is None:
        df.to_csv(stdout, index=False)
        return
    if fmt == "parquet":
        from ._stream import require_pyarrow

        require_pyarrow("writing Parquet")
        with atomic_target(out) as tmp:
            df.to_parquet(tmp, engine="pyarrow", index=False)
            check(tmp)
        return
    with atomic_target(out) as tmp:
        with open(tmp, "w", newline="") as fh:
            df.to_csv(fh, index=False)
        check(tmp)


@contextmanager
def atomic_target(out: Path) -> Iterator[str]:
    """A temporary file beside ``out``, renamed over it when the block succeeds.

    A failure leaves ``out`` as it was and no temporary file behind.
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    os.close(fd)
    try:
        yield tmp
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # as an ordinary new file (mkstemp makes it private)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def one_line(err: BaseException) -> str:
    """The message of ``err`` on one line."""
    text = " ".join(str(err).split())
    if isinstance(err, KeyError) and len(err.args) == 1:
        text = f"no such key {err.args[0]!r}"
    return text or type(err).__name__
