"""A dependency-free progress bar for long runs (terminal and notebook).

Writes one self-overwriting line to ``stderr`` (``\\r``), at most every
``interval`` seconds, so that a five-minute reproduction tells its reader how far
it has got. Pass ``progress=False`` to the long-running functions to silence it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

__all__ = ["progress"]


def progress(items: Iterable[T], total: int | None = None, desc: str = "",
             enabled: bool = True, interval: float = 0.5) -> Iterator[T]:
    """Yield from ``items`` while printing ``desc [####......] i/total elapsed``."""
    if not enabled:
        yield from items
        return
    if total is None:
        try:
            total = len(items)  # type: ignore[arg-type]
        except TypeError:
            total = None
    start = last = time.perf_counter()
    i = 0

    def show(i: int) -> None:
        elapsed = time.perf_counter() - start
        if total:
            filled = int(30 * i / total)
            bar = "#" * filled + "." * (30 - filled)
            eta = elapsed / i * (total - i) if i else 0.0
            msg = f"\r{desc} [{bar}] {i}/{total}  {elapsed:6.1f}s elapsed, ~{eta:5.1f}s left"
        else:
            msg = f"\r{desc} {i} done  {elapsed:6.1f}s"
        sys.stderr.write(msg)
        sys.stderr.flush()

    for i, item in enumerate(items, 1):
        yield item
        now = time.perf_counter()
        if now - last >= interval:
            show(i)
            last = now
    show(i)
    sys.stderr.write("\n")
    sys.stderr.flush()
