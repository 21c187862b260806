"""``microagg protect`` for large files: formats, strata, jobs, a cluster, progress.

The options added to ``protect`` (:func:`add_options`) and the stratified run
(:func:`protect_by_strata`), which streams the file through :mod:`microagg._stream`:
one unit (a stratum, with any small strata merged into it) in memory at a time, on
``--jobs`` local processes or the workers of a Dask cluster (``--scheduler``), with a
progress bar and a report on standard error.

Every temporary file (the spill, the units' files, the output before it is
published) lives in the run's private folder (:func:`microagg._cli_io.run_folder`).
The local worker processes ignore Ctrl-C (the main process handles it and ends them)
and end when the main process ends, however it ends: on Linux the kernel kills them
(``PR_SET_PDEATHSIG``), elsewhere they watch the main process's id.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import ctypes
import multiprocessing
import multiprocessing.resource_tracker
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from ._audit import check_release
from ._cli_io import (
    atomic_target,
    compression_of,
    csv_dialect,
    guard,
    list_arg,
    open_output,
    run_folder,
    signals_held,
)
from ._csv import COMPRESSED, DEFAULT_DIALECT, CsvDialect, blank_names
from ._defaults import SMALL_STRATA_POLICY
from ._entry import SIGNALS
from ._protect import check_call
from ._release import FILE_ROWS, Roles
from ._strata import SMALL_STRATA, check_policy
from ._stream import (
    FORMATS,
    StreamSettings,
    file_format,
    lean_memory,
    merge_lines,
    profile_file,
    protect_stream,
    require_pyarrow,
    stored_index,
)

__all__ = ["add_options", "check_options", "protect_by_strata", "formats",
           "add_release_options", "release_options", "ReleaseChoice", "print_roles", "stages",
           "shows_progress"]


@dataclass(frozen=True)
class ReleaseChoice:
    """What the user said about the columns not protected: kept columns, keep the rest,
    and the text that means a missing value; and how the CSV files are written."""

    keep: list[str] | None
    keep_rest: bool
    na: list[str]
    dialect: CsvDialect = DEFAULT_DIALECT


def add_release_options(m: argparse.ArgumentParser) -> None:
    """``--keep``, ``--keep-rest`` and ``--na``: the explicit choices of the release contract."""
    m.add_argument("--keep", metavar="COL[,COL]",
                   help="columns released exactly as read although they are numeric or look "
                   "numeric (an identifier, a weight); such a column neither protected nor "
                   "kept stops the run")
    m.add_argument("--keep-rest", action="store_true",
                   help="release every column that is not protected or a stratum exactly as "
                   "read, numeric or not (the explicit opt-out of that check)")
    m.add_argument("--na", metavar="TEXT[,TEXT]",
                   help="text that means a missing value (e.g. --na refused,NA), besides an "
                   "empty field: not counted as text when typing the columns")


def release_options(args: argparse.Namespace, csv_files: Sequence[Path | None]
                    ) -> ReleaseChoice:
    """What the options say of the release; ``csv_files``: the run's CSV files (``None``:
    standard input or output), whose names may say the delimiter."""
    return ReleaseChoice(keep=list_arg(args.keep, "--keep"), keep_rest=bool(args.keep_rest),
                         na=list_arg(args.na, "--na", what="missing-value text") or [],
                         dialect=csv_dialect(args, csv_files))


def print_roles(roles: Roles, err: Any, fmts: tuple[str, str]) -> None:
    """The columns protected, kept and passed through, and the notes, on ``err``; from
    CSV to Parquet (``fmts``), that the unprotected columns are stored as text."""
    print(f"microagg: protected {len(roles.protect)} column(s): "
          f"{', '.join(map(str, roles.protect))}", file=err)
    if roles.keep:
        print(f"microagg: kept unchanged: {', '.join(map(str, roles.keep))}", file=err)
    if roles.strata:
        print(f"microagg: strata, released as their unit's key (a merged small stratum's "
              f"rows under the key of the stratum it joined): "
              f"{', '.join(map(str, roles.strata))}", file=err)
    print(f"microagg: passed through unchanged: {', '.join(map(str, roles.passed)) or 'none'}",
          file=err)
    for note in roles.notes:
        print(f"microagg: note: {note}", file=err)
    text = [*roles.keep, *roles.strata, *roles.passed]
    if fmts == ("csv", "parquet") and text:
        print(f"microagg: note: the Parquet output stores the columns not protected as text, "
              f"exactly as the CSV wrote them ({', '.join(map(str, text[:5]))}"
              f"{', ...' if len(text) > 5 else ''}); where a number is needed, convert after "
              "reading (pandas: pd.to_numeric)", file=err)


def add_options(m: argparse.ArgumentParser) -> None:
    """The options of ``protect`` for formats, strata, parallel runs and progress."""
    g = m.add_argument_group("large files and strata")
    g.add_argument("--format", choices=FORMATS, default=None,
                   help="format of the input and output files (default: Parquet for names "
                   "ending in .parquet, .pq or .parq, CSV otherwise)")
    g.add_argument("--strata", metavar="COL[,COL]",
                   help="protect each stratum (each combination of these columns' values) "
                   "on its own, streaming the file one stratum at a time; strata columns are "
                   "released as their stratum's key (unchanged, but a merged small stratum "
                   "under the key of the stratum it joined); the output is grouped by unit")
    g.add_argument("--small-strata", choices=list(SMALL_STRATA), default=None,
                   help="a stratum with fewer than k records: 'error' (default) names it, "
                   "'merge' protects it with the stratum of nearest centroid (reported)")
    g.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="protect strata on N local processes (with --strata; default 1)")
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="protect strata on the workers of a running Dask cluster, e.g. "
                   "tcp://10.0.0.5:8786 (with --strata; needs microagg[dask])")
    g.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show progress on stderr: the stage of the run (reading, checking "
                   "the columns, microaggregating, writing, auditing) and, with --strata, a "
                   "stratum counter (default: on a terminal, for runs longer than a second)")


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


def check_options(args: argparse.Namespace) -> list[str] | None:
    """The strata named by ``--strata``; options that need strata without it are errors."""
    strata = list_arg(args.strata, "--strata")
    needs = [flag for flag, value in (("--small-strata", args.small_strata),
                                      ("--jobs", args.jobs), ("--scheduler", args.scheduler))
             if value is not None]
    if strata is None and needs:
        verb = "applies" if len(needs) == 1 else "apply"
        raise ValueError(f"{', '.join(needs)} {verb} to a run by strata: add --strata COL")
    if args.jobs is not None and args.jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {args.jobs}")
    if args.jobs is not None and args.scheduler is not None:
        raise ValueError("--jobs and --scheduler exclude each other: local processes, or "
                         "the workers of a cluster")
    return strata


def protect_by_strata(args: argparse.Namespace, source: Path | None, out: Path | None,
                      fmts: tuple[str, str], params: dict[str, Any], columns: Any,
                      strata: list[str], choice: ReleaseChoice) -> int:
    """Stream ``source`` stratum by stratum into ``out`` (or stdout) and report on stderr.

    The columns' roles are decided on a first pass over the whole file
    (:func:`microagg._stream.profile_file`) before anything is written. The spill, the
    units and the output are written in one private folder; the output is audited
    (:func:`microagg.audit`) and published under its name (or copied to standard
    output) only when the run succeeds.
    """
    if source is None or not source.is_file():
        shown = "standard input (-)" if source is None else f"{source} (not a regular file)"
        raise ValueError(f"--strata reads its input more than once, so it cannot read "
                         f"{shown}: save the input to a file first, or leave out --strata")
    lean_memory()
    as_profiled = _stamp(source)
    with stages(args.progress, ("checking columns",)):  # a pass over the whole file
        empty, profiles = profile_file(source, fmts[0], na=choice.na, dialect=choice.dialect)
    stored = (stored_index(require_pyarrow("reading Parquet").parquet.read_schema(source))
              if fmts[0] == "parquet" else [])
    _, roles = check_call(empty, args.method, columns, params, strata, keep=choice.keep,
                          keep_rest=choice.keep_rest, profiles=profiles, index=FILE_ROWS,
                          stored_index=stored)
    settings = StreamSettings(
        k=args.k, method=args.method, params=params, columns=roles.protect,
        strata=roles.strata, policy=check_policy(args.small_strata or SMALL_STRATA_POLICY),
        standardize=not args.no_standardize, na=tuple(choice.na), dialect=choice.dialect,
        blank=(blank_names(source, str(source), choice.dialect) if fmts[0] == "csv"
               else frozenset()))
    with run_folder(out) as folder, _executor(args, folder) as (executor, window, remote), \
            atomic_target(out, folder, force=args.force) as tmp:
        with _output(tmp, fmts[1], compression_of(out)) as target:
            report = protect_stream(source, fmts[0], target, fmts[1], settings,
                                    executor=executor, window=window, remote=remote,
                                    progress=_bars(args.progress), workdir=folder)
        # the release audit, on what was written, before it is named (or copied to stdout)
        with stages(args.progress, ("auditing",)):
            check_release(source, tmp, args.k, roles, fmts, choice.dialect,
                          progress=shows_progress(args.progress), na=tuple(choice.na))
        if _stamp(source) != as_profiled:  # the roles were decided on what it held then
            raise ValueError(f"{source} changed while it was being read (its size or times of "
                             "change differ from the first pass's, which decided what each "
                             "column is): nothing was written; run again once the file is "
                             "complete")
    _report(args, settings, roles, report, fmts)
    return 0


def _stamp(source: Path) -> tuple[int, int, int, int]:
    """What tells the file ``source`` has changed: its size, modification time, status
    change time (which no program can set back, as ``touch -d`` sets the other) and
    inode."""
    st = source.stat()
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


@contextmanager
def _executor(args: argparse.Namespace, folder: Path
              ) -> Iterator[tuple[cf.Executor | None, int, bool]]:
    """``(executor, units in flight, remote)``: none, local processes, or a Dask cluster.

    Local processes are ended at once on an interrupt, and by the run folder's watchdog
    if this process is killed (:func:`microagg._cli_io.guard`).
    """
    if args.scheduler is not None:
        try:
            from distributed import Client
        except ImportError:
            raise ImportError("--scheduler needs Dask's distributed scheduler, which is not "
                              "installed: pip install microagg[dask]") from None
        # connection timeout: Dask's distributed.comm.timeouts.connect (30 s by default)
        with Client(args.scheduler) as client:
            threads = max(1, sum(client.nthreads().values()))
            yield client.get_executor(pure=False), 2 * threads, True
        return
    jobs = args.jobs or 1
    if jobs == 1:
        yield None, 1, False
        return
    spawn = multiprocessing.get_context("spawn")  # no fork of a process running threads
    # started first: starting it unblocks SIGINT and SIGTERM in this thread
    multiprocessing.resource_tracker.ensure_running()
    with signals_held():  # the pool's processes start with Ctrl-C held back
        pool = cf.ProcessPoolExecutor(max_workers=jobs, mp_context=spawn,
                                      initializer=worker_start, initargs=(os.getpid(),))
        for _ in range(jobs):  # every worker started now (one per task submitted)
            pool.submit(int)
        guard(folder, list(_processes(pool)))
    try:
        yield pool, jobs + 1, False  # one unit waiting, so no worker idles while we write
    except Exception:
        pool.shutdown(wait=True)  # the units running have been waited for
        raise
    except BaseException:  # an interrupt: the workers end now, their units unfinished
        for process in _processes(pool).values():
            process.kill()
        pool.shutdown(wait=True)
        raise
    pool.shutdown(wait=True)


def _processes(pool: cf.ProcessPoolExecutor) -> dict[int, Any]:
    """The pool's worker processes by id (``ProcessPoolExecutor`` keeps them, unnamed)."""
    return dict(getattr(pool, "_processes", None) or {})


