r"""Ours beside published: one comparison, one paper-like layout, and the ledger of all cells.

Every published cell gets a status:

* **exact**: within 0.01 % of the printed value, or equal to it at the precision the paper
  printed (a number printed with two decimals cannot be matched more closely than its last
  digit; the precision is read off the transcribed number, so ``768`` means 0 decimals);
* **close**: within 2 %;
* **differs**: further away; the cell carries a one-line reason and the book section that
  discusses it;
* **input**: a setting the paper states and the book runs with (GA parameters, score
  weights, the V-MDAV paper's scattered/clustered labels): reported back as used, not a
  result.

Book: :ref:`page-ledger`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .. import published
from .._methods import list_methods
from ._entries import ENTRIES, get_entry, run
from ._registry import KEYS

__all__ = ["EXACT", "CLOSE", "STATUSES", "compare", "ivmdav_table1", "paper_layout", "ledger",
           "ledger_counts"]

#: Relative differences (in percent) under which a cell is exact, or close.
EXACT, CLOSE = 0.01, 2.0
#: The statuses, best first.
STATUSES = ("exact", "close", "differs", "input")


def _published_cells(name: str) -> pd.DataFrame:
    entry = get_entry(name)
    if not entry.tables:
        return pd.DataFrame(columns=[*KEYS, "published", "note"])
    pub = published.table(entry.paper, list(entry.tables))
    pub = pub.rename(columns={"value": "published"})
    return pub[[*KEYS, "published", "note", "table"]]


def _printed_decimals(value: float) -> int:
    """Decimals of a published number as transcribed (``768`` -> 0, ``4.71`` -> 2)."""
    if float(value).is_integer():
        return 0
    text = repr(float(value))
    return len(text.split(".")[1]) if "e" not in text else 12


def _status(row: pd.Series, inputs: tuple[str, ...]) -> str:
    if row["metric"] in inputs:
        return "input"
    ours, pub = row["ours"], row["published"]
    if pd.isna(ours):
        return "differs"
    rel = abs(ours - pub) / abs(pub) * 100.0 if pub != 0 else (0.0 if ours == 0 else np.inf)
    decimals = _printed_decimals(pub)
    printed = np.isclose(round(float(ours), decimals), pub, rtol=0,
                         atol=10.0 ** -(decimals + 6))
    if rel <= EXACT or printed:
        return "exact"
    return "close" if rel <= CLOSE else "differs"


def compare(name: str, *, ours: pd.DataFrame | None = None, quick: bool | None = None,
            progress: bool = True) -> pd.DataFrame:
    """Published beside ours for the registry entry ``name``, one row per published cell.

    ``ours`` defaults to :func:`run` at the paper's settings. Columns: the key columns of
    ``data/published``, ``published``, ``ours``, ``difference`` (ours - published),
    ``rel_diff_pct``, ``status`` (``exact``/``close``/``differs``/``input``), ``match``
    (status is exact), ``ours_sd`` and ``runs`` (spread over seeded runs), ``reason`` (for
    cells that differ) and ``section`` (the book section that discusses the table).
    ``.attrs["settings"]`` says which settings ran. Entries with no published numbers
    (figure data) return our cells with empty published columns.

    Book: :ref:`page-ledger`.

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
    if len(pub):
        merged["status"] = [_status(r, entry.inputs) for _, r in merged.iterrows()]
    else:
        merged["status"] = ""
    merged["match"] = merged["status"].eq("exact")
    for column, fill in (("ours_sd", 0.0), ("runs", 1)):
        merged[column] = merged[column].fillna(fill) if column in merged else fill
    differs = merged["status"].eq("differs")
    merged["reason"] = ""
    if entry.reasons is not None and differs.any():
        merged.loc[differs, "reason"] = [entry.reasons(r) for _, r in merged[differs].iterrows()]
    merged["section"] = entry.section
    merged.insert(0, "reproduction", entry.name)
    merged.attrs["settings"] = ours.attrs.get("settings", {})
    return merged.drop(columns=[c for c in merged.columns if c.endswith("_ours")])


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

    Examples
    --------
    The GA settings of the genetic paper's Table 1, one row per setting:

    >>> table = paper_layout(compare("genetic-table1", progress=False), index=["metric"],
    ...                      columns="method")
    >>> table.data.index.tolist()
    ['chromosomes', 'mutation_rate', 'crossover_rate', 'iterations']
    >>> table.data.columns.tolist()
    [('ga', 'ours'), ('ga', 'published'), ('ga', 'diff %')]
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
    wide = wide.reindex(columns=pd.MultiIndex.from_product([keys, list(values)]))

    def bold(col: pd.Series) -> list[str]:
        key, what = col.name
        return ["font-weight: bold" if what == "ours" and e else "" for e in exact[key]]

    fmt = {c: (lambda v: "" if pd.isna(v) else f"{v:+.3f}") if c[1] == "diff %"
           else f"{{:.{digits}f}}" for c in wide.columns}
    return (wide.style.format(fmt, na_rep="").apply(bold, axis=0)
            .set_sticky(axis="index").set_table_attributes('class="ma-paper-table"'))


def ivmdav_table1(*, methods: tuple[str, ...] | None = None) -> pd.DataFrame:
    """:func:`compare` for the IV-MDAV paper's Table 1, optionally only some methods.

    Book: :ref:`chap-ivmdav`.
    """
    cmp = compare("ivmdav-table1")
    return cmp if methods is None else cmp[cmp["method"].isin(methods)].reset_index(drop=True)


def ledger(*, quick: bool | None = None, progress: bool = True) -> pd.DataFrame:
    """Every published cell of every registry entry, ours beside it, with its status.

    One row per cell of ``data/published`` that a results table answers (the ad-hoc
    groupings are attribute lists, not numbers, and are not cells). The same frame is
    written by ``microagg reproduce all --csv FILE`` and shown on the ledger page.

    Book: :ref:`page-ledger`.
    """
    frames = [compare(name, quick=quick, progress=progress) for name, e in ENTRIES.items()
              if e.tables]
    out = pd.concat(frames, ignore_index=True)
    columns = ["reproduction", "table", *KEYS, "published", "ours", "difference",
               "rel_diff_pct", "status", "ours_sd", "runs", "reason", "section", "note"]
    out = out[columns]
    out.attrs["settings"] = {f.iloc[0]["reproduction"]: f.attrs.get("settings", {})
                             for f in frames}
    return out


def ledger_counts(ledger_frame: pd.DataFrame) -> dict[str, int]:
    """Number of cells per status (``exact``, ``close``, ``differs``, ``input``) and in all.

    Book: :ref:`page-ledger`.

    Examples
    --------
    The counts of one comparison (:func:`ledger` gives every cell):

    >>> ledger_counts(compare("genetic-table1", progress=False))
    {'exact': 0, 'close': 0, 'differs': 0, 'input': 4, 'cells': 4}
    """
    counts = {s: int((ledger_frame["status"] == s).sum()) for s in STATUSES}
    counts["cells"] = int(len(ledger_frame))
    return counts
