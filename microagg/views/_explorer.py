r"""One helper that turns a view function into an explorer: :func:`explorer`.

A *view* is a plain function of a few values (data set, ``k``, ``gamma``, ...) that
returns a matplotlib ``Figure``. An explorer wires it to ipywidgets controls, in one
of two modes:

* **live** (a running kernel: JupyterLab, Colab, Binder, a downloaded notebook):
  ordinary sliders and dropdowns over the whole ``live`` ranges; every change
  re-runs the view;
* **static** (the book's HTML pages, which have no kernel): the view is run once
  for every combination of the ``grid`` values when the page is built, and each
  figure is stored in the page as an ``HTML`` widget (the PNG with its alternative
  text) inside nested ``Stack`` widgets. Each control's ``index`` is linked
  (``jsdlink``) to the ``selected_index`` of the stacks of its level, so the widget
  manager's own client-side code switches frames in the reader's browser: no
  kernel, no network. The controls offer only grid values, and a caption says
  which.

Accessibility (WCAG 2.1 AA). Each frame's alternative text is what its view wrote
with ``set_alt_text`` (``microagg/views/_plotting.py``: the parameters and the numbers
the figure shows), else the parameters. The same text, for every frame, sits in a
second set of stacks under the figure, linked to the same controls; the book's
``microagg-a11y.js`` makes that box a polite live region, so a screen reader reads
the new numbers when a control moves, and names each control by its visible label
(the widget manager renders the two unconnected). Sliders move with the arrow keys,
dropdowns with the arrow keys too.

The book build sets ``MICROAGG_STATIC_EXPLORERS=1`` (``tools/book_ext.py``, a
Sphinx extension, sets it in the build process, and the kernels that execute the
chapters inherit it); everywhere else the explorers are live.

Book: :ref:`chap-mdav`.
"""

from __future__ import annotations

import base64
import html
import io
import itertools
from collections.abc import Callable, Mapping, Sequence
from numbers import Real
from typing import Any

import ipywidgets as w
from IPython.display import HTML, display

from .._env import flag
from ._plotting import alt_text

__all__ = ["explorer", "static_explorers"]

#: Environment variable that switches every explorer to its precomputed (static) form.
STATIC_ENV = "MICROAGG_STATIC_EXPLORERS"

#: The most frames one explorer may store in a page (size budget: 6 MB per page).
MAX_FRAMES = 64


def static_explorers() -> bool:
    """Whether explorers are being built for a static page (``MICROAGG_STATIC_EXPLORERS=1``).

    Book: :ref:`chap-mdav`.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"MICROAGG_STATIC_EXPLORERS": "1"}):
    ...     print(static_explorers())
    True
    """
    return flag(STATIC_ENV)


def explorer(view: Callable[..., Any], grid: Mapping[str, Sequence[Any]], *,
             value: Mapping[str, Any] | None = None,
             live: Mapping[str, Any] | None = None,
             labels: Mapping[str, str] | None = None,
             fixed: Mapping[str, Any] | None = None,
             static: bool | None = None, dpi: int = 72) -> w.Widget:
    """Wire ``view(**params)`` to controls: live in a kernel, precomputed in a static page.

    Book: :ref:`chap-mdav`.

    Parameters
    ----------
    view : callable
        ``view(**params, **fixed)`` returns a matplotlib ``Figure`` (or anything
        IPython can display, in live mode).
    grid : dict of name -> sequence
        The values stored in the static page, per control, in display order.
    value : dict of name -> value, optional
        Initial values (each in its grid); default the first grid value.
    live : dict of name -> abbreviation or widget, optional
        The live controls: ``(min, max, step)`` gives a slider over that range
        (integers or floats), a list a dropdown, a widget is used as is; names not
        given use their grid values.
    labels : dict of name -> str, optional
        Control descriptions (default the parameter names).
    fixed : dict, optional
        Further keyword arguments passed to every call of ``view``.
    static : bool, optional
        Force a mode; default :func:`static_explorers`.
    dpi : int
        Resolution of the stored frames.

    Returns
    -------
    ipywidgets.Widget
        A ``VBox``: the controls, then the figure (and, static, the text of the frame
        shown, then the caption).

    Raises
    ------
    ValueError
        On an empty grid, an initial value outside its grid, or more than
        ``MAX_FRAMES`` combinations.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> def view(k):
    ...     fig = Figure(figsize=(2, 2))
    ...     fig.add_subplot().set_title(f"k = {k}")
    ...     return fig
    >>> box = explorer(view, {"k": [2, 3, 4]}, static=True)
    >>> controls, frames, texts, caption = box.children
    >>> len(frames.children), frames.selected_index
    (3, 0)
    >>> texts.children[1].value
    '<p>k = 3</p>'

    """
    choices = {name: list(values) for name, values in grid.items()}
    if not choices or any(not values for values in choices.values()):
        raise ValueError("grid needs at least one control with at least one value")
    start = dict(value or {})
    unknown = sorted(set(start) - set(choices))
    if unknown:
        raise ValueError(f"initial value(s) for {unknown}, which are not in the grid")
    for name, values in choices.items():
        start.setdefault(name, values[0])
        if start[name] not in values:
            raise ValueError(f"initial {name}={start[name]!r} is not one of the grid values "
                             f"{values}")
    labels = {name: (labels or {}).get(name, name) for name in choices}
    fixed = dict(fixed or {})
    if static if static is not None else static_explorers():
        return _static(view, choices, start, labels, fixed, dpi)
    return _live(view, choices, start, dict(live or {}), labels, fixed)


