"""Progress bars for long runs: tqdm, on standard error (or a widget in a notebook).

The long-running functions (the papers' reproductions, the hybrid over many macrogroups,
GOMM, the release audit) take ``progress=True`` to show one; ``progress=False`` silences it.

A bar that is not shown starts no thread: tqdm starts its monitor thread (a daemon that
wakes every ten seconds for the rest of the process) for every bar made, shown or not, so
the bars not shown are made by :class:`_Hidden`, which has no monitor.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")

__all__ = ["progress", "counter"]


class _Hidden(tqdm):
    """A tqdm bar that is not shown, and starts no monitor thread."""

    monitor_interval = 0


def progress(items: Iterable[T], total: int | None = None, desc: str = "",
             enabled: bool = True) -> Iterator[T]:
    """Yield from ``items`` behind a tqdm progress bar (none when ``enabled`` is false)."""
    if not enabled:
        yield from items
        return
    yield from tqdm(items, total=total, desc=desc, leave=False)


def counter(desc: str = "", unit: str = "rows", enabled: bool = True) -> tqdm:
    """A tqdm bar without a total, counting ``unit`` (``bar.update(n)``): for passes over
    files whose length is not known before the end. Shown after a second, so that short
    runs print nothing; removed when closed."""
    return (tqdm if enabled else _Hidden)(desc=desc, unit=f" {unit}", unit_scale=True,
                                          disable=not enabled, leave=False, delay=1.0)
