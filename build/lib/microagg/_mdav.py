r"""The MDAV family: fixed- and variable-size microaggregation heuristics.

Four heuristics, one function each. All take a 2-D float array ``X`` (``n``
records by ``p`` attributes, already on the scale the caller wants: the book
standardises first) and a minimum group size ``k``, and return an ``(n,)``
int64 array of group labels numbered ``0, 1, ...`` in the order the groups are
formed.

======================  ==========================================  ===========
function                paper                                       chapter
======================  ==========================================  ===========
:func:`mdav`            Domingo-Ferrer (survey), Algorithm 1        2
:func:`mdav_single`     Rawat & Borah (IV-MDAV paper), "algorithm 2"  4
:func:`vmdav`           Solanas & Martinez-Balleste (2006)          3
:func:`ivmdav`          Rawat & Borah (IV-MDAV paper)               4
======================  ==========================================  ===========

Implementation notes
--------------------
No ``n x n`` distance matrix is ever built (the papers precompute one; we
compute distances on the fly, as the genetic-hybrid paper says is equivalent).
Memory is ``O(n p)``.

There are two engines, chosen automatically:

* with numba installed (``pip install microagg[fast]``), plain loops in
  :mod:`microagg._mdav_loops`, compiled to machine code: one pass over the
  unassigned records per step, a heap for nearest neighbours, and (IV-MDAV) the
  triangle inequality to skip records in the candidate tests;
* otherwise the vectorised numpy code in this module: the unassigned records
  are kept in a compact array (:class:`_Pool`) that is shrunk as groups are
  removed, and distances come from matrix-vector products.

Both engines give the same labels (tested), ties included, because they do
the same arithmetic: squared distances summed attribute by attribute in
column order (:func:`_sqdist`), and the centroid of the unassigned records as
their running total (which loses each grouped record in input order) over
their number.

Where only the order of distances matters (farthest record, nearest
neighbours) squared Euclidean distances are used; the gain-factor tests of
V-MDAV and IV-MDAV compare plain Euclidean distances, as the papers write them.

Data beyond ~1e30 (or below ~1e-30) are first rescaled by a power of two, exactly
(:func:`microagg._validate.rescaled`): no overflow, and the same partition.

Ties are broken by the original record order: among equally distant records
the one that comes first in ``X`` is taken. The slow, readable oracles in
:mod:`microagg.reference` follow the same rule, and the tests check that they
give identical labels on small-integer data (where every sum is exact). On
other data a centroid computed in a different order can differ in the last
bit, which can only matter for distinct records at exactly equal distances.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _mdav_loops as _loops
from ._jit import HAVE_NUMBA
from ._validate import as_matrix, check_count, check_flag, check_k, check_real, rescaled

__all__ = ["mdav", "mdav_single", "vmdav", "ivmdav"]


def _sqdist(A: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Squared Euclidean distance from each row of ``A`` to the vector ``v`` (direct).

    Summed one attribute at a time, in column order: the same additions, in the
    same order, as the compiled loops of :mod:`microagg._mdav_loops`, so both
    engines see bit-identical distances.
    """
    diff = A - v
    out = diff[:, 0] * diff[:, 0]
    for j in range(1, diff.shape[1]):
        out += diff[:, j] * diff[:, j]
    return out


def _nearest(d: np.ndarray, m: int) -> np.ndarray:
    """Positions of the ``m`` smallest entries of ``d``, ties to the lower position.

    Equivalent to ``np.argsort(d, kind="stable")[:m]`` (and returned in that
    order) but ``O(len(d))``: an ``argpartition`` finds the m-th smallest value,
    then the boundary ties are resolved by position.
    """
    if m >= d.size:
        return np.argsort(d, kind="stable")
    part = np.argpartition(d, m - 1)[:m]
    threshold = d[part].max()
    below = np.flatnonzero(d < threshold)
    at = np.flatnonzero(d == threshold)[: m - below.size]
    chosen = np.concatenate([below, at])
    return chosen[np.argsort(d[chosen], kind="stable")]


