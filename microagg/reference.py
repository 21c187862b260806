"""Slow, readable reference implementations: the test oracles.

Each function here is the most direct transcription of a paper's steps that
numpy allows: distances to *all* remaining records recomputed for every group,
a full stable ``argsort`` to find nearest neighbours, the centroid recomputed
from scratch. They are quadratic with a large constant and exist for two
reasons: the tests check that the fast versions in :mod:`microagg._mdav` return
*identical* labels (same tie rule: the first record in input order wins), and
the benchmarks measure the fast versions against them.

One difference is by design. The fast versions keep the centroid of the records
left as a running sum (the total minus each group's rows), while these recompute
it; the two can differ in the last bit. On data built so that two records lie
at the same distance from the centroid in exact arithmetic (say, pairs placed
symmetrically about it), that bit can decide which is "farthest", and the two
implementations then take different, equally far records. The tests' data have
no such exact ties; on data that do, compare SSEs rather than labels.

Read these first if you want to see an algorithm; read :mod:`microagg._mdav`
for how to make it fast.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._defaults import IVMDAV, VMDAV
from ._validate import as_matrix, check_count, check_flag, check_k, check_real

__all__ = ["mdav_reference", "mdav_single_reference", "vmdav_reference", "ivmdav_reference"]


def _d2(A: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Squared distances from the rows of ``A`` to ``v``, summed attribute by attribute.

    The order of the additions is part of the tie rule: records that are equally
    far in exact arithmetic can differ in the last bit depending on it, and all
    of microagg's engines add the attributes in column order.
    """
    diff = A - v
    total = np.zeros(A.shape[0])
    for j in range(A.shape[1]):
        total += diff[:, j] ** 2
    return total


def _group_around(X: np.ndarray, remaining: np.ndarray, r: int, size: int) -> np.ndarray:
    """Record ``r`` (an input index) and its ``size - 1`` nearest remaining records."""
    others = remaining[remaining != r]
    order = np.argsort(_d2(X[others], X[r]), kind="stable")
    return np.concatenate([[r], others[order[: size - 1]]]).astype(np.int64)


def _farthest(X: np.ndarray, remaining: np.ndarray, v: np.ndarray) -> int:
    return int(remaining[np.argmax(_d2(X[remaining], v))])


def _single_groups(X: np.ndarray, k: int, labels: np.ndarray, remaining: np.ndarray,
                   g: int) -> None:
    """MDAV-single-group's loop on ``remaining``, labelling from ``g`` on (in place).

    While ``2k`` or more records remain, the record farthest from their centroid and
    its ``k - 1`` nearest form a group; the last fewer than ``2k`` form one group. It is
    also how MDAV and IV-MDAV end, once fewer than ``3k`` records remain.
    """
    while remaining.size >= 2 * k:
        r = _farthest(X, remaining, X[remaining].mean(axis=0))
        labels[_group_around(X, remaining, r, k)] = g
        remaining = remaining[labels[remaining] < 0]
        g += 1
    labels[remaining] = g


def mdav_reference(X: Any, k: int) -> np.ndarray:
    """MDAV, survey Algorithm 1, written plainly (see :func:`microagg.mdav`).

    Book: :ref:`chap-mdav`.

    Parameters
    ----------
    X : array_like, shape (n, p)
        Records (rows) by attributes (columns), used as given.
    k : int
        Minimum group size, ``1 <= k <= n``.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        Group label of every record, groups numbered in order of formation (those of
        :func:`microagg.mdav`).

    Examples
    --------
    >>> import microagg
    >>> from microagg import datasets
    >>> X = datasets.vmdav_example()
    >>> mdav_reference(X, 3).tolist()
    [0, 0, 0, 2, 2, 2, 3, 3, 3, 3, 1, 1, 1]
    >>> bool((mdav_reference(X, 3) == microagg.mdav(X, 3)).all())  # the fast engines agree
    True
    """
    X = as_matrix(X)
    k = check_k(k, X.shape[0])
    labels = np.full(X.shape[0], -1, dtype=np.int64)
    remaining = np.arange(X.shape[0])
    g = 0
    while remaining.size >= 3 * k:
        r = _farthest(X, remaining, X[remaining].mean(axis=0))
        group_r = _group_around(X, remaining, r, k)
        labels[group_r] = g
        remaining = remaining[labels[remaining] < 0]
        s = _farthest(X, remaining, X[r])
        labels[_group_around(X, remaining, s, k)] = g + 1
        remaining = remaining[labels[remaining] < 0]
        g += 2
    _single_groups(X, k, labels, remaining, g)  # fewer than 3k left: at most one more group
    return labels


