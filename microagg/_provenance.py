"""The provenance record of a release: what ``microagg protect --report FILE`` writes.

A disclosure review board's record of how a release was made (:class:`Provenance`): the
package and what it ran on (:func:`microagg.reproductions.environment`), the input and the
release (with the SHA-256 of the file written), the method and every option it ran with
(defaults filled in from the registry, :func:`microagg._methods.resolved_options`; those
given and a seed drawn at random named), the run's options that shape the release
(:class:`RunRecord`: the CSV dialect, ``--na``, ``--keep-rest``, ``--jobs`` or
``--scheduler``), the columns' roles and notes, the result and the audit.

The record, as JSON, field by field (:class:`Provenance`; ``null`` where a value does not
apply)::

    microagg        {component: version}: the package (version, code digest), Python, ...
    created         UTC, ISO 8601
    input           {name, format, rows}
    output          {name, format, sha256}
    method, k       the method's name and k
    options         {option: value}: every option of the method, as it ran
    options_given   [option]: those given on the command line
    options_drawn   [option]: those drawn at random (the hybrid's seed, when none given)
    standardize     groups built on z-scores (not --no-standardize)
    run             {csv: {delimiter, decimal, encoding, bom, quoting, line_end} or null,
                     na: [text], keep_rest, jobs, scheduler}
    columns         {protected, kept, strata, passed, notes}: names, never values
    result          {groups, smallest, largest, information_loss, sse, sst, strata}
    audit           {passed, smallest, rows}

It holds no value of the input: column names, counts, group sizes, summary statistics of
the whole release (IL, SSE, SST) and the release's hash only, besides the options as the
user gave them (the ``--na`` texts among them). Strata are numbered, never
named (their keys are values of the file): stratum ``i`` is the ``i``-th in the order the
run protects them, unit ``u`` the ``u``-th unit of the output. With many strata the record
stays small: totals, and the first :data:`LISTED` units and merged strata.

The report file is checked at start-up as the output is
(:func:`microagg._cli_io.output_target`), written in a private folder beside it once the
release has passed its audit, and published under its name after the release
(:func:`pending_report`): a failed or interrupted run leaves no report.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import hashlib
import json
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._audit import ReleaseAudit
from ._cli_io import (
    atomic_target,
    compression_of,
    open_output,
    output_target,
    run_folder,
    same_file,
)
from ._cli_options import ReleaseChoice, local_jobs, role_notes
from ._csv import ENCODING, LINE_END, QUOTING
from ._methods import resolved_options
from ._release import Roles, note_without_values

__all__ = ["LISTED", "InputRecord", "OutputRecord", "CsvRecord", "RunRecord", "ColumnsRecord",
           "UnitRecord", "MergedStratum", "StrataRecord", "ResultRecord", "AuditRecord",
           "Provenance", "report_target", "memory_result", "stream_result", "run_record",
           "release_record", "to_json", "pending_report", "file_sha256"]

#: How many units, and merged strata, a report lists one by one (the rest are counted).
LISTED = 1000


@dataclass(frozen=True)
class InputRecord:
    """The input: its name as given (``-``: standard input), format and rows read."""

    name: str
    format: str
    rows: int


@dataclass(frozen=True)
class OutputRecord:
    """The release: its name as given (``-``: standard output), format, and the SHA-256 of
    the file written (as compressed; ``None`` for standard output)."""

    name: str
    format: str
    sha256: str | None


@dataclass(frozen=True)
class CsvRecord:
    """The dialect of the run's CSV files, as the run resolved it (``--delimiter``, or the
    files' names; ``--decimal``): the character between fields, the decimal mark, the
    encoding, whether the release starts with a byte-order mark (as its input does), how
    it quotes (:data:`microagg._csv.QUOTING`) and the line end."""

    delimiter: str
    decimal: str
    encoding: str
    bom: bool
    quoting: str
    line_end: str


@dataclass(frozen=True)
class RunRecord:
    """The run's options that shape the release besides the method's: the CSV dialect
    (``None`` if neither file is CSV), the texts ``--na`` reads as missing (given by the
    user, not read from the input), ``--keep-rest``, and where the strata were protected:
    ``jobs`` local processes (1 in memory), or ``None`` and the ``scheduler``'s address
    of a Dask cluster."""

    csv: CsvRecord | None
    na: list[str]
    keep_rest: bool
    jobs: int | None
    scheduler: str | None


@dataclass(frozen=True)
class ColumnsRecord:
    """The columns by role, as the run printed them, and its notes (without the values
    some of them quote: :func:`microagg._release.note_without_values`)."""

    protected: list[str]
    kept: list[str]
    strata: list[str]
    passed: list[str]
    notes: list[str]


@dataclass(frozen=True)
class UnitRecord:
    """One unit of a run by strata: its number, how many strata it joins (its own and the
    small ones merged into it), its rows and groups, and its IL on its own z-scores."""

    unit: int
    strata: int
    rows: int
    groups: int
    smallest: int
    largest: int
    information_loss: float | None


@dataclass(frozen=True)
class MergedStratum:
    """A small stratum (by number) and the unit it was protected with."""

    stratum: int
    unit: int


@dataclass(frozen=True)
class StrataRecord:
    """A run by strata: the strata, the units, the small strata merged (the first
    :data:`LISTED`), and each unit's result (the first :data:`LISTED`)."""

    strata: int
    units: int
    small_strata: str
    merged: int
    merged_strata: list[MergedStratum]
    merged_omitted: int
    per_unit: list[UnitRecord]
    per_unit_omitted: int


