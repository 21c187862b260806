r"""GOMM and D-GOMM: a grouping GA choosing which attributes to microaggregate together.

The GOMM paper :cite:p:`balasch2014gomm` searches the set partitions of the attributes with a
grouping genetic algorithm in the style of Falkenauer :cite:p:`falkenauer1998grouping`,
scoring each grouping by

.. math::

    F = \frac{\mathrm{IL} + \mathrm{DR}}{2},\qquad
    \mathrm{DR} = \tfrac12\,\mathrm{ID} + \tfrac12\,\mathrm{DLD}

(:func:`microagg.score_grouping`; lower is better). :func:`gomm` reads as the
algorithm's outline; its steps are named here:

* :class:`_Population`: the members, their fitness and identities, and elitist
  selection;
* :class:`_Lineage`: who made each individual, when, whether it became a parent
  and when it died (the paper's utilization and life time, Section 4.1);
* :class:`_Schedule`: which operators run; D-GOMM's rule switches an operator off
  once its children stop improving on their parents (Section 4.3);
* :func:`_breed`: one generation's children (crossovers, then each mutation);
* :class:`_Trace`: the per-generation history and the operator statistics
  (efficacy and efficiency, formulas 7-9).

The operators live in :mod:`microagg._gomm_ops` and the memoised scoring in
:mod:`microagg._gomm_eval`.

Book: :ref:`chap-gomm`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ._core import standardize
from ._defaults import GOMM
from ._gomm_eval import Evaluator, Grouping, canonical, check_groups
from ._gomm_ops import MUTATIONS, crossover, efficiency, mutate, random_chromosome
from ._progress import progress as _progress_bar
from ._validate import as_matrix, check_k
from ._validate import check_count as _check_count

__all__ = ["GommResult", "gomm"]

#: Every operator, in the order of the statistics tables: the mutations, then crossover.
_OPERATORS = (*MUTATIONS, "CX")


@dataclass
class GommResult:
    """Outcome of a GOMM / D-GOMM run (all measures in percent; lower score is better).

    Book: :ref:`chap-gomm`.

    Attributes
    ----------
    groups : list of lists of int
        Best grouping found (column indices, groups sorted).
    il, id, dld, score : float
        Its information loss, interval disclosure, distance-linkage disclosure and
        score :math:`(IL + (ID + DLD)/2)/2`.
    n_groups : int
    k : int
        The minimum cluster size of the run.
    dynamic : bool
        Whether the run was D-GOMM.
    settings : dict
        The run's settings (population, generations, operators per generation, seed,
        method, ...), as the reproductions record them.
    history : pandas.DataFrame
        One row per generation (0 = initial population): ``best``, ``mean``,
        ``worst`` score, ``best_groups`` and ``mean_groups`` (number of groups),
        ``evaluations`` (distinct groupings scored so far), ``seconds``.
    operators : pandas.DataFrame
        One row per (generation, operator) with the analysis measures of the
        paper's Section 4.1: ``children``, ``improved``, ``worsened``, ``unchanged``
        (efficacy), ``unused_pct`` (utilization: % of the children later removed
        from the population without ever having been a parent), ``life_time``
        (mean number of generations the children survived; 0 = rejected at once;
        children alive at the end are counted up to the last generation),
        ``eff_improve_mean``/``eff_improve_max`` and
        ``eff_worsen_mean``/``eff_worsen_max`` (efficiency, formulas 7-9; worsening
        is negative, ``eff_worsen_max`` is the most negative) and ``active``.
    population_scores, population_groups : numpy.ndarray, shape (generations + 1, population)
        Score and number of groups of every member, sorted best first, per generation.
    best_history : list of list of list of int
        The best grouping of every generation.
    switched_off : dict
        D-GOMM only: generation at which each operator was switched off.
    elapsed, cpu_seconds : float
        Wall-clock and CPU (process) seconds of the run; CPU time is the one to
        compare when other jobs share the machine.
    evaluations, group_microaggregations : int
        Distinct groupings scored, and attribute groups microaggregated in this run
        (cache misses).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(1).normal(size=(40, 4))
    >>> r = gomm(X, 5, population=6, generations=2, crossovers=1, mutations_per_operator=1,
    ...          seed=0, progress=False)
    >>> type(r).__name__, r.n_groups == len(r.groups), len(r.history)
    ('GommResult', True, 3)
    """

    groups: list[list[int]]
    il: float
    id: float
    dld: float
    score: float
    n_groups: int
    k: int
    dynamic: bool
    history: pd.DataFrame
    operators: pd.DataFrame
    population_scores: np.ndarray
    population_groups: np.ndarray
    best_history: list[list[list[int]]]
    elapsed: float
    evaluations: int
    group_microaggregations: int
    settings: dict[str, Any] = field(default_factory=dict)
    switched_off: dict[str, int] = field(default_factory=dict)
    cpu_seconds: float = 0.0

    @property
    def dr(self) -> float:
        """Disclosure risk ``(id + dld) / 2``."""
        return 0.5 * (self.id + self.dld)


def gomm(X: Any, k: int, *, population: int = GOMM.population,
         generations: int = GOMM.generations, crossovers: int = GOMM.crossovers,
         mutations_per_operator: int = GOMM.mutations_per_operator, dynamic: bool = False,
         seed: int | None = None, progress: bool = False, patience: int = GOMM.patience,
         method: str | Callable[..., Any] = "mdav", shared_cache: bool = True,
         initial: Sequence[Sequence[Sequence[int]]] | None = None) -> GommResult:
    r"""GOMM (or, with ``dynamic=True``, D-GOMM): search the attribute grouping with a GA.

    Each generation, ``crossovers`` GGA crossovers make two children each, each of
    the five mutations is applied ``mutations_per_operator`` times, and elitist
    selection keeps the ``population`` best of parents and children (ties: parents
    first). Fitness is the score :math:`(\mathrm{IL}+\mathrm{DR})/2` (lower is
    better). D-GOMM switches off an operator whose children have not improved on
    their parents for ``patience`` generations (the paper says "several"; the
    window is our choice) and stops when all are off. The GOMM paper
    :cite:p:`balasch2014gomm`, Algorithm 1 and Section 4.3.

    Book: :ref:`chap-gomm`.

    Parameters
    ----------
    X : array_like, shape (n, p)
        Original data, ``p >= 2`` attributes; standardised inside (population sd).
    k : int
        Minimum cluster size of each attribute group's microaggregation.
    population, generations, crossovers, mutations_per_operator : int, default 200, 100, 25, 10
        The paper's settings.
    dynamic, patience : bool, int, default False, 5
        Run D-GOMM, with this window (in generations).
    seed : int or None, default None
        Seed of ``numpy.random.default_rng`` (same seed, same run).
    progress : bool, default False
        Show a progress bar over the generations (tqdm, on standard error; a widget in a
        notebook). Off unless asked, as for every function of the package.
    method : str or callable, default "mdav"
        Microaggregation of each attribute group, as in :func:`multivariate` (a
        callable must return a k-partition).
    shared_cache : bool, default True
        Reuse the process-wide cache of microaggregated attribute groups;
        ``False`` starts empty (fair timings). Either cache, and the run's store of
        the groups' release parts, holds at most GOMM's memory budget (512 MB by
        default, ``$MICROAGG_GOMM_CACHE_MB`` to change it), forgetting the least
        recently used groups first; a forgotten group is computed again when needed,
        with the same result, so the budget changes the time, never the run
        (:func:`microagg.gomm_cache_info` shows the bytes held).
    initial : list of groupings, optional
        Members of the initial population (the rest are random).

    Returns
    -------
    GommResult

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(1).normal(size=(80, 5))
    >>> r = gomm(X, 5, population=10, generations=3, crossovers=2,
    ...          mutations_per_operator=1, seed=0, progress=False)
    >>> float(r.history["best"].iloc[-1]) == r.score
    True
    """
    clock = (time.perf_counter(), time.process_time())
    Z, k = _prepare(X, k)
    settings = _check_settings(population, generations, crossovers, mutations_per_operator,
                               patience)
    rng = np.random.default_rng(seed)
    evaluate = Evaluator(Z, k, method, shared_cache=shared_cache)
    computed_before = evaluate.groups.n_computed
    fit = evaluate.fitness
    pop = _Population.initial(initial, settings["population"], Z.shape[1], rng, fit)
    lineage = _Lineage(len(pop.members))
    schedule = _Schedule(dynamic, settings["patience"])
    trace = _Trace(clock[0], evaluate, pop)
    last_gen = 0
    for gen in _progress_bar(range(1, settings["generations"] + 1),
                             total=settings["generations"],
                             desc=f"{'D-GOMM' if dynamic else 'GOMM'} k={k}", enabled=progress):
        if schedule.all_off():
            break
        last_gen = gen
        children = _breed(pop, schedule, fit, rng, settings, Z.shape[1], lineage)
        pop.select(children, lineage, gen)
        trace.generation(gen, children, schedule, pop)
    settings.update(seed=seed, method=evaluate.groups.method_name)
    return _result(pop, evaluate, trace, lineage.operator_frame(trace.op_rows, last_gen),
                   k=k, dynamic=dynamic, clock=clock, settings=settings,
                   switched_off=schedule.switched_off,
                   computed=evaluate.groups.n_computed - computed_before)


def _prepare(X: Any, k: Any) -> tuple[np.ndarray, int]:
    """The standardised data and ``k``, checked; GOMM needs two attributes to group."""
    Z = standardize(as_matrix(X))
    k = check_k(k, Z.shape[0])
    if Z.shape[1] < 2:
        raise ValueError("gomm searches groupings of the attributes and needs at least 2 "
                         f"attributes, got {Z.shape[1]}; with one attribute the only grouping "
                         "is [[0]] (score it with microagg.score_grouping(X, [[0]], k))")
    return Z, k


def _check_settings(population: Any, generations: Any, crossovers: Any,
                    mutations_per_operator: Any, patience: Any) -> dict[str, Any]:
    return {"population": _check_count(population, "population", 1),
            "generations": _check_count(generations, "generations", 0),
            "crossovers": _check_count(crossovers, "crossovers", 0),
            "mutations_per_operator": _check_count(mutations_per_operator,
                                                   "mutations_per_operator", 0),
            "patience": _check_count(patience, "patience", 1)}


@dataclass
class _Children:
    """One generation's children, in order of creation."""

    members: list[Grouping] = field(default_factory=list)
    fitness: list[float] = field(default_factory=list)
    operator: list[str] = field(default_factory=list)
    efficiency: list[float] = field(default_factory=list)

    def add(self, c: Grouping, f: float, op: str, reference: float) -> None:
        self.members.append(c)
        self.fitness.append(f)
        self.operator.append(op)
        self.efficiency.append(efficiency(f, reference))


