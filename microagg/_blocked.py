r"""Blocking: microaggregate large data block by block (quality traded for speed).

The MDAV family is quadratic on its loop engine; even the indexed engine
(:mod:`microagg._mdav.indexed`) slows down as ``p`` grows. The classic way out is
to cut the records into blocks of a manageable size and microaggregate each
block on its own. Every group then lies inside one block, so the partition is
usually somewhat worse (higher SSE) than the unblocked one: records near a
block boundary cannot join their neighbours across it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._defaults import METHOD
from ._methods import check_options, get_method
from ._validate import as_matrix, check_k, plain

__all__ = ["blocked"]

STRATEGIES = ("tree", "pca")


def blocked(X: Any, k: int, *, method: str = METHOD, block_size: int = 10_000,
            strategy: str = "tree", **options: Any) -> np.ndarray:
    r"""Microaggregate in blocks: partition the records, run a heuristic inside each block.

    Book: :ref:`chap-scale`.

    Two ways of forming the blocks:

    * ``"tree"`` (default): split recursively at the median of the attribute with
      the largest variance until every block has at most ``block_size`` records
      (only if both halves keep ``k``): a binary kd-tree, the two-way relative of
      the :math:`2^d`-tree blocking of Solanas et al. (ARES 2006);
    * ``"pca"``: order the records along the first principal component of the
      centred data (ties by input order) and cut the ordering into
      :math:`B = \min(\lceil n / \text{block\_size} \rceil, \lfloor n/k \rfloor)`
      consecutive blocks whose sizes differ by at most one record (thin slabs).

    Inside a block the records keep their input order, so with ``block_size >= n``
    the result is exactly ``method(X, k)``.

    Parameters
    ----------
    X : array_like, shape (n, p)
        Records by attributes (standardise first if their scales differ).
    k : int
        Minimum group size.
    method : str, default "mdav"
        An MDAV-family heuristic (:func:`microagg.list_methods`) run in each block.
    block_size : int, default 10,000
        Largest (``"tree"``) or target (``"pca"``) block size; at least ``k``.
    strategy : {"tree", "pca"}, default "tree"
    **options
        Passed to the heuristic (e.g. ``gamma``, ``engine``).

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        Labels numbered block after block; groups never cross a block.

    Notes
    -----
    What blocking costs (SSE over the unblocked SSE) is measured in :ref:`chap-scale`.

    Raises
    ------
    ValueError
        Unknown ``method``, ``strategy`` or option, ``block_size`` below ``k``, bad data.
    TypeError
        ``block_size`` not an integer.

    Examples
    --------
    >>> import numpy as np
    >>> import microagg as ma
    >>> X = np.random.default_rng(0).normal(size=(1000, 3))
    >>> labels = ma.blocked(X, 5, block_size=250)
    >>> ma.is_k_partition(labels, 5)
    True
    >>> int(labels.max()) + 1  # 4 blocks of 250 records, 50 groups of 5 in each
    200
    >>> np.array_equal(ma.blocked(X, 5, block_size=1000), ma.mdav(X, 5))
    True
    """
    arr = as_matrix(X)
    n = arr.shape[0]
    k = check_k(k, n)
    spec = get_method(method)
    if spec.family != "mdav":
        raise ValueError(f"blocked runs an MDAV-family heuristic; {method!r} is not one")
    check_options(method, options)  # (before the blocks are formed, as microaggregate)
    _check_blocking(strategy, block_size, k)
    run = spec.function
    blocks = pca_blocks(arr, k, int(block_size)) if strategy == "pca" else \
        tree_blocks(arr, k, int(block_size))
    labels, g = np.empty(n, dtype=np.int64), 0
    for idx in blocks:
        idx = np.sort(idx)  # input order inside the block
        part = run(arr[idx], k, **options)
        labels[idx] = part + g
        g += int(part.max()) + 1
    return labels


def _check_blocking(strategy: Any, block_size: Any, k: int) -> None:
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(map(repr, STRATEGIES))}, "
                         f"got {strategy!r}")
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)):
        raise TypeError(f"block_size must be an integer, got {plain(block_size)!r}")
    if block_size < k:
        raise ValueError(f"block_size={block_size} is smaller than k={k}: every block needs "
                         "at least k records")


def pca_blocks(X: np.ndarray, k: int, block_size: int) -> list[np.ndarray]:
    """Consecutive blocks along the first principal component (sizes differ by at most one)."""
    n = X.shape[0]
    n_blocks = max(1, min(-(-n // block_size), n // k))
    if n_blocks == 1:
        return [np.arange(n)]
    centred = X - X.mean(axis=0)
    _, vectors = np.linalg.eigh(centred.T @ centred)
    v = vectors[:, -1]
    v = v if v[np.argmax(np.abs(v))] > 0 else -v  # a fixed sign: deterministic blocks
    order = np.argsort(centred @ v, kind="stable")
    return np.array_split(order, n_blocks)


def tree_blocks(X: np.ndarray, k: int, block_size: int) -> list[np.ndarray]:
    """Median splits on the attribute of largest variance until blocks hold <= block_size."""
    done: list[np.ndarray] = []
    todo = [np.arange(X.shape[0])]
    while todo:
        idx = todo.pop()
        if idx.size <= block_size or idx.size < 2 * k:
            done.append(idx)
            continue
        sub = X[idx]
        j = int(np.argmax(sub.var(axis=0)))
        order = idx[np.argsort(sub[:, j], kind="stable")]
        half = idx.size // 2
        todo += [order[half:], order[:half]]  # (the lower half is taken next)
    return done