@dataclass(frozen=True)
class ResultRecord:
    """The groups of the release and its information loss (IL in %, SSE and SST on the
    whole table, z-scores when standardising; ``None`` where the sums overflow); for a
    run by strata, its :class:`StrataRecord`."""

    groups: int
    smallest: int
    largest: int
    information_loss: float | None
    sse: float | None
    sst: float | None
    strata: StrataRecord | None = None


@dataclass(frozen=True)
class AuditRecord:
    """The release audit: passed (a release that fails it is not written), the fewest rows
    sharing a released combination, and the rows audited."""

    passed: bool
    smallest: int
    rows: int


@dataclass(frozen=True)
class Provenance:
    """The record of one release, written as JSON in this order of fields.

    ``microagg``: :func:`microagg.reproductions.environment` as ``component: version``
    (the package's version and code digest, Python, numpy, pandas, ...); ``created``: UTC,
    ISO 8601; ``options``: every option of the method as it ran
    (:func:`microagg._methods.resolved_options`): those given (named in
    ``options_given``), a seed drawn (named in ``options_drawn``), the others at their
    defaults (:attr:`microagg._methods.Method.defaults`, from ``microagg/_defaults.py``)
    or, where the default is "chosen from k" (the hybrid's ``K``, IV-MDAV's
    ``candidates``), as the method chose them; ``engine`` ``"auto"`` picks the engine by
    the number of records, and every engine gives the same groups. ``run``: the run's
    other options that shape the release (:class:`RunRecord`).
    """

    microagg: dict[str, str]
    created: str
    input: InputRecord
    output: OutputRecord
    method: str
    k: int
    options: dict[str, Any]
    options_given: list[str]
    options_drawn: list[str]
    standardize: bool
    run: RunRecord
    columns: ColumnsRecord
    result: ResultRecord
    audit: AuditRecord


def report_target(name: str | None, *, source: Path | None, out: Path | None,
                  force: bool = False) -> Path | None:
    """The report file of ``--report`` (``None``: none asked for), checked at start-up as
    the output is (:func:`microagg._cli_io.output_target`): not the input, not the output
    ``out``, not a folder, in a folder that exists, not over a file unless ``force``."""
    if name == "-":
        raise ValueError("--report writes a file, not standard output: give its name, e.g. "
                         "--report release.json")
    report = output_target(name, source, force, stdin=True, role="report", flag="--report")
    if report is not None and out is not None and same_file(report, out):
        raise ValueError(f"refusing to write the report over the output file {out}: choose "
                         "another report file with --report")
    return report


def _number(value: Any) -> float | None:
    """``value`` as a float, ``None`` if not finite (JSON has no NaN or infinity)."""
    value = float(value)
    return value if math.isfinite(value) else None


def memory_result(info: Any) -> ResultRecord:
    """The result of a run in memory, from its :class:`microagg.MicroaggregationInfo`."""
    sizes = info.group_sizes
    return ResultRecord(groups=int(info.n_groups), smallest=int(sizes.min()),
                        largest=int(sizes.max()), information_loss=_number(info.information_loss),
                        sse=_number(info.sse), sst=_number(info.sst))