def _format(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _static(view: Callable[..., Any], grid: dict[str, list[Any]], start: dict[str, Any],
            labels: dict[str, str], fixed: dict[str, Any], dpi: int) -> w.Widget:
    names = list(grid)
    n_frames = 1
    for values in grid.values():
        n_frames *= len(values)
    if n_frames > MAX_FRAMES:
        raise ValueError(f"{n_frames} combinations of grid values; at most {MAX_FRAMES} fit "
                         "in a page: use fewer values")
    frames, texts = {}, {}
    for combo in itertools.product(*grid.values()):
        params = dict(zip(names, combo, strict=True))
        figure = view(**params, **fixed)
        text = alt_text(figure) or _describe(params, labels)
        frames[combo] = _frame(figure, dpi, text)
        texts[combo] = w.HTML(f"<p>{html.escape(text)}</p>")
    controls = [_selector(labels[n], grid[n], grid[n].index(start[n])) for n in names]
    named = [w.HBox([w.HTML(f"<b>{html.escape(labels[n])}</b>", layout=w.Layout(width="7em"),
                            _dom_classes=["ma-label"]), c], _dom_classes=["ma-control"])
             for n, c in zip(names, controls, strict=True)]
    stacks: list[list[w.Stack]] = [[] for _ in names]

    def nest(leaves: dict[tuple[Any, ...], w.Widget], level: int,
             prefix: tuple[Any, ...]) -> w.Widget:
        if level == len(names):
            return leaves[prefix]
        values = grid[names[level]]
        stack = w.Stack([nest(leaves, level + 1, (*prefix, v)) for v in values],
                        selected_index=values.index(start[names[level]]))
        stacks[level].append(stack)
        return stack

    top = nest(frames, 0, ())
    said = nest(texts, 0, ())
    said.add_class("ma-live")
    for control, level in zip(controls, stacks, strict=True):
        if isinstance(control, w.HTML):  # a single value: nothing to switch
            continue
        for stack in level:
            w.jsdlink((control, "index"), (stack, "selected_index"))
    held = "; ".join(f"{labels[n]} ∈ {{{', '.join(_format(v) for v in grid[n])}}}"
                     for n in names)
    caption = w.HTML(f"<small>This page holds the figures for {held} ({n_frames} in all). "
                     "Run the notebook (launch button or download) to explore any value."
                     "</small>")
    return w.VBox([w.HBox(named, layout=w.Layout(flex_flow="row wrap")), top, said, caption])


def _describe(params: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    """The parameters in words: the alternative text of a view that wrote none."""
    return ", ".join(f"{labels[n]} = {_format(v)}" for n, v in params.items())


def _selector(label: str, values: list[Any], index: int) -> w.Widget:
    """A control over the grid values. Its name is an ``HTML`` widget beside it, not its
    ``description``: the static widget manager typesets descriptions with MathJax 2's API,
    which the book's MathJax 3 does not have."""
    if len(values) == 1:  # nothing to choose: the value as text, not a one-stop slider
        return w.HTML(html.escape(_format(values[0])), _dom_classes=["ma-fixed"])
    options = [(_format(v), v) for v in values]
    if all(isinstance(v, Real) and not isinstance(v, bool) for v in values):
        return w.SelectionSlider(options=options, index=index, continuous_update=True)
    return w.Dropdown(options=options, index=index)


def _frame(figure: Any, dpi: int, text: str) -> w.HTML:
    """The figure as a PNG ``<img>`` with ``text`` as its alternative text (the ``Image``
    widget has no ``alt``)."""
    buf = io.BytesIO()
    figure.savefig(buf, format="png", dpi=dpi)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return w.HTML(f'<img class="ma-frame" src="data:image/png;base64,{data}" '
                  f'alt="{html.escape(text, quote=True)}">')


def _live(view: Callable[..., Any], grid: dict[str, list[Any]], start: dict[str, Any],
          live: dict[str, Any], labels: dict[str, str], fixed: dict[str, Any]) -> w.Widget:
    unknown = sorted(set(live) - set(grid))
    if unknown:
        raise ValueError(f"live control(s) {unknown} are not in the grid")
    controls = {n: _live_control(labels[n], live.get(n, grid[n]), start[n]) for n in grid}

    def show(**params: Any) -> None:
        figure = view(**params, **fixed)
        display(figure)
        text = alt_text(figure)
        if text:
            display(HTML(f"<p>{html.escape(text)}</p>"))

    return w.interactive(show, **controls)


def _live_control(label: str, spec: Any, initial: Any) -> w.Widget:
    if isinstance(spec, w.Widget):
        return spec
    if isinstance(spec, tuple) and len(spec) == 3:
        lo, hi, step = spec
        if all(isinstance(v, int) for v in spec):
            return w.IntSlider(value=initial, min=lo, max=hi, step=step, description=label,
                               continuous_update=False)
        return w.FloatSlider(value=initial, min=lo, max=hi, step=step, description=label,
                             continuous_update=False)
    options = [(_format(v), v) for v in spec]
    return w.Dropdown(options=options, value=initial, description=label)
