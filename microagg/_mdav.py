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

There are three engines; every function takes ``engine="auto"`` (the default),
``"indexed"``, ``"loops"`` or ``"numpy"``:

* ``"loops"``: with numba installed (``pip install microagg[fast]``), plain
  loops in :mod:`microagg._mdav_loops`, compiled to machine code: one pass over
  the unassigned records per step, a heap for nearest neighbours, and (IV-MDAV)
  the triangle inequality to skip records in the candidate tests. Time
  :math:`O(n^2 p / k)`. (Without numba they run as plain, slow Python.)
* ``"indexed"``: :mod:`microagg._mdav_index`, a kd-tree for the nearest
  records and radius-sorted direction buckets for the farthest ones, so that
  most records are never looked at; sub-quadratic on moderate ``p``.
* ``"numpy"``: the vectorised numpy code of :mod:`microagg._mdav_vector`: the
  unassigned records are kept in a compact array that is shrunk as groups are
  removed, and distances come from matrix-vector products.

``"auto"`` takes ``"indexed"`` for :math:`n \ge \max(2000, 40p^2)` and
:math:`p \le 40` with numba, ``"loops"`` otherwise with numba and ``"numpy"``
without (:func:`microagg._mdav_index.choose_engine`; the break-even sizes were
measured with ``tests/benchmarks/bench_scale.py``).

All engines give the same labels (tested), ties included, because they do
the same arithmetic: squared distances summed attribute by attribute in
column order (:func:`microagg._mdav_vector.sqdist`), and the centroid of the unassigned records as
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

from . import _mdav_index as _index
from . import _mdav_loops as _loops
from . import _mdav_vector as _vector
from ._validate import as_matrix, check_count, check_flag, check_k, check_real, rescaled

__all__ = ["mdav", "mdav_single", "vmdav", "ivmdav"]


# -- engine dispatch: the one place that knows the three engines ------------------------

def _run_mdav(arr: np.ndarray, k: int, two_groups: bool, engine: str) -> np.ndarray:
    chosen = _index.choose_engine(engine, arr)
    if chosen == "indexed":
        return _index.mdav(arr, k, arr.sum(axis=0), two_groups)
    if chosen == "loops":
        return _loops.mdav_loops(arr, k, arr.sum(axis=0), two_groups)
    return _vector.mdav(arr, k, two_groups)


def _run_vmdav(arr: np.ndarray, k: int, gamma: float, to_c: np.ndarray,
               engine: str) -> np.ndarray:
    chosen = _index.choose_engine(engine, arr)
    if chosen == "indexed":
        return _index.vmdav(arr, k, gamma, to_c)
    if chosen == "loops":
        return _loops.vmdav_loops(arr, k, gamma, to_c)
    return _vector.vmdav(arr, k, gamma, to_c)


def _run_ivmdav(arr: np.ndarray, k: int, gamma: float, m: int, self_neighbour: bool,
                engine: str) -> np.ndarray:
    chosen = _index.choose_engine(engine, arr)
    # (more candidates than records changes nothing: the search stops at the records left)
    if chosen == "indexed":
        return _index.ivmdav(arr, k, gamma, min(m, arr.shape[0]), self_neighbour,
                             arr.sum(axis=0))
    if chosen == "loops":
        return _loops.ivmdav_loops(arr, k, gamma, min(m, arr.shape[0]), self_neighbour,
                                   arr.sum(axis=0))
    return _vector.ivmdav(arr, k, gamma, m, self_neighbour)


def _prepare(X: Any, k: Any) -> tuple[np.ndarray, int]:
    """The data (times a power of two if squares would overflow/underflow: exact) and k."""
    arr = as_matrix(X)
    return rescaled(arr), check_k(k, arr.shape[0])


def mdav(X: Any, k: int, *, engine: str = "auto") -> np.ndarray:
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
    engine : {"auto", "indexed", "loops", "numpy"}, default "auto"
        Which implementation runs; all return the same labels. ``"auto"``
        takes the indexed engine for ``n >= max(2000, 40 p**2)`` and
        ``p <= 40`` (with numba), where it is faster: at n = 100,000 and
        p = 10 about 8 times (the notes of ``microagg._mdav``).

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
    return _run_mdav(arr, k, True, engine)


def mdav_single(X: Any, k: int, *, engine: str = "auto") -> np.ndarray:
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
    engine : {"auto", "indexed", "loops", "numpy"}, default "auto"
        As for :func:`mdav`.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)

    Notes
    -----
    :ref:`chap-ivmdav` reproduces the paper's
    MDAV-single-group row of Table 1 with it.
    """
    arr, k = _prepare(X, k)
    return _run_mdav(arr, k, False, engine)


def vmdav(X: Any, k: int, *, gamma: float = 0.2, leftover: str = "centroid",
          engine: str = "auto") -> np.ndarray:
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
    engine : {"auto", "indexed", "loops", "numpy"}, default "auto"
        As for :func:`mdav`.

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
    to_c = _vector.sqdist(arr, arr.mean(axis=0))
    labels = _run_vmdav(arr, k, gamma, to_c, engine)
    return _assign_leftovers(arr, labels, leftover)


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
            new = [int(np.argmin(_vector.sqdist(centroids, arr[i]))) for i in left]
        else:
            idx = np.flatnonzero(done)
            new = [labels[idx[int(np.argmin(_vector.sqdist(arr[idx], arr[i])))]] for i in left]
        labels[left] = new
    return labels


def ivmdav(X: Any, k: int, *, gamma: float = 1.16, candidates: int | None = None,
           self_neighbour: bool = True, engine: str = "auto") -> np.ndarray:
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
    engine : {"auto", "indexed", "loops", "numpy"}, default "auto"
        As for :func:`mdav`.

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
    return _run_ivmdav(arr, k, gamma, m, own, engine)


