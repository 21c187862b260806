r"""The GA's kernels: random numbers, repair, mutation and the generation loop.

Plain Python loops that numba compiles when it is installed (:mod:`microagg._jit`);
:func:`microagg.ga_partition` and :func:`microagg.hybrid` call them.

A genetic algorithm (GA) searches the space of *variable-size* k-partitions of
a small data set (a few dozen records), and the hybrid of Martinez-Balleste,
Solanas, Domingo-Ferrer & Mateo-Sanz (2007) makes it usable on large data sets
by first cutting them into small pieces with MDAV and then running the GA
inside each piece. :ref:`chap-genetic` explains both.

The GA
------
The genetic-hybrid paper fixes the fitness, the selection scheme, the operator
names and the parameters (its Table 1); it takes the rest from Solanas et al.
(2006), which it does not reproduce. The details below are therefore *our*
choices, each documented where it is made:

* **Encoding** (group-number encoding): a chromosome is a label array
  ``c`` of length ``n``; ``c[i]`` in ``0..G-1`` is the group of record ``i``,
  with ``G = n // k`` (no k-partition has more groups). Labels are kept in
  canonical form (numbered by first appearance) so that two copies of the same
  partition are the same chromosome and one-point crossover of similar parents
  gives similar children.
* **Fitness**: :math:`F = 1/(\mathrm{SSE}+1)` (the paper's Eq. 2).
* **Selection**: roulette wheel, probability proportional to :math:`F`.
* **Crossover**: with probability ``crossover_rate`` a pair of parents swap
  their tails after a uniformly drawn cut point (one-point crossover);
  otherwise the children are copies of the parents.
* **Mutation**: every gene, independently with probability
  ``mutation_rate``, is replaced by a uniformly drawn label in ``0..G-1``
  (i.e. the record moves to a random group, possibly an empty one).
* **Feasibility**: children that are not k-partitions with group sizes
  ``k..2k-1`` are *repaired*, never rejected (see :func:`repair`: trim
  oversized groups, complete or dissolve undersized ones, send freed records to
  the nearest group with room): rejection
  would make the GA almost unable to leave a fixed-size start such as MDAV's,
  because moving one record out of a group of exactly ``k`` always breaks the
  constraint.
* **Elitism**: the best chromosome found so far is copied unchanged into each
  new generation, so the best fitness never decreases.

Random numbers come from a small xorshift128 generator written in plain
integer arithmetic (:func:`_next_u32`), seeded from
``numpy.random.default_rng(seed)``. The same code runs compiled by numba or as
plain Python (``NUMBA_DISABLE_JIT=1`` or numba absent), with the same draws and
therefore the same labels.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._jit import njit

_M32 = 0xFFFFFFFF


# --------------------------------------------------------------------------------------
# A tiny deterministic random number generator (identical with and without numba)
# --------------------------------------------------------------------------------------

@njit(nogil=True, inline="always")
def _xorshift128(s0: int, s1: int, s2: int, s3: int) -> tuple[int, int, int, int]:
    """One step of Marsaglia's xorshift128: four 32-bit words of state, period 2**128 - 1.

    Returns the new state ``(s1, s2, s3, w)``; its last word ``w`` is the output.
    Only shifts, xors and masks of values below 2**43 are used, so the int64
    arithmetic of numba and Python's integers agree bit for bit.
    """
    t = (s0 ^ (s0 << 11)) & _M32
    w = (s3 ^ (s3 >> 19)) ^ (t ^ (t >> 8))
    return s1, s2, s3, w


@njit(nogil=True, inline="always")
def _next_u32(state: np.ndarray) -> int:
    """The next output of the xorshift128 generator whose four words are ``state``."""
    s0, s1, s2, s3 = _xorshift128(state[0], state[1], state[2], state[3])
    state[0] = s0
    state[1] = s1
    state[2] = s2
    state[3] = s3
    return s3


@njit(nogil=True, inline="always")
def _uniform(state: np.ndarray) -> float:
    """A float in ``[0, 1)`` with 32 random bits."""
    return _next_u32(state) / 4294967296.0


@njit(nogil=True, inline="always")
def _randint(state: np.ndarray, m: int) -> int:
    """An integer in ``0..m-1`` (multiply-shift; ``m`` < 2**31)."""
    return (_next_u32(state) * m) >> 32


def seed_state(seed: Any) -> np.ndarray:
    """Four non-zero 32-bit words drawn from ``numpy.random.default_rng(seed)``."""
    return np.random.default_rng(seed).integers(1, 2**32, size=4, dtype=np.int64)


# --------------------------------------------------------------------------------------
# The GA's building blocks (plain Python loops, compiled by numba when available)
# --------------------------------------------------------------------------------------

@njit(nogil=True)
def canonical(lab: np.ndarray, G: int, tmp: np.ndarray) -> None:
    """Renumber ``lab`` in place so that groups are 0, 1, ... by first appearance."""
    for g in range(G):
        tmp[g] = -1
    nxt = 0
    for i in range(lab.shape[0]):
        g = lab[i]
        if tmp[g] < 0:
            tmp[g] = nxt
            nxt += 1
        lab[i] = tmp[g]


@njit(nogil=True, inline="always")
def _sqdist_to_centre(X: np.ndarray, i: int, sums: np.ndarray, g: int, cnt: int) -> float:
    """Squared distance from record ``i`` to the centroid ``sums[g] / cnt``."""
    inv = 1.0 / cnt
    d = 0.0
    for j in range(X.shape[1]):
        diff = X[i, j] - sums[g, j] * inv
        d += diff * diff
    return d


@njit(nogil=True, inline="always")
def _move(X: np.ndarray, lab: np.ndarray, counts: np.ndarray, sums: np.ndarray,
          i: int, g: int) -> None:
    """Move record ``i`` to group ``g`` (``-1``: unassigned), updating counts and sums."""
    old = lab[i]
    if old >= 0:
        counts[old] -= 1
        for j in range(X.shape[1]):
            sums[old, j] -= X[i, j]
    lab[i] = g
    if g >= 0:
        counts[g] += 1
        for j in range(X.shape[1]):
            sums[g, j] += X[i, j]


@njit(nogil=True, inline="always")
def _transfer(X: np.ndarray, lab: np.ndarray, counts: np.ndarray, sums: np.ndarray,
              i: int, g: int) -> None:
    """Move record ``i`` from its group to group ``g``: :func:`_move` for two groups."""
    h = lab[i]
    lab[i] = g
    counts[h] -= 1
    counts[g] += 1
    for j in range(X.shape[1]):
        sums[h, j] -= X[i, j]
        sums[g, j] += X[i, j]


@njit(nogil=True)
def repair(X: np.ndarray, lab: np.ndarray, k: int, G: int, counts: np.ndarray,
            sums: np.ndarray, free: np.ndarray) -> None:
    """Turn any label array into a k-partition with group sizes ``k..2k-1``, in place.

    The rule (our choice; the paper does not give one):

    1. a group larger than ``2k-1`` gives up its members farthest from its
       centroid until it has ``2k-1``;
    2. a group smaller than ``k`` (visited in label order) is completed, if the
       groups with more than ``k`` members can together spare enough records,
       by taking the spare records nearest to its centroid one at a time;
       otherwise it is dissolved. Completing lets a mutation that sends a
       record to an empty label *found* a new group around it (without this
       the GA could merge groups but hardly ever create one);
    3. the records set free by 1-2 are visited in index order, and each joins
       the group with the nearest centroid among those that still have room
       (fewer than ``2k-1`` members);
    4. if some records found no room (every group full, or no group left):
       if there are at least ``k`` of them they form new groups among
       themselves (blocks of ``k`` in index order, the last block taking the
       rest); if there are fewer than ``k``, the full group nearest to their
       centroid hands over the members nearest to that centroid so that a new
       group of exactly ``k`` forms.

    A feasible chromosome is left unchanged (there is nothing to trim, complete
    or dissolve). On return ``counts`` and ``sums`` hold the sizes and attribute
    sums of the groups under ``lab``.

    The work is done by :func:`_trim_and_complete` (steps 1-2, all that most
    children need) and :func:`_place_loose` (steps 2b-4, only when records are
    left without a group); :func:`ga_core` calls the two itself, with work
    arrays allocated once per run. ``free`` (length ``n``) is work space.
    """
    n = X.shape[0]
    head = np.empty(G, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    donors = np.empty(G, dtype=np.int64)
    if _trim_and_complete(X, lab, k, counts, sums, head, nxt, donors):
        _place_loose(X, lab, k, G, counts, sums, free)


# error_model="numpy": no zero-division checks (no divisor here can be zero); without
# the exception paths numba can drop all reference counting from the loops below.
# long: one compiled pass over the groups; splitting it would add calls in the hot loop
@njit(nogil=True, error_model="numpy")
def _trim_and_complete(X: np.ndarray, lab: np.ndarray, k: int, counts: np.ndarray,
                       sums: np.ndarray, head: np.ndarray, nxt: np.ndarray,
                       donors: np.ndarray) -> bool:
    """Steps 1-2 of :func:`repair`: trim oversized groups, complete undersized ones.

    The ``G`` labels are ``0 .. G-1``, ``G = counts.size``. First sets ``counts`` and
    ``sums`` for ``lab`` and chains the members of
    each group into a list (``head[g]``: its last record, ``nxt[i]``: the
    previous record of the same group, ``-1``: none), so that the candidates of
    step 2 are found without scanning all records. ``donors`` (length ``G``) is
    work space.

    Returns
    -------
    bool
        Whether records were left without a group (trimmed, or in an undersized
        group that could not be completed). If not, ``lab`` is now a feasible
        k-partition; if so, :func:`_place_loose` finishes the repair.
    """
    n, p = X.shape
    G = counts.size
    kmax = 2 * k - 1
    for g in range(G):
        counts[g] = 0
        head[g] = -1
        for j in range(p):
            sums[g, j] = 0.0
    for i in range(n):
        g = lab[i]
        counts[g] += 1
        nxt[i] = head[g]
        head[g] = i
        for j in range(p):
            sums[g, j] += X[i, j]
    # 1. trim oversized groups: drop the member farthest from the centroid. Then note
    # the groups that can spare records ("donors": more than k members) and how many.
    loose = 0  # records left without a group
    ndonors = 0
    spare = 0
    for g in range(G):
        while counts[g] > kmax:
            far = -1
            far_d = -1.0
            for i in range(n):
                if lab[i] == g:
                    d = _sqdist_to_centre(X, i, sums, g, counts[g])
                    if d > far_d:
                        far_d = d
                        far = i
            # drop ``far``: _move(X, lab, counts, sums, far, -1) written out (inlined,
            # _move's branches would make numba keep reference counting here)
            lab[far] = -1
            counts[g] -= 1
            for j in range(p):
                sums[g, j] -= X[far, j]
            loose += 1
        if counts[g] > k:
            donors[ndonors] = g
            ndonors += 1
            spare += counts[g] - k
    # 2. complete undersized groups from records other groups can spare, if possible.
    # Each move takes one spare record; no group becomes a donor here (a group being
    # completed stops at k), so the candidates are the members of the donors that
    # still have more than k.
    for g in range(G):
        if counts[g] == 0 or counts[g] >= k:
            continue
        if spare < k - counts[g]:
            loose += counts[g]  # dissolved in step 2b
            continue
        while counts[g] < k:
            near = -1
            near_d = np.inf
            for t in range(ndonors):
                h = donors[t]
                if counts[h] > k:
                    i = head[h]
                    while i >= 0:
                        if lab[i] == h:  # not moved away already
                            d = _sqdist_to_centre(X, i, sums, g, counts[g])
                            # ties go to the lowest record index (an index-order scan)
                            if d < near_d or (d == near_d and i < near):
                                near_d = d
                                near = i
                        i = nxt[i]
            _transfer(X, lab, counts, sums, near, g)
            spare -= 1
    return loose > 0


@njit(nogil=True)
def _place_loose(X: np.ndarray, lab: np.ndarray, k: int, G: int, counts: np.ndarray,
                 sums: np.ndarray, free: np.ndarray) -> None:
    """Steps 2b-4 of :func:`repair`, after :func:`_trim_and_complete`.

    ``free`` (length ``n``) is work space.
    """
    n, p = X.shape
    kmax = 2 * k - 1
    # 2b. dissolve the undersized groups that could not be completed
    for i in range(n):
        g = lab[i]
        if g >= 0 and counts[g] < k:
            lab[i] = -1
    for g in range(G):
        if counts[g] < k:
            counts[g] = 0
            for j in range(p):
                sums[g, j] = 0.0
    # 3. free records join the nearest group with room
    nfree = 0
    for i in range(n):
        if lab[i] < 0:
            best = -1
            best_d = np.inf
            for g in range(G):
                if counts[g] >= k and counts[g] < kmax:
                    d = _sqdist_to_centre(X, i, sums, g, counts[g])
                    if d < best_d:
                        best_d = d
                        best = g
            if best >= 0:
                _move(X, lab, counts, sums, i, best)
            else:
                free[nfree] = i
                nfree += 1
    if nfree == 0:
        return
    # 4. records with no room left form new groups
    if nfree >= k:
        pos = 0
        while pos < nfree:
            size = k if nfree - pos >= 2 * k else nfree - pos
            g = 0
            while counts[g] > 0:
                g += 1
            for t in range(pos, pos + size):
                _move(X, lab, counts, sums, free[t], g)
            pos += size
        return
    # fewer than k homeless records: every non-empty group is full (2k-1 >= k+1)
    g_new = 0
    while counts[g_new] > 0:
        g_new += 1
    for t in range(nfree):
        _move(X, lab, counts, sums, free[t], g_new)
    donor = -1
    donor_d = np.inf
    for g in range(G):
        if g != g_new and counts[g] == kmax:
            d = 0.0
            for j in range(p):
                diff = sums[g, j] / counts[g] - sums[g_new, j] / counts[g_new]
                d += diff * diff
            if d < donor_d:
                donor_d = d
                donor = g
    while counts[g_new] < k:
        near = -1
        near_d = np.inf
        for i in range(n):
            if lab[i] == donor:
                d = _sqdist_to_centre(X, i, sums, g_new, counts[g_new])
                if d < near_d:
                    near_d = d
                    near = i
        _move(X, lab, counts, sums, near, g_new)


@njit(nogil=True)
def _group_sums(X: np.ndarray, lab: np.ndarray, G: int, counts: np.ndarray,
                sums: np.ndarray) -> None:
    """Sizes and attribute sums of the groups of ``lab``."""
    p = X.shape[1]
    for g in range(G):
        counts[g] = 0
        for j in range(p):
            sums[g, j] = 0.0
    for i in range(X.shape[0]):
        g = lab[i]
        counts[g] += 1
        for j in range(p):
            sums[g, j] += X[i, j]


@njit(nogil=True)
def _sse_from_sums(total_ss: float, counts: np.ndarray, sums: np.ndarray) -> float:
    r"""SSE from group sizes and sums in :math:`O(Gp)`, without visiting the records.

    .. math:: \mathrm{SSE} = \sum_i \lVert\mathbf{x}_i\rVert^2
              - \sum_g \lVert\mathbf{s}_g\rVert^2 / n_g

    where :math:`\mathbf{s}_g` is the attribute sum of group :math:`g`. The first
    term (``total_ss``) is the same for every chromosome; the data are centred
    first so that the subtraction loses no precision worth speaking of.
    """
    between = 0.0
    for g in range(counts.shape[0]):
        if counts[g] > 0:
            sq = 0.0
            for j in range(sums.shape[1]):
                sq += sums[g, j] * sums[g, j]
            between += sq / counts[g]
    return max(total_ss - between, 0.0)


@njit(nogil=True)
def _random_partition(state: np.ndarray, n: int, k: int, out: np.ndarray) -> None:
    """A uniformly shuffled record order cut into blocks of random sizes ``k..2k-1``."""
    order = np.arange(n)
    for i in range(n - 1, 0, -1):  # Fisher-Yates shuffle
        j = _randint(state, i + 1)
        t = order[i]
        order[i] = order[j]
        order[j] = t
    pos = 0
    g = 0
    while pos < n:
        left = n - pos
        if left < 2 * k:
            size = left
        else:
            hi = min(2 * k - 1, left - k)
            size = k + _randint(state, hi - k + 1)
        for t in range(pos, pos + size):
            out[order[t]] = g
        pos += size
        g += 1


@njit(nogil=True, inline="always")
def _total(values: np.ndarray) -> float:
    """The sum of ``values``, added left to right: the same bits compiled and as plain
    Python (numpy's ``sum`` adds in pairs, numba's in order)."""
    acc = 0.0
    for v in values:
        acc += v
    return acc


@njit(nogil=True, inline="always")
def _roulette(state: np.ndarray, fitness: np.ndarray, total: float) -> int:
    """Index drawn with probability proportional to ``fitness``."""
    u = _uniform(state) * total
    acc = 0.0
    last = fitness.shape[0] - 1
    for c in range(last):
        acc += fitness[c]
        if u < acc:
            return c
    return last


@njit(nogil=True, inline="always")
def _mutate(state: np.ndarray, child: np.ndarray, G: int, rate: float) -> bool:
    """Move every record, with probability ``rate``, to a uniformly drawn group.

    Gene by gene the draws are those of ``_uniform(state) < rate`` and then
    ``_randint(state, G)``; the generator's words are kept in local variables
    meanwhile (registers, once compiled) and written back at the end. Returns
    whether a label changed.
    """
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    below = math.ceil(rate * 4294967296.0)  # w / 2**32 < rate  <=>  w < below
    changed = False
    for i in range(child.shape[0]):
        s0, s1, s2, s3 = _xorshift128(s0, s1, s2, s3)
        if s3 < below:
            s0, s1, s2, s3 = _xorshift128(s0, s1, s2, s3)
            g = (s3 * G) >> 32
            if g != child[i]:
                changed = True
                child[i] = g
    state[0] = s0
    state[1] = s1
    state[2] = s2
    state[3] = s3
    return changed


# long: the whole generation loop in one compiled function, so state stays in registers
@njit(nogil=True)
def ga_core(X: np.ndarray, k: int, pop: np.ndarray, n_given: int, mutation_rate: float,
             crossover_rate: float, iterations: int,
             state: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """The GA main loop. ``pop`` (population x n) holds ``n_given`` injected rows.

    Returns the best chromosome, its SSE and the history: ``history[t] = (best, mean)``
    fitness after ``t`` generations (row 0: the initial population).
    """
    P, n = pop.shape
    history = np.zeros((iterations + 1, 2))
    p = X.shape[1]
    G = n // k
    total_ss = 0.0
    for i in range(n):
        for j in range(p):
            total_ss += X[i, j] * X[i, j]
    counts = np.zeros(G, dtype=np.int64)
    sums = np.zeros((G, p))
    free = np.zeros(n, dtype=np.int64)
    head = np.zeros(G, dtype=np.int64)  # work arrays of repair's steps
    nxt = np.zeros(n, dtype=np.int64)
    donors = np.zeros(G, dtype=np.int64)
    tmp = np.zeros(G, dtype=np.int64)
    fit = np.zeros(P)
    sse_pop = np.zeros(P)
    # initial population: injected partitions as given, the rest random feasible ones
    for c in range(P):
        if c >= n_given:
            _random_partition(state, n, k, pop[c])
        canonical(pop[c], G, tmp)
        _group_sums(X, pop[c], G, counts, sums)
        sse_pop[c] = _sse_from_sums(total_ss, counts, sums)
        fit[c] = 1.0 / (sse_pop[c] + 1.0)
    best = 0
    for c in range(1, P):
        if fit[c] > fit[best]:
            best = c
    elite = pop[best].copy()
    elite_sse = sse_pop[best]
    elite_fit = fit[best]
    history[0, 0] = elite_fit
    history[0, 1] = _total(fit) / P
    children = np.empty_like(pop)
    child_sse = np.zeros(P)
    for it in range(1, iterations + 1):
        total = _total(fit)
        # elitism: slot 0 of the new generation is the best chromosome so far
        children[0, :] = elite
        child_sse[0] = elite_sse
        c = 1
        while c < P:
            a = _roulette(state, fit, total)
            b = _roulette(state, fit, total)
            do_cross = _uniform(state) < crossover_rate
            cut = 1 + _randint(state, n - 1) if n > 1 else 0
            for half in range(2):
                if c >= P:
                    break
                first = a if half == 0 else b
                second = b if half == 0 else a
                child = children[c]
                changed = False
                for i in range(n):
                    if do_cross and i >= cut:
                        child[i] = pop[second, i]
                        changed = changed or child[i] != pop[first, i]
                    else:
                        child[i] = pop[first, i]
                if _mutate(state, child, G, mutation_rate):
                    changed = True
                if changed:  # repair, with the work arrays allocated above
                    if _trim_and_complete(X, child, k, counts, sums, head, nxt, donors):
                        _place_loose(X, child, k, G, counts, sums, free)
                    child_sse[c] = _sse_from_sums(total_ss, counts, sums)
                    canonical(child, G, tmp)
                else:  # an exact copy of its first parent: nothing to repair or evaluate
                    child_sse[c] = sse_pop[first]
                c += 1
        pop[:, :] = children
        for c in range(P):
            sse_pop[c] = child_sse[c]
            fit[c] = 1.0 / (sse_pop[c] + 1.0)
            if fit[c] > elite_fit:
                elite_fit = fit[c]
                elite_sse = sse_pop[c]
                elite[:] = pop[c]
        history[it, 0] = elite_fit
        history[it, 1] = _total(fit) / P
    return elite, elite_sse, history


