r"""Exact (optimal) microaggregation: univariate data, and tiny multivariate sets.

The *microaggregation problem* asks for the k-partition of ``n`` records (every
group holds at least ``k`` of them) with the smallest within-group sum of squares

.. math::

    \mathrm{SSE} = \sum_{i=1}^{s}\sum_{\mathbf{x}\in G_i}
        \lVert \mathbf{x}-\bar{\mathbf{x}}_i\rVert^2 .

Two facts shape what can be solved exactly (:ref:`chap-foundations`):

* An optimal k-partition never needs a group of ``2k`` or more records: such a
  group can be split into two groups of at least ``k`` without increasing the
  SSE (Domingo-Ferrer & Mateo-Sanz, 2002). So only groups of ``k .. 2k-1``
  records need to be considered.
* For one attribute (``p = 1``) the optimal groups are runs of consecutive
  values in sorted order, and the optimum is a shortest path in a small
  directed acyclic graph (Hansen & Mukherjee, 2003):
  :func:`optimal_univariate`, :math:`O(n)` after sorting for any ``k`` (the costs
  are Monge; kernels in :mod:`microagg._univariate`). For ``p >= 2`` the
  problem is NP-hard (Oganian & Domingo-Ferrer, 2001); :func:`optimal_partition`
  solves tiny instances (``n <= 16``) by dynamic programming over subsets, as
  the reference against which the heuristics of later chapters are measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._jit import njit
from ._univariate import (
    SCAN_PER_TARGET,
    arc_costs,
    labels_from_path,
    linear_path,
    stable_order,
)
from ._univariate import shortest_path as _shortest_path
from ._validate import as_matrix, check_k, rescaled, scale_exponent

__all__ = [
    "optimal_univariate",
    "optimal_partition",
    "univariate_graph",
    "UnivariateGraph",
    "MAX_N_PARTITION",
    "UNIVARIATE_ALGORITHMS",
    "LINEAR_FROM_K",
]

#: Largest ``n`` accepted by :func:`optimal_partition` (its memory and time grow like
#: :math:`2^n` and :math:`3^n`).
MAX_N_PARTITION = 16

#: The passes :func:`optimal_univariate` can run (``algorithm=``).
UNIVARIATE_ALGORITHMS = ("auto", "shortest-path", "linear")

#: From this ``k`` on, ``algorithm="auto"`` runs the linear-time pass; below it the
#: :math:`O(nk)` shortest path is as fast (measured on normal data at n = 1e3, 1e5 and 1e6:
#: the two cross between k = 3 and 5 at every n, so the choice depends on k only).
LINEAR_FROM_K = 5


# --------------------------------------------------------------------------------------
# Univariate optimum: Hansen & Mukherjee (2003)
# --------------------------------------------------------------------------------------

def _as_column(x: Any, name: str = "x") -> np.ndarray:
    """Return ``x`` (1-D, ``(n, 1)``, a Series or a one-column DataFrame) as a 1-D float array."""
    if hasattr(x, "columns"):  # DataFrame: must have one column
        arr = as_matrix(x, name)
    else:
        raw = np.asarray(x)
        if raw.ndim == 0:
            raise ValueError(f"{name} must be a 1-D array of values, got a scalar")
        if raw.ndim == 1:
            raw = raw.reshape(-1, 1)
        arr = as_matrix(raw, name)
    if arr.shape[1] != 1:
        raise ValueError(
            f"{name} must hold a single attribute (shape (n,) or (n, 1)), got shape "
            f"{arr.shape}; for several attributes use optimal_partition (tiny n) or a heuristic"
        )
    return arr[:, 0]


def _algorithm(algorithm: str, k: int) -> str:
    """The pass :func:`optimal_univariate` runs: ``algorithm``, or for ``"auto"`` the faster
    one at this ``k`` (measured: tests/benchmarks/bench_optimal.py)."""
    if algorithm not in UNIVARIATE_ALGORITHMS:
        raise ValueError(f"algorithm must be one of {list(UNIVARIATE_ALGORITHMS)}, "
                         f"got {algorithm!r}")
    if algorithm == "auto":
        return "linear" if k >= LINEAR_FROM_K else "shortest-path"
    return algorithm


def _path_to(pred: np.ndarray, end: int) -> np.ndarray:
    """Nodes of the shortest path from node 0 to ``end``, following ``pred`` backwards."""
    path = [end]
    while path[-1] > 0:
        path.append(int(pred[path[-1]]))
    return np.array(path[::-1], dtype=np.int64)


@dataclass(frozen=True)
class UnivariateGraph:
    """The Hansen-Mukherjee graph of a univariate data set, and its shortest path.

    Book: :ref:`chap-foundations`.

    Attributes
    ----------
    values : numpy.ndarray, shape (n,)
        The data in sorted order (node ``i`` is the gap before ``values[i]``).
    order : numpy.ndarray, shape (n,)
        ``values == x[order]`` (a stable argsort of the input).
    arcs : numpy.ndarray, shape (m, 2)
        Arcs ``(i, j)`` with ``k <= j - i <= 2k - 1``; arc ``(i, j)`` is the group
        of sorted values ``i .. j-1``.
    costs : numpy.ndarray, shape (m,)
        SSE of each arc's group.
    path : numpy.ndarray
        Nodes ``0 = v_0 < v_1 < ... < v_s = n`` of the shortest path.
    sse : float
        Its length: the optimal SSE.

    Examples
    --------
    >>> g = univariate_graph([1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0], 3)
    >>> type(g).__name__, g.path.tolist(), g.sse
    ('UnivariateGraph', [0, 3, 7], 7.0)
    """

    values: np.ndarray
    order: np.ndarray
    arcs: np.ndarray
    costs: np.ndarray
    path: np.ndarray
    sse: float


def univariate_graph(x: Any, k: int) -> UnivariateGraph:
    r"""Build the Hansen-Mukherjee shortest-path graph of ``x`` and solve it.

    Nodes ``0 .. n`` are the gaps between the sorted values (node ``i`` sits just
    before the ``i``-th smallest value); arc ``(i, j)`` with
    :math:`k \le j-i \le 2k-1` stands for the group of sorted values
    ``i .. j-1`` and costs that group's SSE. Every path from node 0 to node
    ``n`` is a k-partition into runs of consecutive values, and the shortest
    one is an optimal k-partition (Hansen & Mukherjee, 2003). Used by
    :func:`optimal_univariate` and by the figures of :ref:`chap-foundations`.

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    x : array_like, shape (n,) or (n, 1)
    k : int
        Minimum group size, ``1 <= k <= n``.

    Returns
    -------
    UnivariateGraph

    Examples
    --------
    Two groups, sorted values 0-2 and 3-6; the optimal SSE is 2 + 5:

    >>> g = univariate_graph([1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0], 3)
    >>> g.path.tolist(), g.sse, len(g.arcs)
    ([0, 3, 7], 7.0, 12)
    """
    solved = _solve_univariate(x, k, "shortest-path")
    values, order, dist, pred, e = (solved.values, solved.order, solved.dist, solved.pred,
                                    solved.e)
    costs = arc_costs(solved.z, k)
    n = values.size
    jj, dd = np.nonzero(np.isfinite(costs))
    sizes = dd + k
    arcs = np.column_stack((jj - sizes, jj)).astype(np.int64)
    sort = np.lexsort((arcs[:, 1], arcs[:, 0]))
    group_costs, total = costs[jj, dd][sort], np.array([dist[n]])
    if e:  # back to the data's units (costs were computed on values times 2**e)
        with np.errstate(over="ignore", under="ignore"):
            group_costs, total = np.ldexp(group_costs, -2 * e), np.ldexp(total, -2 * e)
        if not (np.isfinite(group_costs).all() and np.isfinite(total).all()):
            raise ValueError("the group costs of these values exceed the float64 range "
                             "(values beyond about 1e150); divide the data by a constant")
    return UnivariateGraph(values=values, order=order, arcs=arcs[sort],
                           costs=group_costs, path=_path_to(pred, n), sse=float(total[0]))


@dataclass(frozen=True)
class _Solved:
    """What :func:`_solve_univariate` found (internal)."""

    values: np.ndarray  # the data, sorted (as given)
    order: np.ndarray  # values == x[order]
    z: np.ndarray  # the sorted values times 2**e
    dist: np.ndarray  # shortest distance from node 0, in the units of z
    pred: np.ndarray  # predecessor of each node on its shortest path
    e: int


def _solve_univariate(x: Any, k: int, algorithm: str = "auto") -> _Solved:
    """Sort (stably), build the anchored sums and run the chosen shortest-path pass.

    Values beyond ~1e30 (or below ~1e-30) are multiplied by ``2**e`` first (exact, so
    the same shortest path); the costs and distances are then in the rescaled units.
    """
    original = _as_column(x)
    n = original.size
    k = check_k(k, n)
    algorithm = _algorithm(algorithm, k)
    order, values = stable_order(original)  # equal values keep their input order
    e = scale_exponent(values)
    z = np.ldexp(values, e) if e else values
    if algorithm == "linear":
        dist, pred = linear_path(z, k, SCAN_PER_TARGET * k)
    else:
        dist, pred = _shortest_path(z, k)
    if not np.isfinite(dist[n]):  # cannot happen on finite rescaled data: never guess
        raise ValueError("optimal_univariate found no finite shortest path: the group costs "
                         "are not finite numbers")
    return _Solved(values, order, z, dist, pred, int(e))


def optimal_univariate(x: Any, k: int, *, algorithm: str = "auto") -> np.ndarray:
    r"""Optimal univariate microaggregation (Hansen & Mukherjee, 2003), in linear time.

    In an optimal k-partition of one attribute every group is a run of ``k .. 2k-1``
    consecutive sorted values :math:`z_0 \le \dots \le z_{n-1}`. Nodes ``0 .. n`` are
    the gaps between them; arc :math:`(i, j)`, :math:`k \le j-i \le 2k-1`, costs the
    SSE :math:`c(i, j)` of :math:`z_i, \dots, z_{j-1}`; the shortest path from node 0 to
    node ``n`` is an optimal partition. Each cost is computed from sums of
    :math:`z_l - z_m` with :math:`z_m` a value of the group itself (anchored block
    sums, ``microagg._univariate``), in :math:`O(1)`. Two passes solve the graph:

    * ``"shortest-path"``: every node tries its ``k`` incoming arcs, :math:`O(nk)`; the
      readable reference;
    * ``"linear"``: :math:`c` is Monge, so the best predecessor never moves left. The
      targets are taken ``k`` at a time (their arcs start before the block): each block
      is scanned from the previous target's best predecessor on, and if that costs more
      than ``16k`` entries its row minima are found by SMAWK (Aggarwal et al., 1987);
      :math:`O(n)` for any ``k``.

    ``"auto"`` runs the linear pass from ``k >= LINEAR_FROM_K`` on. The stable sort
    before it is a radix sort, :math:`O(n)`, with numba (numpy's :math:`O(n \log n)` stable
    sort without, in the same order); memory is :math:`O(n)`.

    Book: :ref:`chap-foundations`, :ref:`sec-foundations-linear`.

    Parameters
    ----------
    x : array_like, shape (n,) or (n, 1)
        One numeric attribute (list, array, Series or one-column DataFrame); finite.
    k : int
        Minimum group size, ``1 <= k <= n``.
    algorithm : {"auto", "shortest-path", "linear"}
        The pass; every choice returns an optimal partition.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        Group labels in the input order, numbered ``0, 1, ...`` from the smallest
        values to the largest.

    Notes
    -----
    Guarantee. With :math:`u = 2^{-53}`, a group's computed cost is within a relative
    :math:`132\,k^2 u` of its exact SSE (zero error for ``k = 1``), whatever the
    values' magnitude, and a path's sum of its ``s <= n/k`` costs adds at most
    :math:`s\,u`. Hence the exact SSE of the returned partition exceeds the true
    optimum by a relative :math:`\tau \le 2\,(132\,k^2 + n/k)\,u` at most (to first
    order; :math:`7.4\times 10^{-10}` for ``n = 1e7, k = 3``). Both passes compute
    every cost bit for bit alike; the linear one finds the reference's minima whenever
    those computed costs keep the Monge property (exact arithmetic always does), and
    tests/test_optimal.py checks both against exact rational arithmetic.

    Tie rule (deterministic). Equal values keep their input order (stable sort). Among
    paths of equal computed length the one whose last group is shortest wins, at
    every node; so ``optimal_univariate(np.zeros(7), 2)`` has groups of 3, 2, 2. Both
    passes and both builds (with and without numba) apply it identically.

    Raises
    ------
    ValueError
        On empty input, NaN/inf, more than one attribute, ``k`` outside ``1..n``, or
        an unknown ``algorithm``.
    TypeError
        On non-numeric input or a non-integer ``k``.

    See Also
    --------
    univariate_graph : the graph itself, for figures.

    Examples
    --------
    >>> optimal_univariate([1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0], 3).tolist()
    [0, 0, 0, 1, 1, 1, 1]
    """
    solved = _solve_univariate(x, k, algorithm)
    return labels_from_path(solved.pred, solved.order)


# --------------------------------------------------------------------------------------
# Tiny multivariate sets: dynamic programming over subsets
# --------------------------------------------------------------------------------------

def _subset_sse(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SSE and size of every subset of the rows of ``X`` (subset = bitmask), vectorised.

    Sums are built by doubling: the subsets containing row ``b`` as their
    highest row are those without it plus row ``b``.
    """
    n, p = X.shape
    m = 1 << n
    s1 = np.zeros((m, p))
    s2 = np.zeros(m)
    cnt = np.zeros(m, dtype=np.int64)
    sq = np.einsum("ij,ij->i", X, X)
    for b in range(n):
        lo, hi = 1 << b, 1 << (b + 1)
        s1[lo:hi] = s1[:lo] + X[b]
        s2[lo:hi] = s2[:lo] + sq[b]
        cnt[lo:hi] = cnt[:lo] + 1
    safe = np.maximum(cnt, 1)
    cost = s2 - np.einsum("ij,ij->i", s1, s1) / safe
    return np.maximum(cost, 0.0), cnt


