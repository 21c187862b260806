"""Command-line interface: ``microagg`` (or ``python -m microagg``).

Sub-commands, one function each::

    microagg info                         versions, numba, the data files and their checksums
    microagg data [--source DIR | --download] [--dest DIR]
                                          copy (or download) and verify the reference data
    microagg protect IN.csv -k 3 [-o OUT.csv] [--force] [--method mdav] [--columns a,b]
                 [--strata COL[,COL]] [--small-strata merge] [--jobs N | --scheduler ADDR]
                 [--report FILE]
                                          microaggregate a CSV or Parquet table,
                                          optionally stratum by stratum
    microagg audit ORIGINAL RELEASED -k K [--strata COL[,COL]] [--columns a,b] [--keep c]
                                          check a release (by any tool) against its input
    microagg reproduce NAME|all [--csv FILE]
                                          regenerate a paper's table beside the
                                          published one (all: the whole ledger)

Every user error is one line on standard error and a non-zero exit status
(``--debug`` shows the traceback). An interrupt (Ctrl-C, SIGTERM, SIGHUP) is a clean
shutdown: one line, the temporary files removed, no output file, exit status 128 plus
the signal's number (130 for Ctrl-C, 143 for SIGTERM). File handling and the method options live in
:mod:`microagg._cli_io`; formats, strata, jobs and clusters in :mod:`microagg._cli_strata`;
the record of ``protect --report`` in :mod:`microagg._provenance`.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

from . import __version__
from ._audit import check_release
from ._cli_io import (
    add_csv_options,
    add_method_options,
    columns_arg,
    csv_dialect,
    damaged_input,
    disk_full,
    input_file,
    list_arg,
    method_params,
    one_line,
    output_target,
    printable,
    read_input,
    write_table,
)
from ._cli_options import (
    ReleaseChoice,
    add_release_options,
    formats,
    na_arg,
    print_roles,
    release_options,
    shows_progress,
    stages,
)
from ._cli_strata import add_options, check_options, protect_by_strata
from ._defaults import METHOD, SMALL_STRATA_POLICY
from ._entry import SIGNALS, interrupted
from ._methods import METHODS
from ._protect import check_call, protect_decided
from ._provenance import Provenance, memory_result, pending_report, release_record, report_target
from ._release import (
    FILE_ROWS,
    check_release_k,
    check_role_clash,
    profile_frame,
    protectable,
)
from ._stream import FORMATS, file_format
from ._validate import counted
from .reproductions._entries import ENTRIES

__all__ = ["main", "one_line_warning"]

#: The stages of ``microagg protect`` in memory, as its progress bar names them.
_STAGES = ("reading", "checking columns", "microaggregating", "writing", "auditing")
#: Columns ``microagg reproduce`` prints (the CSV has them all).
REPRODUCE_COLUMNS = ["dataset", "method", "k", "parameters", "metric", "published", "ours",
                     "rel_diff_pct", "runs", "status"]

DESCRIPTION = """microagg: microaggregation for statistical disclosure control.
Protect the numeric columns of a CSV or Parquet table (within strata, on local processes or
a Dask cluster), fetch and check the reference data sets, regenerate the papers' tables."""
EXAMPLES = """examples:
  microagg protect survey.csv -k 3 -o protected.csv
  microagg protect survey.csv -k 5 --method vmdav --gamma 1.1 --columns age,income -o out.csv
  microagg protect export.csv -k 3 --delimiter ';' --decimal , -o protected.csv
  microagg protect national.parquet -k 3 --strata region --jobs 4 -o protected.parquet
  microagg protect national.parquet -k 3 --strata region,wave --small-strata merge \\
      --scheduler tcp://scheduler:8786 -o protected.parquet
  microagg data --download
  microagg audit survey.csv protected.csv -k 3
  microagg reproduce ivmdav-table1
  microagg reproduce all --csv ledger.csv
"""


def _info_command(_: argparse.Namespace) -> int:
    from . import _datafiles
    from .reproductions import environment

    for component, version in environment().itertuples(index=False):
        print(f"{component}: {version}")
    print(f"data folder: {_datafiles.data_dir()}")
    print(f"download cache: {_datafiles.cache_dir()}")
    print("data files (SHA-256 checked now):")
    for row in _datafiles.file_status():
        print(f"  {row['status']:<13} {row['file']:<21} {row['where']}")
    from ._env import switch_problems, switch_values

    print("environment switches:")
    problems = switch_problems()
    for name, value, meaning in switch_values():
        print(f"  {name}={value}  ({meaning})")
        if name in problems:
            print(f"    problem: {problems[name]}")
    if problems:
        print(f"microagg: warning: {', '.join(problems)} set to a value the package does not "
              "understand (see above)", file=sys.stderr)
    return 0