class _Pool:
    r"""The records not yet assigned to a group.

    State is real here, so this is a (private) class. It keeps

    * ``X``: a compact copy of the unassigned records (plus a few already
      removed ones, see below), in input order, and ``index``, their positions
      in the input;
    * ``sqn``: their squared norms, so that squared distances to a vector
      :math:`v` come from one matrix-vector product,
      :math:`\lVert x-v\rVert^2 = \lVert x\rVert^2 - 2x^\top v + \lVert v\rVert^2`;
    * ``total``: the sum of the unassigned records (the centroid costs
      :math:`O(p)` instead of :math:`O(np)`).

    Removed records are first only marked (``alive``); the arrays are compacted
    once a third of their rows are dead, so every step costs time proportional
    to the records that remain, and nothing of size ``n x n`` is ever built.

    The expanded formula can differ from the direct one in the last bits. So
    that decisions are *exactly* those of the direct formula, every selection
    (farthest record, nearest records) first keeps the candidates within a
    safe rounding margin of the boundary and then decides among them with
    direct distances (:func:`_sqdist`). Ties go to the record that comes first
    in the input.
    """

    def __init__(self, X: np.ndarray, aux: np.ndarray | None = None) -> None:
        self.X = X
        self.XT = np.ascontiguousarray(X.T)  # attribute-major copy: faster products
        self.index = np.arange(X.shape[0])
        self.sqn = np.einsum("ij,ij->i", X, X)
        self.alive = np.ones(X.shape[0], dtype=bool)
        self.dead = np.zeros(X.shape[0], dtype=bool)
        self.n_alive = X.shape[0]
        self.total = X.sum(axis=0)  # running total of the unassigned records
        self.aux = aux  # an optional per-record array kept aligned (V-MDAV)
        self._scale = float(self.sqn.max()) if X.shape[0] else 0.0

    def __len__(self) -> int:
        return self.n_alive

    # -- distances ---------------------------------------------------------------------
    def approx(self, v: np.ndarray) -> np.ndarray:
        """Squared distances of all rows to ``v`` (or, for a 2-D ``v``, to each of its rows).

        Uses the expanded formula; see :meth:`tol` for its rounding error.
        """
        d = v @ self.XT
        d *= -2.0
        d += self.sqn
        if v.ndim == 1:
            d += float(v @ v)
        else:
            d += np.einsum("ij,ij->i", v, v)[:, None]
        return d

    def tol(self, v: np.ndarray) -> float:
        """A bound, with a wide safety factor, on the rounding error of :meth:`approx`."""
        return 1e-9 * (self._scale + float(v @ v)) + 1e-300

    def exact(self, pos: np.ndarray, v: np.ndarray) -> np.ndarray:
        return _sqdist(self.X[pos], v)

    # -- selections --------------------------------------------------------------------
    def centroid(self) -> np.ndarray:
        return self.total / self.n_alive

    def farthest(self, v: np.ndarray) -> int:
        """Position of the unassigned record farthest from ``v`` (first on ties)."""
        d = self.approx(v)
        d[self.dead] = -np.inf
        cand = np.flatnonzero(d >= d.max() - self.tol(v))
        if cand.size == 1:
            return int(cand[0])
        return int(cand[np.argmax(self.exact(cand, v))])

    def nearest(self, v: np.ndarray, m: int, exclude: np.ndarray | None = None,
                d: np.ndarray | None = None) -> np.ndarray:
        """Positions of the ``m`` unassigned records nearest to ``v``, nearest first.

        ``exclude`` (positions) are skipped; ``d`` may pass precomputed
        :meth:`approx` distances.
        """
        d = self.approx(v) if d is None else d.copy()
        d[self.dead] = np.inf
        available = self.n_alive
        if exclude is not None:
            d[exclude] = np.inf
            available -= np.unique(exclude).size
        m = min(m, available)
        if m <= 0:
            return np.zeros(0, dtype=np.int64)
        if m == 1:
            bound = d.min()
        elif m < d.size:
            bound = d[np.argpartition(d, m - 1)[m - 1]]
        else:
            bound = d.max()
        cand = np.flatnonzero(d <= bound + self.tol(v))
        if bound == np.inf:  # fewer candidates than asked for: drop the excluded ones
            cand = cand[np.isfinite(d[cand])]
        return cand[_nearest(self.exact(cand, v), m)]

    def group_around(self, r: int, size: int) -> np.ndarray:
        """Positions of record ``r`` and its ``size - 1`` nearest unassigned records.

        ``r`` itself always belongs to its group, even when it has duplicates.
        """
        others = self.nearest(self.X[r], size - 1, exclude=np.array([r]))
        return np.concatenate([[r], others]).astype(np.int64)

    def remove(self, pos: np.ndarray) -> np.ndarray:
        """Mark the records at ``pos`` as assigned; return their input indices."""
        pos = np.asarray(pos, dtype=np.int64)
        taken = self.index[pos]
        self.alive[pos] = False
        self.dead[pos] = True
        self.n_alive -= pos.size
        for row in self.X[np.sort(pos)]:  # one record at a time, in input order
            self.total -= row
        if self.n_alive < 2 * self.alive.size // 3:
            keep = self.alive
            self.X, self.index, self.sqn = self.X[keep], self.index[keep], self.sqn[keep]
            self.XT = np.ascontiguousarray(self.XT[:, keep])
            if self.aux is not None:
                self.aux = self.aux[keep]
            self.alive = np.ones(self.n_alive, dtype=bool)
            self.dead = np.zeros(self.n_alive, dtype=bool)
        return taken

    def remaining(self) -> np.ndarray:
        """Input indices of the records still unassigned."""
        return self.index[self.alive]


