r"""Exact (optimal) microaggregation: univariate data, and tiny multivariate sets.

The *microaggregation problem* asks for the k-partition of ``n`` records (every
group holds at least ``k`` of them) with the smallest within-group sum of squares

.. math::

    \mathrm{SSE} = \sum_{i=1}^{s}\sum_{\mathbf{x}\in G_i}
        \lVert \mathbf{x}-\bar{\mathbf{x}}_i\rVert^2 .

Two facts shape what can be solved exactly (:ref:`chap-foundations`:

* An optimal k-partition never needs a group of ``2k`` or more records: such a
  group can be split into two groups of at least ``k`` without increasing the
  SSE (Domingo-Ferrer & Mateo-Sanz, 2002). So only groups of ``k .. 2k-1``
  records need to be considered.
* For one attribute (``p = 1``) the optimal groups are runs of consecutive
  values in sorted order, and the optimum is a shortest path in a small
  directed acyclic graph (Hansen & Mukherjee, 2003):
  :func:`optimal_univariate`, :math:`O(nk)` after sorting. For ``p >= 2`` the
  problem is NP-hard (Oganian & Domingo-Ferrer, 2001); :func:`optimal_partition`
  solves tiny instances (``n <= 16``) by dynamic programming over subsets, as
  the reference against which the heuristics of later chapters are measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._jit import njit
from ._validate import as_matrix, check_k, rescaled, scale_exponent

__all__ = [
    "optimal_univariate",
    "optimal_partition",
    "univariate_graph",
    "UnivariateGraph",
    "MAX_N_PARTITION",
]

#: Largest ``n`` accepted by :func:`optimal_partition` (its memory and time grow like
#: :math:`2^n` and :math:`3^n`).
MAX_N_PARTITION = 16


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


def _arc_costs(z: np.ndarray, k: int) -> np.ndarray:
    r"""Costs of all arcs of the Hansen-Mukherjee graph, from prefix sums.

    ``C[j, d - k]`` is the SSE of the sorted values ``z[j-d : j]`` (the arc from
    node ``j - d`` to node ``j``), for ``d = k .. 2k-1``; ``inf`` where
    ``j - d < 0``. With :math:`S_1, S_2` the prefix sums of :math:`z` and
    :math:`z^2`, the SSE of ``z[i:j]`` is
    :math:`S_2[j]-S_2[i]-(S_1[j]-S_1[i])^2/(j-i)`.
    """
    n = z.size
    s1 = np.concatenate(([0.0], np.cumsum(z)))
    s2 = np.concatenate(([0.0], np.cumsum(z * z)))
    cost = np.full((n + 1, k), np.inf)
    for d in range(k, min(2 * k, n + 1)):  # group size d: arcs (j - d, j) for j >= d
        sum1 = s1[d:] - s1[:-d]
        cost[d:, d - k] = (s2[d:] - s2[:-d]) - sum1 * sum1 / d
    # rounding can leave -1e-16 on constant runs
    np.maximum(cost, 0.0, out=cost)
    return cost


@njit
def _shortest_path(costs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Shortest path from node 0 to every node of the DAG; returns (dist, pred).

    Arcs into node ``j`` come from ``j - d`` for ``d = k .. 2k-1`` with cost
    ``costs[j, d - k]``. Ties: ``d`` is tried from ``k`` upwards and only a
    strictly smaller distance replaces the current best, so the shortest last
    group wins a tie.
    """
    n1 = costs.shape[0]
    dist = np.full(n1, np.inf)
    pred = np.full(n1, -1, dtype=np.int64)
    dist[0] = 0.0
    for j in range(k, n1):
        for d in range(k, 2 * k):
            i = j - d
            if i < 0:
                break
            cand = dist[i] + costs[j, d - k]
            if cand < dist[j]:
                dist[j] = cand
                pred[j] = i
    return dist, pred