def worker_start(parent: int) -> None:
    """Set up a worker process: Ctrl-C is left to the main process, the worker ends when
    the main process ends (however it ends), and freed memory goes back to the system."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)  # held back while starting
    if not _die_with_parent():
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # the main process ended before the line above
        os._exit(1)
    lean_memory()


#: ``prctl`` option: the signal a process gets when its parent ends (``linux/prctl.h``).
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> bool:
    """Ask Linux to kill this process when its parent ends; ``False`` elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


@contextmanager
def _output(tmp: str, fmt: str, compression: str | None) -> Iterator[Any]:
    """What the units are written to: the temporary file's name (Parquet), or the file
    opened as text (CSV, compressed as the output's name says)."""
    if fmt == "parquet":
        yield tmp
    else:
        fh: IO[str]
        with open_output(tmp, compression) as fh:
            yield fh


def shows_progress(flag: bool | None) -> bool:
    """Whether ``--progress`` / ``--no-progress`` (``flag``; ``None``: neither) asks for
    progress on stderr: by default when stderr is a terminal."""
    return flag if flag is not None else sys.stderr.isatty()


def _bars(flag: bool | None) -> Callable[..., Any]:
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
    """A bar on stderr (shown as :func:`_bars` says) naming the stage a run is in.

    ``step()`` starts the next of ``names`` (``step("mdav, k=3")``: with that detail in
    brackets). A stage that cannot report its own progress (one compiled call, say)
    shows at least what runs.
    """
    later = iter(names[1:])
    with _bars(flag)(total=len(names), desc=names[0], unit="stage", mininterval=0,
                     bar_format="{desc}: {n_fmt}/{total_fmt} stages done [{elapsed}]") as bar:
        def step(detail: str = "") -> None:
            name = next(later)
            bar.set_description_str(f"{name} ({detail})" if detail else name, refresh=False)
            bar.update(1)  # the stage before is over (redrawn at once, after the bar's delay)
        yield step
        bar.set_description_str("done", refresh=False)
        bar.update(1)


