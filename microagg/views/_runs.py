"""Our runs against the published value: one strip plot per measure of a reproduced table.

The randomised reproductions (GOMM, the genetic hybrid) and those on re-created data
(V-MDAV's Synthetic 1-3, the genetic paper's Scattered and Clustered sets) report the mean
of several runs. This view shows every run, their mean and the published value, so a reader
sees at a glance whether a difference is larger than the runs' own spread (the statuses
"consistent" and "recreated data, inside/outside" of ``microagg.reproductions.STATUSES``
say the same in words).

Book: :ref:`page-ledger`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..reproductions import run_values

__all__ = ["runs_view", "runs_alt_text"]

#: Colours of the three marks (each at least 3:1 against white: WCAG's non-text contrast).
_RUN, _MEAN, _PUBLISHED = "#666666", "#000000", "#b2182b"


def _cell_name(row: pd.Series, parts: Sequence[str]) -> str:
    bits = []
    for part in parts:
        value = row[part]
        if part == "k" and pd.notna(value):
            bits.append(f"k={int(value)}")
        elif isinstance(value, str) and value:
            bits.append(value)
    return " ".join(bits) or str(row["metric"])


def _varying(cmp: pd.DataFrame, label: Sequence[str]) -> list[str]:
    return [c for c in label if c in cmp and cmp[c].astype(str).nunique() > 1] or ["metric"]


def _cell_runs(row: pd.Series) -> list[float]:
    return run_values(row.get("ours_runs", "")) or [float(row["ours"])]


def runs_view(cmp: pd.DataFrame, *, metrics: Sequence[str] | None = None,
              label: Sequence[str] = ("dataset", "method", "parameters", "k"),
              relative: Sequence[str] = (), title: str = "") -> Figure:
    """Every run of each cell (grey dots), their mean (black bar) and the published value
    (red diamond), one panel per measure.

    ``cmp`` is a :func:`microagg.reproductions.compare` frame (columns ``metric, ours,
    ours_runs, published`` and the ``label`` columns); ``metrics`` the measures to show
    (default: every metric of ``cmp``, in order); ``label`` the columns that name a cell on
    the horizontal axis (those that do not vary are left out). The measures in ``relative``
    are drawn as the difference from the published value in percent (the published value at
    0), so cells of very different sizes share one axis. Each panel's title says how many runs
    its cells have. :func:`runs_alt_text` describes the same figure in words.

    Book: :ref:`page-ledger`.

    Parameters
    ----------
    cmp : pandas.DataFrame
        The cells to show, one row each, as described above; a cell without
        ``ours_runs`` shows its ``ours`` as its one run.
    metrics : sequence of str, optional
        Values of ``cmp["metric"]``, one panel each, in order; default every metric of
        ``cmp``, in order of appearance.
    label : sequence of str, default ("dataset", "method", "parameters", "k")
        Columns that name a cell.
    relative : sequence of str, default ()
        Metrics drawn as the percent difference from the published value; their cells
        need a non-zero published value.
    title : str, default ""
        Put before each panel's title.

    Returns
    -------
    matplotlib.figure.Figure
        One axes per metric, stacked.

    Examples
    --------
    >>> cmp = pd.DataFrame({"dataset": ["a", "b"], "method": "m", "parameters": "", "k": 3,
    ...                     "metric": "IL", "ours": [1.0, 2.0], "published": [1.2, 2.0],
    ...                     "ours_runs": ["0.9;1.1", "2.0;2.0"]})
    >>> len(runs_view(cmp).axes)
    1
    """
    metrics = list(pd.unique(cmp["metric"])) if metrics is None else list(metrics)
    if not metrics:
        raise ValueError("runs_view needs at least one metric to show")
    varying = _varying(cmp, label)
    width = max(cmp.groupby("metric").size().max(), 1)
    fig = Figure(figsize=(min(3.0 + 0.42 * width, 12.0), 2.7 * len(metrics)),
                 layout="constrained")
    axes = fig.subplots(len(metrics), 1, squeeze=False)[:, 0]
    for ax, metric in zip(axes, metrics, strict=True):
        cells = cmp[cmp["metric"] == metric].reset_index(drop=True)
        if cells.empty:
            raise ValueError(f"no cells with metric {metric!r} to show")
        counts = set()
        rel = metric in relative
        for x, row in cells.iterrows():
            runs, pub = _cell_runs(row), row.get("published", np.nan)
            counts.add(len(runs))
            if rel:
                if pd.isna(pub) or pub == 0:
                    raise ValueError(f"{metric!r} can only be drawn relative to a published, "
                                     "non-zero value")
                runs = [100.0 * (r - pub) / abs(pub) for r in runs]
                pub = 0.0
            jitter = np.linspace(-0.2, 0.2, len(runs)) if len(runs) > 1 else np.zeros(1)
            ax.scatter(x + jitter, runs, s=9, color=_RUN, zorder=2,
                       label="our runs" if x == 0 else None)
            ax.hlines(float(np.mean(runs)), x - 0.32, x + 0.32, color=_MEAN, lw=1.6, zorder=3,
                      label="our mean" if x == 0 else None)
            if pd.notna(pub):
                ax.scatter([x], [pub], marker="D", s=30, color=_PUBLISHED,
                           edgecolor="white", linewidth=0.5, zorder=4,
                           label="published" if x == 0 else None)
        ax.set_xticks(range(len(cells)))
        ax.set_xticklabels([_cell_name(r, varying) for _, r in cells.iterrows()], rotation=60,
                           ha="right", fontsize=7)
        runs_text = "/".join(str(c) for c in sorted(counts))
        what = f"{metric}, % from the published value" if rel else metric
        ax.set_title(f"{title + ': ' if title else ''}{what} ({runs_text} runs per cell)",
                     fontsize=9)
        ax.grid(axis="y", color="0.9")
    axes[0].legend(fontsize=7, loc="best")
    return fig


def runs_alt_text(cmp: pd.DataFrame, *, what: str = "") -> str:
    """A text alternative to :func:`runs_view` of ``cmp``: what is shown, how many runs, and
    for how many cells the published value lies within the range of our runs.

    Book: :ref:`page-ledger`.

    Parameters
    ----------
    cmp : pandas.DataFrame
        The cells, as for :func:`runs_view` (columns ``metric``, ``ours``,
        ``published`` and, optionally, ``ours_runs``).
    what : str, default ""
        What the figure shows, in words (``"Table 1"``); default "our runs".

    Returns
    -------
    str

    Examples
    --------
    >>> cmp = pd.DataFrame({"metric": "IL", "ours": [1.0, 2.0], "published": [1.05, 3.0],
    ...                     "ours_runs": ["0.9;1.1", "1.9;2.1"]})
    >>> text = runs_alt_text(cmp, what="Table 1")
    >>> text.split(": ")[0]
    'Strip plot of Table 1, one panel per measure (IL)'
    >>> text.split(". ")[-1]
    'The published value lies within the range of our runs for 1 of 2 cells.'
    """
    metrics = list(pd.unique(cmp["metric"]))
    counts = sorted({len(_cell_runs(r)) for _, r in cmp.iterrows()})
    with_pub = cmp[cmp["published"].notna()]
    inside = sum(min(_cell_runs(r)) <= r["published"] <= max(_cell_runs(r))
                 for _, r in with_pub.iterrows())
    runs_text = " to ".join(str(c) for c in (counts[0], counts[-1])) if len(counts) > 1 \
        else str(counts[0])
    return (f"Strip plot of {what or 'our runs'}, one panel per measure ({', '.join(metrics)}): "
            f"each cell shows our {runs_text} runs as grey dots, their mean as a black bar and "
            f"the published value as a red diamond. The published value lies within the range "
            f"of our runs for {inside} of {len(with_pub)} cells.")
