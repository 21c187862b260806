"""``microagg protect`` by strata: the strata options, local jobs, a cluster, the report.

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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import numpy as np

from . import _cli_io
from ._audit import check_release
from ._cli_io import (
    atomic_target,
    compression_of,
    guard,
    list_arg,
    open_output,
    printable,
    run_folder,
    signals_held,
)
from ._cli_options import ReleaseChoice, bars, local_jobs, print_roles, shows_progress, stages
from ._csv import blank_names
from ._defaults import SMALL_STRATA_POLICY
from ._entry import SIGNALS
from ._protect import check_call
from ._provenance import Provenance, release_record, stream_result
from ._release import FILE_ROWS, Roles
from ._strata import SMALL_STRATA, check_policy
from ._stream import (
    FORMATS,
    StreamSettings,
    lean_memory,
    merge_lines,
    profile_file,
    protect_stream,
    require_pyarrow,
    stored_index,
)
from ._validate import counted

__all__ = ["add_options", "check_options", "protect_by_strata"]


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
                      strata: list[str], choice: ReleaseChoice, *,
                      record: Callable[[Provenance], None] | None = None) -> int:
    """Stream ``source`` stratum by stratum into ``out`` (or stdout) and report on stderr.

    The columns' roles are decided on a first pass over the whole file
    (:func:`microagg._stream.profile_file`) before anything is written. The spill, the
    units and the output are written in one private folder; the output is audited
    (:func:`microagg.audit`) and published under its name (or copied to standard
    output) only when the run succeeds. ``record`` gets the release's provenance once it
    has passed its audit (``--report``), before it is published.
    """
    if source is None or not source.is_file():
        shown = "standard input (-)" if source is None else f"{source} (not a regular file)"
        raise ValueError(f"--strata reads its input more than once, so it cannot read "
                         f"{shown}: save the input to a file first, or leave out --strata")
    lean_memory()
    as_profiled = _stamp(source)
    with bars(args.progress)(total=None, desc="checking columns", unit="rows",
                             unit_scale=True) as bar:  # a pass over the whole file
        empty, profiles = profile_file(source, fmts[0], na=choice.na, dialect=choice.dialect,
                                       bar=bar)
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
        with _output(tmp, fmts[1], compression_of(out), choice.dialect.bom) as target:
            report = protect_stream(source, fmts[0], target, fmts[1], settings,
                                    executor=executor, window=window, remote=remote,
                                    progress=bars(args.progress), workdir=folder)
        # the release audit, on what was written, before it is named (or copied to stdout)
        with stages(args.progress, ("auditing",)):
            audited = check_release(source, tmp, args.k, roles, fmts, choice.dialect,
                                    progress=shows_progress(args.progress), na=tuple(choice.na))
        if _stamp(source) != as_profiled:  # the roles were decided on what it held then
            raise ValueError(f"{source} changed while it was being read (its size or times of "
                             "change differ from the first pass's, which decided what each "
                             "column is): nothing was written; run again once the file is "
                             "complete")
        if record is not None:
            record(release_record(args, fmts=fmts, params=params, roles=roles, choice=choice,
                                  rows=int(report["stats"]["n"].sum()),
                                  result=stream_result(report, policy=settings.policy),
                                  audit=audited, release=None if out is None else tmp))
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
    jobs = local_jobs(args)
    if jobs is None:  # (a cluster: --scheduler)
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
    if jobs == 1:
        yield None, 1, False
        return
    spawn = multiprocessing.get_context("spawn")  # no fork of a process running threads
    if not _cli_io.WINDOWS:  # (a POSIX helper process; Windows has none to start)
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
def _output(tmp: str, fmt: str, compression: str | None, bom: bool) -> Iterator[Any]:
    """What the units are written to: the temporary file's name (Parquet), or the file
    opened as text (CSV, compressed as the output's name says, with a byte-order mark if
    ``bom``)."""
    if fmt == "parquet":
        yield tmp
    else:
        fh: IO[str]
        with open_output(tmp, compression, bom=bom) as fh:
            yield fh


def _report(args: argparse.Namespace, settings: StreamSettings, roles: Roles,
            report: dict[str, Any], fmts: tuple[str, str]) -> None:
    err = sys.stderr
    plan, summaries = report["plan"], report["summaries"]
    print_roles(roles, err, fmts)
    print(printable(f"microagg: {len(plan.keys)} strata by {', '.join(settings.strata)} "
                    f"(sizes {plan.sizes.min()}..{plan.sizes.max()}), {len(plan.merged)} "
                    "merged, protected as units in stratum order; the output is grouped by "
                    "unit (a stratum with the small strata merged into it, released under its "
                    "key), rows of a unit in input order: to compare it with the input row by "
                    "row, read both indexed by an identifier column"), file=err)
    for line in merge_lines(plan, settings.strata):  # (the strata's keys, from the file)
        print(printable(f"microagg: {line}"), file=err)
    ils = [s.information_loss for s in summaries]
    whole = report["information_loss"]
    shown = (f"IL = {whole:.4f}% of the whole table" if np.isfinite(whole) else
             "IL of the whole table not computed (values beyond about 1e154 overflow its "
             "sums, and below about 1e-154 underflow them)")
    groups = counted(sum(s.groups for s in summaries), "group")
    print(f"{args.method}, k={args.k}: {groups}, sizes "
          f"{min(s.smallest for s in summaries)}..{max(s.largest for s in summaries)}, "
          f"{shown} (within strata {min(ils):.4f}..{max(ils):.4f}%)", file=err)