def _data_command(args: argparse.Namespace) -> int:
    from . import datasets

    if args.download and args.source is not None:
        raise ValueError("--download and --source exclude each other: download the files, "
                         "or copy them from a folder")
    if args.download and args.dest is None:
        for fname, path in datasets.fetch().items():
            print(f"{fname}: verified, {path}")
        return 0
    source = None if args.download else (args.source or "../shared/data/raw")
    dest = datasets.install_raw(source, dest=args.dest)
    print(f"reference data verified in {dest}")
    return 0


def _protect_command(args: argparse.Namespace) -> int:
    check_release_k(args.k)  # before the input is read
    source = input_file(args.input)
    out = output_target(args.output, source, args.force, stdin=True)
    report = report_target(args.report, source=source, out=out, force=args.force)
    fmts = formats(args, source, out)
    params = method_params(args)
    columns = columns_arg(args.columns)
    strata = check_options(args)
    # (a stream by strata repeats the input file's byte-order mark as the options say;
    # in memory, the read says it, for a file or standard input alike)
    choice = release_options(args, [f for f, fmt in zip((source, out), fmts, strict=True)
                                    if fmt == "csv"],
                             csv_input=source if fmts == ("csv", "csv") and strata else None)
    check_role_clash(columns, choice.keep or [], strata or [])  # (before the long read)
    with pending_report(report, force=args.force) as record:  # (published after the release)
        if strata is not None:
            protect_by_strata(args, source, out, fmts, params, columns, strata, choice,
                              record=record)
        else:
            _protect_in_memory(args, source, out, fmts, params, columns, choice, record=record)
    if getattr(args, "seed", None) is None and "seed" in params:  # drawn by method_params
        print(f"microagg: note: no --seed given, so {args.method} ran with --seed "
              f"{params['seed']}: give it again to make this release again", file=sys.stderr)
    return 0


def _protect_in_memory(args: argparse.Namespace, source: Path | None, out: Path | None,
                       fmts: tuple[str, str], params: dict[str, Any], columns: list[str] | None,
                       choice: ReleaseChoice, *,
                       record: Callable[[Provenance], None] | None = None) -> None:
    """``microagg protect`` without strata: the whole table in memory, stage by stage;
    ``record`` gets the release's provenance once it has passed its audit (``--report``)."""
    dialect = choice.dialect
    decimal = dialect.decimal if fmts[0] == "csv" else "."  # (text in Parquet: a point)
    with stages(args.progress, _STAGES) as step:
        read = read_input(source, fmts[0], dialect)
        df = read.frame
        if fmts == ("csv", "csv") and read.bom:  # (the input's mark: known once read)
            dialect = dataclasses.replace(dialect, bom=True)
        step()
        profiles = profile_frame(df, na=choice.na, text_numbers=fmts[0] == "csv",
                                 decimal=decimal)
        spec, roles = check_call(df, args.method, columns, params, keep=choice.keep,
                                 keep_rest=choice.keep_rest, profiles=profiles,
                                 index=FILE_ROWS, stored_index=read.stored_index)
        step(f"{args.method}, k={args.k}")
        # (the roles decided once, on the file as read with --na: not again on the table)
        protected, info = protect_decided(
            protectable(df, roles.protect, na=choice.na, decimal=decimal), args.k, spec,
            roles, method=args.method, standardize=not args.no_standardize,
            small_strata=SMALL_STRATA_POLICY, return_info=True, params=params,
            progress=shows_progress(args.progress))
        step()

        def check(tmp: Any) -> None:
            step()
            audited = check_release(df, tmp, args.k, roles, (None, fmts[1]), dialect,
                                    progress=shows_progress(args.progress), na=tuple(choice.na))
            if record is not None:
                record(release_record(args, fmts=fmts, params=params, roles=roles,
                                      choice=dataclasses.replace(choice, dialect=dialect),
                                      rows=len(df), result=memory_result(info), audit=audited,
                                      release=None if out is None else tmp))

        write_table(protected, out, sys.stdout, fmts[1], force=args.force, check=check,
                    types=read.arrow_schema, changed=roles.protect, dialect=dialect,
                    blank=read.blank)
    print_roles(roles, sys.stderr, fmts)
    print(f"{args.method}, k={args.k}: {counted(info.n_groups, 'group')}, sizes "
          f"{info.group_sizes.min()}..{info.group_sizes.max()}, "
          f"IL = {info.information_loss:.4f}% (SSE {info.sse:.4f} / SST {info.sst:.4f})",
          file=sys.stderr)


