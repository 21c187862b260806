"""The one vocabulary of statuses a published cell can have, and the rule that assigns it.

The ledger page, the command line (``microagg reproduce``), the chapters and the tests all
read ``STATUSES``; :func:`cell_status` is the only place a status is decided.

* **exact**: within :data:`EXACT` % of the printed value, or equal to it at the precision
  the paper printed (a number printed with two decimals cannot be matched more closely
  than its last digit; the precision is read off the number as ``data/published`` writes
  it, so ``768`` means 0 decimals and ``45.0`` one);
* **close**: within :data:`CLOSE` %;
* **consistent**: a randomised reproduction run at least :data:`MIN_RUNS` times whose runs
  bracket the published value: it lies within the range of our runs, or within two
  standard deviations of their mean. The difference cannot be told from chance;
* **recreated data, inside** / **recreated data, outside**: the paper never published the
  data (V-MDAV's Synthetic 1-3, the genetic-hybrid paper's Scattered and Clustered sets),
  so our numbers come from at least :data:`MIN_DRAWS` re-draws of our re-creation; the
  status says whether the published value falls inside their spread (the same rule as
  consistent). These cells test a recipe, not a number. With fewer re-draws such a cell
  differs, and its reason says how many re-draws ran. A cell that is exact or close
  keeps that status (some do not depend on the data, such as a number of groups ``n/K``);
* **differs**: beyond all of these; the cell carries a one-line reason and the book
  section that discusses it;
* **input**: a setting the paper states and the book runs with (GA parameters, score
  weights, the V-MDAV paper's scattered/clustered labels), or a cell restating another part
  of the paper (the size of an ad-hoc grouping the GOMM paper lists): reported back as used,
  not a result.

Book: :ref:`page-ledger`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["Status", "STATUSES", "EXACT", "CLOSE", "MIN_RUNS", "MIN_DRAWS", "RECREATED",
           "cell_status", "join_runs", "run_values", "status_summary"]

#: Relative differences (in percent) under which a cell is exact, or close.
EXACT, CLOSE = 0.01, 2.0
#: Runs a randomised cell needs before it can be called consistent, and re-draws of data
#: that were never published (every recreated-data cell has at least this many).
MIN_RUNS, MIN_DRAWS = 10, 20


@dataclass(frozen=True)
class Status:
    """One status of a published cell: its name and what it means, in one sentence.

    Book: :ref:`page-ledger`.

    Examples
    --------
    >>> STATUSES["input"].result, STATUSES["differs"].result
    (False, True)
    """

    name: str
    meaning: str
    result: bool = True  # False: a setting reported back, not counted as a result


#: The statuses, best first (input last: not a result), keyed by name.
STATUSES: dict[str, Status] = {s.name: s for s in (
    Status("exact", f"within {EXACT} % of the printed value, or equal to it at the precision "
                    "the paper printed"),
    Status("close", f"within {CLOSE:g} %"),
    Status("consistent", f"a randomised reproduction: the published value lies within the "
                         f"range of our at least {MIN_RUNS} runs, or within two standard "
                         "deviations of their mean"),
    Status("recreated data, inside", f"the paper's data were never published: over at least "
                                     f"{MIN_DRAWS} re-draws of our re-creation, the published "
                                     "value lies inside our spread"),
    Status("recreated data, outside", f"the paper's data were never published: over at least "
                                      f"{MIN_DRAWS} re-draws of our re-creation, the published "
                                      "value lies outside our spread"),
    Status("differs", "beyond all of these; the row gives the reason and links the section "
                      "that discusses it"),
    Status("input", "a setting the paper states and the book runs with, or a cell restating "
                    "another part of the paper (an ad-hoc grouping's size), reported back as "
                    "used", result=False),
)}
#: The two statuses of cells computed on re-created data (inside, outside).
RECREATED = ("recreated data, inside", "recreated data, outside")


def join_runs(values: Iterable[Any]) -> str:
    """Every run's value of a cell as one text field (``"1.5;1.25"``), exact round trip.

    Seeded and re-drawn cells keep their runs in the column ``ours_runs``, so the status
    and the chapters' plots of our runs read the same numbers, also from a build's cache.

    Examples
    --------
    >>> join_runs([1.5, 1.25])
    '1.5;1.25'
    >>> run_values(join_runs([0.1, 2.0])) == [0.1, 2.0]
    True
    """
    return ";".join(repr(float(v)) for v in values)


def run_values(text: Any) -> list[float]:
    """The runs ``join_runs`` wrote (empty for a cell computed once).

    Book: :ref:`page-ledger`.

    Parameters
    ----------
    text : str
        An ``ours_runs`` field: values separated by ``;``. Anything but a non-empty
        string (an empty field, or the NaN a CSV reader makes of it) has no runs.

    Returns
    -------
    list of float

    Examples
    --------
    >>> run_values("1.5;1.25"), run_values("")
    ([1.5, 1.25], [])
    """
    if not isinstance(text, str) or not text:
        return []
    return [float(v) for v in text.split(";")]


def _printed_decimals(row: pd.Series) -> int:
    """Decimals the paper printed: the row's ``decimals`` (from the value as
    ``data/published`` writes it, so ``45.0`` has one), else those of the float
    (``768.0`` -> 0, ``4.71`` -> 2)."""
    given = row.get("decimals")
    if given is not None and pd.notna(given):
        return int(given)
    value = float(row["published"])
    if value.is_integer():
        return 0
    text = repr(value)
    return len(text.split(".")[1]) if "e" not in text else 12


def _within_runs(row: pd.Series) -> bool:
    """The published value lies within the range of our runs, or within two standard
    deviations of their mean."""
    runs, pub = run_values(row.get("ours_runs", "")), row["published"]
    if runs and min(runs) <= pub <= max(runs):
        return True
    sd = row.get("ours_sd", 0.0)
    return bool(pd.notna(sd) and abs(row["ours"] - pub) <= 2.0 * float(sd))


def cell_status(row: pd.Series, *, inputs: tuple[str, ...] = (),
                recreated: tuple[str, ...] = (),
                restated: Callable[[pd.Series], bool] | None = None) -> str:
    """The status (a key of ``STATUSES``) of one compared cell.

    ``row`` holds ``metric, dataset, published, ours``, optionally ``decimals`` (those the
    paper printed: the column of :func:`microagg.published.table`), and, for repeated runs,
    ``runs``, ``ours_sd`` and ``ours_runs``; ``inputs`` are the metrics that are settings,
    ``restated(row)`` says whether a cell restates another part of the paper, and
    ``recreated`` the data sets the paper never published.

    Book: :ref:`page-ledger`.

    Parameters
    ----------
    row : pandas.Series
        One compared cell: ``metric``, ``dataset``, ``published`` and ``ours`` (NaN
        when we have no number: ``"differs"``); optionally ``decimals``, ``runs``,
        ``ours_sd`` and ``ours_runs``.
    inputs : tuple of str, default ()
        Metrics that are settings: their cells are ``"input"``.
    recreated : tuple of str, default ()
        Data sets the paper never published: their cells that are neither exact nor
        close get a recreated-data status, or ``"differs"`` with fewer than
        ``MIN_DRAWS`` re-draws.
    restated : callable, optional
        ``restated(row) -> bool``; ``True`` makes the cell ``"input"``.

    Returns
    -------
    str
        A key of ``STATUSES``.

    Examples
    --------
    >>> row = pd.Series({"metric": "IL", "dataset": "d", "published": 4.71, "ours": 4.7149})
    >>> cell_status(row)
    'exact'
    >>> cell_status(pd.Series({**row, "ours": 5.0}))
    'differs'
    >>> printed = pd.Series({"metric": "IL", "dataset": "d", "published": 45.0, "ours": 45.36})
    >>> cell_status(printed), cell_status(pd.Series({**printed, "decimals": 1}))
    ('exact', 'close')
    >>> noisy = pd.Series({"metric": "IL", "dataset": "d", "published": 5.25, "ours": 4.9,
    ...                    "runs": 10, "ours_sd": 0.2, "ours_runs": join_runs([4.4, 5.1])})
    >>> cell_status(noisy)
    'consistent'
    >>> redrawn = pd.Series({**noisy, "runs": 20})
    >>> cell_status(redrawn, recreated=("d",)), cell_status(noisy, recreated=("d",))
    ('recreated data, inside', 'differs')
    """
    if row["metric"] in inputs or (restated is not None and restated(row)):
        return "input"
    ours, pub = row["ours"], row["published"]
    if pd.isna(ours):
        return "differs"
    rel = abs(ours - pub) / abs(pub) * 100.0 if pub != 0 else (0.0 if ours == 0 else np.inf)
    decimals = _printed_decimals(row)
    printed = np.isclose(round(float(ours), decimals), pub, rtol=0,
                         atol=10.0 ** -(decimals + 6))
    if rel <= EXACT or printed:
        return "exact"
    if rel <= CLOSE:
        return "close"
    runs = row.get("runs", 1)
    if row["dataset"] in recreated:
        if pd.isna(runs) or int(runs) < MIN_DRAWS:
            return "differs"  # too few re-draws for their spread to test anything yet
        return RECREATED[0] if _within_runs(row) else RECREATED[1]
    if pd.notna(runs) and int(runs) >= MIN_RUNS and _within_runs(row):
        return "consistent"
    return "differs"


def status_summary(counts: dict[str, int]) -> str:
    """One sentence counting the statuses (from :func:`~microagg.reproductions.ledger_counts`),
    the one the ledger page and the command line print.

    Book: :ref:`page-ledger`.

    Examples
    --------
    >>> text = status_summary({"exact": 3, "close": 1, "consistent": 0, "recreated data, inside": 2,
    ...                 "recreated data, outside": 1, "differs": 1, "input": 2, "cells": 10})
    >>> text.split(', ')[:2]
    ['3 of 8 published results are exact', '1 close']
    """
    results = counts["cells"] - counts["input"]
    return (f"{counts['exact']} of {results} published results are exact, {counts['close']} "
            f"close, {counts['consistent']} consistent with our runs, {counts[RECREATED[0]]} on "
            f"re-created data inside our spread, {counts[RECREATED[1]]} on re-created data "
            f"outside it, and {counts['differs']} differ; {counts['input']} further cells are "
            f"settings used as given ({counts['cells']} cells in all)")
