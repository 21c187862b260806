"""The papers' published numbers, as tidy tables.

Every number a chapter compares against comes from here, never from a literal
typed into a chapter or into the package. The numbers were transcribed once,
by hand, from the papers' tables into ``data/published/*.csv`` (one file per
paper table; ``data/published/README.md`` lists the sources, the conventions
and every garbled or ambiguous cell with the reading chosen).

Each CSV row is one printed cell, with the columns

``paper, table, dataset, method, k, parameters, metric, value, note``

Paper keys: ``"ivmdav"`` (Rawat and Borah, IV-MDAV), ``"vmdav"`` (Solanas and
Martinez-Balleste, V-MDAV), ``"genetic"`` (Martinez-Balleste et al., the
MDAV + GA hybrid) and ``"gomm"`` (the GOMM paper). Table keys are strings:
``"1"``, ``"2"``, ... for numbered tables, ``"sec4.2"`` and the like for
numbers the paper gives in the text of a section. Integers are accepted
wherever a table key is expected.

The information loss printed by the papers is

.. math::

    \\mathrm{IL} = 100\\,\\frac{\\mathrm{SSE}}{\\mathrm{SST}},

which for standardised data (population standard deviation) has
:math:`\\mathrm{SST} = n p`; ``tests/test_published.py`` uses this to check the
transcription of the IV-MDAV table.

The folder is found in this order: the environment variable
``MICROAGG_PUBLISHED``; the package's own ``_published`` folder (in the
checkout a symbolic link to ``data/published``, in an installed wheel a copy);
``data/published`` next to the package in a checkout.

Used by the "Reproducing Table N" section of every chapter that reproduces a
paper's table (the V-MDAV, IV-MDAV, genetic and GOMM chapters).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = [
    "COLUMNS",
    "PAPERS",
    "adhoc_groupings",
    "data_dir",
    "list_tables",
    "pivot",
    "table",
    "value",
]

#: Columns of the CSV files of ``data/published``, in order.
_FILE_COLUMNS: tuple[str, ...] = (
    "paper",
    "table",
    "dataset",
    "method",
    "k",
    "parameters",
    "metric",
    "value",
    "note",
)
#: Columns of every table returned by :func:`table`, in order: the files' columns and
#: ``decimals``, the number of decimals the paper printed (``45.0`` -> 1, ``768`` -> 0),
#: read from the value as the file writes it.
COLUMNS: tuple[str, ...] = (*_FILE_COLUMNS, "decimals")

#: Paper keys, with the bibliography key (``references.bib``) and the title.
PAPERS: dict[str, dict[str, str]] = {
    "ivmdav": {
        "cite": "rawat2014ivmdav",
        "title": "An improved variable-sized microaggregation algorithm for privacy "
        "preservation (IV-MDAV)",
    },
    "vmdav": {
        "cite": "solanas2006vmdav",
        "title": "V-MDAV: a multivariate microaggregation with variable group size",
    },
    "genetic": {
        "cite": "martinez2007genetic",
        "title": "A genetic approach to multivariate microaggregation for database privacy",
    },
    "gomm": {
        "cite": "balasch2014gomm",
        "title": "Using genetic algorithms for attribute grouping in multivariate "
                 "microaggregation",
    },
}

_GROUPINGS_FILE = "gomm_adhoc_groupings.csv"
_STRING_COLUMNS = ("paper", "table", "dataset", "method", "parameters", "metric", "note")


def data_dir() -> Path:
    """Return the folder holding the transcribed CSV files.

    Book: :ref:`chap-ivmdav`.

    Returns
    -------
    pathlib.Path
        ``$MICROAGG_PUBLISHED`` if set; else the package's ``_published``
        folder; else ``data/published`` of the checkout.

    Raises
    ------
    FileNotFoundError
        If ``$MICROAGG_PUBLISHED`` names a missing folder, or no folder with
        CSV files is found.

    Examples
    --------
    >>> sorted(p.name for p in data_dir().glob("ivmdav_*.csv"))
    ['ivmdav_table1.csv']
    """
    env = os.environ.get("MICROAGG_PUBLISHED")
    if env:
        path = Path(env).expanduser()
        if not path.is_dir():
            raise FileNotFoundError(
                f"MICROAGG_PUBLISHED={env!r} is not a folder; unset it or point it at a copy "
                "of data/published"
            )
        return path
    here = Path(__file__).resolve().parent
    for path in (here / "_published", here.parent / "data" / "published"):
        if path.is_dir() and any(path.glob("*.csv")):
            return path
    raise FileNotFoundError(
        "no published tables found: expected microagg/_published or data/published "
        "(or set MICROAGG_PUBLISHED)"
    )


def _paper_files(folder: Path, paper: str) -> list[Path]:
    return sorted(p for p in folder.glob(f"{paper}_*.csv") if p.name != _GROUPINGS_FILE)


def _load_paper(folder: str, paper: str) -> pd.DataFrame:
    # the key includes the files' modification times: edited CSVs are re-read
    stamp = tuple((p.name, p.stat().st_mtime_ns) for p in _paper_files(Path(folder), paper))
    return _read_paper(folder, paper, stamp)


@functools.lru_cache(maxsize=16)
def _read_paper(folder: str, paper: str, stamp: tuple[tuple[str, int], ...]) -> pd.DataFrame:
    frames = []
    for path in _paper_files(Path(folder), paper):
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        missing = [c for c in _FILE_COLUMNS if c not in frame.columns]
        if missing:
            raise ValueError(f"{path}: missing columns {missing}")
        frames.append(frame[list(_FILE_COLUMNS)])
    if not frames:
        raise FileNotFoundError(f"no CSV files for paper {paper!r} in {folder}")
    df = pd.concat(frames, ignore_index=True)
    bad = df.loc[df["paper"] != paper, "paper"].unique()
    if len(bad):
        raise ValueError(f"files of paper {paper!r} in {folder} hold rows of {list(bad)}")
    df["k"] = pd.to_numeric(df["k"].replace("", pd.NA)).astype("Int64")
    text = df["value"].str.strip()
    df["value"] = pd.to_numeric(text).astype("float64")
    df["decimals"] = text.str.extract(r"\.(\d*)$", expand=False).fillna("").str.len()
    return df


def _check_paper(paper: str) -> str:
    if not isinstance(paper, str):
        raise TypeError(f"paper must be a string, got {type(paper).__name__}")
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; known papers: {', '.join(PAPERS)}")
    return paper


def _norm_table(tab: Any) -> str:
    if isinstance(tab, bool) or not isinstance(tab, int | str):
        raise TypeError(f"table must be an int or a string, got {type(tab).__name__}")
    return str(tab)


def _as_values(column: str, wanted: Any) -> list[Any]:
    if isinstance(wanted, str) or not isinstance(wanted, Iterable):
        wanted = [wanted]
    out = list(wanted)
    if column == "table":
        out = [_norm_table(t) for t in out]
    return out


def _apply_filters(df: pd.DataFrame, paper: str, filters: dict[str, Any]) -> pd.DataFrame:
    mask = pd.Series(True, index=df.index)
    for column, wanted in filters.items():
        if column not in COLUMNS:
            raise TypeError(
                f"unknown filter {column!r}; filter on any of: {', '.join(COLUMNS)}"
            )
        if column == "paper":
            continue
        values = _as_values(column, wanted)
        col = df[column]
        known = set(col.dropna().unique())
        sub = pd.Series(False, index=df.index)
        for v in values:
            if v is None:
                sub |= col.isna() if column == "k" else col.eq("")
                continue
            if column in _STRING_COLUMNS and not isinstance(v, str):
                raise TypeError(f"{column} must be a string, got {v!r}")
            if v not in known:
                shown = sorted(map(str, known))
                raise ValueError(
                    f"{column}={v!r} does not occur in paper {paper!r}; "
                    f"values there: {', '.join(shown)}"
                )
            sub |= col.eq(v).fillna(False)
        mask &= sub
    return df[mask]


def table(paper: str, table: int | str | Iterable[int | str] | None = None, **filters: Any
          ) -> pd.DataFrame:
    """Return a paper's published numbers as a tidy table.

    Book: :ref:`chap-ivmdav`.

    Parameters
    ----------
    paper : str
        ``"ivmdav"``, ``"vmdav"``, ``"genetic"`` or ``"gomm"``.
    table : int or str or list of them, optional
        Table key (``1`` or ``"1"``, ``"sec4.2"``), or several; all tables of the
        paper if omitted.
    **filters
        Column name to a value, or to a list of accepted values, e.g.
        ``dataset="census"``, ``method=["mdav", "vmdav"]``, ``k=3``,
        ``metric="SSE"``, ``parameters="K=12"``. ``None`` selects empty cells.

    Returns
    -------
    pandas.DataFrame
        Columns ``COLUMNS``, rows in printed order, ``k`` as nullable
        ``Int64`` and ``value`` as float. A fresh copy: modify freely.

    Raises
    ------
    ValueError
        Unknown paper, or a filter value that does not occur in the paper
        (typos such as ``dataset="Census"`` fail loudly instead of returning
        an empty table).
    TypeError
        Unknown filter column or a filter value of the wrong type.

    Examples
    --------
    >>> from microagg import published
    >>> df = published.table("ivmdav", 1, dataset="census", metric="SSE")
    >>> sorted(df["method"].unique())
    ['ivmdav', 'mdav', 'mdav_single', 'vmdav']
    """
    if table is not None:
        filters = {"table": table, **filters}
    return _select(paper, filters)


def _select(paper: str, filters: dict[str, Any]) -> pd.DataFrame:
    paper = _check_paper(paper)
    df = _load_paper(str(data_dir()), paper)
    return _apply_filters(df, paper, filters).reset_index(drop=True).copy()


def value(
    paper: str,
    table: int | str,
    dataset: str,
    method: str,
    k: int | None,
    metric: str,
    **filters: Any,
) -> float:
    """Return one published number.

    Book: :ref:`chap-ivmdav`.

    Parameters
    ----------
    paper, table, dataset, method, metric : str
        As in :func:`table` (``table`` may be an int).
    k : int or None
        The minimum group size; ``None`` for rows without one (e.g. the GA
        parameters of the genetic paper's Table 1).
    **filters
        Further columns needed to single out a row, e.g. ``parameters="K=12"``.

    Returns
    -------
    float
        The value of the only matching row.

    Raises
    ------
    ValueError
        If no row or more than one row matches (the message lists what
        distinguishes the candidates), or a filter value does not occur.

    Examples
    --------
    >>> from microagg import published
    >>> x = published.value("genetic", 2, "census", "two-step", 3, "SSE", parameters="K=12")
    >>> isinstance(x, float)
    True
    """
    df = _select(
        paper,
        {"table": table, "dataset": dataset, "method": method, "k": k, "metric": metric,
         **filters},
    )
    if len(df) == 1:
        return float(df["value"].iloc[0])
    where = (
        f"paper={paper!r}, table={table!r}, dataset={dataset!r}, method={method!r}, "
        f"k={k!r}, metric={metric!r}"
        + "".join(f", {c}={v!r}" for c, v in filters.items())
    )
    if df.empty:
        raise ValueError(f"no published value for {where}")
    varying = [c for c in ("parameters", "k", "note") if df[c].nunique(dropna=False) > 1]
    options = df[varying].astype(str).agg(" | ".join, axis=1).tolist() if varying else []
    raise ValueError(
        f"{len(df)} published values match {where}; narrow it with "
        f"{' / '.join(varying) or 'more filters'}: {options}"
    )


def pivot(
    paper: str,
    table: int | str,
    dataset: str,
    metric: str,
    *,
    index: str = "method",
    columns: str = "k",
    **filters: Any,
) -> pd.DataFrame:
    """Return one metric of one data set as a wide table (e.g. methods x k).

    Book: :ref:`chap-ivmdav`.

    Parameters
    ----------
    paper, table, dataset, metric : str
        As in :func:`table`.
    index, columns : str
        Columns of the tidy table to spread over rows and columns
        (default: methods in rows, ``k`` in columns).
    **filters
        Further filters, as in :func:`table`.

    Returns
    -------
    pandas.DataFrame
        Values, rows and columns in printed order.

    Raises
    ------
    ValueError
        If the selection is empty or two rows fall into one cell (add a filter,
        e.g. ``parameters=...``).

    Examples
    --------
    >>> from microagg import published
    >>> wide = published.pivot("vmdav", 1, "eia", "IL")
    >>> list(wide.index), [int(k) for k in wide.columns]
    (['mdav', 'vmdav'], [3, 4, 5, 10])
    """
    for name in (index, columns):
        if name not in COLUMNS:
            raise ValueError(f"cannot pivot on {name!r}; choose from {', '.join(COLUMNS)}")
    df = _select(paper, {"table": table, "dataset": dataset, "metric": metric, **filters})
    if df.empty:
        raise ValueError(
            f"nothing to pivot: paper={paper!r}, table={table!r}, dataset={dataset!r}, "
            f"metric={metric!r} selects no rows"
        )
    dup = df.duplicated([index, columns], keep=False)
    if dup.any():
        raise ValueError(
            f"several rows per ({index}, {columns}) cell, e.g. "
            f"{df.loc[dup, [index, columns, 'parameters']].head(2).to_dict('records')}; "
            "add a filter such as parameters=..."
        )
    wide = df.pivot(index=index, columns=columns, values="value")
    wide = wide.reindex(index=pd.unique(df[index]), columns=pd.unique(df[columns]))
    wide.index.name, wide.columns.name = index, columns
    return wide


def list_tables() -> pd.DataFrame:
    """List the transcribed tables.

    Book: :ref:`chap-ivmdav`.

    Returns
    -------
    pandas.DataFrame
        One row per (paper, table) with columns ``paper``, ``table``, ``rows``,
        ``datasets`` (comma-separated), ``file`` and ``cite`` (bibliography
        key), plus the ad-hoc attribute groupings of GOMM (``rows`` = number
        of groupings).

    Examples
    --------
    >>> tables = list_tables()
    >>> tables.loc[tables["paper"] == "ivmdav", ["table", "rows", "datasets"]].values.tolist()
    [['1', 96, 'tarragona, census, eia']]
    """
    folder = data_dir()
    records = []
    for paper in PAPERS:
        for path in _paper_files(folder, paper):
            frame = pd.read_csv(path, dtype=str, keep_default_na=False)
            for tab, part in frame.groupby("table", sort=False):
                records.append(
                    {
                        "paper": paper,
                        "table": tab,
                        "rows": len(part),
                        "datasets": ", ".join(pd.unique(part["dataset"])),
                        "file": path.name,
                        "cite": PAPERS[paper]["cite"],
                    }
                )
    groupings = folder / _GROUPINGS_FILE
    if groupings.exists():
        frame = pd.read_csv(groupings, dtype=str, keep_default_na=False)
        for tab, part in frame.groupby("table", sort=False):
            records.append(
                {
                    "paper": "gomm",
                    "table": tab,
                    "rows": len(part),
                    "datasets": ", ".join(pd.unique(part["dataset"])),
                    "file": groupings.name,
                    "cite": PAPERS["gomm"]["cite"],
                }
            )
    return pd.DataFrame.from_records(
        records, columns=["paper", "table", "rows", "datasets", "file", "cite"]
    )


def adhoc_groupings(
    dataset: str, *, one_based: bool = False, as_frame: bool = False
) -> dict[str, list[list[int]]] | pd.DataFrame:
    """Return GOMM's ad-hoc attribute groupings (its Tables 3 and 4).

    The paper names attributes :math:`a_1, \\dots, a_p` in column order;
    ``G10c`` means groups of about ten correlated attributes, ``G10nc`` of
    non-correlated ones. Also included are the two special groupings its
    Section 5 describes in words: all attributes in one group (``g38`` for
    Water-treatment, ``g12`` for Census) and one group per attribute (``g1``).

    Book: :ref:`chap-ivmdav`.

    Parameters
    ----------
    dataset : str
        ``"water-treatment"`` (38 attributes) or ``"census"`` (the paper's
        Census has 12 attributes; ``microagg.datasets.load("census")`` has 13,
        so the mapping of :math:`a_i` to columns is the reader's choice there).
    one_based : bool, default False
        Keep the paper's numbering (:math:`a_i \\mapsto i`); by default
        attribute :math:`a_i` becomes column index ``i - 1``.
    as_frame : bool, default False
        Return the raw rows (``paper, table, dataset, name, n_attributes,
        n_groups, groups, note``) instead of a dict.

    Returns
    -------
    dict or pandas.DataFrame
        Grouping name (``"g38"``, ``"g1"``, ``"g10c"``, ...; the method key in
        Tables 5 and 6 is ``"adhoc-" + name``) to its list of groups, each a
        list of attribute indices, in the printed order.

    Raises
    ------
    ValueError
        Unknown data set.

    Examples
    --------
    >>> groupings = adhoc_groupings("census")
    >>> list(groupings)
    ['g12', 'g1', 'g4c', 'g4nc', 'g3c', 'g3nc']
    >>> groupings["g1"][:3]
    [[0], [1], [2]]
    """
    path = data_dir() / _GROUPINGS_FILE
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    known = list(pd.unique(frame["dataset"]))
    if dataset not in known:
        raise ValueError(f"no ad-hoc groupings for {dataset!r}; available: {', '.join(known)}")
    frame = frame[frame["dataset"] == dataset].reset_index(drop=True)
    if as_frame:
        return frame
    shift = 0 if one_based else 1
    return {
        row.name: [[int(a) - shift for a in group] for group in json.loads(row.groups)]
        for row in frame.itertuples(index=False)
    }