def _audit_command(args: argparse.Namespace) -> int:
    from ._audit import audit

    check_release_k(args.k)
    files = [input_file(args.original, "original", stdin=False),
             input_file(args.released, "released", stdin=False)]
    fmts = (file_format(files[0], args.format), file_format(files[1], args.format))
    dialect = csv_dialect(args, [f for f, fmt in zip(files, fmts, strict=True) if fmt == "csv"])
    result = audit(files[0], files[1], args.k, strata=list_arg(args.strata, "--strata"),
                   columns=columns_arg(args.columns), keep=list_arg(args.keep, "--keep"),
                   keep_rest=args.keep_rest, na=na_arg(args.na), formats=fmts,
                   delimiter=dialect.delimiter, decimal=dialect.decimal,
                   progress=shows_progress(args.progress))

    def listed(cols: list) -> str:
        return ", ".join(map(str, cols)) or "none"

    print(printable(f"microagg: audited {result.rows} rows: protected "
                    f"{listed(result.protected)}; strata {listed(result.strata)}; kept "
                    f"{listed(result.kept)}; smallest released combination "
                    f"{counted(result.smallest, 'row')} (k={args.k})"), file=sys.stderr)
    for note in result.notes:
        print(printable(f"microagg: note: {note}"), file=sys.stderr)
    if not result.passed:
        raise ValueError("the release fails the audit: " + "; ".join(result.failures))
    print("microagg: the release passes the audit", file=sys.stderr)
    return 0


def _reproduce_command(args: argparse.Namespace) -> int:
    from . import reproductions

    out = output_target(args.csv, None, args.force, role="CSV", flag="--csv")
    quick = reproductions.quick_mode()
    if args.name == "all":
        print("microagg: recomputing every table at the papers' settings (the randomised ones "
              "10 to 20 times each: about half an hour with numba)"
              + (" -- MICROAGG_QUICK=1: reduced settings" if quick else ""),
              file=sys.stderr)
        table = reproductions.ledger()
    else:
        table = reproductions.compare(args.name)
        for key, value in table.attrs.get("settings", {}).items():
            print(f"microagg: setting {key} = {value}", file=sys.stderr)
    if out is not None:
        write_table(table, out, sys.stdout, force=args.force)
    else:
        shown = ["reproduction", *REPRODUCE_COLUMNS] if args.name == "all" else REPRODUCE_COLUMNS
        print(table[shown].round(4).to_string(index=False))
        reasons = table.loc[table["reason"].str.len() > 0].groupby("reason", sort=False).size()
        if len(reasons):
            print("\nwhy cells differ or use re-created data (number of cells: reason):")
        for reason, count in reasons.items():
            print(f"  {count}: {reason}")
    if args.name != "all" and not ENTRIES[args.name].tables:
        print(f"microagg: {args.name} has no published numbers to compare with (the paper "
              "shows it as a figure or in words): these are ours only", file=sys.stderr)
        return 0
    print(f"microagg: {reproductions.ledger_summary(table)}"
          + (" [reduced settings: MICROAGG_QUICK=1]" if quick else ""), file=sys.stderr)
    for short in reproductions.ledger_shortfalls(table):
        print(f"microagg: {short}: with fewer runs a cell that does not match is 'differs'",
              file=sys.stderr)
    return 0


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (with a pointer to ``--help``)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _audit_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    """The ``audit`` sub-command's arguments."""
    a = sub.add_parser("audit", parents=[common],
                       help="check a released file against its input (any tool's release)",
                       description="Check a release against its input, e.g. sdcMicro's output: "
                       "every released combination of strata and protected columns is shared "
                       "by at least k rows; no released column equals an input column that is "
                       "numeric or looks numeric unless it is kept, or each of its values is "
                       "shared by at least k rows (then it is k-anonymous on its own, and an "
                       "unchanged 0/1 flag passes); the row count and the kept columns equal "
                       "the input's. It checks what was released, not how (values set to any "
                       "row of their group pass too). Rows may be in any order. Exit status 0 "
                       "if every check passes, 2 naming the failed checks.")
    a.add_argument("original", help="the input file (CSV or Parquet)")
    a.add_argument("released", help="the released file (CSV or Parquet)")
    a.add_argument("-k", type=int, required=True, help="the promised minimum group size")
    a.add_argument("--strata", metavar="COL[,COL]", help="strata columns")
    a.add_argument("--columns", help="the protected columns (default: every input column "
                   "that is numeric or looks numeric, except strata and kept columns)")
    add_release_options(a, "audit")
    a.add_argument("--format", choices=FORMATS, default=None,
                   help="format of both files (default: from their names)")
    a.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="count the rows read on stderr, pass by pass (default: on a "
                   "terminal, for audits longer than a second)")
    add_csv_options(a)
    a.set_defaults(func=_audit_command)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="microagg", description=DESCRIPTION, epilog=EXAMPLES,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"microagg {__version__}",
                   help="print the version and exit")
    p.add_argument("--debug", action="store_true",
                   help="show the full traceback of an error")
    common = _Parser(add_help=False)  # only lends its arguments: never parses
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show the full traceback of an error")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND",
                           title="commands", help="what to do (COMMAND --help for more)")
    sub.add_parser("info", parents=[common],
                   help="versions, and the data files with their checksum status",
                   description="Versions, numba, and where each reference data file is, with "
                   "its SHA-256 checked now.").set_defaults(func=_info_command)

    d = sub.add_parser("data", parents=[common],
                       help="copy or download the reference data sets, verified",
                       description="Copy the reference data files from a folder (or download "
                       "them) and check each SHA-256 before it lands in the destination; a "
                       "file there with other content is replaced and kept beside it as "
                       "NAME.replaced-<sha>. Downloads honour HTTPS_PROXY, MICROAGG_DATA_URL "
                       "(a mirror), MICROAGG_CACHE and MICROAGG_OFFLINE=1 (none).")
    d.add_argument("--source", default=None,
                   help="folder holding the files as obtained (default: ../shared/data/raw)")
    d.add_argument("--download", action="store_true",
                   help="download missing files from their public sources into the user's "
                   "cache (and copy them into --dest if given)")
    d.add_argument("--dest", default=None,
                   help="target folder (default: $MICROAGG_DATA, else data/raw of the "
                   "checkout; with --download, none: the files stay in the cache)")
    d.set_defaults(func=_data_command)

    _protect_parser(sub, common)

    _audit_parser(sub, common)

    names = list(ENTRIES)
    r = sub.add_parser("reproduce", parents=[common],
                       help="regenerate a paper's table beside the published one",
                       description="Regenerate a table of the papers at the papers' settings "
                       "and compare it, cell by cell, with the published values (status "
                       "exact, close, consistent, recreated data inside/outside, differs or "
                       "input, and a reason for each difference). 'all' "
                       "gives the reproduction ledger: every published cell.")
    r.add_argument("name", choices=[*names, "all"], metavar="NAME|all",
                   help="a registry entry (" + ", ".join(names) + ") or all")
    r.add_argument("--csv", metavar="FILE",
                   help="write the whole comparison as CSV (one row per published cell, "
                   "with ours, status and reason) instead of printing it")
    r.add_argument("--force", action="store_true", help="replace FILE if it exists")
    r.set_defaults(func=_reproduce_command)
    return p


