"""The test suite's environment switches, each read here and nowhere else.

``MICROAGG_SLOW=1``: the long checks run too (``pytest -m slow`` selects the same tests),
and the hypothesis properties that cost seconds per example try many more examples.
"""

from __future__ import annotations

from microagg._env import flag

#: ``MICROAGG_SLOW=1`` is set: run the long checks, and many more examples.
SLOW = flag("MICROAGG_SLOW")


def examples(default: int, slow: int) -> int:
    """``max_examples`` for a costly hypothesis property: ``slow`` under ``MICROAGG_SLOW=1``."""
    return slow if SLOW else default
