"""Optional numba acceleration.

Loops that cannot be vectorised (the GA operators, a few inner loops) are written
as plain, readable Python and decorated with :func:`njit`. When numba is
installed and not disabled (``NUMBA_DISABLE_JIT=1``), they are compiled with
``cache=True``; otherwise the decorator returns the function unchanged, so the
package runs, with the same answers, in environments without numba (Pyodide,
JupyterLite).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = ["njit", "HAVE_NUMBA", "numba_enabled"]

_numba: ModuleType | None
try:  # pragma: no cover - depends on the environment
    if os.environ.get("MICROAGG_DISABLE_NUMBA") == "1":
        raise ImportError
    import numba as _numba

    HAVE_NUMBA = os.environ.get("NUMBA_DISABLE_JIT", "0") != "1"
except ImportError:  # pragma: no cover
    _numba = None
    HAVE_NUMBA = False


def njit(func: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
    """Compile ``func`` with ``numba.njit(cache=True)`` when available; else return it."""

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        if _numba is None:
            return f
        return _numba.njit(cache=True, **kwargs)(f)

    return wrap(func) if func is not None else wrap


def numba_enabled() -> bool:
    """Whether the compiled (numba) engines are in use.

    ``False`` when numba is not installed, or disabled with ``NUMBA_DISABLE_JIT=1``
    or ``MICROAGG_DISABLE_NUMBA=1``; every result is the same either way.

    Book: :ref:`chap-mdav`.

    Examples
    --------
    >>> isinstance(numba_enabled(), bool)  # True with the ``fast`` extra installed
    True
    """
    return HAVE_NUMBA