class _Lineage:
    """Per individual ever created (by identity): the operator that made it, its birth
    generation, whether it was used as a parent, and the generation it was removed."""

    def __init__(self, size: int) -> None:
        self.born_op: list[str | None] = [None] * size
        self.born_gen = [0] * size
        self.used = [False] * size
        self.died: list[int | None] = [None] * size

    def born(self, operators: list[str], gen: int) -> list[int]:
        """Register children made by ``operators`` in generation ``gen``; return their ids."""
        first = len(self.born_op)
        self.born_op.extend(operators)
        self.born_gen.extend([gen] * len(operators))
        self.used.extend([False] * len(operators))
        self.died.extend([None] * len(operators))
        return list(range(first, first + len(operators)))

    def operator_frame(self, rows: list[dict[str, Any]], last_gen: int) -> pd.DataFrame:
        """The operator statistics with utilization and life time filled in.

        Utilization: % of a (generation, operator)'s children removed without ever
        having been a parent; life time: mean generations they survived (children
        alive at the end count up to ``last_gen``).
        """
        ops = pd.DataFrame(rows)
        if ops.empty:
            return ops
        b_op = np.array([o if o is not None else "" for o in self.born_op])
        b_gen = np.asarray(self.born_gen)
        d_gen = np.array([d if d is not None else -1 for d in self.died])
        used = np.asarray(self.used)
        alive = d_gen < 0
        life = np.where(alive, last_gen - b_gen, d_gen - b_gen)
        unused_pct, life_time = [], []
        for gen, op in zip(ops["generation"], ops["operator"], strict=True):
            sel = (b_gen == gen) & (b_op == op)
            if not sel.any():
                unused_pct.append(np.nan)
                life_time.append(np.nan)
                continue
            unused_pct.append(100.0 * np.mean(~used[sel] & ~alive[sel]))
            life_time.append(float(life[sel].mean()))
        ops["unused_pct"] = unused_pct
        ops["life_time"] = life_time
        return ops