def _protect_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    """``microagg protect``: the file, k, the output and the release choices."""
    m = sub.add_parser("protect", parents=[common],
                       help="microaggregate the numeric columns of a CSV or Parquet table",
                       description="Microaggregate columns of a CSV or Parquet table: every "
                       "released combination of the strata and protected columns is shared by at "
                       "least k rows. A column that is numeric or looks numeric (numbers as text "
                       "in any row, timedeltas, nested numbers) must be protected or kept "
                       "(--keep), else the run stops naming it; roles are decided on the whole "
                       "file. The output is audited before it gets its name. The columns "
                       "protected, kept and passed through are reported on stderr. "
                       "With --strata each stratum is protected on its own and the file is "
                       "streamed, one stratum in memory at a time (on --jobs processes, or a "
                       "Dask cluster with --scheduler). Temporary files live in one private "
                       "folder beside the output, removed however the run ends; Ctrl-C, "
                       "SIGTERM or SIGHUP stop it cleanly (no output file; exit 130, 143, "
                       "129).")
    m.add_argument("input", help="CSV file with a header row (.csv.gz etc. decompressed), a "
                   "Parquet file, or - for standard input (not with --strata)")
    m.add_argument("-k", type=int, required=True, help="minimum group size (at least 2)")
    m.add_argument("-o", "--output",
                   help="output CSV or Parquet file (default, or -: CSV on standard output); "
                   "never the input file; a name ending in .gz, .bz2, .xz or .zst is "
                   "compressed so; it appears only when whole, never over an existing file "
                   "(even one another run just wrote) unless --force")
    m.add_argument("--force", action="store_true",
                   help="replace the output file (and the --report file) if it exists "
                   "(atomically)")
    m.add_argument("--report", metavar="FILE",
                   help="write a provenance record of the release to FILE as JSON once the "
                   "release is written and has passed its audit: versions, the files (the "
                   "release's SHA-256), method, k and every option it ran with (defaults "
                   "filled in; those given and a seed drawn named), the CSV dialect, --na, "
                   "--keep-rest, --jobs or --scheduler, the columns and notes, groups, IL, "
                   "SSE and SST, the audit; never a value of the input (strata by number, "
                   "not by key); checked at start-up as -o is")
    m.add_argument("--method", default=METHOD, choices=list(METHODS),
                   help="microaggregation method (default mdav); see microagg.list_methods()")
    m.add_argument("--columns", help="comma-separated columns to protect (default: every "
                   "numeric column, except strata, kept columns and a first column that is a "
                   "row index); in every list of names, a name holding a comma, a quote or "
                   "blanks at its ends goes in double quotes, as in a CSV line: "
                   "'\"income, gross\",age'")
    m.add_argument("--no-standardize", action="store_true",
                   help="build groups on raw values instead of z-scores")
    add_release_options(m)
    add_options(m)
    add_csv_options(m)
    add_method_options(m)
    m.set_defaults(func=_protect_command)


