r"""The MDAV+GA hybrid: macrogroups cut by MDAV, the GA run inside each.

Martinez-Balleste, Solanas, Domingo-Ferrer & Mateo-Sanz (2007), Section 3.
"""

from __future__ import annotations

import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

import numpy as np

from ._core import aggregate, relabel, sse_any_scale
from ._defaults import GA, HYBRID, MACROGROUP_SIZE, option_names
from ._genetic import ga_labels, ga_settings
from ._jit import HAVE_NUMBA, numba_status
from ._mdav import mdav
from ._progress import progress as _progress_bar
from ._validate import as_matrix, check_k, check_seed, plain, rescaled
from ._validate import check_count as _check_count

#: The genetic paper's example macrogroup size (Section 3.2, step 2: K = 21).
DEFAULT_K = MACROGROUP_SIZE

__all__ = ["HybridResult", "hybrid", "macrogroups", "hybrid_settings"]

#: Without numba the GA's loops run as plain Python: about 10 us per record of a child
#: (220 us for a child of 21 records, against 0.65 us compiled; 2026-11-27, one core).
PYTHON_SECONDS_PER_RECORD_CHILD = 10e-6
#: A hybrid run without numba expected to take longer than this warns first.
SLOW_SECONDS = 60.0


@dataclass(frozen=True)
class HybridResult:
    """Result of :func:`hybrid` with ``return_details=True``.

    Book: :ref:`chap-genetic`.

    Attributes
    ----------
    labels : numpy.ndarray of int64, shape (n,)
        The final k-partition (groups numbered 0, 1, ... by first appearance).
    macrogroups : numpy.ndarray of int64, shape (n,)
        The macrogroup of every record (the pieces the GA was run on).
    sse : float
        SSE of ``labels`` (``inf`` if it exceeds the float64 range).
    partitioning : str
        ``"one-step"`` or ``"two-step"``.
    start : numpy.ndarray of int64 or None
        Two-step only: the MDAV k-partition the GA started from (its SSE is an
        upper bound for ``sse``, Lemma 1).
    K : int
        The macrogroup size used (chosen from ``k`` unless given).
    n_macrogroups : int
        The number of macrogroups (a property).

    Examples
    --------
    >>> from microagg import datasets, is_k_partition
    >>> res = hybrid(datasets.vmdav_example(), 3, K=6, seed=0, iterations=100,
    ...              return_details=True)
    >>> res.partitioning, res.K, res.n_macrogroups, is_k_partition(res.labels, 3)
    ('two-step', 6, 2, True)
    """

    labels: np.ndarray
    macrogroups: np.ndarray
    sse: float
    partitioning: str
    start: np.ndarray | None = field(default=None, repr=False)
    K: int = DEFAULT_K

    @property
    def n_macrogroups(self) -> int:
        """Number of macrogroups (the paper's "# clus." column of Table 2)."""
        return int(self.macrogroups.max()) + 1


def _ga_per_macrogroup(arr: np.ndarray, k: int, macro: np.ndarray, start: np.ndarray | None,
                       ga: dict[str, Any], seed: Any, n_jobs: int, desc: str | Literal[False]
                       ) -> np.ndarray:
    """Run the GA in every macrogroup (seeded by ``SeedSequence(seed).spawn``); join the parts."""
    M = int(macro.max()) + 1
    members = [np.flatnonzero(macro == g) for g in range(M)]
    states = [np.random.default_rng(s).integers(1, 2**32, size=4, dtype=np.int64)
              for s in _spawn(seed, M)]

    def run(g: int) -> np.ndarray:
        idx = members[g]
        init = relabel(start[idx]) if start is not None else None
        return ga_labels(arr[idx], k, ga["population"], ga["mutation_rate"],
                          ga["crossover_rate"], ga["iterations"], states[g], init)

    bar = partial(_progress_bar, total=M, desc=desc or "", enabled=bool(desc))
    if n_jobs > 1 and M > 1:
        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            parts = list(bar(pool.map(run, range(M))))
    else:
        parts = [run(g) for g in bar(range(M))]
    labels = np.empty(arr.shape[0], dtype=np.int64)
    offset = 0
    for idx, part in zip(members, parts, strict=True):
        labels[idx] = part + offset
        offset += int(part.max()) + 1
    return relabel(labels)


def _warn_if_slow(n: int, ga: dict[str, Any]) -> None:
    """Warn (:class:`RuntimeWarning`) before a run that plain Python would take minutes or
    hours over: every generation makes ``population - 1`` children of each macrogroup."""
    seconds = n * ga["iterations"] * (ga["population"] - 1) * PYTHON_SECONDS_PER_RECORD_CHILD
    if seconds > SLOW_SECONDS:
        hours = seconds / 3600
        took = f"{hours:.0f} hours" if hours >= 2 else f"{seconds / 60:.0f} minutes"
        warnings.warn(f"the hybrid's GA runs as plain Python without numba, a few hundred "
                      f"times slower: about {took} for {n} records at {ga['iterations']} "
                      f"generations (fewer GA iterations shorten it: iterations=, "
                      f"--iterations). Numba is "
                      f"{numba_status()}", RuntimeWarning, stacklevel=3)