class _Population:
    """The current members, their fitness and their identities in the :class:`_Lineage`."""

    def __init__(self, members: list[Grouping], fitness: list[float]) -> None:
        self.members = members
        self.fitness = fitness
        self.ident = list(range(len(members)))

    @classmethod
    def initial(cls, initial: Any, size: int, p: int, rng: np.random.Generator,
                fit: Callable[[Grouping], float]) -> _Population:
        """Given members first, then random groupings (each attribute a label in 0..p-1)."""
        members = [tuple(tuple(x) for x in check_groups(g, p)) for g in initial or []]
        while len(members) < size:
            members.append(random_chromosome(p, rng))
        members = members[:size]
        return cls(members, [fit(c) for c in members])

    def parent(self, pos: int, lineage: _Lineage) -> Grouping:
        lineage.used[self.ident[pos]] = True
        return self.members[pos]

    def select(self, children: _Children, lineage: _Lineage, gen: int) -> None:
        """Elitist selection: keep the best of parents and children, in their order."""
        size = len(self.members)
        everyone = self.members + children.members
        fitness = np.asarray(self.fitness + children.fitness)
        idents = self.ident + lineage.born(children.operator, gen)
        keep = np.argsort(fitness, kind="stable")[:size]
        kept = set(keep.tolist())
        for pos, who in enumerate(idents):
            if pos not in kept:
                lineage.died[who] = gen
        keep.sort()  # survivors keep the order parents-then-children
        self.members = [everyone[i] for i in keep]
        self.fitness = [float(fitness[i]) for i in keep]
        self.ident = [idents[i] for i in keep]


