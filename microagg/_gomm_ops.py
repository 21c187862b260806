r"""GOMM's genetic operators on attribute groupings (Figures 4-5 of the GOMM paper).

A chromosome is its group part: a tuple of groups (each a sorted tuple of column
indices) in group-part order; the object part (the group of each attribute)
follows from it. Two chromosomes with the same groups in another order are clones.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._gomm_eval import Grouping, check_groups

__all__ = ["OPERATORS", "MUTATIONS", "gomm_crossover", "gomm_mutate"]

#: Operator codes, in the order the paper lists them, with their names.
OPERATORS: dict[str, str] = {
    "GC": "group create",
    "GE": "group eliminate",
    "GS": "group split",
    "ES": "element swap",
    "EM": "element move",
    "CX": "crossover",
}
#: The five mutations, in the paper's order.
MUTATIONS: tuple[str, ...] = tuple(op for op in OPERATORS if op != "CX")


def random_chromosome(p: int, rng: np.random.Generator) -> Grouping:
    labels = rng.integers(0, p, size=p)
    return tuple(tuple(np.flatnonzero(labels == g).tolist()) for g in np.unique(labels))


def _tidy(groups: list[list[int]]) -> Grouping:
    return tuple(tuple(sorted(g)) for g in groups if g)


def _crossover_one(donor: Grouping, site: tuple[int, int], host: Grouping, insert_at: int
                   ) -> Grouping:
    """Inject ``donor``'s groups ``site`` into ``host`` at group position ``insert_at``."""
    injected = [list(g) for g in donor[site[0]:site[1]]]
    taken = {a for g in injected for a in g}
    rest = [[a for a in g if a not in taken] for g in host]
    return _tidy(rest[:insert_at] + injected + rest[insert_at:])


