"""What the chapters take from the book toolchain, with a fallback outside it.

The chapters glue computed numbers into their prose with MyST-NB's ``glue``. A
chapter downloaded as a notebook and run on a plain ``pip install microagg`` has no
MyST-NB: there :func:`glue` keeps the value (and shows it when asked) instead of
failing, so every cell still runs.

Book: :ref:`page-contributing`.
"""

from __future__ import annotations

from typing import Any

from IPython.display import display as _display

try:  # the book toolchain (pip install microagg[book])
    from myst_nb import glue as _myst_glue
except ImportError:  # a plain install: no MyST-NB
    _myst_glue = None

__all__ = ["glue"]


def glue(name: str, variable: Any, *, display: bool = True) -> None:
    """Glue ``variable`` under ``name`` for the page's ``{glue}`` roles (MyST-NB), if present.

    Without MyST-NB the value is displayed when ``display`` is true and otherwise
    dropped: the prose roles then stay unrendered, the computation is unchanged.

    Book: :ref:`page-contributing`.

    Parameters
    ----------
    name : str
        The key the page's ``{glue}`` roles and directives name.
    variable : object
        The value: a number, a string, a DataFrame, a figure, ...
    display : bool, default True
        Also show the value in the cell's output (MyST-NB's own ``display``); without
        MyST-NB, whether the value is shown at all.

    Examples
    --------
    Outside a notebook the value is only displayed:

    >>> glue("n_records", 13)
    13
    """
    if _myst_glue is not None:
        _myst_glue(name, variable, display=display)
    elif display:
        _display(variable)
