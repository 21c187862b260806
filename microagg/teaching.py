r"""Step-by-step re-runs and small experiments that the chapters use to teach.

The algorithms themselves live in the package's implementation modules; the
functions here re-trace a step of one of them in plain, readable code
(:func:`vmdav_first_group`), run a small experiment around them
(:func:`gamma_sweep`, :func:`timings`, :func:`ga_vs_optimum`,
:func:`split_close_pairs`), or show the source of a compiled kernel
(:func:`kernel_source`). :func:`own_work`, :func:`answer` and :func:`case_seed` are for the
assignments' autograders: the first fails a student's function that calls the ``microagg``
function it should replace, the second turns what the function returned into a plain value
before a test compares it, the third gives each hidden test the same random data on every
run.

Book: :ref:`chap-vmdav`, :ref:`chap-genetic`.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from . import datasets
from ._core import information_loss, sse
from ._defaults import VMDAV_CLUSTERED_GAMMA
from ._ga_kernels import ga_core, repair
from ._genetic import ga_partition
from ._gomm_ops import mutate
from ._grading import answer, case_seed, own_work
from ._methods import get_method
from ._optimal import optimal_partition
from ._timing import least_time
from ._univariate import shortest_path
from ._validate import as_labels, as_matrix, check_k, scale_exponent
from .reproductions import paper_methods, paper_params

__all__ = ["vmdav_first_group", "gamma_sweep", "timings", "engine_timings", "ga_vs_optimum",
           "split_close_pairs", "kernel_source", "own_work", "answer", "case_seed"]

#: The compiled kernels a chapter may show, by name.
_KERNELS = {"ga_core": ga_core, "repair": repair, "shortest_path": shortest_path,
            "gomm_mutate": mutate}


def kernel_source(name: str) -> str:
    """Source code of a compiled kernel, or of GOMM's mutations, that a chapter shows.

    Names: ``"ga_core"``, ``"repair"``, ``"shortest_path"``, and ``"gomm_mutate"`` (the
    five mutations as GOMM's loop runs them; :func:`microagg.gomm_mutate` checks its
    arguments first). Numba's dispatchers wrap the plain Python function; this returns
    the plain code.

    Book: :ref:`chap-genetic`.

    Parameters
    ----------
    name : {"ga_core", "repair", "shortest_path", "gomm_mutate"}
        Which kernel.

    Returns
    -------
    str
        The source of the plain Python function, its decorator lines (``@njit``) included.

    Examples
    --------
    >>> kernel_source("repair").startswith("@njit")
    True
    """
    if name not in _KERNELS:
        raise ValueError(f"unknown kernel {name!r}; choose one of {sorted(_KERNELS)}")
    f = _KERNELS[name]
    return inspect.getsource(getattr(f, "py_func", f))


def vmdav_first_group(X: Any, k: int = 3, *, gamma: float = VMDAV_CLUSTERED_GAMMA) -> Any:
    r"""The first group of V-MDAV and every extension test made for it, for teaching.

    A plain re-tracing of V-MDAV's first iteration (Solanas & Martinez-Balleste
    2006, Sec. 2; the algorithm itself is :func:`microagg.vmdav`): the record
    :math:`e` farthest from the global centroid and its :math:`k-1` nearest
    records form the group; then, while the group has fewer than
    :math:`2k-1` records, the outside record :math:`e_{min}` nearest to the
    group (distance :math:`d_{in}`) is added if

    .. math:: d_{in} < \gamma\, d_{out},

    :math:`d_{out}` being its distance to its nearest other unassigned record.
    Ties go to the first record, as in :func:`microagg.vmdav`, so the returned
    group is that function's group 0.

    Book: :ref:`chap-vmdav`.

    Parameters
    ----------
    X : array_like, shape (n, p)
    k : int
    gamma : float
        Gain factor, ``>= 0``.

    Returns
    -------
    (numpy.ndarray, pandas.DataFrame)
        The group's record indices (``e`` first, then its neighbours, then the
        added records in order) and one row per test with columns ``e_min``,
        ``nearest_member``, ``d_in``, ``nearest_outside``, ``d_out``,
        ``gamma_d_out``, ``added``.

    Examples
    --------
    On the paper's example the first test adds a fourth record and the second stops:

    >>> from microagg import datasets
    >>> group, tests = vmdav_first_group(datasets.vmdav_example(), 3, gamma=1.1)
    >>> group.tolist(), tests["added"].tolist()
    ([0, 1, 2, 3], [True, False])
    """

    X = as_matrix(X)
    k = check_k(k, X.shape[0])
    if not np.isfinite(gamma) or gamma < 0:
        raise ValueError(f"gamma must be a finite number >= 0, got {gamma}")

    def d2(A: Any, v: Any) -> Any:
        return ((A - v) ** 2).sum(axis=1)

    n = X.shape[0]
    e = int(np.argmax(d2(X, X.mean(axis=0))))
    others = np.array([i for i in range(n) if i != e], dtype=int)
    near = others[np.argsort(d2(X[others], X[e]), kind="stable")[: k - 1]]
    group = [e, *near.tolist()]
    tests = []
    while len(group) < 2 * k - 1:
        outside = np.array([i for i in range(n) if i not in group], dtype=int)
        if outside.size == 0:
            break
        dist = np.sqrt(np.array([d2(X[group], X[j]) for j in outside]))  # outside x members
        j = int(np.argmin(dist.min(axis=1)))
        e_min, d_in = int(outside[j]), float(dist[j].min())
        member = int(group[int(np.argmin(dist[j]))])
        rest = outside[outside != e_min]
        if rest.size:
            d_rest = np.sqrt(d2(X[rest], X[e_min]))
            out, d_out = int(rest[int(np.argmin(d_rest))]), float(d_rest.min())
        else:
            out, d_out = -1, float("inf")
        added = bool(d_in < gamma * d_out)
        tests.append((e_min, member, d_in, out, d_out, gamma * d_out, added))
        if not added:
            break
        group.append(e_min)
    table = pd.DataFrame(tests, columns=["e_min", "nearest_member", "d_in", "nearest_outside",
                                         "d_out", "gamma_d_out", "added"])
    return np.asarray(group, dtype=np.int64), table


def gamma_sweep(X: np.ndarray, k: int, gammas: Iterable[float], *, method: str = "vmdav",
                **params: Any) -> pd.DataFrame:
    """IL of V-MDAV or IV-MDAV over a range of gain factors.

    Book: :ref:`chap-vmdav`.

    Parameters
    ----------
    X : array_like, shape (n, p)
        The records, used as given (standardise first if the attributes' scales differ);
        the IL is measured on them.
    k : int
        Minimum group size, ``1 <= k <= n``.
    gammas : iterable of float
        The gain factors to run, in order; each ``>= 0``.
    method : {"vmdav", "ivmdav"}, default "vmdav"
        The registered method to run (one that takes ``gamma``).
    **params
        Further options of that method, the same for every gain factor (``leftover`` for
        V-MDAV, ``candidates`` and ``self_neighbour`` for IV-MDAV, ``engine``).

    Returns
    -------
    DataFrame
        Columns ``gamma``, ``IL``, ``n_groups``, ``max_size``.

    Examples
    --------
    >>> from microagg import datasets
    >>> sweep = gamma_sweep(datasets.vmdav_example(), 3, [0.0, 0.5, 1.1])
    >>> sweep.round(2).values.tolist()
    [[0.0, 15.87, 4.0, 4.0], [0.5, 2.23, 4.0, 4.0], [1.1, 2.23, 4.0, 4.0]]
    """
    f = get_method(method).function
    rows = []
    for g in gammas:
        labels = f(X, k, gamma=float(g), **params)
        sizes = np.bincount(labels)
        rows.append((float(g), information_loss(X, labels), sizes.size, int(sizes.max())))
    return pd.DataFrame(rows, columns=["gamma", "IL", "n_groups", "max_size"])


def timings(*, names: Iterable[str] = ("census", "tarragona", "eia"),
            ks: Iterable[int] = (3, 10), repeat: int = 3) -> pd.DataFrame:
    """CPU time of the IV-MDAV paper's four heuristics (the least of ``repeat`` runs), now.

    The heuristics are :func:`microagg.reproductions.paper_methods`.

    Book: :ref:`chap-vmdav`.

    Parameters
    ----------
    names : iterable of str, default ("census", "tarragona", "eia")
        Data sets of the paper's Table 1 (any of these three), each standardised
        (:func:`microagg.datasets.standardized`); every method runs with the settings
        that table gives it on that data set (:func:`microagg.reproductions.paper_params`).
    ks : iterable of int, default (3, 10)
        Minimum group sizes.
    repeat : int, default 3
        Runs of each (data set, method, ``k``), ``>= 1``; the least CPU time is reported.

    Returns
    -------
    DataFrame
        Columns dataset, n, method, k, ``seconds``, ``IL``.

    Examples
    --------
    The seconds vary from run to run; the rows do not:

    >>> table = timings(names=["tarragona"], ks=[3], repeat=1)
    >>> table[["dataset", "n", "k"]].drop_duplicates().values.tolist(), len(table)
    ([['tarragona', 834, 3]], 4)
    """
    rows = []
    for name in names:
        Z = datasets.standardized(name)
        for method in paper_methods():
            f = get_method(method).function
            params = paper_params(method, name)
            for k in ks:
                t = least_time(functools.partial(f, Z, k, **params), repeat=repeat)
                rows.append((name, Z.shape[0], method, k, t.seconds,
                             information_loss(Z, t.result)))
    return pd.DataFrame(rows, columns=["dataset", "n", "method", "k", "seconds", "IL"])


def ga_vs_optimum(*, n_sets: int = 40, iterations: int = 1000, k: int = 3,
                  sizes: tuple[int, int] = (6, 12), p: int = 2,
                  seed: int = 100) -> pd.DataFrame:
    """How often does the GA find the exact optimum of a small random data set?

    For ``n_sets`` data sets (standard normal, ``n`` uniform in ``sizes``, set
    ``i`` drawn with ``default_rng(seed + i)``) compare the SSE of
    :func:`microagg.ga_partition` (paper's parameters except ``iterations``; GA seed
    ``i``) with the exact optimum of :func:`microagg.optimal_partition`.

    Book: :ref:`chap-genetic`.

    Parameters
    ----------
    n_sets : int, default 40
        Number of data sets.
    iterations : int, default 1000
        GA generations of each run (the GA's other settings are its defaults, the paper's).
    k : int, default 3
        Minimum group size.
    sizes : (int, int), default (6, 12)
        Smallest and largest number of records, both ends included; ``k <= sizes[0]``
        and ``sizes[1] <= 16`` (the largest set the exact optimum handles).
    p : int, default 2
        Number of attributes.
    seed : int, default 100
        Set ``i`` is drawn with ``numpy.random.default_rng(seed + i)``.

    Returns
    -------
    pandas.DataFrame
        One row per set: ``n``, ``sse_ga``, ``sse_opt``, ``optimal`` (bool,
        equal up to rounding) and ``gap_pct`` (100 (GA - opt) / opt). The mean
        of ``optimal`` is the hit rate quoted in :ref:`chap-genetic`.

    Examples
    --------
    >>> table = ga_vs_optimum(n_sets=2, iterations=100, sizes=(6, 7))
    >>> table[["n", "optimal"]].values.tolist()
    [[7, True], [6, True]]
    """
    rows = []
    for i in range(n_sets):
        rng = np.random.default_rng(seed + i)
        n = int(rng.integers(sizes[0], sizes[1] + 1))
        X = rng.normal(size=(n, p))
        opt = sse(X, optimal_partition(X, k))
        got = ga_partition(X, k, iterations=iterations, seed=i).sse
        rows.append({"n": n, "sse_ga": got, "sse_opt": opt,
                     "optimal": bool(got <= opt * (1 + 1e-9) + 1e-12),
                     "gap_pct": 100.0 * (got - opt) / opt if opt > 0 else 0.0})
    return pd.DataFrame(rows)


def split_close_pairs(X: Any, macro: Any, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of records closer than ``radius`` that lie in different macrogroups.

    A crude count of "natural groups split" by a partition into macrogroups
    (the shortcoming of one-step partitioning discussed in Sec. 3.1 of the
    genetic-hybrid paper): the GA can only regroup records inside one
    macrogroup, so a close pair that is split stays split. Distances are
    Euclidean over all attributes.

    Book: :ref:`chap-vmdav`.

    Parameters
    ----------
    X : array_like, shape (n, p)
        The records.
    macro : array_like of int, shape (n,)
        Macrogroup of each record (e.g. the first array :func:`microagg.macrogroups`
        returns); any group labels will do.
    radius : float
        Distance below which two records count as close (strictly), in the units of
        ``X``; ``> 0``.

    Returns
    -------
    (i, j) : two int arrays
        Row numbers of the split pairs (``i < j``).

    Examples
    --------
    Records 0 and 1 are 0.5 apart but in different macrogroups:

    >>> i, j = split_close_pairs([[0.0], [0.5], [10.0], [10.4]], [0, 1, 1, 1], radius=1.0)
    >>> i.tolist(), j.tolist()
    ([0], [1])
    """
    arr = as_matrix(X)
    lab = as_labels(macro, arr.shape[0])
    if not radius > 0:
        raise ValueError(f"radius must be positive, got {radius}")
    from scipy.spatial import cKDTree

    # data and radius times one power of two (exact), so that no square overflows; then
    # candidates from a k-d tree (a hair beyond the radius), and each pair's distance from
    # its own differences: exact far from zero, where |a|^2 + |b|^2 - 2ab is not
    e = scale_exponent(arr)
    arr, r = np.ldexp(arr, e), math.ldexp(float(radius), e)
    with np.errstate(over="ignore"):
        r2 = np.square(np.float64(r))  # (inf for a radius beyond every distance)
    pairs = cKDTree(arr).query_pairs(min(r * (1 + 1e-9), np.finfo(float).max),
                                     output_type="ndarray")
    d2 = ((arr[pairs[:, 0]] - arr[pairs[:, 1]]) ** 2).sum(axis=1)
    close = d2 < r2 if r2 >= np.finfo(float).tiny else np.sqrt(d2) < r  # (r^2 underflows)
    pairs = pairs[close & (lab[pairs[:, 0]] != lab[pairs[:, 1]])]
    pairs = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
    return pairs[:, 0].astype(np.intp), pairs[:, 1].astype(np.intp)


def engine_timings(sizes: Iterable[int], *, p: int = 10, k: int = 3,
                   engines: Iterable[str] = ("loops", "indexed"), method: str = "mdav",
                   loops_max: int = 20_000, seed: int = 0, repeat: int = 1,
                   budget: float = 1.0) -> pd.DataFrame:
    """Time an MDAV-family method on each engine over growing Gaussian data, measured now.

    Each (n, engine) runs on ``standard_normal((n, p))`` data (fixed seed) up to
    ``repeat`` times, but no more once its runs have used ``budget`` CPU seconds, and
    the least time is reported (``microagg._timing.least_time``): on a shared machine
    the other runs measure the neighbours as well. Quick cases thus get every repeat,
    and the costly ones a single run. The quadratic loop engine is skipped above ``loops_max``
    records. ``same`` says whether the engine's labels equal the first engine's at that
    size (``None`` if not compared).

    Book: :ref:`chap-scale`.

    Parameters
    ----------
    sizes : iterable of int
        Numbers of records ``n``, in the order the rows come.
    p : int, default 10
        Number of attributes.
    k : int, default 3
        Minimum group size.
    engines : iterable of {"auto", "indexed", "loops", "numpy"}, default ("loops", "indexed")
        The engines to time, in order; at each size the first one that runs is the one the
        others' labels are compared with.
    method : {"mdav", "mdav_single", "vmdav", "ivmdav"}, default "mdav"
        An MDAV-family method (one that takes ``engine``), run with its default options.
    loops_max : int, default 20_000
        Largest ``n`` at which the ``"loops"`` engine runs.
    seed : int, default 0
        Seed of ``numpy.random.default_rng`` for the data of every size.
    repeat : int, default 1
        Most runs of each (``n``, engine), ``>= 1``.
    budget : float, default 1.0
        CPU seconds after which no further run of that (``n``, engine) starts (the first
        always runs).

    Returns
    -------
    pandas.DataFrame
        Columns ``n``, ``engine``, ``seconds`` (CPU), ``same``.

    Examples
    --------
    >>> table = engine_timings([200], engines=("loops", "indexed"))
    >>> table[["n", "engine", "same"]].values.tolist()
    [[200, 'loops', None], [200, 'indexed', True]]
    """
    f = get_method(method).function
    rows = []
    for n in sizes:
        X = np.random.default_rng(seed).standard_normal((int(n), p))
        first: np.ndarray | None = None
        for engine in engines:
            if engine == "loops" and n > loops_max:
                continue
            t = least_time(functools.partial(f, X, k, engine=engine), repeat=repeat,
                           budget=budget)
            seconds, labels = t.seconds, t.result
            same = None if first is None else bool(np.array_equal(first, labels))
            first = labels if first is None else first
            rows.append({"n": int(n), "engine": engine, "seconds": seconds, "same": same})
    return pd.DataFrame(rows)
