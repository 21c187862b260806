r"""Disclosure risk of a released data set, and the GOMM score.

Microaggregation trades *information loss* (IL, :func:`microagg.information_loss`)
against *disclosure risk* (DR). The GOMM paper measures DR with two cheap
scores and averages everything into one number, the *score* (lower is better):

.. math::

    \mathrm{score} = \frac{\mathrm{IL} + \mathrm{DR}}{2},\qquad
    \mathrm{DR} = \tfrac12\,\mathrm{ID} + \tfrac12\,\mathrm{DLD},\qquad
    \mathrm{IL} = 100\,\frac{\lVert Z - Z'\rVert^2}{\lVert Z - \bar Z\rVert^2}.

* **DLD** (distance-linkage disclosure, :func:`distance_linkage_disclosure`): the
  percentage of original records whose nearest released record (Euclidean
  distance on standardised attributes) is their own released version.
* **ID** (interval disclosure, :func:`interval_disclosure`): the percentage of
  released values that fall within :math:`\pm 10\%` of the corresponding original
  value.

All measures are computed on standardised attributes: both data sets are
transformed with the *original* data's mean and population standard deviation
(:func:`microagg.standardize`), which is the space in which GOMM microaggregates.
:ref:`chap-gomm` explains the measures with a worked example.

Readings of details the GOMM paper leaves open (each checked against its
published single-group values in :ref:`chap-gomm`):

* **Ties in DLD.** When several released records are at the same, smallest
  distance from an original record and its own released record is among them,
  the record counts as ``1 / (number of tied released records)`` of a link: the
  expected success of an intruder who picks one of the tied candidates at
  random, the usual convention in distance-based record linkage. This matters:
  after MDAV on all attributes each group's ``k`` released rows are identical,
  so "a tie is not a link" would give DLD = 0 and "a tie is a link" about 80 %;
  the fractional rule gives the 15 % (Census, k = 5) the paper reports.
* **Distances** are squared Euclidean, summed attribute by attribute in column
  order (``d += (z_c - z'_c)**2``), so ties are decided bit for bit identically
  by the fast code and by the brute-force reference in the tests.
* **ID interval.** The paper's interval is
  :math:`[x - 0.1\,x,\; x + 0.1\,x]`; we use
  :math:`|x' - x| \le 0.1\,|x|` (the same interval, also valid for negative
  ``x``; inclusive bounds; for ``x = 0`` only ``x' = 0`` falls inside). The paper
  does not say on which scale; we apply it on the standardised scale, like IL and
  DLD (``standardize=False`` applies it to the values as given).
* **Constant attributes** (zero variance) are centred but not scaled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._risk_kernels import dld_standardized, id_counts
from ._validate import as_matrix, scale_exponent

__all__ = [
    "distance_linkage_disclosure",
    "interval_disclosure",
    "disclosure_risk",
    "score",
    "score_breakdown",
    "ScoreBreakdown",
]


# --------------------------------------------------------------------------------------
# input handling
# --------------------------------------------------------------------------------------


def _pair(original: Any, protected: Any, standardize: bool) -> tuple[np.ndarray, np.ndarray]:
    """Both data sets, checked; on the standardised scale if ``standardize``.

    Values whose squares would overflow or underflow are first multiplied by a power
    of two (exact; per column when standardising, else one for all): every measure
    here is unchanged by it.
    """
    X = as_matrix(original, "original")
    P = as_matrix(_lined_up(original, protected), "protected")
    if P.shape != X.shape:
        raise ValueError(
            f"original has shape {X.shape} but protected has shape {P.shape}; "
            "the released data must have one row per original record and the same attributes"
        )
    e = scale_exponent(np.vstack((X, P)), axis=0 if standardize else None)
    if np.any(e):
        X, P = np.ldexp(X, e), np.ldexp(P, e)
    return _standardize_pair(X, P) if standardize else (X, P)


def _lined_up(original: Any, protected: Any) -> Any:
    """``protected`` with its columns and rows in ``original``'s order, when both are
    DataFrames (by label: the measures compare row ``i`` with row ``i``); anything else as
    given. Labels that cannot be matched one to one are an error, not a guess.

    >>> import pandas as pd
    >>> X = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]}, index=[10, 20])
    >>> _lined_up(X, X.loc[[20, 10], ["b", "a"]]).equals(X)
    True
    """
    if not all(hasattr(d, "columns") and hasattr(d, "index") for d in (original, protected)):
        return protected
    fix = "; or pass arrays (.to_numpy()) to compare row i with row i, column j with column j"
    columns, index = original.columns, original.index
    if not protected.columns.equals(columns):
        if not (columns.is_unique and protected.columns.is_unique):
            raise ValueError(f"original or protected repeats a column name, so their columns "
                             f"cannot be matched by name{fix}")
        if set(columns) != set(protected.columns):
            missing = [c for c in columns if c not in set(protected.columns)]
            extra = [c for c in protected.columns if c not in set(columns)]
            raise ValueError(f"original and protected have different columns (only in "
                             f"original: {missing}, only in protected: {extra}); select the "
                             f"same columns in both{fix}")
        protected = protected[list(columns)]
    if not protected.index.equals(index):
        if not (index.is_unique and protected.index.is_unique
                and len(index) == len(protected.index)
                and index.isin(protected.index).all()):
            raise ValueError("original and protected have different row labels (index), so "
                             "their rows cannot be matched: give the release the original's "
                             "labels (e.g. protected.index = original.index, if its rows are "
                             f"in the original's order){fix}")
        protected = protected.loc[index]
    return protected


def _standardize_pair(X: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Standardise both with the original's mean and population sd (constant columns: sd 1)."""
    mean = X.mean(axis=0)
    sd = X.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return (X - mean) / sd, (P - mean) / sd