def _last_groups(pool: _Pool, labels: np.ndarray, g: int, k: int) -> np.ndarray:
    """The end of MDAV and IV-MDAV, once fewer than 3k records remain.

    With 2k or more left, one more group of k around the record farthest from
    their centroid; the rest (k..2k-1 records) form the last group.
    """
    if len(pool) >= 2 * k:
        r = pool.farthest(pool.centroid())
        labels[pool.remove(pool.group_around(r, k))] = g
        g += 1
    if len(pool):
        labels[pool.remaining()] = g
    return labels


def _prepare(X: Any, k: Any) -> tuple[np.ndarray, int]:
    """The data (times a power of two if squares would overflow/underflow: exact) and k."""
    arr = as_matrix(X)
    return rescaled(arr), check_k(k, arr.shape[0])


def _unlabelled(arr: np.ndarray) -> np.ndarray:  # every record starts in no group (-1)
    return np.full(arr.shape[0], -1, dtype=np.int64)


def mdav(X: Any, k: int) -> np.ndarray:
    r"""MDAV (Maximum Distance to Average Vector): a fixed-size k-partition.

    Steps 1-6 of Algorithm 1 in Domingo-Ferrer's survey
    :cite:p:`domingo2006survey`, after Domingo-Ferrer & Mateo-Sanz (2002):

    1. compute the centroid :math:`\bar{\mathbf{x}}` of the remaining records and
       the record :math:`\mathbf{x}_r` farthest from it;
    2. find the record :math:`\mathbf{x}_s` farthest from :math:`\mathbf{x}_r`;
    3. form a group of :math:`\mathbf{x}_r` and its :math:`k-1` nearest records,
       then a group of :math:`\mathbf{x}_s` and its :math:`k-1` nearest among
       those left;
    4. while at least :math:`3k` records remain, repeat;
    5. if :math:`2k \le` remaining :math:`< 3k`: one more group of :math:`k` around
       the record farthest from the new centroid, the rest form the last group;
    6. if fewer than :math:`2k` remain, they form the last group.

    All groups have exactly ``k`` records except the last, which has
    ``k..2k-1``.

    Book: :ref:`chap-mdav`.

    Parameters
    ----------
    X : array_like, shape (n, p)
        Records (rows) by attributes (columns); standardise first if the
        attributes are on different scales.
    k : int
        Minimum group size, ``1 <= k <= n``.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        Group label of every record, groups numbered in order of formation.

    Notes
    -----
    Readings of details the survey leaves open:

    * Distances are squared Euclidean (the survey's step 1 says so; only
      their order matters).
    * :math:`\mathbf{x}_s` is searched among the records not in
      :math:`\mathbf{x}_r`'s group. This is the same record as searching
      before forming that group except in degenerate ties, and it guarantees
      that :math:`\mathbf{x}_s` is still available.
    * Ties (equal distances) go to the record that comes first in ``X``.

    With standardised attributes this reproduces the MDAV SSE published in the
    IV-MDAV paper's Table 1 for Census, EIA and Tarragona at k = 3, 4, 5, 10
    (:ref:`chap-mdav`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2], [9.0], [9.1], [9.3]])
    >>> mdav(X, 3).tolist()
    [0, 0, 0, 2, 2, 2, 1, 1, 1]
    """
    arr, k = _prepare(X, k)
    if HAVE_NUMBA:
        return _loops.mdav_loops(arr, k, arr.sum(axis=0), True)
    return _mdav_numpy(arr, k, True)


