"""Data shared by several views: the small 2-D sets and the reference data, standardised.

Book: :ref:`chap-mdav`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import datasets
from .._core import standardize
from .._validate import as_matrix

__all__ = ["MDAV_DATASETS", "two_d_data", "dataset_matrix"]

#: The small 2-D sets drawn in the MDAV and V-MDAV chapters.
_TWO_D = ("clustered 2-D", "scattered 2-D")

#: Data sets offered by the MDAV explorer: the two small 2-D sets and the reference data.
MDAV_DATASETS: tuple[str, ...] = (*_TWO_D, "census", "tarragona", "eia", "water-treatment")


def two_d_data(name: str = "clustered 2-D") -> np.ndarray:
    """One of the small standardised 2-D sets drawn in the MDAV and V-MDAV chapters.

    ``"clustered 2-D"``: 40 records in natural clusters of 3-5
    (:func:`microagg.datasets.synthetic_clustered` with ``spread=0.015``,
    ``seed=4``); ``"scattered 2-D"``: 40 uniform records
    (:func:`microagg.datasets.scattered`, ``seed=1``). Both standardised
    (population std), so IL is comparable with the real data sets.

    Book: :ref:`chap-mdav`.

    Parameters
    ----------
    name : {"clustered 2-D", "scattered 2-D"}, default "clustered 2-D"
        Which set.

    Returns
    -------
    numpy.ndarray of float64, shape (40, 2)
        The standardised records; the same on every call.

    Examples
    --------
    >>> two_d_data("scattered 2-D").shape
    (40, 2)
    """
    if name == "clustered 2-D":
        X = datasets.synthetic_clustered(40, 2, cluster_size=(3, 5), spread=0.015, seed=4)
    elif name == "scattered 2-D":
        X = datasets.scattered(40, seed=1)
    else:
        raise ValueError(f"unknown 2-D set {name!r}; choose one of {list(_TWO_D)}")
    return np.asarray(standardize(X))


def dataset_matrix(dataset: Any) -> tuple[np.ndarray, str]:
    """``(array, display name)``: a data set of ``MDAV_DATASETS`` by name, standardised, or
    an array, as given.

    Book: :ref:`chap-mdav`.

    Parameters
    ----------
    dataset : str or array_like, shape (n, p)
        A name in ``MDAV_DATASETS``: ``"clustered 2-D"`` or ``"scattered 2-D"``
        (:func:`two_d_data`), or a reference data set, ``"census"``, ``"tarragona"``,
        ``"eia"`` or ``"water-treatment"`` (:func:`microagg.datasets.standardized`;
        case does not matter). An array is checked (numeric, finite) and used as given:
        it is not standardised.

    Returns
    -------
    (numpy.ndarray, str)
        The records, shape (n, p), and the name to show: the 2-D set's name, the
        reference set's name capitalised (``"Census"``), or ``"data"`` for an array.

    Examples
    --------
    >>> X, name = dataset_matrix("scattered 2-D")
    >>> X.shape, name
    ((40, 2), 'scattered 2-D')
    >>> dataset_matrix([[1.0, 2.0], [3.0, 4.0]])[1]
    'data'
    """
    if isinstance(dataset, str):
        if dataset in _TWO_D:
            return two_d_data(dataset), dataset
        if dataset.lower() not in datasets.NAMES:
            raise ValueError(f"unknown data set {dataset!r}; choose one of {list(MDAV_DATASETS)}")
        return datasets.standardized(dataset), dataset.capitalize()
    return as_matrix(dataset), "data"
