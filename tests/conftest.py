"""Session-wide settings for the unit tests: no test may reach the internet.

``MICROAGG_OFFLINE=1`` forbids every download of a reference data file, and
``MICROAGG_CACHE`` points the download cache at a temporary folder, so no test reads or
writes the user's cache. The tests of the fetcher (``test_datasets_fetch.py``) lift the
first and serve the files from a local HTTP server they start themselves.
"""

from __future__ import annotations

import logging
import os
import tempfile

import pytest

os.environ["MICROAGG_OFFLINE"] = "1"
os.environ["MICROAGG_CACHE"] = tempfile.mkdtemp(prefix="microagg-test-cache-")
os.environ.pop("MICROAGG_DATA_URL", None)


@pytest.fixture(scope="module")
def client():
    """A two-worker Dask ``LocalCluster`` (processes) and its client, one per test module
    of the Dask paths; skipped where Dask's distributed scheduler is not installed."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  host="127.0.0.1", dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, \
            distributed.Client(cluster) as c:
        yield c