@njit
def _subset_dp(cost: np.ndarray, cnt: np.ndarray, n: int, k: int) -> tuple[np.ndarray,
                                                                             np.ndarray]:
    """``best[R]``: least SSE of a partition of the set ``R`` into groups of k..2k-1.

    The group holding the lowest record of ``R`` is enumerated among the
    subsets of ``R`` that contain it (submask enumeration, in decreasing
    numeric order); the rest, ``R`` minus that group, has a higher lowest
    record and a smaller mask, so it is solved already. ``choice[R]`` is the
    first best group found (ties: strict ``<``).
    """
    m = 1 << n
    best = np.full(m, np.inf)
    choice = np.zeros(m, dtype=np.int64)
    best[0] = 0.0
    for R in range(1, m):
        if cnt[R] < k:
            continue
        low = R & -R
        rest = R ^ low
        sub = rest
        while True:
            G = sub | low
            size = cnt[G]
            if k <= size <= 2 * k - 1:
                other = R ^ G
                cand = cost[G] + best[other]
                if cand < best[R]:
                    best[R] = cand
                    choice[R] = G
            if sub == 0:
                break
            sub = (sub - 1) & rest
    return best, choice


def optimal_partition(X: Any, k: int) -> np.ndarray:
    r"""Exact minimum-SSE k-partition of a tiny multivariate data set.

    Solves

    .. math::

        \min_{G_1,\dots,G_s}\ \sum_{i=1}^{s}\sum_{\mathbf{x}\in G_i}
            \lVert\mathbf{x}-\bar{\mathbf{x}}_i\rVert^2
        \quad\text{s.t.}\quad |G_i| \ge k,

    which is NP-hard for ``p >= 2`` (Oganian & Domingo-Ferrer, 2001), by dynamic
    programming over subsets. Because an optimal partition needs only groups of
    ``k .. 2k-1`` records (Domingo-Ferrer & Mateo-Sanz, 2002), the optimum
    :math:`F(R)` of a set :math:`R` of records satisfies

    .. math::

        F(\emptyset) = 0,\qquad
        F(R) = \min_{G \subseteq R,\ \min R \in G,\ k \le |G| \le 2k-1}
               \bigl[\mathrm{SSE}(G) + F(R \setminus G)\bigr]:

    the group holding the lowest-numbered record of ``R`` is enumerated, the
    rest is a smaller, already solved, subproblem. The SSE of all
    :math:`2^n` subsets is precomputed with numpy; the recursion runs over
    :math:`2^n` bitmasks and at most :math:`3^{n-1}` (set, group) pairs, compiled
    by numba when it is installed (same code, same answers without it).

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    X : array_like or pandas.DataFrame, shape (n, p)
        Numeric data, ``n <= MAX_N_PARTITION`` (16).
    k : int
        Minimum group size, ``1 <= k <= n``.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        Group labels, numbered ``0, 1, ...`` in order of first appearance.

    Notes
    -----
    Deterministic: among equally good partitions the first one met in the
    enumeration order is returned. Run time roughly triples with each record.

    Raises
    ------
    ValueError
        If ``n > MAX_N_PARTITION``, or on empty/NaN/inf/1-D input or a ``k``
        outside ``1..n``.
    TypeError
        On non-numeric data or a non-integer ``k``.

    See Also
    --------
    optimal_univariate : polynomial optimum for a single attribute, any ``n``.

    Examples
    --------
    >>> X = [[0, 0], [0, 1], [5, 5], [5, 6], [0, 2], [5, 7]]
    >>> optimal_partition(X, 3).tolist()
    [0, 0, 1, 1, 0, 1]
    """
    arr = as_matrix(X)
    n = arr.shape[0]
    k = check_k(k, n)
    if n > MAX_N_PARTITION:
        raise ValueError(
            f"optimal_partition enumerates subsets and is limited to n <= {MAX_N_PARTITION} "
            f"records (got n={n}); the problem is NP-hard for p >= 2. Use "
            "optimal_univariate for one attribute, or a heuristic (microagg.mdav) for more"
        )
    arr = rescaled(arr)  # beyond ~1e30 or below ~1e-30: times a power of two (exact)
    arr = arr - arr.mean(axis=0)  # centring: same SSEs, smaller sums
    cost, cnt = _subset_sse(arr)
    _, choice = _subset_dp(cost, cnt, n, k)
    return _labels_from_choice(choice, n)


def _labels_from_choice(choice: np.ndarray, n: int) -> np.ndarray:
    """Follow the dynamic programme's choices from the full set; groups in order of first record."""
    labels = np.empty(n, dtype=np.int64)
    R = (1 << n) - 1
    g = 0
    while R:
        G = int(choice[R])
        if G == 0 or G & ~R:  # cannot happen on finite rescaled data: never loop or guess
            raise ValueError("optimal_partition found no finite optimum: the group costs are "
                             "not finite numbers")
        labels[[i for i in range(n) if G >> i & 1]] = g
        g += 1
        R ^= G
    return labels
