"""Microaggregation of a Dask DataFrame within strata, on any Dask cluster.

:func:`microaggregate` takes a ``dask.dataframe.DataFrame`` and returns one: each
stratum (with any small strata merged into it) is gathered whole into one partition
(small strata share one, a large stratum has its own) and protected by one task,
exactly as :func:`microagg.microaggregate` protects it in memory, so the results are
identical. The same code runs on the local threads, a
``dask.distributed.LocalCluster`` or a cluster of many machines: whichever
``distributed.Client`` is active runs the tasks.

Needs the optional extra: ``pip install microagg[dask]`` (``dask[dataframe]`` and
``distributed``).

Book: :ref:`sec-scale-dask`.
"""

try:
    import dask.dataframe  # noqa: F401
except ImportError as err:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError("microagg.dask needs Dask, which is not installed: "
                      "pip install microagg[dask]") from err

from ._engine import ReleasePlan, microaggregate

__all__ = ["microaggregate", "ReleasePlan"]
