"""Benchmark: stalls of nbclient's kernel client after widget cells, and the sliced waits.

Run as a script (not collected by pytest)::

    .venv/bin/python tests/benchmarks/bench_kernel_wait.py              # 150 explorer cells
    .venv/bin/python tests/benchmarks/bench_kernel_wait.py --cells 50 --timeout 20
    .venv/bin/python tests/benchmarks/bench_kernel_wait.py --static  # no widgets

It builds a notebook of ``--cells`` pairs of cells, each an explorer that opens its ipywidgets
(``views.explore_partition``, as the foundations chapter has one) followed by a one-line cell,
and runs it twice through nbclient with a cell timeout of ``--timeout`` seconds: once with
nbclient's own kernel client and once with :class:`kernel_runner.SlicedClient`, which
``tests/test_outside_repo.py`` uses. A cell that takes as long as the timeout without an error
is a *stall*: its reply had arrived, but the wait for it was not woken and ended only at the
timeout, whose last check of the socket found it. The script prints, for each client, the
stalls, the messages found only by the sliced client's end-of-slice check, and the run's
wall-clock time, and the ratio of the two times. The kernel is the environment's
``python3`` (ipykernel); pass ``--kernel`` to choose another kernelspec.

Measured on the 2-core machine (2026-11-27, 150 pairs): with ipykernel 6.31 and a 30 s
timeout, nbclient's client stalled 18 times (576 s), the sliced client never (37 s, 6
messages found late); with a 60 s timeout, 6 stalls with ipykernel 6.31 and 2 with 7.4. The
count varies from run to run and with the machine's load; with cells that only print and
draw a figure no stall was seen. ``--static`` runs the explorers as static frames
(``MICROAGG_STATIC_EXPLORERS=1``, what the README advises for unattended runs): 150 pairs at
a 30 s timeout, no stall with either client (each static explorer renders its frames: about
4 s a cell).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook
from traitlets.config import Config

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kernel_runner  # noqa: E402

from microagg.views._explorer import STATIC_ENV  # noqa: E402


def run(cells: int, timeout: int, kernel: str, sliced: bool) -> tuple[int, int, float]:
    """Run the notebook once; return its stalls, late messages and seconds."""
    nb = new_notebook(cells=[new_code_cell("from microagg import views")])
    for i in range(cells):
        nb.cells += [new_code_cell("views.explore_partition(n=12, k=3, seed=2)"),
                     new_code_cell(f"x = {i}")]
    config = kernel_runner.sliced_config() if sliced else Config()
    client = NotebookClient(nb, timeout=timeout, kernel_name=kernel, config=config)
    late_before = kernel_runner.late
    stalls = 0
    start = time.monotonic()
    with client.setup_kernel():
        client.execute_cell(nb.cells[0], 0)  # imports: not timed as a cell
        for index, cell in enumerate(nb.cells[1:], start=1):
            t0 = time.monotonic()
            client.execute_cell(cell, index)
            stalls += time.monotonic() - t0 >= 0.95 * timeout
    return stalls, kernel_runner.late - late_before, time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=150, help="explorer cells (default 150)")
    parser.add_argument("--timeout", type=int, default=60, help="cell timeout in s (default 60)")
    parser.add_argument("--kernel", default="python3", help="kernelspec (default python3)")
    parser.add_argument("--static", action="store_true",
                        help="explorers as static frames (MICROAGG_STATIC_EXPLORERS=1): no widgets")
    args = parser.parse_args()
    if args.static:  # the kernels inherit this process's environment
        os.environ[STATIC_ENV] = "1"
    if args.cells < 1 or args.timeout < 2:
        parser.error("--cells must be at least 1 and --timeout at least 2")
    times = {}
    for name, sliced in (("nbclient's client", False), ("sliced client", True)):
        stalls, late, seconds = run(args.cells, args.timeout, args.kernel, sliced)
        times[sliced] = seconds
        print(f"{name:18s} {stalls:3d} stalls, {late:3d} late messages, {seconds:7.1f} s")
    print(f"time ratio, nbclient's client / sliced client: {times[False] / times[True]:.2f}")

if __name__ == "__main__":
    main()
