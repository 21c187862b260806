r"""The MDAV family: fixed- and variable-size microaggregation heuristics, on three engines.

Four heuristics, one public function each. All take a 2-D float array ``X`` (``n``
records by ``p`` attributes, already on the scale the caller wants: the book
standardises first) and a minimum group size ``k``, and return an ``(n,)`` int64 array
of group labels numbered ``0, 1, ...`` in the order the groups are formed.

======================  ==========================================  ===========
function                paper                                       chapter
======================  ==========================================  ===========
:func:`mdav`            Domingo-Ferrer (survey), Algorithm 1        2
:func:`mdav_single`     Rawat & Borah (IV-MDAV paper), "algorithm 2"  4
:func:`vmdav`           Solanas & Martinez-Balleste (2006)          3
:func:`ivmdav`          Rawat & Borah (IV-MDAV paper)               4
======================  ==========================================  ===========

Modules
-------
* :mod:`~microagg._mdav.dispatch`: the four public functions, the registry of engines
  (:data:`~microagg._mdav.dispatch.ENGINES`) and the automatic choice
  (:func:`~microagg._mdav.dispatch.choose_engine`).
* One module per engine: :mod:`~microagg._mdav.loops` (``"loops"``, plain loops that
  numba compiles: :math:`O(n^2 p / k)`), :mod:`~microagg._mdav.vector` (``"numpy"``,
  vectorised numpy, used without numba) and :mod:`~microagg._mdav.indexed`
  (``"indexed"``, sub-quadratic on moderate ``p``).
* :mod:`~microagg._mdav.columns`: the loops engine's MDAV on the transposed data
  (records side by side in vector registers; same arithmetic, same labels).
* :mod:`~microagg._mdav.kernels`: the arithmetic all engines share (the squared
  distance, the heap of nearest records).
* The indexed engine's structures, one module and one named type each:
  :mod:`~microagg._mdav.cells` (:class:`~microagg._mdav.cells.Grid`, one-byte cell codes),
  :mod:`~microagg._mdav.kdtree` (:class:`~microagg._mdav.kdtree.KdTree`) and
  :mod:`~microagg._mdav.buckets` (:class:`~microagg._mdav.buckets.Buckets`, direction
  buckets).

``engine="auto"`` (the default) takes ``"indexed"`` with numba where it measured faster
for the method, size and number of attributes (a table of break-even sizes per method,
:data:`~microagg._mdav.dispatch.AUTO_RULES`, measured with
``tests/benchmarks/bench_scale.py --breakeven``), ``"loops"`` otherwise with numba and
``"numpy"`` without.

The engine contract
-------------------
**Inputs, validated once** by the public functions in :mod:`~microagg._mdav.dispatch`,
never by an engine: ``X`` is a C-contiguous float64 array, finite, with ``n >= 1``
rows, already rescaled by a power of two if its squares could overflow or underflow
(:func:`microagg._validate.rescaled`: exact, same partition); ``1 <= k <= n``;
``gamma`` is a finite real; ``1 <= n_candidates <= n`` (the request is clamped to
``min(candidates, n)`` for every engine: more candidates than records change nothing);
``self_neighbour`` is a bool. The indexed engine may also assume entries of magnitude
at most ``indexed.MAX_ABS`` (the dispatcher hands other data to the loops).

**Each engine module exports the same four functions**, with one signature per method::

    mdav(X, k, total)
    mdav_single(X, k, total)
    vmdav(X, k, gamma, to_c)
    ivmdav(X, k, gamma, n_candidates, self_neighbour, total)

``total`` is the column sums ``X.sum(axis=0)`` (computed by the dispatcher, so every
engine starts from the same numbers); the engine may overwrite it, as it is the running
total of the unassigned records. ``to_c`` holds each record's squared distance to the
global centroid, from :func:`~microagg._mdav.kernels.sqdist`.

**Each returns** a new ``(n,)`` int64 array of labels ``0, 1, ...`` in the order the
groups are formed; V-MDAV's ``vmdav`` leaves its fewer than ``k`` last records at
``-1`` for the dispatcher's final step
(:func:`~microagg._mdav.dispatch.assign_leftovers`). Nothing else is changed.

**Same labels, ties included** (tested, and hashed on a fixed corpus in
``tests/test_mdav_hashes.py``), because every engine does the same arithmetic:

* squared distances are summed attribute by attribute in column order
  (:func:`~microagg._mdav.kernels.sqdist_row`,
  :func:`~microagg._mdav.kernels.sqdist`);
* the centroid of the unassigned records is their running total divided by their
  number; the total loses each grouped record in input order;
* ties are broken by the original record order: among equally distant records the one
  that comes first in ``X`` is taken. The slow, readable oracles in
  :mod:`microagg.reference` follow the same rule, and the tests check that they give
  identical labels on small-integer data (where every sum is exact). On other data a
  centroid computed in a different order can differ in the last bit, which can only
  matter for distinct records at exactly equal distances.

Where only the order of distances matters (farthest record, nearest neighbours)
squared Euclidean distances are used; the gain-factor tests of V-MDAV and IV-MDAV
compare plain Euclidean distances, as the papers write them. No ``n x n`` distance
matrix is ever built (the papers precompute one; we compute distances on the fly, as
the genetic-hybrid paper says is equivalent): memory is :math:`O(n p)`.

How the indexed engine stays exact
----------------------------------
Bounds only decide what is *skipped*; every record that is not skipped gets its
distance from ``sqdist_row``, and every decision compares those numbers with the loops'
rule: the heap ordered by (distance, input index) for the nearest records, "farther, or
as far and earlier in the input" for the farthest. A record or node is skipped only if
*none* of its records could win or tie:

* lower bounds (boxes, cells, the gap between a node's box and a group's box) are
  computed with the operations of ``sqdist_row`` on gaps measured from cell edges on the
  far side of every record inside; rounding is monotone, so the computed bound is at
  most the *computed* distance of each such record, and the comparison needs no safety
  margin. A bound equal to the k-th best distance skips a node only if its smallest
  input index is larger. Cell upper bounds (farthest queries) likewise.
* the cone bound of the direction buckets,

  .. math:: \lVert \mathbf{x}-\mathbf{q}\rVert^2 \le
            r^2 + R^2 - 2rR\cos\bigl(\min(\pi,\ \theta+\alpha)\bigr),

  involves square roots and cosines; it is inflated by a margin (relative
  :math:`10^{-9} + 16(p+8)\varepsilon`, plus an absolute term for underflow, and
  :math:`10^{-7} + 8\sqrt{(p+8)\varepsilon}` on the cosines), many times the worst
  rounding error, and a bucket or record is skipped only if the inflated bound is
  *strictly* below the best computed distance.

Its memory is :math:`O(np)`: the cell codes (``p`` bytes per record, one copy per index),
a few integer arrays of length ``n`` and :math:`O(n/64)` nodes; peak about 2.5 times the
input while an index is built. Its time depends on how well the bounds prune, which
falls with the dimension ``p``. Without numba every engine runs as plain Python (the
loops and the indexed engine slowly), with the same answers.
"""

from __future__ import annotations

from .dispatch import (
    ENGINE_NAMES,
    ENGINES,
    choose_engine,
    ivmdav,
    list_engines,
    mdav,
    mdav_single,
    vmdav,
)

__all__ = ["mdav", "mdav_single", "vmdav", "ivmdav", "list_engines", "ENGINES", "ENGINE_NAMES",
           "choose_engine"]