def _report(args: argparse.Namespace, settings: StreamSettings, roles: Roles,
            report: dict[str, Any], fmts: tuple[str, str]) -> None:
    err = sys.stderr
    plan, summaries = report["plan"], report["summaries"]
    print_roles(roles, err, fmts)
    print(f"microagg: {len(plan.keys)} strata by {', '.join(settings.strata)} (sizes "
          f"{plan.sizes.min()}..{plan.sizes.max()}), {len(plan.merged)} merged, protected "
          "as units in stratum order; the output is grouped by unit (a stratum with the "
          "small strata merged into it, released under its key), rows of a unit in input "
          "order: to compare it with the input row by row, read both indexed by an "
          "identifier column", file=err)
    for line in merge_lines(plan, settings.strata):
        print(f"microagg: {line}", file=err)
    ils = [s.information_loss for s in summaries]
    whole = report["information_loss"]
    shown = (f"IL = {whole:.4f}% of the whole table" if np.isfinite(whole) else
             "IL of the whole table not computed (values beyond about 1e154 overflow its "
             "sums, and below about 1e-154 underflow them)")
    print(f"{args.method}, k={args.k}: {sum(s.groups for s in summaries)} groups, sizes "
          f"{min(s.smallest for s in summaries)}..{max(s.largest for s in summaries)}, "
          f"{shown} (within strata {min(ils):.4f}..{max(ils):.4f}%)", file=err)