@njit
def _path_to(pred: np.ndarray, end: int) -> np.ndarray:
    """Nodes of the shortest path from node 0 to ``end``, following ``pred`` backwards."""
    steps = 0
    v = end
    while v > 0:
        v = pred[v]
        steps += 1
    path = np.empty(steps + 1, dtype=np.int64)
    v = end
    for m in range(steps, -1, -1):
        path[m] = v
        if v > 0:
            v = pred[v]
    return path


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
    """
    values, order, costs, dist, pred, e = _solve_univariate(x, k)
    n = values.size
    jj, dd = np.nonzero(np.isfinite(costs))
    sizes = dd + k
    arcs = np.column_stack((jj - sizes, jj)).astype(np.int64)
    sort = np.lexsort((arcs[:, 1], arcs[:, 0]))
    arc_costs, total = costs[jj, dd][sort], np.array([dist[n]])
    if e:  # back to the data's units (costs were computed on values times 2**e)
        with np.errstate(over="ignore", under="ignore"):
            arc_costs, total = np.ldexp(arc_costs, -2 * e), np.ldexp(total, -2 * e)
        if not (np.isfinite(arc_costs).all() and np.isfinite(total).all()):
            raise ValueError("the group costs of these values exceed the float64 range "
                             "(values beyond about 1e150); divide the data by a constant")
    return UnivariateGraph(values=values, order=order, arcs=arcs[sort],
                           costs=arc_costs, path=_path_to(pred, n), sse=float(total[0]))


def _solve_univariate(x: Any, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                               np.ndarray, np.ndarray, int]:
    """Sort, build the arc costs and solve; return the sorted values (as given) and ``e``.

    Values beyond ~1e30 (or below ~1e-30) are multiplied by ``2**e`` first (exact, so
    the same shortest path); the costs and distances are then in the rescaled units.
    """
    original = _as_column(x)
    n = original.size
    k = check_k(k, n)
    order = np.argsort(original, kind="stable")
    e = scale_exponent(original)
    values = np.ldexp(original[order], e) if e else original[order]
    # Centring changes no SSE but keeps the prefix sums small (fewer rounding errors).
    costs = _arc_costs(values - values.mean(), k)
    dist, pred = _shortest_path(costs, k)
    if not np.isfinite(dist[n]):  # cannot happen on finite rescaled data: never guess
        raise ValueError("optimal_univariate found no finite shortest path: the group costs "
                         "are not finite numbers")
    return original[order], order, costs, dist, pred, e


def optimal_univariate(x: Any, k: int) -> np.ndarray:
    r"""Optimal univariate microaggregation (Hansen & Mukherjee, 2003).

    Sort the ``n`` values; in an optimal k-partition every group is a run of
    consecutive sorted values with ``k .. 2k-1`` members. Build the directed
    acyclic graph whose nodes ``0 .. n`` are the gaps between sorted values and
    whose arc :math:`(i, j)`, :math:`k \le j-i \le 2k-1`, costs the SSE of the
    sorted values :math:`z_i, \dots, z_{j-1}`,

    .. math::

        c(i, j) = \sum_{l=i}^{j-1} z_l^2 - \frac{1}{j-i}\Bigl(\sum_{l=i}^{j-1} z_l\Bigr)^2
                = S_2[j]-S_2[i] - \frac{(S_1[j]-S_1[i])^2}{j-i},

    with prefix sums :math:`S_1, S_2` of :math:`z, z^2`. The shortest path from
    node 0 to node ``n`` (dynamic programming in node order, each node has at
    most ``k`` incoming arcs) is an optimal partition: :math:`O(n \log n)` to
    sort plus :math:`O(nk)`.

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    x : array_like, shape (n,) or (n, 1)
        One numeric attribute (a list, 1-D array, ``(n, 1)`` array, Series or
        one-column DataFrame). No NaN or infinite values.
    k : int
        Minimum group size, ``1 <= k <= n``.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        Group labels in the input order. Groups are numbered ``0, 1, ...`` from
        the smallest values to the largest.

    Notes
    -----
    Tie rule (deterministic). Equal values are ordered by their input position
    (stable sort), so equal values may fall into two adjacent groups when that
    costs nothing. When two paths have exactly the same length, the one whose
    last group is shorter wins at each node (arc lengths are tried from ``k``
    upwards and only a strictly shorter path replaces the best one). Distances
    are floating-point sums, so "equal" means bit-for-bit equal.

    See :ref:`chap-foundations`, and
    :func:`univariate_graph` for the graph itself.

    Raises
    ------
    ValueError
        On empty input, NaN/inf, more than one attribute, or ``k`` outside
        ``1..n``.
    TypeError
        On non-numeric input or a non-integer ``k``.

    Examples
    --------
    >>> optimal_univariate([1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0], 3).tolist()
    [0, 0, 0, 1, 1, 1, 1]
    """
    _, order, _, _, pred, _ = _solve_univariate(x, k)
    n = order.size
    cuts = _path_to(pred, n)
    sorted_labels = np.repeat(np.arange(len(cuts) - 1, dtype=np.int64), np.diff(cuts))
    labels = np.empty(n, dtype=np.int64)
    labels[order] = sorted_labels
    return labels


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
