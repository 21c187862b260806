r"""The MDAV family as plain loops, compiled by numba when it is installed.

This is the ``"loops"`` engine of :mod:`microagg._mdav` (which has three for the
same four heuristics; its docstring says which one ``engine="auto"`` picks):

* these loops, used when numba is available (``pip install microagg[fast]``).
  Each pass over the unassigned records computes a squared distance per record
  and keeps what the step needs (the farthest record, the nearest few in a
  small heap, a running minimum) without building intermediate arrays; at
  ``n = 1,000`` this is about ten times faster than the numpy engine, whose
  cost there is mostly the overhead of several numpy calls per group
  (``tests/benchmarks/bench_mdav.py``);
* the vectorised numpy engine, :mod:`microagg._mdav_vector`, used without numba
  (Pyodide, JupyterLite, ``MICROAGG_DISABLE_NUMBA=1``);
* the indexed engine, :mod:`microagg._mdav_index`, for large ``n`` and moderate
  ``p``, which uses these loops' arithmetic but looks at few records per step.

All engines follow the same arithmetic, so they return the same labels:

* squared distances are summed attribute by attribute, in column order
  (:func:`microagg._mdav_vector.sqdist` does the same with one numpy operation
  per column);
* the centroid of the unassigned records is their running total divided by
  their number; the total starts as numpy's column sums (passed in, so every
  engine starts from the same numbers) and loses each record of a new group in
  input order;
* the records not yet assigned are kept as a compact list of row numbers in
  input order, so "first on ties" means the lowest row number, the rule of
  :mod:`microagg.reference` too.

The functions here take a C-contiguous float64 array that
:mod:`microagg._mdav` has validated, and return int64 labels (``-1`` for the
records V-MDAV leaves to its final assignment step). Without numba they still
run, as ordinary (slow) Python; the tests use that to check the loops
themselves on small inputs.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit

# Helpers: one pass over the remaining rows ``rows[:m]`` each ----------------------------


@njit
def _sqdist_row(X, i, v):  # type: ignore[no-untyped-def]
    """Squared Euclidean distance from record ``i`` to the vector ``v``."""
    s = 0.0
    for j in range(X.shape[1]):
        t = X[i, j] - v[j]
        s += t * t
    return s


@njit
def _distances(X, rows, m, v, d):  # type: ignore[no-untyped-def]
    """``d[a]`` = squared distance from record ``rows[a]`` to ``v``, for ``a < m``."""
    for a in range(m):
        d[a] = _sqdist_row(X, rows[a], v)


@njit
def _argmax(d, m):  # type: ignore[no-untyped-def]
    """Position of the largest of ``d[:m]`` (the first one on ties)."""
    best = 0
    top = d[0]
    for a in range(1, m):
        if d[a] > top:
            best = a
            top = d[a]
    return best


@njit
def _farthest_from_centroid(X, rows, m, total, c):  # type: ignore[no-untyped-def]
    """Position of the remaining record farthest from their centroid ``total / m``."""
    for j in range(X.shape[1]):
        c[j] = total[j] / m
    best = 0
    top = -1.0
    for a in range(m):
        s = _sqdist_row(X, rows[a], c)
        if s > top:
            best = a
            top = s
    return best


@njit(inline="always")
def _after(d1, a1, d2, a2):  # type: ignore[no-untyped-def]
    """Whether (distance ``d1``, position ``a1``) comes after (``d2``, ``a2``): farther, or
    equally far and later in the input."""
    return d1 > d2 or (d1 == d2 and a1 > a2)


@njit
def _offer(heap_d, heap_a, count, size, s, a):  # type: ignore[no-untyped-def]
    """Offer record position ``a`` at squared distance ``s`` to a max-heap of the best ``size``.

    The heap is ordered by (distance, position), so among equal distances the
    later record is the first to go: the kept set is exactly the first ``size``
    of a stable sort. Returns the new number of entries.
    """
    if count == size:
        if _after(s, a, heap_d[0], heap_a[0]):
            return count  # not better than the worst kept: the usual, cheap case
        i = 0  # replace the worst (the root) and sift down
        while True:
            child = 2 * i + 1
            if child >= count:
                break
            if child + 1 < count and _after(heap_d[child + 1], heap_a[child + 1],
                                            heap_d[child], heap_a[child]):
                child += 1
            if _after(heap_d[child], heap_a[child], s, a):
                heap_d[i] = heap_d[child]
                heap_a[i] = heap_a[child]
                i = child
            else:
                break
        heap_d[i] = s
        heap_a[i] = a
        return count
    i = count  # not yet full: append and sift up
    while i > 0:
        parent = (i - 1) // 2
        if _after(s, a, heap_d[parent], heap_a[parent]):
            heap_d[i] = heap_d[parent]
            heap_a[i] = heap_a[parent]
            i = parent
        else:
            break
    heap_d[i] = s
    heap_a[i] = a
    return count + 1


@njit
def _sort_pairs(dist, out, count):  # type: ignore[no-untyped-def]
    """Sort ``out[:count]`` (positions) and ``dist[:count]`` by (distance, position)."""
    for i in range(1, count):
        s = dist[i]
        a = out[i]
        j = i
        while j > 0 and _after(dist[j - 1], out[j - 1], s, a):
            dist[j] = dist[j - 1]
            out[j] = out[j - 1]
            j -= 1
        dist[j] = s
        out[j] = a


@njit
def _nearest_to(X, rows, m, v, size, taken, skip, out, dist, d):  # type: ignore[no-untyped-def]
    """The ``size`` remaining records nearest to ``v``, skipping flagged ones and ``skip``.

    One pass: ``d[:m]`` receives the squared distance of every remaining record
    to ``v``; the nearest ``size`` eligible ones are kept in a heap. Their
    positions go to ``out`` and their distances to ``dist``, nearest first
    (equal distances in position order, as a stable sort). Returns how many
    were found: ``size``, or fewer if fewer records are eligible.
    """
    count = 0
    for a in range(m):
        s = _sqdist_row(X, rows[a], v)
        d[a] = s
        if not taken[a] and a != skip:
            count = _offer(dist, out, count, size, s, a)
    _sort_pairs(dist, out, count)
    return count


@njit
def _kth_nearest_pruned(X, rows, m, y, kth, taken, root, seeds, n_seeds, seen,  # type: ignore[no-untyped-def]
                        heap_d, heap_a):
    r"""Squared distance from position ``y`` to its ``kth`` nearest eligible record.

    Eligible: remaining, not flagged in ``taken``, not ``y`` itself. Returns
    ``inf`` if fewer than ``kth`` records are eligible.

    ``root[a]`` is the (plain) distance from one fixed point, IV-MDAV's
    :math:`\mathbf{x}_r`, to record ``a``. By the triangle inequality

    .. math:: d(y, a) \ge |d(x_r, a) - d(x_r, y)|,

    so once ``kth`` records are known, a record whose lower bound exceeds the
    ``kth`` best distance so far is skipped without computing its distance. The
    positions ``seeds[:n_seeds]`` (records near ``y``) are tried first, so that
    the bound is tight from the start. A relative margin of :math:`10^{-9}`
    absorbs rounding; the records that are not skipped get the usual distance,
    so the result is exactly that of a full search.
    """
    v = X[rows[y]].copy()
    ry = root[y]
    count = 0
    reach = np.inf  # the kth best plain distance so far
    for i in range(n_seeds + m):
        a = seeds[i] if i < n_seeds else i - n_seeds
        if i < n_seeds:
            seen[a] = True
        elif seen[a]:
            continue
        if taken[a] or a == y:
            continue
        if abs(root[a] - ry) > reach + 1e-9 * (root[a] + ry):
            continue
        s = _sqdist_row(X, rows[a], v)
        count = _offer(heap_d, heap_a, count, kth, s, a)
        if count == kth:
            reach = np.sqrt(heap_d[0])
    for i in range(n_seeds):
        seen[seeds[i]] = False
    return heap_d[0] if count == kth else np.inf


@njit
def _remove(X, rows, m, taken, labels, g, total, keep):  # type: ignore[no-untyped-def]
    """Label the positions flagged in ``taken[:m]`` as group ``g`` and drop them.

    Their records leave the running ``total`` in input order; ``rows[:m]`` and
    ``keep[:m]`` (an array aligned with the rows, e.g. their distances) are
    compacted in order. Returns the new number of remaining records and resets
    the flags.
    """
    w = 0
    for a in range(m):
        if taken[a]:
            labels[rows[a]] = g
            for j in range(X.shape[1]):
                total[j] -= X[rows[a], j]
            taken[a] = False
        else:
            rows[w] = rows[a]
            keep[w] = keep[a]
            w += 1
    return w


@njit
def _group_around(X, rows, m, r, size, taken, out, dist, d):  # type: ignore[no-untyped-def]
    """Position ``r`` and its ``size - 1`` nearest remaining records, into ``out[:size]``.

    ``r`` comes first, then the others nearest first; ``r`` belongs to its own
    group even when it has duplicates. ``dist`` receives their squared distances
    to record ``rows[r]`` and ``d[:m]`` those of every remaining record. The
    records are not flagged (see :func:`_flag`). Returns the group's size.
    """
    got = 1
    if size > 1:
        got += _nearest_to(X, rows, m, X[rows[r]].copy(), size - 1, taken, r,
                           out[1:], dist[1:], d)
    else:
        _distances(X, rows, m, X[rows[r]].copy(), d)
    out[0] = r
    dist[0] = 0.0
    return got


@njit
def _flag(taken, out, count):  # type: ignore[no-untyped-def]
    for i in range(count):
        taken[out[i]] = True


@njit
def _last_groups(X, k, rows, m, total, labels, g, c, d, out, dist, taken):  # type: ignore[no-untyped-def]
    """End of MDAV and IV-MDAV: with >= 2k left, one more group of k; the rest form the last."""
    if m >= 2 * k:
        r = _farthest_from_centroid(X, rows, m, total, c)
        _flag(taken, out, _group_around(X, rows, m, r, k, taken, out, dist, d))
        m = _remove(X, rows, m, taken, labels, g, total, d)
        g += 1
    for a in range(m):
        labels[rows[a]] = g


# The four heuristics ------------------------------------------------------------------


@njit
def mdav_loops(X, k, total, two_groups):  # type: ignore[no-untyped-def]
    r"""MDAV (``two_groups=True``) or MDAV-single-group (``False``).

    See :func:`microagg.mdav` (survey Algorithm 1: a group around
    :math:`\mathbf{x}_r` and one around :math:`\mathbf{x}_s` per round) and
    :func:`microagg.mdav_single` (only the first of the two).
    """
    n, p = X.shape
    labels = np.full(n, -1, np.int64)
    rows = np.arange(n)
    d = np.empty(n)
    out = np.empty(k, np.int64)
    dist = np.empty(k)
    taken = np.zeros(n, np.bool_)
    c = np.empty(p)
    m = n
    g = 0
    while m >= 3 * k:
        r = _farthest_from_centroid(X, rows, m, total, c)
        _flag(taken, out, _group_around(X, rows, m, r, k, taken, out, dist, d))
        m = _remove(X, rows, m, taken, labels, g, total, d)
        g += 1
        if two_groups:
            s = _argmax(d, m)  # farthest from x_r: d still holds the distances to it
            _flag(taken, out, _group_around(X, rows, m, s, k, taken, out, dist, d))
            m = _remove(X, rows, m, taken, labels, g, total, d)
            g += 1
    _last_groups(X, k, rows, m, total, labels, g, c, d, out, dist, taken)
    return labels


@njit
def vmdav_loops(X, k, gamma, to_c):  # type: ignore[no-untyped-def]
    """V-MDAV's main loop; see :func:`microagg.vmdav`.

    ``to_c`` holds each record's squared distance to the global centroid.
    Returns labels with ``-1`` for the (fewer than k) records left over.
    """
    n, p = X.shape
    labels = np.full(n, -1, np.int64)
    rows = np.arange(n)
    d_group = np.empty(n)  # squared distance of each remaining record to the group
    d_e = np.empty(n)
    out = np.empty(k, np.int64)
    dist = np.empty(k)
    taken = np.zeros(n, np.bool_)
    total = np.zeros(p)  # not needed by V-MDAV, kept for the shared _remove
    m = n
    g = 0
    while m >= k:
        # the unassigned record farthest from the global centroid, and its k-1 nearest
        e = 0
        for a in range(1, m):
            if to_c[rows[a]] > to_c[rows[e]]:
                e = a
        _flag(taken, out, _group_around(X, rows, m, e, k, taken, out, dist, d_group))
        for i in range(1, k):  # distance to the group = minimum over its members
            _distances(X, rows, m, X[rows[out[i]]].copy(), d_e)
            for a in range(m):
                if d_e[a] < d_group[a]:
                    d_group[a] = d_e[a]
        size = k
        while size < 2 * k - 1 and size < m:
            # e_min: the record outside the group nearest to it (Eqs. 2-3)
            e_min = -1
            for a in range(m):
                if not taken[a] and (e_min < 0 or d_group[a] < d_group[e_min]):
                    e_min = a
            d_in = np.sqrt(d_group[e_min])
            # d_out: from e_min to its nearest other record outside the group (Eq. 4)
            _distances(X, rows, m, X[rows[e_min]].copy(), d_e)
            best = np.inf
            for a in range(m):
                if not taken[a] and a != e_min and d_e[a] < best:
                    best = d_e[a]
            d_out = np.sqrt(best)
            if not d_in < gamma * d_out:  # Eq. (5)
                break
            taken[e_min] = True
            size += 1
            for a in range(m):
                if d_e[a] < d_group[a]:
                    d_group[a] = d_e[a]
        m = _remove(X, rows, m, taken, labels, g, total, d_group)
        g += 1
    return labels


@njit
def ivmdav_loops(X, k, gamma, n_candidates, self_neighbour, total):  # type: ignore[no-untyped-def]
    """IV-MDAV; see :func:`microagg.ivmdav` for the readings."""
    n, p = X.shape
    labels = np.full(n, -1, np.int64)
    rows = np.arange(n)
    d = np.empty(n)  # squared distances to x_r
    root = np.empty(n)  # plain distances to x_r
    ys = np.empty(n_candidates, np.int64)
    d_ys = np.empty(n_candidates)
    heap_d = np.empty(k)
    heap_a = np.empty(k, np.int64)
    taken = np.zeros(n, np.bool_)
    seen = np.zeros(n, np.bool_)
    c = np.empty(p)
    need = k - 1 if self_neighbour else k  # with z_1 = y itself, z_k is the (k-1)-th other
    m = n
    g = 0
    while m >= 3 * k:
        r = _farthest_from_centroid(X, rows, m, total, c)
        # y_1 = x_r, y_2, ...: x_r and its nearest records; the first k form the group
        got = _group_around(X, rows, m, r, min(n_candidates, m), taken, ys, d_ys, d)
        _flag(taken, ys, k)
        for a in range(m):
            root[a] = np.sqrt(d[a])
        size = k
        for i in range(k, got):
            if size >= 2 * k - 1:
                break
            if need == 0:
                continue
            y = ys[i]
            # d_2: distance from y to z_k, its need-th nearest record outside the group
            d2 = np.sqrt(_kth_nearest_pruned(X, rows, m, y, need, taken, root, ys, got, seen,
                                             heap_d, heap_a))
            if d2 < np.inf and d2 > gamma * np.sqrt(d_ys[i]):  # d_2 > gamma d_1
                taken[y] = True
                size += 1
        m = _remove(X, rows, m, taken, labels, g, total, d)
        g += 1
    _last_groups(X, k, rows, m, total, labels, g, c, d, heap_a, heap_d, taken)
    return labels
