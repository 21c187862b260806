"""microagg: microaggregation for statistical disclosure control.

The companion package of the *microagg* textbook. A partition is an ``(n,)``
integer array of group labels; the algorithms take a 2-D float array and ``k``
and return labels; :func:`aggregate` publishes the group centroids and
:func:`microaggregate` does the whole job on a table.

The functions and classes below are the public API; they are implemented in
private modules (``_core``, ``_mdav``, ``_genetic``, ``_gomm``, ...). Public
subpackages: :mod:`microagg.datasets` (reference and synthetic data),
:mod:`microagg.published` (the papers' numbers), :mod:`microagg.reproductions`
(the papers' tables, regenerated), :mod:`microagg.views` (the chapters' figures and
explorers), :mod:`microagg.teaching` (step-by-step re-runs and small experiments),
:mod:`microagg.reference` (slow, readable oracles) and, with the ``dask`` extra,
:mod:`microagg.dask` (protection within strata on a Dask cluster; import it explicitly).

The package is imported lazily (PEP 562): ``import microagg`` reads only this file;
each public name imports its module (and numpy, pandas, ...) when it is first used, so
the ``microagg`` command handles Ctrl-C before those imports (``microagg._entry``). The
public names are listed once, in the stub ``microagg/__init__.pyi``: this file reads it
(on first use of a name) and type checkers and IDEs read it instead of this file, so they
see each name's real signature.

Book: :ref:`chap-foundations`.
"""

from __future__ import annotations

import importlib
import importlib.util
import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: the command's first moments stay short
    from typing import Any

__version__ = "0.1.0"

#: The public names and their modules, and the public subpackages, read from the stub
#: ``__init__.pyi`` on first need (:func:`_listed`).
_LISTED: tuple[dict[str, str], list[str]] | None = None


def _listed() -> tuple[dict[str, str], list[str]]:
    """Each public name and the private module that defines it, in the order of the API page,
    and the public subpackages: the relative imports of ``__init__.pyi``, the one list of the
    public API (type checkers read the same file). Read once, on first need, so that ``import
    microagg`` stays as short as it was."""
    global _LISTED
    if _LISTED is None:
        import ast

        stub = os.path.join(os.path.dirname(__file__), "__init__.pyi")
        with open(stub, encoding="utf-8") as f:
            tree = ast.parse(f.read(), stub)
        names: dict[str, str] = {}
        subpackages: list[str] = []
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                for alias in node.names:
                    if node.module:
                        names[alias.name] = node.module
                    else:
                        subpackages.append(alias.name)
        _LISTED = names, subpackages
    return _LISTED


def __getattr__(name: str) -> Any:
    """A public name (loaded from its module on first use, then kept here), ``__all__``, or a
    submodule (``microagg.datasets``, ``microagg.published``, ...), imported on first use."""
    names = _listed()[0]
    if name in names:
        value = getattr(importlib.import_module(f".{names[name]}", __name__), name)
    elif name == "__all__":
        value = list(names)
    elif (name.isidentifier() and not name.startswith("__")
          and importlib.util.find_spec(f"{__name__}.{name}") is not None):
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    names, subpackages = _listed()
    return sorted({*globals(), "__all__", *names, *subpackages})