def distance_linkage_disclosure(original: Any, protected: Any, *,
                                standardize: bool = True) -> float:
    r"""Distance-linkage disclosure (DLD): percentage of records re-identified by distance.

    An intruder who knows every original record links it to the nearest released
    record. With :math:`T_i` the set of released records nearest to original record
    :math:`i` (all at the same smallest squared Euclidean distance),

    .. math::

        \mathrm{DLD} = \frac{100}{n}\sum_{i=1}^{n}
            \frac{[\,i \in T_i\,]}{|T_i|},

    i.e. a record whose own released version is uniquely nearest counts as one
    link, one tied with :math:`t-1` others counts :math:`1/t` (an intruder who
    picks at random among the tied candidates), and one with a strictly nearer
    stranger counts 0. This is Eq. (5) of the GOMM paper :cite:p:`balasch2014gomm`
    with the tie rule made explicit; see the module notes and :ref:`chap-gomm`.

    Book: :ref:`chap-gomm`.

    Parameters
    ----------
    original, protected : array_like, shape (n, p)
        Row ``i`` of ``protected`` is the released version of row ``i`` of ``original``
        (two DataFrames are matched by column and row labels, in ``original``'s order).
    standardize : bool, default True
        Measure distances on attributes standardised with the original's mean and
        population standard deviation (as GOMM does).

    Returns
    -------
    float
        DLD in percent, between 0 and 100.

    Notes
    -----
    No ``n x n`` distance matrix is formed: identical released rows are merged
    (their multiplicity is kept), and each record scans the distinct rows with
    a binary search over the rows sorted by their first principal component, a
    lower bound from the first eight principal components, and early exits (numba).
    Without numba a k-d tree of the distinct rows (scipy's) proposes each record's
    nearest row and, where that is not nearer than its own, the rows about as near;
    at 100,000 records this takes under a second, where comparing every record with
    every row took about 30. Either way the decisions compare distances summed in the
    same order, so both give the same answer as the brute-force definition, and
    memory stays linear in the number of records.

    Examples
    --------
    >>> X = [[0.0], [1.0], [10.0], [11.0]]
    >>> distance_linkage_disclosure(X, [[0.5], [0.5], [10.5], [10.5]])  # k-anonymous: 1/2 each
    50.0
    >>> distance_linkage_disclosure(X, X)
    100.0
    """
    X, P = _pair(original, protected, standardize)
    return dld_standardized(X, P)


