"""Session-wide settings for the unit tests: no test may reach the internet.

``MICROAGG_OFFLINE=1`` forbids every download of a reference data file, and
``MICROAGG_CACHE`` points the download cache at a temporary folder, so no test reads or
writes the user's cache. The tests of the fetcher (``test_datasets_fetch.py``) lift the
first and serve the files from a local HTTP server they start themselves.
"""

from __future__ import annotations

import os
import tempfile

os.environ["MICROAGG_OFFLINE"] = "1"
os.environ["MICROAGG_CACHE"] = tempfile.mkdtemp(prefix="microagg-test-cache-")
os.environ.pop("MICROAGG_DATA_URL", None)
