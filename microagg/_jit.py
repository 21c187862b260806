"""Optional numba acceleration.

Loops that cannot be vectorised (the GA operators, a few inner loops) are written
as plain, readable Python and decorated with :func:`njit`. When numba is
installed and not disabled (``NUMBA_DISABLE_JIT=1``), they are compiled with
``cache=True``; otherwise the decorator returns the function unchanged, so the
package runs, with the same answers, in environments without numba (Pyodide,
JupyterLite).

Two searches take another route without numba, where the plain-Python loop would be far
slower than a library call: DLD's nearest-centroid search
(:func:`microagg._risk_kernels.dld_standardized`: a scipy k-d tree instead of the compiled
projection search) and GOMM's evaluation of a grouping (:mod:`microagg._gomm_eval`: numpy
instead of the compiled group kernels). Their answers are the same, bit for bit: the
tests compare both routes on integer, real-valued, tied and nearly tied data
(``tests/test_gomm_fast.py``).

numba keys a cached function on its own bytecode and drops its cache when its own
file changes, but a kernel compiles in the kernels it calls: after an edit of a callee
in another file, it would go on loading the old machine code. The cache of every
function compiled here is therefore also keyed on the sources of its package's kernel
files (those that use :func:`njit`), so any edit of a kernel recompiles what depends on it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from ._env import flag

__all__ = ["njit", "HAVE_NUMBA", "numba_enabled", "numba_status"]

def _switched_off() -> bool:
    """``MICROAGG_DISABLE_NUMBA``, read at import: a value that is neither on nor off is a
    warning naming it (numba only makes the same answers faster), read as unset."""
    try:
        return flag("MICROAGG_DISABLE_NUMBA")
    except ValueError as err:
        warnings.warn(f"{err}; it is read as unset (numba stays on if installed)",
                      RuntimeWarning, stacklevel=2)
        return False


#: ``MICROAGG_DISABLE_NUMBA`` is on (read once, at import).
_SWITCHED_OFF = _switched_off()

_numba: ModuleType | None
try:  # pragma: no cover - depends on the environment
    if _SWITCHED_OFF:
        raise ImportError
    import numba as _numba  # type: ignore[no-redef,unused-ignore]

    HAVE_NUMBA = os.environ.get("NUMBA_DISABLE_JIT", "0") != "1"
except ImportError:  # pragma: no cover
    _numba = None
    HAVE_NUMBA = False


@functools.cache
def _kernel_sources_digest(package: str) -> str:
    """SHA-256 of the kernel files of the top-level package ``package``: its ``.py`` files
    that use ``njit``, in path order (empty for a module outside a package folder)."""
    module = sys.modules.get(package)
    where = getattr(module, "__file__", None)
    digest = hashlib.sha256()
    if where and Path(where).name == "__init__.py":
        root = Path(where).parent
        for path in sorted(root.rglob("*.py")):
            text = path.read_bytes()
            if b"njit" in text:
                digest.update(str(path.relative_to(root)).encode() + b"\0" + text)
    return digest.hexdigest()


@functools.cache
def _sources_keyed_cache() -> Any:
    """numba's function cache class, keyed also on :func:`_kernel_sources_digest` of the
    function's package (``None`` if this numba has no such class: its own cache stays)."""
    try:
        from numba.core.caching import FunctionCache
    except ImportError:  # pragma: no cover - depends on numba's version
        return None

    class SourcesKeyedCache(FunctionCache):
        def _index_key(self, sig: Any, codegen: Any) -> tuple[Any, ...]:
            package = self._py_func.__module__.partition(".")[0]
            return (*super()._index_key(sig, codegen), _kernel_sources_digest(package))

    return SourcesKeyedCache


def njit(func: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
    """Compile ``func`` with ``numba.njit`` and an on-disk cache when available; else return
    it. The cache is numba's, keyed also on the package's kernel sources (see the module
    notes). Where numba finds no folder it can write its cache to (a read-only install
    without a writable home folder, and no ``NUMBA_CACHE_DIR``), the function is compiled
    without one, with a :class:`RuntimeWarning`, rather than failing the import."""

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        if _numba is None:
            return f
        try:
            dispatcher = _numba.njit(cache=True, **kwargs)(f)
        except RuntimeError as err:
            if "no locator available" not in str(err):
                raise
            _warn_no_disk_cache()
            return _numba.njit(**kwargs)(f)
        cache_class = _sources_keyed_cache()
        if cache_class is not None and hasattr(dispatcher, "_cache"):  # not NUMBA_DISABLE_JIT
            dispatcher._cache = cache_class(f)
        return dispatcher

    return wrap(func) if func is not None else wrap


def _warn_no_disk_cache() -> None:
    """Say that the kernels will be compiled again in every process, and how to keep them
    (one text from one place: the default warning filter shows it once a process)."""
    warnings.warn("numba has no folder it can write its cache of compiled code to: "
                  "microagg's kernels are compiled again in every process, a few seconds at "
                  "each one's first calls (same results). Set NUMBA_CACHE_DIR to a writable "
                  "folder to keep them.", RuntimeWarning, stacklevel=2)


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


def _numba_installed() -> bool:
    return importlib.util.find_spec("numba") is not None


def numba_status() -> str:
    """``"on"``, or ``"off: "`` and why, with what turns it on (``microagg info`` prints it).

    Examples
    --------
    >>> numba_status() == "on" or numba_status().startswith("off: ")
    True
    """
    if HAVE_NUMBA:
        return "on"
    for name, on in (("MICROAGG_DISABLE_NUMBA", _switched_off()),
                     ("NUMBA_DISABLE_JIT", os.environ.get("NUMBA_DISABLE_JIT") == "1")):
        if on:
            return (f"off: switched off by {name}={os.environ[name]} (plain Python/numpy, "
                    "same results)")
    if not _numba_installed():
        return ("off: numba is not installed (plain Python/numpy, same results); "
                "pip install \"microagg[fast]\" compiles the loops, often 50 times faster "
                "or more")
    return "off: numba is installed but could not be imported (plain Python/numpy)"
