r"""Ours beside published: one comparison, one paper-like layout, and the ledger of all cells.

Every published cell gets one status from one vocabulary (``STATUSES``, decided by
:func:`~microagg.reproductions.cell_status`): exact, close, consistent, recreated data
(inside or outside our spread), differs (with a reason), input.

Book: :ref:`page-ledger`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from .. import published
from .._methods import list_methods
from ._entries import ENTRIES, get_entry, run
from ._registry import KEYS
from ._status import (
    CLOSE,
    EXACT,
    MIN_DRAWS,
    MIN_RUNS,
    RECREATED,
    STATUSES,
    cell_status,
    status_summary,
)

__all__ = ["EXACT", "CLOSE", "STATUSES", "compare", "ivmdav_table1", "paper_layout", "ledger",
           "ledger_counts", "ledger_summary", "ledger_shortfalls"]


def _published_cells(name: str) -> pd.DataFrame:
    entry = get_entry(name)
    if not entry.tables:
        return pd.DataFrame(columns=[*KEYS, "published", "decimals", "note"])
    pub = published.table(entry.paper, list(entry.tables))
    pub = pub.rename(columns={"value": "published"})
    return pub[[*KEYS, "published", "decimals", "note", "table"]]


def _recreated_reason(row: pd.Series, reasons: Callable[[pd.Series], str] | None) -> str:
    if (row["status"] == RECREATED[1] and reasons is not None and row["runs"] > 1
            and float(row["ours_sd"]) == 0):  # every re-draw agrees: not the re-creation
        return (f"the same in all {int(row['runs'])} re-draws of our re-creation, so the "
                f"re-drawn data do not explain the gap: {reasons(row)}")
    if row["status"] == "differs":
        return (f"the paper's data were never published: ours come from only {int(row['runs'])} "
                f"re-draws of our re-creation, fewer than the {MIN_DRAWS} whose spread the "
                f"recreated-data status needs")
    where = "inside" if row["status"] == RECREATED[0] else "outside"
    return (f"the paper's data were never published: ours over {int(row['runs'])} re-draws "
            f"of our re-creation; the published value lies {where} their spread")


def compare(name: str, *, ours: pd.DataFrame | None = None, quick: bool | None = None,
            progress: bool = True) -> pd.DataFrame:
    """Published beside ours for the registry entry ``name``, one row per published cell.

    ``ours`` defaults to :func:`run` at the paper's settings. Columns: the key columns of
    ``data/published``, ``published``, ``ours``, ``difference`` (ours - published),
    ``rel_diff_pct``, ``status`` (a key of ``STATUSES``), ``match`` (status is exact),
    ``ours_sd``, ``runs`` and ``ours_runs`` (spread, number and values of the seeded runs or
    re-draws), ``reason`` (for cells that differ or use re-created data), ``section`` (the
    book section that discusses the table) and ``evidence`` (the label of the figure of our
    runs against the published value where there are several runs, else the section).
    ``.attrs["settings"]`` says which settings ran. Entries with no published numbers
    (figure data) return our cells with empty published columns.

    Book: :ref:`page-ledger`.

    Parameters
    ----------
    name : str
        A registry entry (:func:`microagg.reproductions.list_reproductions`).
    ours : pandas.DataFrame, optional
        Our cells, as :func:`run` returns them for ``name``; default: computed now by
        :func:`run` (with ``quick`` and ``progress``, which are otherwise unused).
    quick : bool, optional
        ``True`` runs the entry's reduced settings (only the heavy entries, the genetic
        Table 2 and GOMM's, have them; the others run the paper's either way), ``False``
        the paper's; default ``None``: reduced only when ``MICROAGG_QUICK=1``
        (:func:`microagg.reproductions.quick_mode`).
    progress : bool, default True
        Show progress bars of the long computations (the GA and GOMM runs).

    Returns
    -------
    pandas.DataFrame
        The columns above, starting with ``reproduction`` (the entry's name).

    Examples
    --------
    >>> cmp = compare("genetic-table1", progress=False)
    >>> cmp["status"].tolist()
    ['input', 'input', 'input', 'input']
    """
    entry = get_entry(name)
    ours = run(name, quick=quick, progress=progress) if ours is None else ours
    pub = _published_cells(name)
    ours = ours.assign(k=pd.array(ours["k"], dtype="Int64"))
    merged = (pub.merge(ours, on=KEYS, how="left", suffixes=("", "_ours"), validate="one_to_one")
              if len(pub) else ours.assign(published=np.nan, note="", table=""))
    merged["difference"] = merged["ours"] - merged["published"]
    merged["rel_diff_pct"] = 100.0 * merged["difference"] / merged["published"]
    for column, fill in (("ours_sd", 0.0), ("runs", 1), ("ours_runs", "")):
        merged[column] = merged[column].fillna(fill) if column in merged else fill
    merged["runs"] = merged["runs"].astype(int)
    if len(pub):
        merged["status"] = [cell_status(r, inputs=entry.inputs, recreated=entry.recreated,
                                        restated=entry.restated)
                            for _, r in merged.iterrows()]
    else:
        merged["status"] = ""
    merged["match"] = merged["status"].eq("exact")
    differs = merged["status"].eq("differs")
    merged["reason"] = ""
    if entry.reasons is not None and differs.any():
        merged.loc[differs, "reason"] = [entry.reasons(r) for _, r in merged[differs].iterrows()]
    recreated = merged["status"].isin(RECREATED) | (differs & merged["dataset"].isin(
        entry.recreated))
    if recreated.any():
        merged.loc[recreated, "reason"] = [_recreated_reason(r, entry.reasons)
                                           for _, r in merged[recreated].iterrows()]
    merged["section"] = entry.section
    merged["evidence"] = np.where(merged["runs"].gt(1) & bool(entry.evidence), entry.evidence,
                                  entry.section)
    merged.insert(0, "reproduction", entry.name)
    merged.attrs["settings"] = ours.attrs.get("settings", {})
    return merged.drop(columns=[c for c in merged.columns if c.endswith("_ours")])


#: Width of each sticky row-label column of :func:`paper_layout` (CSS pixels): room for
#: "water-treatment" at the table's type size; longer labels wrap within it.
_LABEL_PX = 112


def paper_layout(cmp: pd.DataFrame, *, index: list[str] | None = None, columns: str = "k",
                 values: tuple[str, ...] = ("ours", "published", "diff %"),
                 digits: int = 4) -> Any:
    """Lay a :func:`compare` result out like the paper's table, row labels pinned.

    Rows are ``index`` (default: data set and method, plus ``parameters`` and ``metric``
    where they vary), columns the values of ``columns`` (default ``k``), each split into
    ``values`` (our number, the published one and the relative difference in percent).
    Methods show their registry labels; ours is bold where the cell is exact. The result is
    a pandas ``Styler`` whose row labels stay visible when a wide table scrolls sideways.

    Book: :ref:`page-ledger`.

    Parameters
    ----------
    cmp : pandas.DataFrame
        A :func:`compare` result (or rows of one, e.g. of :func:`ledger`).
    index : list of str, optional
        Columns of ``cmp`` that label the rows, outermost first; default ``["dataset",
        "method"]`` plus ``"parameters"`` and ``"metric"`` where they take more than one
        value.
    columns : str, default "k"
        The column of ``cmp`` whose values head the column groups, in order of first
        appearance.
    values : tuple of str, default ("ours", "published", "diff %")
        The columns of each group, in order: columns of ``cmp``, or ``"diff %"`` (its
        ``rel_diff_pct``).
    digits : int, default 4
        Decimals shown for every value but ``"diff %"``, which shows three and a sign.

    Returns
    -------
    pandas.io.formats.style.Styler
        Its ``.data`` is the laid-out table: index ``index``, columns a ``MultiIndex``
        of (value of ``columns``, one of ``values``).

    Examples
    --------
    The GA settings of the genetic paper's Table 1, one row per setting:

    >>> table = paper_layout(compare("genetic-table1", progress=False), index=["metric"],
    ...                      columns="method")
    >>> table.data.index.tolist()
    ['chromosomes', 'mutation_rate', 'crossover_rate', 'iterations']
    >>> table.data.columns.tolist()
    [('ga', 'ours'), ('ga', 'published'), ('ga', 'diff %')]
    >>> list(table.data.columns.names)  # the header names what the columns are
    ['method', None]
    """
    labels = list_methods().set_index("name")["label"]
    long = cmp.assign(**{"diff %": cmp["rel_diff_pct"],
                         "exact": cmp["status"].eq("exact").astype(float),
                         "method": cmp["method"].map(lambda m: labels.get(m, m))})
    if index is None:
        index = ["dataset", "method"] + [c for c in ("parameters", "metric")
                                         if long[c].nunique() > 1]
    wide = long.pivot_table(index=index, columns=columns, values=[*values, "exact"],
                            aggfunc="first", sort=False)
    keys = list(pd.unique(long[columns]))
    exact = wide["exact"].reindex(columns=keys).fillna(0).astype(bool)
    wide = wide.drop(columns="exact", level=0).swaplevel(0, 1, axis=1)
    wide = wide.reindex(columns=pd.MultiIndex.from_product([keys, list(values)],
                                                           names=[columns, None]))

    def bold(col: pd.Series) -> list[str]:
        key, what = col.name
        return ["font-weight: bold" if what == "ours" and e else "" for e in exact[key]]

    fmt = {c: (lambda v: "" if pd.isna(v) else f"{v:+.3f}") if c[1] == "diff %"
           else f"{{:.{digits}f}}" for c in wide.columns}
    return (wide.style.format(fmt, na_rep="").apply(bold, axis=0)
            .set_sticky(axis="index", pixel_size=_LABEL_PX)
            .set_table_attributes('class="ma-paper-table"'))


def ivmdav_table1(*, methods: tuple[str, ...] | None = None) -> pd.DataFrame:
    """:func:`compare` for the IV-MDAV paper's Table 1, optionally only some methods.

    Book: :ref:`chap-ivmdav`.

    Parameters
    ----------
    methods : tuple of str, optional
        Registry names of the methods to keep, of ``"mdav"``, ``"mdav_single"``,
        ``"vmdav"`` and ``"ivmdav"``; default all four.

    Returns
    -------
    pandas.DataFrame
        The rows of ``compare("ivmdav-table1")`` for those methods, numbered from 0.
    """
    cmp = compare("ivmdav-table1")
    return cmp if methods is None else cmp[cmp["method"].isin(methods)].reset_index(drop=True)


def ledger(*, quick: bool | None = None, progress: bool = True) -> pd.DataFrame:
    """Every published cell of every registry entry, ours beside it, with its status.

    One row per cell of ``data/published`` that a results table answers (the ad-hoc
    groupings are attribute lists, not numbers, and are not cells). The same frame is
    written by ``microagg reproduce all --csv FILE`` and shown on the ledger page.

    Book: :ref:`page-ledger`.

    Parameters
    ----------
    quick : bool, optional
        ``True`` runs the entry's reduced settings (only the heavy entries, the genetic
        Table 2 and GOMM's, have them; the others run the paper's either way), ``False``
        the paper's; default ``None``: reduced only when ``MICROAGG_QUICK=1``
        (:func:`microagg.reproductions.quick_mode`).
    progress : bool, default True
        Show progress bars of the long computations (the GA and GOMM runs).

    Returns
    -------
    pandas.DataFrame
        Columns ``reproduction, table, dataset, method, k, parameters, metric, published,
        ours, difference, rel_diff_pct, status, ours_sd, runs, ours_runs, reason, section,
        evidence, note`` (as in :func:`compare`); ``.attrs["settings"]`` maps each
        reproduction to the settings that ran.
    """
    frames = [compare(name, quick=quick, progress=progress) for name, e in ENTRIES.items()
              if e.tables]
    out = pd.concat(frames, ignore_index=True)
    columns = ["reproduction", "table", *KEYS, "published", "ours", "difference",
               "rel_diff_pct", "status", "ours_sd", "runs", "ours_runs", "reason", "section",
               "evidence", "note"]
    out = out[columns]
    out.attrs["settings"] = {f.iloc[0]["reproduction"]: f.attrs.get("settings", {})
                             for f in frames}
    return out


def ledger_counts(ledger_frame: pd.DataFrame) -> dict[str, int]:
    """Number of cells per status (every key of ``STATUSES``, in its order) and in all
    (``cells``).

    Book: :ref:`page-ledger`.

    Parameters
    ----------
    ledger_frame : pandas.DataFrame
        Compared cells with a ``status`` column, as :func:`ledger` or :func:`compare`
        returns them; every status must be a key of ``STATUSES`` (else ``ValueError``).

    Returns
    -------
    dict of str to int
        Status name -> number of cells, every status (0 included), then ``"cells"``.

    Examples
    --------
    The counts of one comparison (:func:`ledger` gives every cell):

    >>> counts = ledger_counts(compare("genetic-table1", progress=False))
    >>> counts["input"], counts["cells"], list(counts)[:3]
    (4, 4, ['exact', 'close', 'consistent'])
    """
    unknown = set(ledger_frame["status"]) - set(STATUSES)
    if unknown:
        raise ValueError(f"statuses outside the vocabulary: {sorted(unknown)}")
    counts = {s: int((ledger_frame["status"] == s).sum()) for s in STATUSES}
    counts["cells"] = int(len(ledger_frame))
    return counts


def ledger_summary(ledger_frame: pd.DataFrame) -> str:
    """One sentence counting the statuses of a :func:`ledger`: the ledger page and the
    command line print it.

    Book: :ref:`page-ledger`.

    Parameters
    ----------
    ledger_frame : pandas.DataFrame
        Compared cells with a ``status`` column, as for :func:`ledger_counts`.

    Returns
    -------
    str

    Examples
    --------
    >>> ledger_summary(compare("genetic-table1", progress=False)).split("; ")[1]
    '4 further cells are settings used as given (4 cells in all)'
    """
    return status_summary(ledger_counts(ledger_frame))


def ledger_shortfalls(ledger_frame: pd.DataFrame) -> list[str]:
    """One sentence per reproduction whose runs fall short of what a status needs.

    A cell on re-created data needs ``MIN_DRAWS`` re-draws for the status *recreated
    data*, and a cell of a seeded reproduction (one with ``seeds`` in its registry settings)
    ``MIN_RUNS`` runs to be called *consistent*; with fewer, a cell that does not match
    is *differs*, with that reason. Read from the ``runs`` of the ledger's cells, so it says
    what ran. The ledger page and ``microagg reproduce`` print it.

    Book: :ref:`page-ledger`.

    Parameters
    ----------
    ledger_frame : pandas.DataFrame
        Compared cells with columns ``reproduction`` (registry names), ``status``,
        ``dataset`` and ``runs``, as :func:`ledger` returns them; ``"input"`` cells are
        left out.

    Returns
    -------
    list of str
        One sentence per reproduction that falls short, in order of first appearance;
        empty if none does.

    Examples
    --------
    >>> cells = pd.DataFrame({"reproduction": "genetic-table2", "status": "differs",
    ...                       "dataset": ["scattered", "clustered", "census"],
    ...                       "runs": [3, 3, 1]})
    >>> import textwrap
    >>> print(textwrap.fill(ledger_shortfalls(cells)[0], 80))
    genetic-table2 ran 3 re-draws of scattered and clustered (the recreated-data
    status needs 20) and 1 run on census (consistent needs 10)
    """
    out = []
    results = ledger_frame[ledger_frame["status"] != "input"]
    for name, cells in results.groupby("reproduction", sort=False):
        entry = get_entry(name)
        short = []
        redrawn = cells["dataset"].isin(entry.recreated)
        if redrawn.any() and cells.loc[redrawn, "runs"].min() < MIN_DRAWS:
            fewest = int(cells.loc[redrawn, "runs"].min())
            short.append(f"{fewest} re-draw{'s' * (fewest != 1)} of "
                         f"{_listed(cells.loc[redrawn, 'dataset'])} (the recreated-data "
                         f"status needs {MIN_DRAWS})")
        seeded = "seeds" in entry.paper_settings and (~redrawn).any()
        if seeded and cells.loc[~redrawn, "runs"].min() < MIN_RUNS:
            fewest = int(cells.loc[~redrawn, "runs"].min())
            short.append(f"{fewest} run{'s' * (fewest != 1)} on "
                         f"{_listed(cells.loc[~redrawn, 'dataset'])} (consistent needs "
                         f"{MIN_RUNS})")
        if short:
            out.append(f"{name} ran {' and '.join(short)}")
    return out


def _listed(names: pd.Series) -> str:
    """``a``, ``a and b``, ``a, b and c``: the distinct names in order of appearance."""
    seen = list(dict.fromkeys(str(n) for n in names))
    return seen[0] if len(seen) == 1 else f"{', '.join(seen[:-1])} and {seen[-1]}"
