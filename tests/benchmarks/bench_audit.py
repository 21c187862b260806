"""Benchmark: the audit's combination counter, this checkout against an older commit.

Run as a script (not collected by pytest)::

    .venv/bin/python tests/benchmarks/bench_audit.py                   # against dd1fde4
    .venv/bin/python tests/benchmarks/bench_audit.py --against REV
    .venv/bin/python tests/benchmarks/bench_audit.py --quick           # 250,000 and 1M rows

The audit counts how many released rows share each combination of values
(:class:`microagg._audit.Combinations`), batch by batch as it reads a file
(:data:`microagg._stream.BATCH_ROWS` rows a batch). A release of n rows in groups of
k holds about n/k distinct values per protected column, so the counter meets new
values in every batch. Here: a release of n rows (groups of 3, shuffled) with two
numeric columns and one text column holding the group's code, counted in batches
with the ``microagg`` of ``REV`` (a temporary git worktree, in a subprocess) and with
this checkout's, in turn. It prints the CPU seconds of each and their ratio, and
fails unless both find the same rows and the same smallest count.

Measured on 2026-11-30 against dd1fde4 (2 cores, the GA running beside it): 250,000 rows
0.72 s against 0.38 (1.9x), 1M rows 6.0 against 2.3 (2.6x), 4M rows 70 against 13 (5.3x),
the same counts. The old counter rebuilt each column's ``pandas.Index`` of known values
with every batch that added some, so its time grew with the square of the file's
distinct values.
"""

from __future__ import annotations

import sys

from _against import HERE, old_checkout, option, run_with  # this folder (run as a script)

#: The commit compared against by default (main before the counter was rewritten).
BEFORE = "dd1fde4"
SIZES = (250_000, 1_000_000, 4_000_000)
QUICK = (250_000, 1_000_000)

_COUNT = """
import json, sys, time
import numpy as np, pandas as pd
from microagg._audit import Combinations
from microagg._stream import BATCH_ROWS
n = int(sys.argv[1])
rng = np.random.default_rng(0)
group = rng.permutation(np.repeat(np.arange(n // 3 + 1), 3)[:n])
centre = rng.normal(size=n // 3 + 1)
frame = pd.DataFrame({"x": centre[group], "y": 2 * centre[group],
                      "code": pd.Series(group).map("g{}".format).astype(object)})
counter = Combinations()
c = time.process_time()
for start in range(0, n, BATCH_ROWS):
    counter.add(frame.iloc[start:start + BATCH_ROWS])
smallest = counter.smallest()
print(json.dumps({"cpu": time.process_time() - c, "rows": counter.rows, "smallest": smallest}))
"""


def main(rev: str, sizes: tuple[int, ...]) -> None:
    print(f"audit's combination counter, groups of 3, two numbers and a text code per row: "
          f"{rev} against this checkout (CPU seconds)")
    print(f"{'rows':>10s} {'old s':>8s} {'new s':>8s} {'ratio':>6s}  same counts")
    wrong = []
    with old_checkout(rev) as base:
        for n in sizes:
            old = run_with(base, _COUNT, n)
            new = run_with(HERE, _COUNT, n)
            same = (old["rows"], old["smallest"]) == (new["rows"], new["smallest"])
            if not same:
                wrong.append(n)
            print(f"{n:10,d} {old['cpu']:8.2f} {new['cpu']:8.2f} "
                  f"{old['cpu'] / new['cpu']:5.2f}x  {same}")
    if wrong:
        raise SystemExit(f"the counts differ from {rev}'s at n = {wrong}")


if __name__ == "__main__":
    main(option("--against", BEFORE), QUICK if "--quick" in sys.argv else SIZES)