def stream_result(report: dict[str, Any], *, policy: str) -> ResultRecord:
    """The result of a run by strata, from the report of
    :func:`microagg._stream.protect_stream`; ``policy``: the small-strata policy."""
    plan, summaries = report["plan"], report["summaries"]
    merged = [MergedStratum(stratum=int(i), unit=u) for u, unit in enumerate(plan.units)
              for i in unit[1:]]
    units = [UnitRecord(unit=u, strata=len(unit), rows=int(plan.sizes[unit].sum()),
                        groups=int(s.groups), smallest=int(s.smallest), largest=int(s.largest),
                        information_loss=_number(s.information_loss))
             for u, (unit, s) in enumerate(zip(plan.units[:LISTED], summaries, strict=False))]
    strata = StrataRecord(strata=len(plan.keys), units=len(plan.units), small_strata=policy,
                          merged=len(merged), merged_strata=merged[:LISTED],
                          merged_omitted=max(0, len(merged) - LISTED), per_unit=units,
                          per_unit_omitted=len(plan.units) - len(units))
    return ResultRecord(groups=sum(int(s.groups) for s in summaries),
                        smallest=min(int(s.smallest) for s in summaries),
                        largest=max(int(s.largest) for s in summaries),
                        information_loss=_number(report["information_loss"]),
                        sse=_number(report["sse"]), sst=_number(report["sst"]), strata=strata)


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of the file ``path``, in hexadecimal."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def run_record(args: argparse.Namespace, *, fmts: tuple[str, str], choice: ReleaseChoice
               ) -> RunRecord:
    """The options of ``microagg protect`` (``args``) that shape the release besides the
    method's, as the run resolved them (``choice``, its dialect as the files were written).

    Examples
    --------
    >>> args = argparse.Namespace(jobs=None, scheduler=None)
    >>> choice = ReleaseChoice(keep=None, keep_rest=False, na=["NA"])
    >>> run = run_record(args, fmts=("csv", "parquet"), choice=choice)
    >>> run.csv.delimiter, run.csv.encoding, run.na, run.jobs
    (',', 'utf-8', ['NA'], 1)
    >>> run_record(args, fmts=("parquet", "parquet"), choice=choice).csv is None
    True
    """
    dialect = choice.dialect
    csv = (CsvRecord(delimiter=dialect.delimiter, decimal=dialect.decimal, encoding=ENCODING,
                     bom=bool(dialect.bom), quoting=QUOTING, line_end=LINE_END)
           if "csv" in fmts else None)
    return RunRecord(csv=csv, na=[str(t) for t in choice.na], keep_rest=bool(choice.keep_rest),
                     jobs=local_jobs(args), scheduler=getattr(args, "scheduler", None))


def release_record(args: argparse.Namespace, *, fmts: tuple[str, str], params: dict[str, Any],
                   roles: Roles, choice: ReleaseChoice, rows: int, result: ResultRecord,
                   audit: ReleaseAudit, release: str | None) -> Provenance:
    """The record of the release ``microagg protect`` (``args``) has written and audited:
    ``rows`` read, ``params`` the method options given (and a seed drawn), ``choice`` what
    the options said of the release, ``release`` the written file to hash (``None``: it
    goes to standard output)."""
    from .reproductions import environment

    listed = environment()
    options = resolved_options(args.method, int(args.k), params)
    given = [name for name in options if getattr(args, name, None) is not None]
    return Provenance(
        microagg=dict(zip(listed["component"], listed["version"], strict=True)),
        created=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        input=InputRecord(name=args.input, format=fmts[0], rows=int(rows)),
        output=OutputRecord(name=args.output or "-", format=fmts[1],
                            sha256=None if release is None else file_sha256(release)),
        method=args.method, k=int(args.k), options=options, options_given=given,
        options_drawn=[name for name in options if name in params and name not in given],
        standardize=not args.no_standardize, run=run_record(args, fmts=fmts, choice=choice),
        columns=ColumnsRecord(
            protected=[str(c) for c in roles.protect], kept=[str(c) for c in roles.keep],
            strata=[str(c) for c in roles.strata], passed=[str(c) for c in roles.passed],
            notes=[note_without_values(n) for n in role_notes(roles, fmts)]),
        result=result,
        audit=AuditRecord(passed=bool(audit.passed), smallest=int(audit.smallest),
                          rows=int(audit.rows)))


def to_json(record: Any) -> str:
    """A record (a :class:`Provenance`, or any of its parts) as indented JSON, its fields
    in their order, ending in a newline.

    Examples
    --------
    >>> print(to_json(AuditRecord(passed=True, smallest=3, rows=6)), end="")
    {
      "passed": true,
      "smallest": 3,
      "rows": 6
    }
    """
    return json.dumps(dataclasses.asdict(record), indent=2, ensure_ascii=False,
                      allow_nan=False) + "\n"


@contextmanager
def pending_report(path: Path | None, *, force: bool = False
                   ) -> Iterator[Callable[[Provenance], None] | None]:
    """Where a run hands its record (``None`` if no report is asked for): written at once
    into a private folder beside ``path`` (UTF-8, compressed as the name says, as the
    output is), then published under its name when the block ends without error, after
    the release (:func:`microagg._cli_io.atomic_target`; ``force``: over an existing
    file). A failed or interrupted run leaves no report and no temporary file."""
    if path is None:
        yield None
        return
    with run_folder(path) as folder, atomic_target(path, folder, force=force) as tmp:
        def write(record: Provenance) -> None:
            with open_output(tmp, compression_of(path)) as fh:
                fh.write(to_json(record))

        yield write