def _mdav_numpy(arr: np.ndarray, k: int, two_groups: bool) -> np.ndarray:
    """:func:`mdav` (``two_groups=True``) or :func:`mdav_single` on the numpy engine."""
    labels = _unlabelled(arr)
    pool = _Pool(arr)
    g = 0
    while len(pool) >= 3 * k:
        r = pool.farthest(pool.centroid())
        xr = pool.X[r].copy()
        labels[pool.remove(pool.group_around(r, k))] = g
        g += 1
        if two_groups:
            s = pool.farthest(xr)
            labels[pool.remove(pool.group_around(s, k))] = g
            g += 1
    return _last_groups(pool, labels, g, k)


def mdav_single(X: Any, k: int) -> np.ndarray:
    r"""MDAV-single-group: MDAV forming one group per round.

    The variant the IV-MDAV paper builds on :cite:p:`rawat2014ivmdav`: while
    at least :math:`2k` records remain, compute the centroid of the remaining
    records, take the record farthest from it and group it with its
    :math:`k-1` nearest records. The :math:`k..2k-1` records left form the
    last group. Unlike :func:`mdav` there is no second group around the record
    farthest from :math:`\mathbf{x}_r`: the centroid is recomputed after every
    group.

    This is :func:`ivmdav` with the extension step switched off, which is how
    the IV-MDAV paper presents it (its IV-MDAV steps 1-5 without 2.3 and 2.8).

    Book: :ref:`chap-ivmdav`.

    Parameters
    ----------
    X : array_like, shape (n, p)
    k : int

    Returns
    -------
    numpy.ndarray of int64, shape (n,)

    Notes
    -----
    :ref:`chap-ivmdav` reproduces the paper's
    MDAV-single-group row of Table 1 with it.
    """
    arr, k = _prepare(X, k)
    if HAVE_NUMBA:
        return _loops.mdav_loops(arr, k, arr.sum(axis=0), False)
    return _mdav_numpy(arr, k, False)


def vmdav(X: Any, k: int, *, gamma: float = 0.2, leftover: str = "centroid") -> np.ndarray:
    r"""V-MDAV: variable-size MDAV with gain factor :math:`\gamma`.

    Algorithm 1 of Solanas & Martinez-Balleste (2006)
    :cite:p:`solanas2006vmdav`:

    1. compute the centroid :math:`C` of the whole data set once;
    2. while at least :math:`k` records are unassigned: take the unassigned
       record :math:`e` farthest from :math:`C`, and group it with its
       :math:`k-1` nearest unassigned records;
    3. extend the group: let :math:`e_{min}` be the unassigned record nearest
       to any member of the group, at distance :math:`d_{in}`, and
       :math:`d_{out}` the distance from :math:`e_{min}` to its nearest other
       unassigned record; add :math:`e_{min}` while

       .. math:: d_{in} < \gamma\, d_{out}

       and the group has fewer than :math:`2k-1` records;
    4. assign the (fewer than :math:`k`) records left to their closest group.

    Book: :ref:`chap-vmdav`.

    Parameters
    ----------
    X : array_like, shape (n, p)
    k : int
    gamma : float, default 0.2
        Gain factor. ``gamma = 0`` never extends a group (the result is then a
        fixed-size partition like MDAV's, but around a fixed centroid). The
        paper uses 0.2 for scattered data and 1.1 for clustered data.
    leftover : {"centroid", "record"}
        What "closest group" means for the last records (the paper does not
        say): the group whose centroid is nearest (default), or the group
        holding the nearest record.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)

    Notes
    -----
    Readings of details the paper leaves open, chosen to match the published
    numbers best (:ref:`chap-vmdav`, lists the alternatives
    and what each gives):

    * :math:`d_{in}` and :math:`d_{out}` are plain Euclidean distances.
    * When :math:`e_{min}` is the last unassigned record, :math:`d_{out}` is
      infinite and the record joins the group (if the group has room).
    * The paper breaks ties in :math:`e_{min}` at random; we take the first
      record in input order, which keeps the function deterministic.
    * The leftover records (fewer than ``k``) may push a group beyond
      :math:`2k-1` records; this is the only way a group can exceed that size.
    """
    arr, k = _prepare(X, k)
    gamma = check_real(gamma, "gamma")
    if leftover not in ("centroid", "record"):
        raise ValueError(f"leftover must be 'centroid' or 'record', got {leftover!r}")
    # Distances to the fixed global centroid C, computed once (lines 3 and 5).
    to_c = _sqdist(arr, arr.mean(axis=0))
    if HAVE_NUMBA:
        labels = _loops.vmdav_loops(arr, k, gamma, to_c)
    else:
        labels = _vmdav_numpy(arr, k, gamma, to_c)
    return _assign_leftovers(arr, labels, leftover)


