"""Progress bars for long runs: tqdm, on standard error (or a widget in a notebook).

The long-running functions (the papers' reproductions, the hybrid over many macrogroups,
GOMM, the release audit) take ``progress=True`` to show one; ``progress=False`` silences it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")

__all__ = ["progress", "counter"]


def progress(items: Iterable[T], total: int | None = None, desc: str = "",
             enabled: bool = True) -> Iterator[T]:
    """Yield from ``items`` behind a tqdm progress bar (none when ``enabled`` is false)."""
    yield from tqdm(items, total=total, desc=desc, disable=not enabled, leave=False)


def counter(desc: str = "", unit: str = "rows", enabled: bool = True) -> tqdm:
    """A tqdm bar without a total, counting ``unit`` (``bar.update(n)``): for passes over
    files whose length is not known before the end. Shown after a second, so that short
    runs print nothing; removed when closed."""
    return tqdm(desc=desc, unit=f" {unit}", unit_scale=True, disable=not enabled,
                leave=False, delay=1.0)
