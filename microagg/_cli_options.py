"""The options every ``microagg protect`` run reads, in memory or by strata.

What the user said about the columns not protected (:class:`ReleaseChoice`: ``--keep``,
``--keep-rest``, ``--na``, the CSV dialect), the report of the columns' roles on standard
error (:func:`print_roles`), the input and output formats (:func:`formats`), the local
processes that protect the run (:func:`local_jobs`), and progress on standard error
(:func:`shows_progress`, :func:`bars`, :func:`stages`).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._cli_io import compression_of, csv_dialect, list_arg, printable
from ._csv import COMPRESSED, DEFAULT_DIALECT, CsvDialect, starts_with_bom
from ._release import Roles
from ._stream import file_format

__all__ = ["ReleaseChoice", "add_release_options", "release_options", "na_arg", "print_roles",
           "role_notes", "formats", "local_jobs", "shows_progress", "bars", "stages"]


@dataclass(frozen=True)
class ReleaseChoice:
    """What the user said about the columns not protected: kept columns, keep the rest,
    and the text that means a missing value; and how the CSV files are written."""

    keep: list[str] | None
    keep_rest: bool
    na: list[str]
    dialect: CsvDialect = DEFAULT_DIALECT


#: The help of the release contract's options: to ``protect``, and to ``audit`` (which
#: takes them as the release was made with them).
_RELEASE_HELP = {
    "protect": {
        "keep": "columns released exactly as read although they are numeric or look numeric "
                "(an identifier, a weight); such a column neither protected nor kept stops "
                "the run",
        "keep_rest": "release every column that is not protected or a stratum exactly as "
                     "read, numeric or not (the explicit opt-out of that check)",
        "na": "text that means a missing value (e.g. --na refused,NA), besides an empty "
              "field: not counted as text when typing the columns"},
    "audit": {
        "keep": "columns released unchanged on purpose",
        "keep_rest": "every other column (not protected, not a stratum) was released "
                     "unchanged on purpose, as protect --keep-rest releases it",
        "na": "text that means a missing value in the input, as given to protect --na "
              "(e.g. --na refused,NA)"},
}


def add_release_options(m: argparse.ArgumentParser, command: str = "protect") -> None:
    """``--keep``, ``--keep-rest`` and ``--na``: the explicit choices of the release
    contract, as ``command`` (``"protect"`` or ``"audit"``) reads them."""
    helps = _RELEASE_HELP[command]
    m.add_argument("--keep", metavar="COL[,COL]", help=helps["keep"])
    m.add_argument("--keep-rest", action="store_true", help=helps["keep_rest"])
    m.add_argument("--na", metavar="TEXT[,TEXT]", help=helps["na"])


def release_options(args: argparse.Namespace, csv_files: Sequence[Path | None], *,
                    csv_input: Path | None = None) -> ReleaseChoice:
    """What the options say of the release; ``csv_files``: the run's CSV files (``None``:
    standard input or output), whose names may say the delimiter; ``csv_input``: the
    input, if a CSV file, whose byte-order mark a CSV release repeats."""
    dialect = csv_dialect(args, csv_files)
    if starts_with_bom(csv_input):
        dialect = dataclasses.replace(dialect, bom=True)
    return ReleaseChoice(keep=list_arg(args.keep, "--keep"), keep_rest=bool(args.keep_rest),
                         na=na_arg(args.na), dialect=dialect)


def na_arg(text: str | None) -> list[str]:
    """``--na`` as a list of the texts that mean a missing value (none if not given)."""
    return list_arg(text, "--na", "or leave it out: an empty value is read as missing without it",
                    what="missing-value text") or []


def print_roles(roles: Roles, err: Any, fmts: tuple[str, str]) -> None:
    """The columns protected, kept and passed through, and the notes (:func:`role_notes`),
    on ``err``. The names are the file's: each line is shown
    :func:`~microagg._cli_io.printable`."""
    def say(line: str) -> None:
        print(printable(line), file=err)

    say(f"microagg: protected {len(roles.protect)} column(s): "
        f"{', '.join(map(str, roles.protect))}")
    if roles.keep:
        say(f"microagg: kept unchanged: {', '.join(map(str, roles.keep))}")
    if roles.strata:
        say(f"microagg: strata, released as their unit's key (a merged small stratum's "
            f"rows under the key of the stratum it joined): "
            f"{', '.join(map(str, roles.strata))}")
    say(f"microagg: passed through unchanged: {', '.join(map(str, roles.passed)) or 'none'}")
    for note in role_notes(roles, fmts):
        say(f"microagg: note: {note}")


def role_notes(roles: Roles, fmts: tuple[str, str]) -> list[str]:
    """The notes on the columns' roles, and, from CSV to Parquet (``fmts``), that the
    unprotected columns are stored as text."""
    text = [*roles.keep, *roles.strata, *roles.passed]
    if fmts != ("csv", "parquet") or not text:
        return list(roles.notes)
    return [*roles.notes,
            f"the Parquet output stores the columns not protected as text, exactly as the "
            f"CSV wrote them ({', '.join(map(str, text[:5]))}{', ...' if len(text) > 5 else ''}"
            "); where a number is needed, convert after reading (pandas: pd.to_numeric)"]


def formats(args: argparse.Namespace, source: Path | None, out: Path | None
            ) -> tuple[str, str]:
    """Input and output formats; Parquet to standard output, and a compressed Parquet
    name (``.parquet.gz``: Parquet compresses inside the file), are errors."""
    fin, fout = file_format(source, args.format), file_format(out, args.format)
    compressed = [source is not None and source.suffix.lower() in COMPRESSED,
                  compression_of(out) is not None]
    for path, packed in zip((source, out), compressed, strict=True):
        if path is not None and packed and file_format(path.with_suffix(""), None) == "parquet":
            raise ValueError(f"{path.name}: Parquet is compressed inside the file (snappy); "
                             f"name it {path.with_suffix('').name}, without "
                             f"{path.suffix}")
    if out is None and fout == "parquet":
        raise ValueError("Parquet is not written to standard output: give the output file "
                         "with -o OUT.parquet")
    return fin, fout


def local_jobs(args: argparse.Namespace) -> int | None:
    """The local processes that protect the run: ``--jobs``, one without it (and in
    memory); ``None`` for the workers of a Dask cluster (``--scheduler``)."""
    if getattr(args, "scheduler", None) is not None:
        return None
    return int(getattr(args, "jobs", None) or 1)


def shows_progress(flag: bool | None) -> bool:
    """Whether ``--progress`` / ``--no-progress`` (``flag``; ``None``: neither) asks for
    progress on stderr: by default when stderr is a terminal."""
    return flag if flag is not None else sys.stderr.isatty()


def bars(flag: bool | None) -> Callable[..., Any]:
    """A maker of tqdm bars on stderr: always (``--progress``), never, or on a terminal
    after a second (the default, so short runs print nothing)."""
    from tqdm import tqdm

    enabled = shows_progress(flag)

    def make(*, total: int | None, desc: str, unit: str, **options: Any) -> Any:
        return tqdm(total=total, desc=desc, unit=f" {unit}", file=sys.stderr,
                    disable=not enabled, delay=0 if flag else 1.0, leave=bool(flag),
                    dynamic_ncols=True, **options)

    return make


@contextmanager
def stages(flag: bool | None, names: tuple[str, ...]) -> Iterator[Callable[..., None]]:
    """A bar on stderr (shown as :func:`bars` says) naming the stage a run is in.

    ``step()`` starts the next of ``names`` (``step("mdav, k=3")``: with that detail in
    brackets). A stage that cannot report its own progress (one compiled call, say)
    shows at least what runs.
    """
    later = iter(names[1:])
    with bars(flag)(total=len(names), desc=names[0], unit="stage", mininterval=0,
                     bar_format="{desc}: {n_fmt}/{total_fmt} stages done [{elapsed}]") as bar:
        def step(detail: str = "") -> None:
            name = next(later)
            bar.set_description_str(f"{name} ({detail})" if detail else name, refresh=False)
            bar.update(1)  # the stage before is over (redrawn at once, after the bar's delay)
        yield step
        bar.set_description_str("done", refresh=False)
        bar.update(1)
