"""Set up JupyterLab (in one environment only) for the book's chapters.

Two things, both written into ``<prefix>/share/jupyter``:

1. The MyST ``.md`` chapters open as notebooks: jupytext registers a "Jupytext Notebook"
   viewer, made the default for Markdown files in JupyterLab's default-settings overrides
   (``lab/settings/overrides.json``; other overrides in that file are kept).
2. The pages that are not notebooks (the preface, the API page, the instructors' and
   students' pages, ...: every page of ``_toc.yml`` without a kernel, see ``tools/toc.py``)
   open as Markdown in the text editor instead. JupyterLab chooses a viewer by file name only,
   and its settings cannot add a file type, so this writes a tiny JupyterLab extension
   (``labextensions/microagg-pages``, plain JavaScript, no build step) that registers a file
   type "MyST page" matching exactly those file names, with the editor as its viewer.

Run again after adding a page (``make lab`` does). Usage: ``python tools/lab_settings.py .venv``
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from toc import ROOT, is_notebook, pages  # noqa: E402

PLUGIN = "@jupyterlab/docmanager-extension:plugin"
VIEWERS = {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}
EXTENSION = "microagg-pages"
FILE_TYPE = "microagg-page"

# A federated extension as JupyterLab loads it: a script that puts a module container
# {init, get} into window._JUPYTERLAB[name]; get("./extension") resolves to a factory of the
# module, whose default export is the plugin. The plugin needs nothing but the application.
REMOTE_ENTRY = """\
// Written by tools/lab_settings.py: the book's pages that are not notebooks open as Markdown.
(function () {
  var plugin = {
    id: "%(name)s:plugin",
    description: "Open the book's non-notebook pages in the Markdown editor.",
    autoStart: true,
    requires: [],
    optional: [],
    activate: function (app) {
      var registry = app.docRegistry;
      registry.addFileType({
        name: "%(file_type)s",
        displayName: "MyST page",
        contentType: "file",
        fileFormat: "text",
        mimeTypes: ["text/markdown"],
        extensions: [],
        pattern: %(pattern)s,
        icon: registry.getFileType("markdown") && registry.getFileType("markdown").icon
      });
      // The editor's factory may be registered after this plugin starts.
      var useEditor = function () {
        if (!registry.getWidgetFactory("Editor")) {
          return false;
        }
        registry.setDefaultWidgetFactory("%(file_type)s", "Editor");
        return true;
      };
      if (!useEditor()) {
        var onChange = function (_, change) {
          if (change.type === "widgetFactory" && useEditor()) {
            registry.changed.disconnect(onChange);
          }
        };
        registry.changed.connect(onChange);
      }
    }
  };
  var scope = (window._JUPYTERLAB = window._JUPYTERLAB || {});
  scope["%(name)s"] = {
    init: function () { return Promise.resolve(); },
    get: function (module) {
      if (module !== "./extension") {
        return Promise.reject(new Error("%(name)s has no module " + module));
      }
      return Promise.resolve(function () { return { __esModule: true, default: [plugin] }; });
    }
  };
})();
"""


def text_pages(root: Path = ROOT) -> list[str]:
    """File names of the book's pages that are not notebooks (they open as Markdown)."""
    return sorted(p.name for p in pages(root) if not is_notebook(p))


def write_extension(share: Path, names: list[str]) -> Path:
    """Write the ``microagg-pages`` JupyterLab extension for ``names`` into ``share``."""
    folder = share / "labextensions" / EXTENSION
    static = folder / "static"
    static.mkdir(parents=True, exist_ok=True)
    pattern = "^(" + "|".join(re.escape(n) for n in names) + ")$"
    (static / "remoteEntry.js").write_text(REMOTE_ENTRY % {
        "name": EXTENSION, "file_type": FILE_TYPE, "pattern": json.dumps(pattern)})
    package = {
        "name": EXTENSION,
        "version": "1.0.0",
        "description": "Written by microagg's tools/lab_settings.py",
        "private": True,
        "jupyterlab": {
            "extension": True,
            "_build": {"load": "static/remoteEntry.js", "extension": "./extension"},
        },
    }
    (folder / "package.json").write_text(json.dumps(package, indent=2) + "\n")
    return folder


def main(prefix: Path, root: Path = ROOT) -> Path:
    """Write the settings overrides and the page extension into ``prefix``; return the former."""
    share = prefix / "share" / "jupyter"
    path = share / "lab" / "settings" / "overrides.json"
    settings = json.loads(path.read_text()) if path.exists() else {}
    viewers = settings.setdefault(PLUGIN, {}).setdefault("defaultViewers", {})
    viewers.update(VIEWERS)
    viewers[FILE_TYPE] = "Editor"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2) + "\n")
    write_extension(share, text_pages(root))
    return path


if __name__ == "__main__":
    print("JupyterLab settings:", main(Path(sys.argv[1] if len(sys.argv) > 1 else ".venv")))
