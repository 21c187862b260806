"""A small Sphinx extension for this book (``_config.yml``: ``local_extensions``).

* Sets ``MICROAGG_STATIC_EXPLORERS=1`` in the build process. The kernels that execute the
  chapters inherit the environment, so every explorer (:func:`microagg.views.explorer`)
  stores precomputed frames that the reader's browser switches between without a kernel.
  Run anywhere else (JupyterLab, nbval, a downloaded notebook), the explorers stay live.
* Points ``MICROAGG_REPRODUCTION_CACHE`` at a fresh folder next to the build output, so a
  paper's table computed by a chapter is reused by the ledger page in the same build.
* The ``{microagg-api} MODULE`` directive documents every name in ``MODULE.__all__``: an
  autosummary table, then autodoc of each function and class from its numpydoc docstring.
  The API page (``chapters/api.md``) is made of these, so it cannot drift from the code.
"""

from __future__ import annotations

import importlib
import inspect
import os
import shutil
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective


class MicroaggApi(SphinxDirective):
    """``{microagg-api} microagg.views``: summary table + autodoc of ``__all__``."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        modname = self.arguments[0]
        module = importlib.import_module(modname)
        names = [n for n in module.__all__
                 if inspect.isfunction(getattr(module, n)) or inspect.isclass(getattr(module, n))]
        lines = [f".. module:: {modname}", "", ".. autosummary::", "   :nosignatures:", ""]
        lines += [f"   {n}" for n in names] + [""]
        for n in names:
            kind = "autoclass" if inspect.isclass(getattr(module, n)) else "autofunction"
            lines += [f".. {kind}:: {n}", ""]
            if kind == "autoclass":
                lines += ["   :members:", "   :exclude-members: __init__", ""]
        # The page is MyST: hand the reStructuredText to MyST's eval-rst directive.
        lines = ["````{eval-rst}", *lines, "````"]
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source=f"<api of {modname}>"),
                                self.content_offset, container)
        return container.children


def _fresh_reproduction_cache(app: Any) -> None:
    cache = Path(app.outdir).parent / "reproduction-cache"
    shutil.rmtree(cache, ignore_errors=True)
    os.environ["MICROAGG_REPRODUCTION_CACHE"] = str(cache)


def setup(app: Any) -> dict[str, Any]:
    os.environ.setdefault("MICROAGG_STATIC_EXPLORERS", "1")
    app.connect("builder-inited", _fresh_reproduction_cache)
    app.add_directive("microagg-api", MicroaggApi)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
