"""Figures shown as images in a Jupyter kernel, even before pyplot has drawn anything.

The views build their figures with ``matplotlib.figure.Figure``, never through pyplot
(no global state). A Jupyter kernel shows a figure as an image only once matplotlib's
inline backend has registered its display formatters, which happens when pyplot first
resolves its backend. A notebook that showed a view before any pyplot call (the
scale chapter, or a student's own notebook) got the text ``<Figure size 640x420 with 1
Axes>`` instead of the image. :func:`show_figures_inline`, run when
:mod:`microagg.views` is imported, registers them at once.

Book: :ref:`page-contributing`.
"""

from __future__ import annotations

import sys

__all__ = ["INLINE_BACKENDS", "show_figures_inline"]

#: The names under which a kernel runs matplotlib's inline backend.
INLINE_BACKENDS = ("inline", "module://matplotlib_inline.backend_inline")


def show_figures_inline() -> bool:
    """Register the inline backend's figure formatters if this is a Jupyter kernel on it.

    Returns whether it did. Outside a kernel (a script, a terminal IPython) and on any
    other backend (``%matplotlib widget``, a GUI) nothing changes.

    Examples
    --------
    Outside a kernel:

    >>> show_figures_inline()
    False
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if getattr(shell, "kernel", None) is None:
        return False
    import matplotlib

    if matplotlib.get_backend() not in INLINE_BACKENDS:  # (a kernel sets $MPLBACKEND)
        return False
    if "matplotlib_inline.backend_inline" not in sys.modules:
        # importing the backend registers its formatters, as pyplot's first use would
        import matplotlib_inline.backend_inline  # noqa: F401
    return True