def mdav_single_reference(X: Any, k: int) -> np.ndarray:
    """MDAV-single-group written plainly (see :func:`microagg.mdav_single`).

    Book: :ref:`chap-ivmdav`.

    Parameters
    ----------
    X : array_like, shape (n, p)
        Records (rows) by attributes (columns), used as given.
    k : int
        Minimum group size, ``1 <= k <= n``.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        Group label of every record, groups numbered in order of formation (those of
        :func:`microagg.mdav_single`).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2], [9.0], [9.1], [9.3]])
    >>> mdav_single_reference(X, 3).tolist()
    [0, 0, 0, 2, 2, 2, 1, 1, 1]
    """
    X = as_matrix(X)
    k = check_k(k, X.shape[0])
    labels = np.full(X.shape[0], -1, dtype=np.int64)
    _single_groups(X, k, labels, np.arange(X.shape[0]), 0)
    return labels


def vmdav_reference(X: Any, k: int, *, gamma: float = VMDAV.gamma,
                    leftover: str = VMDAV.leftover) -> np.ndarray:
    r"""V-MDAV written plainly (see :func:`microagg.vmdav` for the readings).

    Book: :ref:`chap-vmdav`.

    Parameters
    ----------
    X : array_like, shape (n, p)
        Records (rows) by attributes (columns), used as given.
    k : int
        Minimum group size, ``1 <= k <= n``.
    gamma : float, default 0.2
        Gain factor, ``>= 0``: the outside record nearest to the group
        joins it while :math:`d_{in} < \gamma\, d_{out}` and the group has fewer than
        ``2k - 1`` records; 0 never extends a group.
    leftover : {"centroid", "record"}, default "centroid"
        Where each of the last (fewer than ``k``) records goes: to the group whose
        centroid is nearest, or (``"record"``) to the group of its nearest grouped
        record; another value is a ``ValueError``.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        Group label of every record (those of :func:`microagg.vmdav`).

    Examples
    --------
    >>> import microagg
    >>> from microagg import datasets
    >>> X = datasets.vmdav_example()
    >>> vmdav_reference(X, 3).tolist()
    [0, 0, 0, 0, 3, 3, 3, 2, 2, 2, 1, 1, 1]
    >>> bool((vmdav_reference(X, 3) == microagg.vmdav(X, 3)).all())  # the fast engines agree
    True
    """
    X = as_matrix(X)
    k = check_k(k, X.shape[0])
    gamma = check_real(gamma, "gamma")  # (the options checked as microagg.vmdav checks them)
    if leftover not in ("centroid", "record"):
        raise ValueError(f"leftover must be 'centroid' or 'record', got {leftover!r}")
    n = X.shape[0]
    labels = np.full(n, -1, dtype=np.int64)
    to_c = _d2(X, X.mean(axis=0))
    g = 0
    while (labels < 0).sum() >= k:
        remaining = np.flatnonzero(labels < 0)
        e = int(remaining[np.argmax(to_c[remaining])])
        group = list(_group_around(X, remaining, e, k))
        while len(group) < 2 * k - 1:
            outside = np.array([i for i in remaining if i not in group])
            if outside.size == 0:
                break
            # Eq. (2)-(3): the outside record nearest to any group member
            d_in_all = np.array([_d2(X[group], X[j]).min() for j in outside])
            e_min = int(outside[np.argmin(d_in_all)])
            d_in = np.sqrt(d_in_all.min())
            # Eq. (4): its nearest other unassigned record
            rest = outside[outside != e_min]
            d_out = np.sqrt(_d2(X[rest], X[e_min]).min()) if rest.size else np.inf
            if not d_in < gamma * d_out:  # Eq. (5)
                break
            group.append(e_min)
        labels[group] = g
        g += 1
    # the last (fewer than k) records all join their closest group, measured
    # against the groups as they stand after the main loop
    left = np.flatnonzero(labels < 0)
    done = np.flatnonzero(labels >= 0)
    cents = np.array([X[labels == h].mean(axis=0) for h in range(g)])
    new = []
    for i in left:
        if leftover == "centroid":
            new.append(int(np.argmin(_d2(cents, X[i]))))
        else:
            new.append(labels[done[int(np.argmin(_d2(X[done], X[i])))]])
    labels[left] = new
    return labels


