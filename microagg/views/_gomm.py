"""Views for GOMM: the chromosome and its operators, the best groupings, the population.

Book: :ref:`chap-gomm`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .._gomm_ops import MUTATIONS, OPERATORS, gomm_crossover, gomm_mutate, random_chromosome
from .._validate import check_count
from ._explorer import explorer
from ._plotting import HIGHLIGHT, PALETTE, cvd_safe, group_colors, set_alt_text

__all__ = ["gomm_encoding_view", "gomm_view", "explore_gomm", "gomm_population_view",
           "explore_gomm_population", "operator_analysis_view"]


def _letters(n: int) -> list[str]:
    return [chr(ord("A") + i) if i < 26 else f"G{i}" for i in range(n)]


def _draw_chromosome(ax: Any, groups: Any, p: int, y: float, label: str,
                     highlight: Any = ()) -> None:
    """One chromosome as a row: object part (group letter per attribute) | group part."""

    letters = _letters(max(len(groups), 1))
    colors = group_colors(max(len(groups), 1))
    where = {a: gi for gi, g in enumerate(groups) for a in g}
    for a in range(p):
        gi = where[a]
        ax.add_patch(Rectangle((a, y), 0.95, 0.8, facecolor=colors[gi], alpha=0.55,
                               edgecolor="k", linewidth=1.6 if a in highlight else 0.4))
        ax.text(a + 0.47, y + 0.4, letters[gi], ha="center", va="center", fontsize=9)
    ax.plot([p + 0.25, p + 0.25], [y - 0.05, y + 0.85], color="k", linewidth=3)
    for gi in range(len(groups)):
        ax.add_patch(Rectangle((p + 0.5 + gi, y), 0.95, 0.8, facecolor=colors[gi], alpha=0.9,
                               edgecolor="k", linewidth=0.4))
        ax.text(p + 0.97 + gi, y + 0.4, letters[gi], ha="center", va="center", fontsize=9,
                fontweight="bold")
    ax.text(-0.4, y + 0.4, label, ha="right", va="center", fontsize=9)


#: The most attributes :func:`gomm_encoding_view` draws a 3- or 4-group parent for.
_MAX_ENCODING_P = 12


@cvd_safe
def gomm_encoding_view(*, p: int = 8, seed: int = 3,
                       figsize: tuple[float, float] = (10.0, 6.4)) -> Figure:
    """Figure: GOMM's chromosome (object part | group part) and what each operator does.

    Draws a random parent grouping of ``p`` attributes and its children under the
    GGA crossover and the five mutations that :func:`microagg.gomm` uses (same
    seeded random choices as the library's operators, ``microagg._gomm_ops``).
    Each row shows the group letter of attributes 1..p (object part), a thick
    bar, then the groups (group part).
    :ref:`chap-gomm`.

    Book: :ref:`chap-gomm`.

    Parameters
    ----------
    p : int, default 8
        Number of attributes, 3 to 12: the parent is drawn again until it has 3 or 4
        groups, which ``p <= 2`` never gives and a larger ``p`` rarely does (about one
        draw in 1,600 at ``p = 12``); another ``p`` is a ``ValueError``.
    seed : int, default 3
        Seed of ``numpy.random.default_rng`` behind every random choice (the same seed,
        the same figure).
    figsize : (float, float), default (10.0, 6.4)
        The figure's size in inches.

    Returns
    -------
    matplotlib.figure.Figure
        One axes: the parents, the crossover's two children, then one child per mutation.

    Examples
    --------
    The rows are labelled by the chromosome they show:

    >>> from microagg.views import gomm_encoding_view
    >>> fig = gomm_encoding_view(p=6, seed=1)
    >>> [t.get_text() for t in fig.axes[0].texts if " " in t.get_text()][:3]
    ['parent 1', 'parent 2', 'crossover child 1']
    """

    p = check_count(p, "p", 3)
    if p > _MAX_ENCODING_P:
        raise ValueError(f"p must be at most {_MAX_ENCODING_P} (a random grouping of more "
                         f"attributes almost never has the 3 or 4 groups shown), got {p}")
    rng = np.random.default_rng(seed)
    parent = random_chromosome(p, rng)
    while not 3 <= len(parent) <= 4:
        parent = random_chromosome(p, rng)
    other = random_chromosome(p, rng)
    rows: list[tuple[str, Any]] = [("parent 1", parent), ("parent 2", other)]
    c1, c2 = gomm_crossover(parent, other, rng)
    rows += [("crossover child 1", c1), ("crossover child 2", c2)]
    for op in MUTATIONS:
        name = OPERATORS[op]
        child = gomm_mutate(op, parent, p, rng)
        tries = 0
        while child == parent and tries < 20:  # show an informative (non-clone) example
            child = gomm_mutate(op, parent, p, rng)
            tries += 1
        rows.append((f"{name} (of parent 1)", child))
    fig = Figure(figsize=figsize, layout="constrained")
    ax = fig.subplots()
    for r, (label, c) in enumerate(rows):
        y = -1.1 * r - (0.5 if r >= 2 else 0) - (0.5 if r >= 4 else 0)
        _draw_chromosome(ax, c, p, y, label)
    for a in range(p):
        ax.text(a + 0.47, 1.0, f"a{a + 1}", ha="center", fontsize=8)
    ax.text(p / 2, 1.5, "object part (group of each attribute)", ha="center", fontsize=9)
    ax.text(p + 2.5, 1.5, "group part", ha="center", fontsize=9)
    ax.set_xlim(-5.5, p + 8)
    ax.set_ylim(-1.1 * len(rows) - 1.2, 2.0)
    ax.axis("off")
    return fig


def _names_of(names: Any, p: int) -> list[str]:
    return list(names) if names is not None else [f"a{j + 1}" for j in range(p)]


@cvd_safe
def gomm_view(results: Any, k: int, *, names: Any = None,
              figsize: tuple[float, float] = (11.0, 4.2)) -> Figure:
    """Figure: GOMM's best grouping at ``k`` and its score breakdown, among all ``k`` run.

    Book: :ref:`chap-gomm`.

    Parameters
    ----------
    results : dict of int -> GommResult
        Precomputed runs (one per ``k``), e.g. from :func:`microagg.reproductions.reproduce_gomm`.
    k : int
        Which run to show (a key of ``results``).
    names : list of str, optional
        Attribute names (default a1, a2, ...).
    figsize : tuple of float, default (11.0, 4.2)
        The figure's size in inches.

    Returns
    -------
    matplotlib.figure.Figure
        Left: each attribute coloured by its group. Middle: IL, ID, DLD, DR and the
        score. Right: score and number of groups against ``k``, this ``k`` marked.

    Examples
    --------
    >>> import numpy as np, microagg
    >>> X = np.random.default_rng(1).normal(size=(40, 4))
    >>> runs = {k: microagg.gomm(X, k, population=6, generations=2, crossovers=1,
    ...                          mutations_per_operator=1, seed=0, progress=False) for k in (3, 5)}
    >>> from microagg.views import gomm_view
    >>> fig = gomm_view(runs, 5)
    >>> fig.axes[0].get_title(), fig.axes[2].get_title()
    ('k = 5: 1 group(s)', 'best score and number of groups against k')
    """

    r = results[k]
    p = sum(len(g) for g in r.groups)
    labels = _names_of(names, p)
    fig = Figure(figsize=figsize, layout="constrained")
    a0, a1, a2 = fig.subplots(1, 3, width_ratios=[0.8, 1.0, 1.2])
    colors = group_colors(len(r.groups))
    where = {a: gi for gi, g in enumerate(r.groups) for a in g}
    cols = max(1, int(np.ceil(p / 13)))
    per_col = int(np.ceil(p / cols))
    for a in range(p):
        x, y = a // per_col, a % per_col
        a0.add_patch(Rectangle((x * 3, -y), 2.9, 0.9, facecolor=colors[where[a]], alpha=0.6,
                               edgecolor="k", linewidth=0.3))
        a0.text(x * 3 + 1.45, -y + 0.45, labels[a], ha="center", va="center", fontsize=7)
    a0.set_xlim(-0.2, cols * 3)
    a0.set_ylim(-per_col, 1.2)
    a0.axis("off")
    a0.set_title(f"k = {k}: {r.n_groups} group(s)", fontsize=10)
    parts = {"IL": r.il, "ID": r.id, "DLD": r.dld, "DR": r.dr, "score": r.score}
    bars = a1.bar(list(parts), list(parts.values()),
                  color=["C0", "C1", "C2", "C4", "C3"])
    a1.bar_label(bars, fmt="%.1f", fontsize=8)
    a1.set_ylabel("percent")
    a1.set_title("score = (IL + DR)/2,  DR = (ID + DLD)/2", fontsize=10)
    ks = sorted(results)
    a2.plot(ks, [results[q].score for q in ks], "o-", color="C3", label="best score")
    a2.plot([k], [r.score], "o", ms=12, mfc="none", mec="k")
    a2.set_xscale("log")
    a2.set_xticks(ks, [str(q) for q in ks])
    a2.set_xlabel("k")
    a2.set_ylabel("score")
    twin = a2.twinx()
    twin.step(ks, [results[q].n_groups for q in ks], where="mid", color="C0", alpha=0.7,
              label="groups")
    twin.set_ylabel("number of groups", color="C0")
    twin.set_ylim(0, max(results[q].n_groups for q in ks) + 1)
    a2.set_title("best score and number of groups against k", fontsize=10)
    return set_alt_text(fig, f"GOMM's best grouping of {p} attributes at k = {k}: "
                             f"{r.n_groups} group(s); IL {r.il:.1f} %, ID {r.id:.1f} %, DLD "
                             f"{r.dld:.1f} %, DR {r.dr:.1f} %, score {r.score:.1f}. Shown: the "
                             "attributes as boxes coloured by group, a bar chart of the five "
                             "measures, and the best score and number of groups against k.")


def explore_gomm(results: Any, *, k: int | None = None, names: Any = None) -> Any:
    """A ``k`` control over precomputed GOMM runs (``{k: GommResult}``), showing :func:`gomm_view`.

    The runs are computed before the call, so static pages hold every ``k`` of
    ``results``. The control opens at ``k`` (default: the middle ``k`` of the runs).

    Book: :ref:`chap-gomm`.

    Parameters
    ----------
    results : dict of int -> GommResult
        Precomputed runs, one per ``k``, as for :func:`gomm_view`.
    k : int, optional
        A key of ``results``; default the middle one (the upper middle of an even
        number).
    names : list of str, optional
        Attribute names (default a1, a2, ...).

    Returns
    -------
    ipywidgets.Widget
        The controls and the figure, as :func:`explorer` returns them.

    Raises
    ------
    ValueError
        If ``k`` is not one of the runs' ``k``.

    Examples
    --------
    Outside a notebook the explorer's figure is shown as text; we drop it:

    >>> import numpy as np, microagg
    >>> X = np.random.default_rng(1).normal(size=(40, 4))
    >>> runs = {k: microagg.gomm(X, k, population=6, generations=2, crossovers=1,
    ...                          mutations_per_operator=1, seed=0, progress=False) for k in (3, 5)}
    >>> import contextlib, io
    >>> with contextlib.redirect_stdout(io.StringIO()):
    ...     box = explore_gomm(runs)
    >>> box.children[0].description, box.children[0].value  # the middle k of the runs
    ('k', 5)
    """
    ks = sorted(results)
    if k is None:
        k = ks[len(ks) // 2]
    elif k not in results:
        raise ValueError(f"k={k!r} is not among the k of the runs given ({ks}); open the "
                         "explorer at one of them")
    return explorer(lambda k: gomm_view(results, k, names=names), {"k": ks}, value={"k": k})



@cvd_safe
def gomm_population_view(result: Any, generation: int, *,
                         figsize: tuple[float, float] = (11.0, 4.0)) -> Figure:
    """Figure: the population of one GOMM run at a generation.

    Left: every member's score against its number of groups (the population is
    kept sorted, best first; clones pile up on one point). Right: best, mean and
    worst score per generation, the chosen generation marked; the title gives the
    best grouping's number of groups.

    Book: :ref:`chap-gomm`.

    Parameters
    ----------
    result : GommResult
        One run of :func:`microagg.gomm`.
    generation : int
        The generation to show, 0 (the initial population) to the last the run made;
        values outside are taken as the nearest end.
    figsize : (float, float), default (11.0, 4.0)
        The figure's size in inches.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np, microagg
    >>> X = np.random.default_rng(1).normal(size=(40, 4))
    >>> run = microagg.gomm(X, 5, population=6, generations=2, crossovers=1,
    ...                     mutations_per_operator=1, seed=0, progress=False)
    >>> from microagg.views import gomm_population_view
    >>> gomm_population_view(run, 1).axes[0].get_title()
    'generation 1: 6 members, 4 distinct scores'
    """
    g = int(np.clip(generation, 0, len(result.population_scores) - 1))
    s = result.population_scores[g]
    ng = result.population_groups[g]
    fig = Figure(figsize=figsize, layout="constrained")
    a0, a1 = fig.subplots(1, 2)
    jitter = (np.random.default_rng(0).random(s.size) - 0.5) * 0.3
    a0.scatter(ng + jitter, s, s=12, alpha=0.5)
    a0.scatter([ng[0]], [s[0]], s=60, color="C3", marker="D", label="best")
    a0.set_xlabel("number of groups")
    a0.set_ylabel("score (lower is better)")
    distinct = len({(round(float(a), 9), int(b)) for a, b in zip(s, ng, strict=True)})
    a0.set_title(f"generation {g}: {s.size} members, {distinct} distinct scores", fontsize=10)
    a0.legend(fontsize=8)
    h = result.history
    a1.plot(h["generation"], h["best"], color="C3", label="best")
    a1.plot(h["generation"], h["mean"], color="C0", linestyle="--", label="mean")
    a1.plot(h["generation"], h["worst"], color=PALETTE[3], linestyle=":", label="worst")
    a1.axvline(g, color="k", linewidth=0.8)
    a1.set_xlabel("generation")
    a1.set_ylabel("score")
    best = result.best_history[g]
    a1.set_title(f"best at generation {g}: {len(best)} group(s), score {s[0]:.2f}",
                 fontsize=10)
    a1.legend(fontsize=8)
    return set_alt_text(fig, f"GOMM population at generation {g}: {s.size} members, "
                             f"{distinct} distinct scores; the best has {len(best)} group(s), "
                             f"score {s[0]:.2f}. Shown: each member's score against its number "
                             "of groups, and the best, mean and worst score per generation.")


def explore_gomm_population(result: Any, *, generation: int | None = None) -> Any:
    """A generation control over one GOMM run, showing :func:`gomm_population_view`.

    Static pages hold generations 0, 1, 2, 5, 10, 20, 50 and the last (those the
    run reached), and ``generation``, where the control opens (default: the held
    generation nearest to 10); a live kernel takes every generation.

    Book: :ref:`chap-gomm`.

    Parameters
    ----------
    result : GommResult
        One run of :func:`microagg.gomm`.
    generation : int, optional
        Where the control opens, 0 to the last generation of the run; default the held
        generation nearest to 10.

    Returns
    -------
    ipywidgets.Widget
        The controls and the figure, as :func:`explorer` returns them.

    Raises
    ------
    ValueError
        If ``generation`` is not a generation of the run.

    Examples
    --------
    Outside a notebook the explorer's figure is shown as text; we drop it:

    >>> import contextlib, io
    >>> import numpy as np, microagg
    >>> X = np.random.default_rng(1).normal(size=(40, 4))
    >>> run = microagg.gomm(X, 5, population=6, generations=2, crossovers=1,
    ...                     mutations_per_operator=1, seed=0, progress=False)
    >>> with contextlib.redirect_stdout(io.StringIO()):
    ...     box = explore_gomm_population(run)
    >>> slider = box.children[0]
    >>> slider.description, slider.max, slider.value
    ('generation', 2, 2)
    """
    last = len(result.population_scores) - 1
    held = {g for g in (0, 1, 2, 5, 10, 20, 50) if g <= last} | {last}
    if generation is None:
        generation = min(sorted(held), key=lambda g: abs(g - 10))
    elif isinstance(generation, bool) or not isinstance(generation, int | np.integer) \
            or not 0 <= generation <= last:
        raise ValueError(f"generation must be a whole number from 0 to {last} (the run's "
                         f"generations), got {generation!r}")
    held.add(int(generation))
    return explorer(lambda generation: gomm_population_view(result, generation),
                    {"generation": sorted(held)}, value={"generation": int(generation)},
                    live={"generation": (0, last, 1)})



@cvd_safe
def operator_analysis_view(operators: Any, *, which: Any = MUTATIONS,
                           figsize: tuple[float, float] | None = None) -> Figure:
    """Figure: the operator analysis of the GOMM paper (its Figures 6 and 7).

    One column per operator; rows: utilization (% of children removed without ever
    being a parent), mean life time (generations), efficacy (children better /
    worse than their parent(s)) and efficiency (mean and extreme % improvement and
    worsening, formulas 7-9). ``operators`` is ``GommResult.operators``.
    :ref:`chap-gomm`.

    Book: :ref:`chap-gomm`.

    Parameters
    ----------
    operators : pandas.DataFrame
        One row per operator and generation, as ``GommResult.operators`` holds them.
    which : sequence of str, default ("GC", "GE", "GS", "ES", "EM")
        The operators to show, one column each, by code: the five mutations (group
        create, eliminate, split; element swap, move) and ``"CX"``, the crossover.
    figsize : (float, float), optional
        The figure's size in inches; default 2.3 per column plus 1.5 wide, 8 high.

    Returns
    -------
    matplotlib.figure.Figure
        Four rows of axes by ``len(which)`` columns.

    Examples
    --------
    One column of panels per mutation:

    >>> import numpy as np, microagg
    >>> X = np.random.default_rng(1).normal(size=(40, 4))
    >>> run = microagg.gomm(X, 5, population=6, generations=2, crossovers=1,
    ...                     mutations_per_operator=1, seed=0, progress=False)
    >>> from microagg.views import operator_analysis_view
    >>> fig = operator_analysis_view(run.operators)
    >>> [ax.get_title() for ax in fig.axes[:5]]
    ['group create', 'group eliminate', 'group split', 'element swap', 'element move']
    """
    which = list(which)
    figsize = figsize or (2.3 * len(which) + 1.5, 8.0)
    fig = Figure(figsize=figsize, layout="constrained")
    axes = fig.subplots(4, len(which), squeeze=False, sharex=True)
    for j, op in enumerate(which):
        d = operators[operators["operator"] == op]
        gen = d["generation"]
        axes[0, j].plot(gen, d["unused_pct"], color="C0")
        axes[0, j].set_ylim(-5, 105)
        axes[0, j].set_title(OPERATORS[op], fontsize=10)
        axes[1, j].plot(gen, d["life_time"], color="C1")
        axes[2, j].plot(gen, d["improved"], color=PALETTE[0], label="improved")
        axes[2, j].plot(gen, d["worsened"], color=HIGHLIGHT, linestyle="--", label="worsened")
        axes[3, j].plot(gen, d["eff_improve_mean"], color=PALETTE[0], label="mean improvement")
        axes[3, j].plot(gen, d["eff_improve_max"], color=PALETTE[0], linestyle=":",
                        label="max improvement")
        axes[3, j].plot(gen, d["eff_worsen_mean"], color=HIGHLIGHT, linestyle="--",
                        label="mean worsening")
        axes[3, j].plot(gen, d["eff_worsen_max"], color=HIGHLIGHT, linestyle="-.",
                        label="max worsening")
        axes[3, j].set_xlabel("generation")
        if not d["active"].all():
            off = int(gen[~d["active"].to_numpy()].min())
            for row in axes[:, j]:
                row.axvline(off, color="k", linewidth=0.6, linestyle="--")
    for i, lab in enumerate(["unused %", "life time", "children", "efficiency %"]):
        axes[i, 0].set_ylabel(lab)
    axes[2, 0].legend(fontsize=7)
    axes[3, 0].legend(fontsize=7)
    return fig