def _check(rng: Any, p: int, *chromosomes: Grouping) -> None:
    """Each chromosome a grouping of the attributes ``0..p-1`` (:func:`check_groups`), and
    ``rng`` a Generator: what the public operators check before :func:`crossover` or
    :func:`mutate`, which GOMM's loop calls on its own chromosomes."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator (numpy.random.default_rng(seed)), "
                        f"got {rng!r}")
    for c in chromosomes:
        check_groups(c, p)


def _site(c: Grouping, rng: np.random.Generator) -> tuple[int, int]:
    lo = int(rng.integers(0, len(c)))
    hi = int(rng.integers(lo + 1, len(c) + 1))
    return lo, hi


def gomm_crossover(p1: Grouping, p2: Grouping,
                   rng: np.random.Generator) -> tuple[Grouping, Grouping]:
    """GGA crossover (Falkenauer; Fig. 4 of the GOMM paper): two children from two parents.

    A crossing site (a run of consecutive groups) is drawn in each parent's group
    part. Child 1 is parent 2 with parent 1's site injected at the start of parent
    2's site, the injected attributes being removed from the groups they had in
    parent 2 (groups left empty disappear); child 2 swaps the roles.

    Book: :ref:`chap-gomm`.

    Parameters
    ----------
    p1, p2 : tuple of tuples of int
        The parents: groupings of the same attributes ``0..p-1``, each attribute in
        exactly one group.
    rng : numpy.random.Generator
        The source of the crossing sites.

    Returns
    -------
    tuple of two groupings
        The children, each group a sorted tuple.

    Raises
    ------
    ValueError
        A parent that is not a grouping of the attributes ``0..p-1``.
    TypeError
        ``rng`` that is not a Generator.

    Examples
    --------
    >>> import numpy as np
    >>> gomm_crossover(((0, 1), (2, 3)), ((0,), (1, 2, 3)), np.random.default_rng(0))
    (((0,), (2, 3), (1,)), ((0,), (1, 2, 3)))
    """
    _check(rng, sum(map(len, p1)), p1, p2)
    return crossover(p1, p2, rng)


def crossover(p1: Grouping, p2: Grouping, rng: np.random.Generator
              ) -> tuple[Grouping, Grouping]:
    """:func:`gomm_crossover` on chromosomes known to be groupings (GOMM's own)."""
    s1, s2 = _site(p1, rng), _site(p2, rng)
    return _crossover_one(p1, s1, p2, s2[0]), _crossover_one(p2, s2, p1, s1[0])


def gomm_mutate(op: str, c: Grouping, p: int, rng: np.random.Generator) -> Grouping:
    """Apply mutation ``op`` (one of ``GC, GE, GS, ES, EM``) to chromosome ``c`` (Fig. 5).

    * ``GC`` group create: a new group of ``s ~ U{1..p}`` random attributes, the
      others stay as they were (``s = p`` gives the single group);
    * ``GE`` group eliminate: a random group's attributes go, one by one, to random
      remaining groups (a clone if there is only one group);
    * ``GS`` group split: a random group is split into two random halves (a clone
      if it is a singleton);
    * ``ES`` element swap: two random attributes exchange their groups (a clone if
      they share one);
    * ``EM`` element move: a random attribute moves to another existing group (a
      clone if there is only one group).

    Book: :ref:`chap-gomm`.

    Parameters
    ----------
    op : {"GC", "GE", "GS", "ES", "EM"}
        The mutation.
    c : tuple of tuples of int
        The chromosome: a grouping of the attributes ``0..p-1``.
    p : int
        The number of attributes.
    rng : numpy.random.Generator
        The source of the mutation's random choices.

    Returns
    -------
    tuple of tuples of int
        The mutated grouping (``c`` itself when the mutation leaves it as it is).

    Raises
    ------
    ValueError
        An unknown ``op``, or a ``c`` that is not a grouping of the attributes ``0..p-1``.
    TypeError
        ``rng`` that is not a Generator.

    Examples
    --------
    Splitting the single group of four attributes:

    >>> import numpy as np
    >>> gomm_mutate("GS", ((0, 1, 2, 3),), 4, np.random.default_rng(0))
    ((0, 2), (1, 3))
    """
    _check(rng, p, c)
    return mutate(op, c, p, rng)


def mutate(op: str, c: Grouping, p: int, rng: np.random.Generator) -> Grouping:
    """:func:`gomm_mutate` on a chromosome known to be a grouping (GOMM's own)."""
    groups = [list(g) for g in c]
    G = len(groups)
    if op == "GC":
        size = int(rng.integers(1, p + 1))
        new = sorted(rng.choice(p, size=size, replace=False).tolist())
        chosen = set(new)
        rest = [[a for a in g if a not in chosen] for g in groups]
        return _tidy(rest + [new])
    if op == "GE":
        if G == 1:
            return c
        victim = int(rng.integers(0, G))
        rest = groups[:victim] + groups[victim + 1:]
        for a in groups[victim]:
            rest[int(rng.integers(0, G - 1))].append(a)
        return _tidy(rest)
    if op == "GS":
        g = int(rng.integers(0, G))
        if len(groups[g]) == 1:
            return c
        perm = rng.permutation(groups[g]).tolist()
        half = len(perm) // 2
        return _tidy(groups[:g] + [perm[:half], perm[half:]] + groups[g + 1:])
    where = {a: gi for gi, g in enumerate(groups) for a in g}
    if op == "ES":
        a, b = (int(v) for v in rng.choice(p, size=2, replace=False))
        ga, gb = where[a], where[b]
        if ga == gb:
            return c
        groups[ga][groups[ga].index(a)] = b
        groups[gb][groups[gb].index(b)] = a
        return _tidy(groups)
    if op == "EM":
        if G == 1:
            return c
        a = int(rng.integers(0, p))
        ga = where[a]
        target = int(rng.integers(0, G - 1))
        target += target >= ga
        groups[ga].remove(a)
        groups[target].append(a)
        return _tidy(groups)
    raise ValueError(f"unknown mutation {op!r}; use one of {list(MUTATIONS)}")


def efficiency(child: float, reference: float) -> float:
    """Formulas (7)-(9): % improvement (> 0) or worsening (< 0) of ``child`` vs ``reference``."""
    if reference == child:
        return 0.0
    r = child / reference if reference > 0 else np.inf
    return (1.0 - r) * 100.0 if r <= 1 else (1.0 / r - 1.0) * 100.0

