r"""The ``"numpy"`` engine: the MDAV family vectorised with numpy (used without numba).

Kept beside the compiled loops and the indexed engine as a third, independent
implementation: the tests check that all three give the same labels. The unassigned
records are kept in a compact array (:class:`_Pool`) that is shrunk as groups are removed,
and candidate distances come from matrix-vector products; every decision is then taken
on direct distances (:func:`~microagg._mdav.kernels.sqdist`), summed attribute by
attribute in column order like the loops, with ties to the record that comes first in
the data. The four functions follow the engine contract of :mod:`microagg._mdav`.
"""

from __future__ import annotations

import numpy as np

from .kernels import sqdist

__all__ = ["mdav", "mdav_single", "vmdav", "ivmdav"]


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


#: Up to this many entries below the m-th smallest, :func:`_kth_smallest` finds it by
#: repeated minima (one fast pass each) instead of ``np.argpartition``, whose selection
#: costs about as much as 25-50 such passes (30,000 entries: 300 us against 6 us).
_FEW_MINIMA = 16


def _kth_smallest(d: np.ndarray, m: int) -> float:
    """The ``m``-th smallest entry of ``d`` (``1 <= m <= d.size``), repeats counted: the
    value ``d[np.argpartition(d, m - 1)[m - 1]]``. ``d`` is modified meanwhile and
    restored before returning."""
    if m - 1 > _FEW_MINIMA:
        return float(d[np.argpartition(d, m - 1)[m - 1]])
    taken = np.empty(m - 1, dtype=np.int64)
    saved = np.empty(m - 1)
    for t in range(m - 1):  # set the m - 1 smallest aside, one at a time
        i = int(d.argmin())
        taken[t], saved[t] = i, d[i]
        d[i] = np.inf
    bound = float(d.min())
    d[taken[::-1]] = saved[::-1]  # (an entry taken twice was inf both times)
    return bound


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
    direct distances (:func:`sqdist`). Ties go to the record that comes first
    in the input.
    """

    def __init__(self, X: np.ndarray, total: np.ndarray, aux: np.ndarray | None = None) -> None:
        self.X = X
        self.XT = np.ascontiguousarray(X.T)  # attribute-major copy: faster products
        self.index = np.arange(X.shape[0])
        self.sqn = np.einsum("ij,ij->i", X, X)
        self.alive = np.ones(X.shape[0], dtype=bool)
        self.dead = np.zeros(X.shape[0], dtype=bool)
        self.n_alive = X.shape[0]
        self.total = total  # running total of the unassigned records
        self.aux = aux  # an optional per-record array kept aligned (V-MDAV)
        self._scale = float(self.sqn.max()) if X.shape[0] else 0.0
        self.kept: np.ndarray | None = None  # the rows the last remove() compacted to

    def carry(self, d: np.ndarray) -> np.ndarray:
        """Distances computed before the last :meth:`remove`, for the rows now held."""
        return d if self.kept is None else d[self.kept]

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
        return sqdist(self.X[pos], v)

    # -- selections --------------------------------------------------------------------
    def centroid(self) -> np.ndarray:
        return self.total / self.n_alive

    def farthest(self, v: np.ndarray, d: np.ndarray | None = None) -> int:
        """Position of the unassigned record farthest from ``v`` (first on ties).

        ``d`` may pass precomputed :meth:`approx` distances (overwritten).
        """
        d = self.approx(v) if d is None else d
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
            bound = _kth_smallest(d, m)
        else:
            bound = d.max()
        cand = np.flatnonzero(d <= bound + self.tol(v))
        if bound == np.inf:  # fewer candidates than asked for: drop the excluded ones
            cand = cand[np.isfinite(d[cand])]
        return cand[_nearest(self.exact(cand, v), m)]

    def group_around(self, r: int, size: int, d: np.ndarray | None = None) -> np.ndarray:
        """Positions of record ``r`` and its ``size - 1`` nearest unassigned records.

        ``r`` itself always belongs to its group, even when it has duplicates. ``d`` may
        pass the precomputed :meth:`approx` distances to record ``r``.
        """
        others = self.nearest(self.X[r], size - 1, exclude=np.array([r]), d=d)
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
        self.kept = None
        if self.n_alive < 2 * self.alive.size // 3:
            keep = self.kept = self.alive
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


def _unlabelled(arr: np.ndarray) -> np.ndarray:  # every record starts in no group (-1)
    return np.full(arr.shape[0], -1, dtype=np.int64)


def _mdav_rounds(arr: np.ndarray, k: int, total: np.ndarray, two_groups: bool) -> np.ndarray:
    """MDAV (``two_groups=True``) or MDAV-single-group."""
    labels = _unlabelled(arr)
    pool = _Pool(arr, total)
    g = 0
    while len(pool) >= 3 * k:
        r = pool.farthest(pool.centroid())
        xr = pool.X[r].copy()
        dr = pool.approx(xr)  # used twice: x_r's group, then the record farthest from x_r
        labels[pool.remove(pool.group_around(r, k, d=dr))] = g
        g += 1
        if two_groups:
            s = pool.farthest(xr, d=pool.carry(dr))
            labels[pool.remove(pool.group_around(s, k))] = g
            g += 1
    return _last_groups(pool, labels, g, k)


def mdav(X: np.ndarray, k: int, total: np.ndarray) -> np.ndarray:
    """MDAV on the numpy engine (engine contract of :mod:`microagg._mdav`)."""
    return _mdav_rounds(X, k, total, True)


def mdav_single(X: np.ndarray, k: int, total: np.ndarray) -> np.ndarray:
    """MDAV-single-group on the numpy engine (engine contract of :mod:`microagg._mdav`)."""
    return _mdav_rounds(X, k, total, False)


def vmdav(X: np.ndarray, k: int, gamma: float, to_c: np.ndarray) -> np.ndarray:
    """V-MDAV's main loop on the numpy engine (engine contract of :mod:`microagg._mdav`)."""
    labels = _unlabelled(X)
    pool = _Pool(X, X.sum(axis=0), aux=to_c)
    g = 0
    assert pool.aux is not None  # the pool carries to_c (for the type checker)
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
    exact = np.array([sqdist(M, pool.X[c]).min() for c in cand])
    i = int(np.argmin(exact))
    return int(cand[i]), float(np.sqrt(exact[i]))


def ivmdav(X: np.ndarray, k: int, gamma: float, n_candidates: int, self_neighbour: bool,
           total: np.ndarray) -> np.ndarray:
    """IV-MDAV on the numpy engine (engine contract of :mod:`microagg._mdav`)."""
    labels = _unlabelled(X)
    pool = _Pool(X, total)
    g = 0
    while len(pool) >= 3 * k:
        r = pool.farthest(pool.centroid())
        xr = pool.X[r].copy()
        ys = pool.group_around(r, n_candidates)
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
            d1 = np.sqrt(sqdist(pool.X[y][None, :], xr)[0])
            if d2 > gamma * d1:
                group.append(y)
        labels[pool.remove(np.asarray(group))] = g
        g += 1
    return _last_groups(pool, labels, g, k)
