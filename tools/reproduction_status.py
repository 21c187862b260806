"""Record the status of every published cell, for tests/test_registry.py.

``python tools/reproduction_status.py write [LEDGER.csv]`` writes
``tests/snapshots/reproduction_status.csv`` from a ledger computed at the papers' settings:
the CSV the book build writes (``chapters/_generated/reproduction-ledger.csv``, the default),
or ``microagg reproduce all --csv FILE``. Only keys and statuses are recorded, no data.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "tests" / "snapshots" / "reproduction_status.csv"
DEFAULT = ROOT / "chapters" / "_generated" / "reproduction-ledger.csv"
COLUMNS = ["reproduction", "dataset", "method", "k", "parameters", "metric", "status"]


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[1] != "write":
        print(__doc__, file=sys.stderr)
        return 2
    source = Path(argv[2]) if len(argv) > 2 else DEFAULT
    ledger = pd.read_csv(source, keep_default_na=False, na_values=[""])
    ledger["k"] = pd.to_numeric(ledger["k"], errors="coerce").astype("Int64")
    ledger[COLUMNS].to_csv(TARGET, index=False)
    print(f"wrote {len(ledger)} statuses to {TARGET.relative_to(ROOT)}: "
          f"{ledger['status'].value_counts().to_dict()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