#: Errors of the user's making (bad values, files, options, a missing optional package such
#: as pyarrow or dask): one line, exit status 2.
USER_ERRORS = (ValueError, TypeError, OSError, LookupError, ImportError)


class Interrupted(BaseException):
    """A signal asked the run to stop (raised by the handler of :data:`SIGNALS`)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, frame: object) -> None:
    for sig in SIGNALS:  # a second Ctrl-C does not interrupt the cleaning up
        signal.signal(sig, signal.SIG_IGN)
    raise Interrupted(signum)


@contextmanager
def _clean_shutdown() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP raise :class:`Interrupted` while the block runs, so every
    ``finally`` runs (temporary files removed, workers ended); handlers restored after. A
    signal that is ignored when the block starts stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {sig: signal.getsignal(sig) for sig in SIGNALS}
    try:
        for sig, handler in before.items():
            if handler != signal.SIG_IGN:  # ignored (nohup, a script's background job): stays so
                signal.signal(sig, _stop)
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def one_line_warning(message: Warning | str, category: type[Warning], *_: Any,
                      **__: Any) -> None:
    """Print a warning as ``microagg: warning: ...`` on stderr (``--debug``: Python's form)."""
    print(printable(f"microagg: warning: {' '.join(str(message).split())}"), file=sys.stderr)


def _written(args: argparse.Namespace) -> tuple[Any, str]:
    """What the command writes and the option naming it (for :func:`disk_full`)."""
    if args.command == "data":
        return args.dest, "--dest"
    if args.command == "reproduce":
        return args.csv, "--csv"
    return getattr(args, "output", None), "-o"


def _stdout_to_devnull() -> None:
    """Point standard output at the null device, so that the interpreter's last flush
    does not fail again on the closed pipe (Python's documented way)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # (not a file: a test's capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _say(line: str) -> None:
    """Print the line that ends a run on standard error; a reader of it that has gone
    away (``2>&1 | head -c 1``) changes nothing: the exit status still says it."""
    try:
        print(printable(line), file=sys.stderr, flush=True)
    except BrokenPipeError:
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``microagg`` command."""
    args = _parser().parse_args(argv)
    try:
        with _clean_shutdown(), warnings.catch_warnings():
            if not args.debug:  # one line each, as the errors are
                warnings.showwarning = one_line_warning
            status = int(args.func(args))
            sys.stdout.flush()  # (here, so that a reader gone away is handled below)
            return status
    except BrokenPipeError:  # the reader of standard output left (| head): as cat, quietly
        _stdout_to_devnull()
        return 128 + int(getattr(signal, "SIGPIPE", 13))  # (13 where it has no name: Windows)
    except (KeyboardInterrupt, Interrupted) as err:
        signum = getattr(err, "signum", signal.SIGINT)
        _say(interrupted(signum))
        return 128 + int(signum)
    except Exception as err:
        if args.debug:
            raise
        damaged = damaged_input(err, [getattr(args, name, None) for name in
                                      ("input", "original", "released")])
        if damaged is not None:  # (before USER_ERRORS: bz2 and gzip raise OSErrors)
            _say(f"microagg: error: {damaged}")
            return 2
        full = disk_full(err, *_written(args))
        if full is not None:
            _say(f"microagg: error: {full}")
            return 2
        if isinstance(err, USER_ERRORS):
            _say(f"microagg: error: {one_line(err)}")
            return 2
        _say(f"microagg: internal error: {type(err).__name__}: {one_line(err)} (run again "
             "with --debug for the traceback, and please report it)")
        return 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