# --------------------------------------------------------------------------------------
# interval disclosure
# --------------------------------------------------------------------------------------




def interval_disclosure(original: Any, protected: Any, *, width: float = 0.10,
                        standardize: bool = True) -> float:
    r"""Interval disclosure (ID): percentage of released values close to the original value.

    .. math::

        \mathrm{ID} = \frac{100}{np}\sum_{i=1}^{n}\sum_{j=1}^{p}
            \bigl[\,|x'_{ij} - x_{ij}| \le w\,|x_{ij}|\,\bigr],\qquad w = 0.10,

    the interval :math:`[x - w x, x + w x]` of the GOMM paper :cite:p:`balasch2014gomm`
    (Sec. 3.2.2, after Domingo-Ferrer & Torra :cite:p:`domingo2001quantitative`), written with
    :math:`|x|` so that it is an interval for negative values too. Bounds are
    inclusive; an original value of 0 is disclosed only by a released 0.

    Book: :ref:`chap-gomm`.

    Parameters
    ----------
    original, protected : array_like, shape (n, p)
        The original records and their release, row for row (two DataFrames are matched
        by column and row labels, in ``original``'s order).
    width : float, default 0.10
        Relative half-width :math:`w` of the interval, ``> 0``.
    standardize : bool, default True
        Apply the interval on attributes standardised with the original's mean and
        population standard deviation (our reading; the paper does not name the
        scale, see :ref:`chap-gomm`). ``False`` uses the values as given.

    Returns
    -------
    float
        ID in percent.

    Notes
    -----
    The interval's width is relative to the value, so it depends on where zero is: on
    z-scores, values near their column's mean get almost no interval. A constant column
    (centred, not scaled) is 0 before and after release, so every one of its values
    counts as disclosed: with one constant column beside one varying column, ID is at
    least 50. ID on this scale is not comparable with interval disclosure measured on
    ranks or in standard deviations.

    Examples
    --------
    >>> interval_disclosure([[100.0], [200.0]], [[105.0], [150.0]], standardize=False)
    50.0
    """
    width = _check_width(width)
    X, P = _pair(original, protected, standardize)
    return 100.0 * float(id_counts(X, P, width).sum()) / X.size


def _check_width(width: Any) -> float:
    if isinstance(width, bool) or not isinstance(width, (int, float, np.integer, np.floating)):
        raise TypeError(f"width must be a number, got {width!r}")
    width = float(width)
    if not np.isfinite(width) or width <= 0:
        raise ValueError(f"width must be a positive finite number, got {width}")
    return width


# --------------------------------------------------------------------------------------
# combined measures
# --------------------------------------------------------------------------------------


def disclosure_risk(original: Any, protected: Any, *, standardize: bool = True) -> float:
    r"""Disclosure risk :math:`\mathrm{DR} = (\mathrm{ID} + \mathrm{DLD})/2` (GOMM Eq. 6).

    Book: :ref:`chap-gomm`.

    Parameters
    ----------
    original, protected : array_like, shape (n, p)
        The original records and their release, row for row (two DataFrames are matched
        by column and row labels, in ``original``'s order).
    standardize : bool, default True
        Measure on attributes standardised with the original's mean and population
        standard deviation, as :func:`interval_disclosure` does.

    Returns
    -------
    float
        DR in percent.

    Examples
    --------
    >>> X = [[1.0], [2.0], [10.0], [11.0]]
    >>> disclosure_risk(X, X)
    100.0
    """
    return score_breakdown(original, protected, standardize=standardize).dr