class _Schedule:
    """Which operators run; D-GOMM switches one off after ``patience`` barren generations."""

    def __init__(self, dynamic: bool, patience: int) -> None:
        self.dynamic = dynamic
        self.patience = patience
        self.active = dict.fromkeys(_OPERATORS, True)
        self.stale = dict.fromkeys(_OPERATORS, 0)
        self.switched_off: dict[str, int] = {}

    def all_off(self) -> bool:
        return self.dynamic and not any(self.active.values())

    def observe(self, op: str, improved: int, gen: int) -> None:
        """Count a generation in which ``op``'s children improved ``improved`` times."""
        if self.dynamic and self.active[op]:
            self.stale[op] = self.stale[op] + 1 if improved == 0 else 0
            if self.stale[op] >= self.patience:
                self.active[op] = False
                self.switched_off[op] = gen


def _breed(pop: _Population, schedule: _Schedule, fit: Callable[[Grouping], float],
           rng: np.random.Generator, settings: dict[str, Any], p: int,
           lineage: _Lineage) -> _Children:
    """One generation's children: the crossovers, then each mutation in the paper's order.

    A crossover child's efficiency is measured against the mean fitness of its two
    parents, a mutant's against its parent.
    """
    children = _Children()
    if schedule.active["CX"]:
        for _ in range(settings["crossovers"]):
            a, b = (int(v) for v in rng.integers(0, len(pop.members), size=2))
            pa, pb = pop.parent(a, lineage), pop.parent(b, lineage)
            reference = 0.5 * (pop.fitness[a] + pop.fitness[b])
            for c in crossover(pa, pb, rng):
                children.add(c, fit(c), "CX", reference)
    for op in MUTATIONS:
        if not schedule.active[op]:
            continue
        for _ in range(settings["mutations_per_operator"]):
            a = int(rng.integers(0, len(pop.members)))
            c = mutate(op, pop.parent(a, lineage), p, rng)
            children.add(c, fit(c), op, pop.fitness[a])
    return children