def _vmdav_numpy(arr: np.ndarray, k: int, gamma: float, to_c: np.ndarray) -> np.ndarray:
    """V-MDAV's main loop on the vectorised numpy engine; leftovers stay ``-1``."""
    labels = _unlabelled(arr)
    pool = _Pool(arr, aux=to_c)
    g = 0
    while len(pool) >= k:
        to_c = np.where(pool.alive, pool.aux, -np.inf)
        members = list(pool.group_around(int(np.argmax(to_c)), k))
        in_group = np.zeros(pool.alive.size, dtype=bool)
        in_group[members] = True
        # squared distance from every record to the group (minimum over members)
        d_group = pool.approx(pool.X[members]).min(axis=0)
        while len(members) < 2 * k - 1 and len(members) < len(pool):
            e_min, d_in = _closest_to_group(pool, members, in_group, d_group)
            d_e = pool.approx(pool.X[e_min])
            out = pool.nearest(pool.X[e_min], 1, exclude=np.append(members, e_min), d=d_e)
            d_out = np.sqrt(pool.exact(out, pool.X[e_min])[0]) if out.size else np.inf
            if not d_in < gamma * d_out:
                break
            members.append(e_min)
            in_group[e_min] = True
            np.minimum(d_group, d_e, out=d_group)
        labels[pool.remove(np.asarray(members))] = g
        g += 1
    return labels


def _assign_leftovers(arr: np.ndarray, labels: np.ndarray, leftover: str) -> np.ndarray:
    """V-MDAV's last step: the unlabelled records (fewer than k) join their closest group."""
    left = np.flatnonzero(labels < 0)
    if left.size:
        done = labels >= 0
        g = int(labels.max()) + 1
        if leftover == "centroid":
            sums = np.zeros((g, arr.shape[1]))
            np.add.at(sums, labels[done], arr[done])
            centroids = sums / np.bincount(labels[done], minlength=g)[:, None]
            new = [int(np.argmin(_sqdist(centroids, arr[i]))) for i in left]
        else:
            idx = np.flatnonzero(done)
            new = [labels[idx[int(np.argmin(_sqdist(arr[idx], arr[i])))]] for i in left]
        labels[left] = new
    return labels


def _closest_to_group(pool: _Pool, members: list[int], in_group: np.ndarray,
                      d_group: np.ndarray) -> tuple[int, float]:
    """V-MDAV's Equations (2)-(3): the unassigned record nearest to the group.

    Returns its position and its (plain Euclidean) distance :math:`d_{in}` to the
    nearest group member. Candidates come from the running minimum ``d_group``;
    the winner is decided with direct distances (first record on ties).
    """
    d = np.where(pool.alive & ~in_group, d_group, np.inf)
    best = d.min()
    cand = np.flatnonzero(d <= best + pool.tol(pool.X[members[0]]) * 4)
    M = pool.X[members]
    exact = np.array([_sqdist(M, pool.X[c]).min() for c in cand])
    i = int(np.argmin(exact))
    return int(cand[i]), float(np.sqrt(exact[i]))


