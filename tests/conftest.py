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
from pathlib import Path

import pytest

os.environ["MICROAGG_OFFLINE"] = "1"
os.environ["MICROAGG_CACHE"] = tempfile.mkdtemp(prefix="microagg-test-cache-")
os.environ.pop("MICROAGG_DATA_URL", None)


#: The ledger the strict book build writes at the papers' settings (the ledger page's CSV).
BUILD_LEDGER = Path(__file__).resolve().parents[1] / "chapters" / "_generated" / \
    "reproduction-ledger.csv"


@pytest.fixture(scope="session")
def built_ledger():
    """The papers'-settings ledger of this run's strict book build, as written (tests
    marked ``after_build``: skipped outside ``make test``, failed if the build wrote none)."""
    import pandas as pd

    if not os.environ.get("MICROAGG_PHASE1_LOGS"):
        pytest.skip("the papers'-settings ledger is computed by make test's strict book build")
    if not BUILD_LEDGER.exists():
        pytest.fail(f"the book build wrote no {BUILD_LEDGER} (ledger page)")
    return pd.read_csv(BUILD_LEDGER, keep_default_na=False, na_values=[""])


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


@pytest.fixture
def fresh_gomm_cache(monkeypatch):
    """No GOMM cache budget from the environment, and an empty process-wide GOMM cache
    before and after the test (``pytestmark = pytest.mark.usefixtures(...)`` in the GOMM
    cache's test modules)."""
    import microagg

    monkeypatch.delenv("MICROAGG_GOMM_CACHE_MB", raising=False)
    microagg.gomm_cache_clear()
    yield
    microagg.gomm_cache_clear()


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001
    """Sizes of modules and functions, as a report (tests/test_architecture.py's rules do
    not cap them), when the architecture tests ran."""
    if any("test_architecture" in getattr(r, "nodeid", "") for r in terminalreporter.stats.get(
            "passed", []) + terminalreporter.stats.get("failed", [])):
        from pathlib import Path

        from helpers import size_report

        terminalreporter.section("module and function sizes")
        for line in size_report(Path(__file__).resolve().parents[1]):
            terminalreporter.write_line(line)


def pytest_collection_modifyitems(config, items):  # noqa: ARG001
    """Tests marked ``data`` are skipped, saying how to get the files, where the reference
    data are missing (a packager's tree, a clone without ``../shared``); ``make test`` gets
    and checks them first (``make data``), so there they run."""
    from microagg._datafiles import FILES, DataNotFoundError, locate

    try:
        for name in FILES:
            locate(name)
    except DataNotFoundError:
        skip = pytest.mark.skip(reason="needs the reference data: make data, or "
                                "MICROAGG_DATA=<folder holding the files> (data/README.md)")
        for item in items:
            if item.get_closest_marker("data") is not None:
                item.add_marker(skip)
