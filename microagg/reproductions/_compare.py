r"""Ours beside published: one comparison, one paper-like layout, and the ledger of all cells.

Every published cell gets a status:

* **exact**: within 0.01 % of the printed value, or equal to it at the precision the paper
  printed (a two-decimal number cannot be matched more closely than its last digit);
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


def _status(row: pd.Series, decimals: int | None, inputs: tuple[str, ...]) -> str:
    if row["metric"] in inputs:
        return "input"
    ours, pub = row["ours"], row["published"]
    if pd.isna(ours):
        return "differs"
    rel = abs(ours - pub) / abs(pub) * 100.0 if pub != 0 else (0.0 if ours == 0 else np.inf)
    printed = decimals is not None and np.isclose(round(float(ours), decimals), pub,
                                                  rtol=0, atol=10.0 ** -(decimals + 6))
    if rel <= EXACT or printed or (float(pub).is_integer() and ours == pub):
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
    >>> cmp = compare("genetic-table1")  # doctest: +SKIP
    >>> cmp["status"].tolist()  # doctest: +SKIP
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
        merged["status"] = [_status(r, entry.decimals, entry.inputs) for _, r in merged.iterrows()]
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


def paper_layout(cmp: pd.DataFrame, *, index: list[str] | None = None,
                 columns: str = "k", values: tuple[str, ...] = ("published", "ours"),
                 digits: int = 4) -> Any:
    """Lay a :func:`compare` result out like the paper's table, row labels pinned.

    Rows are ``index`` (default: data set, method and metric), columns the values of
    ``columns`` (default ``k``), each with the published number, ours and (when both are
    shown) the difference in percent. The result is a pandas ``Styler`` whose row labels
    stay visible when a wide table scrolls (sticky index), so it reads on a phone too.

    Book: :ref:`page-ledger`.
    """
    index = index or [c for c in ("dataset", "method", "parameters", "metric")
                      if c in cmp and cmp[c].nunique() > 1 or c in ("dataset", "method")]
    long = cmp.assign(**{"diff %": cmp["rel_diff_pct"]})
    shown = [*values, "diff %"] if set(values) >= {"published", "ours"} else list(values)
    wide = long.pivot_table(index=index, columns=columns, values=shown, aggfunc="first",
                            sort=False)
    wide = wide.reorder_levels([1, 0], axis=1)
    order = pd.unique(cmp[columns])
    wide = wide.reindex(columns=pd.MultiIndex.from_product([order, shown]))
    return (wide.style.format(precision=digits, na_rep="")
            .set_sticky(axis="index")
            .set_table_attributes('class="ma-paper-table"'))


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
    """
    counts = {s: int((ledger_frame["status"] == s).sum()) for s in STATUSES}
    counts["cells"] = int(len(ledger_frame))
    return counts