def ivmdav(X: Any, k: int, *, gamma: float = 1.16, candidates: int | None = None,
           self_neighbour: bool = True) -> np.ndarray:
    r"""IV-MDAV: MDAV-single-group with a variable-size extension step.

    The algorithm of Rawat & Borah :cite:p:`rawat2014ivmdav`:

    1. while at least :math:`3k` records remain: take the record
       :math:`\mathbf{x}_r` farthest from the centroid of the remaining
       records and its nearest neighbours :math:`y_1 = \mathbf{x}_r, y_2,
       \dots, y_{2k}`; the first :math:`k` form a group;
    2. for :math:`j = k+1, \dots, 2k`: let :math:`z_k` be the :math:`k`-th
       nearest unassigned record to :math:`y_j`, :math:`d_1 = d(y_j,
       \mathbf{x}_r)` and :math:`d_2 = d(y_j, z_k)`; if

       .. math:: d_2 > \gamma\, d_1

       and the group has fewer than :math:`2k-1` records, :math:`y_j` joins it;
    3. if at least :math:`2k` records remain, one more group of :math:`k`
       around the farthest record; the rest form the last group.

    Book: :ref:`chap-ivmdav`.

    Parameters
    ----------
    X : array_like, shape (n, p)
    k : int
    gamma : float, default 1.16
        The paper's recommended value (it suggests 1.0-1.2).
    candidates : int, optional
        How many neighbours of :math:`\mathbf{x}_r` are considered (default
        ``2k``, the paper's choice; its future-work section suggests ``3k``).
    self_neighbour : bool, default True
        Whether :math:`y_j` counts as its own first neighbour :math:`z_1` (step
        2.8.1 searches "in X", which still holds :math:`y_j`). ``False`` takes
        :math:`z_1, \dots, z_k` among the *other* unassigned records; :ref:`chap-ivmdav`
        shows that this reading is far from the published numbers on EIA.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)

    Notes
    -----
    Readings of details the paper leaves open (:ref:`chap-ivmdav` shows the effect of
    the alternatives on its Table 1):

    * :math:`y_1` is :math:`\mathbf{x}_r` itself, so the first group is
      :math:`\mathbf{x}_r` and its :math:`k-1` nearest records, as in MDAV.
    * The neighbours :math:`z_1, \dots, z_k` of :math:`y_j` are searched among
      the unassigned records outside the group, :math:`y_j` itself included
      (``self_neighbour=True``), so :math:`z_k` is its :math:`(k-1)`-th nearest
      other record. Of the readings we tried this is the one that reproduces
      the published table (:ref:`chap-ivmdav`).
    * Each candidate is tested in turn even after one is rejected.
    * Step 3 uses "at least :math:`2k`" so that no group exceeds :math:`2k-1`.
    """
    arr, k = _prepare(X, k)
    gamma = check_real(gamma, "gamma")
    m = 2 * k if candidates is None else check_count(candidates, "candidates", k)
    own = check_flag(self_neighbour, "self_neighbour")
    if HAVE_NUMBA:  # (more candidates than records change nothing: the search stops there)
        return _loops.ivmdav_loops(arr, k, gamma, min(m, arr.shape[0]), own, arr.sum(axis=0))
    return _ivmdav_numpy(arr, k, gamma, m, own)


def _ivmdav_numpy(arr: np.ndarray, k: int, gamma: float, m: int,
                  self_neighbour: bool) -> np.ndarray:
    """:func:`ivmdav` on the vectorised numpy engine (used without numba)."""
    labels = _unlabelled(arr)
    pool = _Pool(arr)
    g = 0
    while len(pool) >= 3 * k:
        r = pool.farthest(pool.centroid())
        xr = pool.X[r].copy()
        ys = pool.group_around(r, m)
        group = list(ys[:k])
        d_cands = pool.approx(pool.X[ys[k:]])  # one pass over the pool for all candidates
        for y, d_y in zip(ys[k:], d_cands, strict=True):
            if len(group) >= 2 * k - 1:
                break
            # with z_1 = y itself, z_k is the (k-1)-th nearest other unassigned record
            need = k - 1 if self_neighbour else k
            zs = pool.nearest(pool.X[y], need, exclude=np.append(group, y), d=d_y)
            if zs.size < need or need == 0:
                continue
            d2 = np.sqrt(pool.exact(zs[-1:], pool.X[y])[0])
            d1 = np.sqrt(_sqdist(pool.X[y][None, :], xr)[0])
            if d2 > gamma * d1:
                group.append(y)
        labels[pool.remove(np.asarray(group))] = g
        g += 1
    return _last_groups(pool, labels, g, k)