class _Trace:
    """What a run records: per-generation history and per-(generation, operator) statistics."""

    def __init__(self, start: float, evaluate: Evaluator, pop: _Population) -> None:
        self.start = start
        self.evaluate = evaluate
        self.history: list[dict[str, Any]] = []
        self.op_rows: list[dict[str, Any]] = []
        self.scores = [np.sort(np.asarray(pop.fitness))]
        self.groups: list[np.ndarray] = []
        self.best: list[list[list[int]]] = []
        self.record(0, pop)

    def record(self, gen: int, pop: _Population) -> None:
        f = np.asarray(pop.fitness)
        ng = np.array([len(c) for c in pop.members])
        order = np.argsort(f, kind="stable")
        self.groups.append(ng[order])
        self.best.append([list(g) for g in canonical(pop.members[int(order[0])])])
        self.history.append({
            "generation": gen, "best": float(f.min()), "mean": float(f.mean()),
            "worst": float(f.max()), "best_groups": int(ng[order[0]]),
            "mean_groups": float(ng.mean()), "evaluations": len(self.evaluate.scores),
            "seconds": time.perf_counter() - self.start})

    def generation(self, gen: int, children: _Children, schedule: _Schedule,
                   pop: _Population) -> None:
        """Efficacy and efficiency of each operator's children (then D-GOMM's rule)."""
        eff = np.asarray(children.efficiency)
        opv = np.asarray(children.operator)
        for op in _OPERATORS:
            sel = opv == op
            e = eff[sel]
            imp, wor = e[e > 0], e[e < 0]
            self.op_rows.append({
                "generation": gen, "operator": op, "active": schedule.active[op],
                "children": int(sel.sum()), "improved": int(imp.size),
                "worsened": int(wor.size), "unchanged": int(np.sum(e == 0)),
                "eff_improve_mean": float(imp.mean()) if imp.size else np.nan,
                "eff_improve_max": float(imp.max()) if imp.size else np.nan,
                "eff_worsen_mean": float(wor.mean()) if wor.size else np.nan,
                "eff_worsen_max": float(wor.min()) if wor.size else np.nan,
            })
            schedule.observe(op, int(imp.size), gen)
        self.scores.append(np.sort(np.asarray(pop.fitness)))
        self.record(gen, pop)


def _result(pop: _Population, evaluate: Evaluator, trace: _Trace, operators: pd.DataFrame,
            *, k: int, dynamic: bool, clock: tuple[float, float], settings: dict[str, Any],
            switched_off: dict[str, int], computed: int) -> GommResult:
    best = canonical(pop.members[int(np.argmin(np.asarray(pop.fitness)))])
    b = evaluate(best)
    return GommResult(
        groups=[list(g) for g in best], il=b.il, id=b.id, dld=b.dld, score=b.score,
        n_groups=len(best), k=k, dynamic=dynamic, history=pd.DataFrame(trace.history),
        operators=operators, population_scores=np.vstack(trace.scores),
        population_groups=np.vstack(trace.groups), best_history=trace.best,
        elapsed=time.perf_counter() - clock[0], cpu_seconds=time.process_time() - clock[1],
        evaluations=len(evaluate.scores), group_microaggregations=computed,
        settings=settings, switched_off=switched_off)