def _spawn(seed: Any, M: int) -> list[Any]:
    """``M`` independent seeds from ``seed`` (an int, SeedSequence, BitGenerator or Generator)."""
    if isinstance(seed, np.random.BitGenerator):
        seed = np.random.Generator(seed)
    if isinstance(seed, np.random.Generator | np.random.SeedSequence):
        return list(seed.spawn(M))
    return np.random.SeedSequence(seed).spawn(M)


def default_K(k: int, partitioning: str = "two-step") -> int:
    """The macrogroup size used when none is given: valid for every ``k``.

    Two-step: the smallest multiple of ``k`` that is at least 21 (the example ``K = 21``
    of the paper's Section 3.2, a multiple of ``k = 3`` and ``k = 7``); one-step:
    ``max(21, k)``.
    """
    if partitioning == "one-step":
        return max(DEFAULT_K, k)
    return k * max(1, -(-DEFAULT_K // k))


def _check_K(K: Any, k: int, partitioning: str) -> int:
    if K is None:
        return default_K(k, partitioning)
    if isinstance(K, bool) or not isinstance(K, (int, np.integer)):
        raise TypeError(f"K must be an integer (or None: chosen from k), got {plain(K)!r}")
    K = int(K)
    if K < k:
        raise ValueError(f"K={K} must be at least k={k} (or leave K unset: it is then "
                         f"chosen from k, here {default_K(k, partitioning)})")
    if partitioning == "two-step" and K % k:
        raise ValueError(
            f"two-step partitioning needs K divisible by k (macrogroups are made of whole "
            f"k-groups), got K={K}, k={k}; try K={K - K % k or k} or "
            f"K={K - K % k + k}, or leave K unset (then K={default_K(k)})"
        )
    return K


def hybrid_settings(k: int, *, K: Any = HYBRID.K, partitioning: Any = HYBRID.partitioning,
                    seed: Any = HYBRID.seed, n_jobs: Any = HYBRID.n_jobs, **ga_params: Any
                    ) -> tuple[int, dict[str, Any], int]:
    """:func:`hybrid`'s settings for a checked ``k``, checked (they do not depend on the
    data): ``K`` (chosen if None), the GA's, ``n_jobs``."""
    check_seed(seed)
    unknown = sorted(set(ga_params) - set(option_names(GA)))
    if unknown:
        raise ValueError(f"unknown GA parameter(s) {unknown}; allowed: "
                         f"{', '.join(option_names(GA))}")
    ga = ga_settings(**ga_params)
    n_jobs = (os.cpu_count() or 1) if n_jobs == -1 else _check_count(n_jobs, "n_jobs", -2**63)
    if n_jobs < 1:  # (-5 was "at least -1", 0 gave no value)
        raise ValueError(f"n_jobs must be a positive integer, or -1 for one thread per CPU, "
                         f"got {n_jobs}")
    K = _check_K(K, k, _check_partitioning(partitioning))
    return K, ga, n_jobs


def _check_partitioning(partitioning: Any) -> str:
    if partitioning not in ("one-step", "two-step"):
        raise ValueError(
            f"partitioning must be 'one-step' or 'two-step', got {partitioning!r}"
        )
    return str(partitioning)


def macrogroups(X: Any, k: int = 3, *, K: int | None = HYBRID.K,
                partitioning: str = HYBRID.partitioning
                ) -> tuple[np.ndarray, np.ndarray | None]:
    r"""Cut a data set into the small pieces ("macrogroups") the hybrid's GA works on.

    * ``"one-step"``: the groups of an MDAV ``K``-partition (sizes ``K..2K-1``).
    * ``"two-step"``: an MDAV ``k``-partition; then MDAV with ``K // k`` on its
      group centroids; a macrogroup is the union of the ``k``-groups whose
      centroids were grouped together (about ``K`` records, whole ``k``-groups
      only). ``K`` must be a multiple of ``k``.

    If the data set is too small for a second grouping (fewer than ``K`` records
    for one-step, fewer than ``K // k`` groups for two-step), it forms a single
    macrogroup.

    Book: :ref:`chap-genetic`.

    Parameters
    ----------
    X : array_like, shape (n, p)
    k : int
        Minimum group size of the final partition.
    K : int, optional
        Macrogroup size parameter, ``K >= k`` (two-step: a multiple of ``k``).
        Default: chosen from ``k`` as in :func:`hybrid` (21 for ``k = 3``).
    partitioning : {"two-step", "one-step"}

    Returns
    -------
    macro : numpy.ndarray of int64, shape (n,)
        Macrogroup of every record, numbered by first appearance.
    start : numpy.ndarray of int64 or None
        Two-step: the MDAV ``k``-partition (the GA's injected start); one-step:
        ``None``.

    Notes
    -----
    Martinez-Balleste et al. (2007), Sections 3.1-3.2; :ref:`chap-genetic`.

    Examples
    --------
    Thirteen records, four MDAV groups of three or four, paired into two macrogroups:

    >>> from microagg import datasets
    >>> macro, start = macrogroups(datasets.vmdav_example(), 3, K=6)
    >>> macro.tolist()
    [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1]
    >>> start.tolist()
    [0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3]
    """
    arr = rescaled(as_matrix(X))  # (exact; centroids of values near 1e308 cannot overflow)
    n = arr.shape[0]
    k = check_k(k, n)
    partitioning = _check_partitioning(partitioning)
    K = _check_K(K, k, partitioning)
    if partitioning == "one-step":
        macro = mdav(arr, K) if n >= K else np.zeros(n, dtype=np.int64)
        return relabel(macro), None
    start = relabel(mdav(arr, k))
    s = int(start.max()) + 1
    m = K // k
    if s >= m:
        cent = aggregate(arr, start)
        first = np.unique(start, return_index=True)[1]
        group_macro = mdav(cent[first], m)
        macro = group_macro[start]
    else:
        macro = np.zeros(n, dtype=np.int64)
    return relabel(macro), start


def hybrid(X: Any, k: int = 3, *, K: int | None = HYBRID.K,
           partitioning: str = HYBRID.partitioning, seed: Any = HYBRID.seed,
           n_jobs: int = HYBRID.n_jobs, progress: bool = False,
           return_details: bool = False, **ga_params: Any) -> Any:
    r"""The MDAV+GA hybrid: cut the data into macrogroups, run the GA inside each.

    The GA (:func:`ga_partition`) handles a few dozen records, MDAV thousands but
    only fixed sizes. The hybrid cuts the data into macrogroups of about ``K``
    records with MDAV (:func:`macrogroups`) and replaces the partition inside each
    by the GA's; the result has groups of ``k..2k-1`` records.

    With ``partitioning="two-step"`` each macrogroup's GA starts from a
    population that contains the MDAV ``k``-partition of that macrogroup, so
    (Lemma 1 of the paper)

    .. math:: \mathrm{SSE}_{\text{two-step}} \le \mathrm{SSE}_{\text{MDAV}} .

    Book: :ref:`chap-genetic`.

    Parameters
    ----------
    X : array_like, shape (n, p)
        Records; standardise first if attributes are on different scales.
    k : int, default 3
        Minimum group size.
    K : int, optional
        Macrogroup size (for two-step, a multiple of ``k``). Default: two-step,
        the smallest multiple of ``k`` that is at least 21 (the paper's 21 for
        ``k = 3``); one-step, ``max(21, k)``. Valid for every ``k``.
    partitioning : {"two-step", "one-step"}
    seed : int, numpy SeedSequence or Generator, optional
        Seeds every macrogroup's GA (via ``numpy.random.SeedSequence(seed).spawn``,
        or the ``spawn`` of the SeedSequence or Generator given), so results do not
        depend on ``n_jobs``.
    n_jobs : int, default 1
        Threads for the independent macrogroups (``-1``: one per CPU); the result
        does not depend on it.
    progress : bool, default False
        Show a progress bar over the macrogroups.
    return_details : bool, default False
        Return a :class:`HybridResult` instead of the labels alone.
    **ga_params
        ``population``, ``mutation_rate``, ``crossover_rate``, ``iterations``
        for :func:`ga_partition` (defaults: the paper's Table 1).

    Returns
    -------
    numpy.ndarray of int64 or HybridResult

    Raises
    ------
    ValueError
        If ``K < k``, two-step ``K`` is not a multiple of ``k``, an unknown
        partitioning or GA parameter is given, or on bad data.
    TypeError
        On a seed ``numpy.random.default_rng`` does not take.

    Notes
    -----
    Martinez-Balleste et al. :cite:p:`martinez2007genetic`, Section 3.

    Examples
    --------
    >>> from microagg import datasets, standardize, mdav, sse
    >>> X = standardize(datasets.clustered(120, seed=0))
    >>> labels = hybrid(X, k=3, K=12, seed=0, iterations=300)
    >>> bool(sse(X, labels) <= sse(X, mdav(X, 3)))
    True
    """
    original = as_matrix(X)
    arr = rescaled(original)  # beyond ~1e30 or below ~1e-30: times a power of two (exact)
    K, ga, n_jobs = hybrid_settings(check_k(k, arr.shape[0]), K=K, partitioning=partitioning,
                                    seed=seed, n_jobs=n_jobs, **ga_params)
    if not HAVE_NUMBA:
        _warn_if_slow(arr.shape[0], ga)
    macro, start = macrogroups(arr, k, K=K, partitioning=partitioning)
    labels = _ga_per_macrogroup(arr, int(k), macro, start, ga, seed, n_jobs,
                                progress and f"hybrid {partitioning} K={K}")
    if not return_details:
        return labels
    return HybridResult(labels=labels, macrogroups=macro, sse=sse_any_scale(original, labels),
                        partitioning=partitioning, start=start, K=K)