@dataclass(frozen=True)
class ScoreBreakdown:
    """The GOMM score and its parts, all in percent (lower is better).

    Book: :ref:`chap-gomm`.

    Examples
    --------
    >>> b = ScoreBreakdown(il=10.0, id=20.0, dld=40.0)
    >>> b.dr, b.score
    (30.0, 20.0)
    """

    il: float
    id: float
    dld: float

    @property
    def dr(self) -> float:
        """Disclosure risk, ``0.5 * id + 0.5 * dld``."""
        return 0.5 * self.id + 0.5 * self.dld

    @property
    def score(self) -> float:
        """``(il + dr) / 2``.

        Book: :ref:`chap-gomm`.
        """
        return 0.5 * (self.il + self.dr)


def _breakdown_standardized(Z: np.ndarray, Q: np.ndarray, width: float = 0.10) -> ScoreBreakdown:
    diff = Z - Q
    centred = Z - Z.mean(axis=0)
    sst = float(np.einsum("ij,ij->", centred, centred))
    if sst == 0:
        raise ValueError("all original records are identical (SST = 0): IL is undefined")
    il = 100.0 * float(np.einsum("ij,ij->", diff, diff)) / sst
    idv = 100.0 * float(id_counts(Z, Q, width).sum()) / Z.size
    return ScoreBreakdown(il=il, id=idv, dld=dld_standardized(Z, Q))


def score_breakdown(original: Any, protected: Any, *, standardize: bool = True,
                    width: float = 0.10) -> ScoreBreakdown:
    r"""IL, ID and DLD of a release, with DR and the score as properties.

    IL is measured between the original and the released records,

    .. math:: \mathrm{IL} = 100\,\frac{\sum_i \lVert\mathbf{z}_i-\mathbf{z}'_i\rVert^2}
              {\sum_i \lVert\mathbf{z}_i-\bar{\mathbf{z}}\rVert^2},

    which for a release by microaggregation of attribute groups is the sum over
    the groups of their within-group SSE divided by SST (Eq. 4 of GOMM).

    Book: :ref:`chap-gomm`.

    Parameters
    ----------
    original, protected : array_like, shape (n, p)
        The original records and their release, row for row (two DataFrames are matched
        by column and row labels, in ``original``'s order).
    standardize : bool, default True
        Measure on attributes standardised with the original's mean and population
        standard deviation, as :func:`interval_disclosure` does.
    width : float, default 0.10
        Relative half-width of ID's interval (:func:`interval_disclosure`).

    Returns
    -------
    ScoreBreakdown
        ``il``, ``id``, ``dld`` (percentages) and the derived ``dr`` and ``score``.

    Examples
    --------
    >>> b = score_breakdown([[0.0], [2.0], [10.0], [12.0]], [[1.0], [1.0], [11.0], [11.0]])
    >>> round(b.il, 3), b.dld, b.id
    (3.846, 50.0, 0.0)
    """
    width = _check_width(width)
    X, P = _pair(original, protected, standardize)
    return _breakdown_standardized(X, P, width)


def score(original: Any, protected: Any, *, standardize: bool = True) -> float:
    r"""The GOMM score :math:`(\mathrm{IL} + \mathrm{DR})/2` in percent (Eq. 2; lower is better).

    See :func:`score_breakdown` for the parts and :ref:`chap-gomm`.

    Book: :ref:`chap-gomm`.

    Parameters
    ----------
    original, protected : array_like, shape (n, p)
        The original records and their release, row for row (two DataFrames are matched
        by column and row labels, in ``original``'s order).
    standardize : bool, default True
        Measure on attributes standardised with the original's mean and population
        standard deviation, as :func:`interval_disclosure` does.

    Returns
    -------
    float
        The score in percent.

    Examples
    --------
    Two pairs released as their means: IL 3.846 %, ID 0 %, DLD 50 %:

    >>> round(score([[0.0], [2.0], [10.0], [12.0]], [[1.0], [1.0], [11.0], [11.0]]), 3)
    14.423
    """
    return score_breakdown(original, protected, standardize=standardize).score
