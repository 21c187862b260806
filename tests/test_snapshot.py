"""Every output fingerprinted before the restructuring is unchanged, bit for bit.

``tests/snapshots/outputs.json`` was written by ``tools/snapshot_outputs.py`` from the code as it
stood before the package was split into private modules: the SHA-256 of every label array of
the papers' settings (method x data set x k, synthetic, tied and duplicated sets, GA, hybrid
and exact solvers from saved seeds), the exact values of the reproduced tables, and GOMM and
D-GOMM runs from saved seeds. A refactoring may move code; it may not change one bit of these.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import snapshot_outputs as snap  # noqa: E402

from microagg.datasets import DataNotFoundError  # noqa: E402

pytestmark = pytest.mark.data

REFERENCE = json.loads(snap.SNAPSHOT.read_text())
try:  # (the cases read the reference data while the tests are collected)
    LABEL_CASES, TABLE_CASES = list(snap.label_cases()), list(snap.table_cases())
except DataNotFoundError as err:
    pytest.skip(f"needs the reference data (make data): {err}", allow_module_level=True)


def test_snapshot_covers_the_papers_settings():
    from microagg._methods import MDAV_FAMILY

    for method in MDAV_FAMILY:
        for name in snap.REAL:
            for k in snap.KS:
                assert f"labels/{method}/{name}/k{k}" in REFERENCE
    assert len(REFERENCE) >= 130


def _ids(v):
    return v if isinstance(v, str) else ""


@pytest.mark.parametrize("key,thunk", LABEL_CASES, ids=_ids)
def test_labels_unchanged(key, thunk):
    assert snap.digest(thunk()) == REFERENCE[key], f"{key}: labels differ from the snapshot"


@pytest.mark.parametrize("key,thunk", TABLE_CASES, ids=_ids)
def test_tables_unchanged(key, thunk):
    assert thunk() == REFERENCE[key], f"{key}: values differ from the snapshot"