def ivmdav_reference(X: Any, k: int, *, gamma: float = IVMDAV.gamma,
                     candidates: int | None = IVMDAV.candidates,
                     self_neighbour: bool = IVMDAV.self_neighbour) -> np.ndarray:
    r"""IV-MDAV written plainly (see :func:`microagg.ivmdav` for the readings).

    Book: :ref:`chap-ivmdav`.

    Parameters
    ----------
    X : array_like, shape (n, p)
        Records (rows) by attributes (columns), used as given.
    k : int
        Minimum group size, ``1 <= k <= n``.
    gamma : float, default 1.16
        Gain factor: the candidate :math:`y_j` joins the group when
        :math:`d_2 > \gamma\, d_1` (and the group has fewer than ``2k - 1`` records).
    candidates : int, optional
        How many neighbours of :math:`\mathbf{x}_r` (itself the first) are considered;
        default ``2k``, the paper's choice; at least ``k``, as :func:`microagg.ivmdav`
        requires.
    self_neighbour : bool, default True
        Whether :math:`y_j` counts as its own first neighbour :math:`z_1`, as in
        :func:`microagg.ivmdav`.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        Group label of every record (those of :func:`microagg.ivmdav`).

    Examples
    --------
    >>> import microagg
    >>> from microagg import datasets
    >>> X = datasets.vmdav_example()
    >>> ivmdav_reference(X, 3).tolist()
    [0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    >>> bool((ivmdav_reference(X, 3) == microagg.ivmdav(X, 3)).all())  # the fast engines agree
    True
    """
    X = as_matrix(X)
    k = check_k(k, X.shape[0])
    gamma = check_real(gamma, "gamma")  # (the options checked as microagg.ivmdav checks them)
    self_neighbour = check_flag(self_neighbour, "self_neighbour")
    m = 2 * k if candidates is None else check_count(candidates, "candidates", k)
    labels = np.full(X.shape[0], -1, dtype=np.int64)
    remaining = np.arange(X.shape[0])
    g = 0
    while remaining.size >= 3 * k:
        r = _farthest(X, remaining, X[remaining].mean(axis=0))
        ys = _group_around(X, remaining, r, m)
        group = list(ys[:k])
        for y in ys[k:]:
            if len(group) >= 2 * k - 1:
                break
            others = np.array([i for i in remaining if i not in group and i != y])
            need = k - 1 if self_neighbour else k  # is y its own first neighbour z_1?
            if need == 0 or others.size < need:
                continue
            zk = others[np.argsort(_d2(X[others], X[y]), kind="stable")[need - 1]]
            d2 = np.sqrt(_d2(X[zk][None, :], X[y])[0])
            d1 = np.sqrt(_d2(X[y][None, :], X[r])[0])
            if d2 > gamma * d1:
                group.append(y)
        labels[group] = g
        remaining = remaining[labels[remaining] < 0]
        g += 1
    _single_groups(X, k, labels, remaining, g)  # fewer than 3k left: at most one more group
    return labels
