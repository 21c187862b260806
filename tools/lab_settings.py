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

3. Opening or running a chapter does not mark it modified: what JupyterLab adds and Jupytext
   never writes (the kernel's ``language_info``, outputs, the run-time cell metadata that
   ``chapters/jupytext.toml`` filters out) is not counted as a change.
4. Cross-references to other pages and citations read as text: jupyterlab-myst resolves a
   reference only inside the open notebook and has no bibliography, so it shows
   ``{numref}`Chapter %s <chap-mdav>``` as "Chapter %s" and ``{cite}`domingo2006survey``` as
   the raw key. The same extension puts in the chapter's number or the page's title
   ("Chapter 2", "For students: ...") and the citation's authors and year
   ("Domingo-Ferrer, 2006"), read here from ``_toc.yml``, the pages' labels and
   ``references.bib``. It changes only what is shown, never the notebook.

Run again after adding a page, a label or a reference (``make lab`` does).
Usage: ``python tools/lab_settings.py .venv``
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
REMOTE_ENTRY = r"""// Written by tools/lab_settings.py (microagg): how JupyterLab shows the book.
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
  // Unresolved references, shown as text a reader understands (see tools/lab_settings.py).
  var LABELS = %(labels)s;
  var CITES = %(cites)s;
  var ROLE = /\{(numref|ref|eq|prf:ref)\}`([^`]*)`/g;
  function setText(el, text) {
    var node = el.lastChild;  // keep React's text node, change only its value
    if (node && node.nodeType === 3 && node.nodeValue !== text) {
      node.nodeValue = text;
    }
  }
  function readable(root, source) {
    root.querySelectorAll('span[title="Citation Not Found"]').forEach(function (el) {
      var key = el.textContent.trim();
      if (CITES[key]) {
        setText(el, CITES[key]);
        el.setAttribute("title", key);
        el.setAttribute("data-microagg-cite", key);
      }
    });
    var roles = [];
    var m;
    ROLE.lastIndex = 0;
    while ((m = ROLE.exec(source)) !== null) {
      var parts = /^([\s\S]*?)\s*<([^<>]+)>$/.exec(m[2]);
      roles.push({kind: m[1], template: parts ? parts[1] : null, label: parts ? parts[2] : m[2]});
    }
    // Each shown reference is found by its target where it names it: a link's address
    // (#label), or the label an unresolved one shows (title "Cross Reference Not Found");
    // other links in the cell (a directive's own) are left alone.
    function role(key) {
      for (var i = 0; i < roles.length; i++) {
        var label = roles[i].label;
        if (label === key || label.toLowerCase().replace(/[^a-z0-9]+/g, "-") === key) {
          return roles[i];
        }
      }
      return null;
    }
    function show(el, r, shown) {
      var target = LABELS[r.label];
      if (!target || !(shown.indexOf("%%s") >= 0 || shown.trim() === r.label || shown === "??")) {
        return false;
      }
      var text;
      if (r.kind === "numref") {
        text = (r.template || (target.number && /^fig-/.test(r.label) ? "Fig. %%s" : "%%s"))
          .replace("%%s", target.number || target.title);
      } else {
        text = r.template || target.title;
      }
      setText(el, text);
      return true;
    }
    // A reference written with its own text ("Chapter %%s <chap-mdav>") is a link to "#"
    // showing that text: such links are the numbered references with a text, in order.
    var links = Array.prototype.slice.call(root.querySelectorAll("a.hover-link"));
    var holes = links.filter(function (a) { return a.textContent.indexOf("%%s") >= 0; });
    var templated = roles.filter(function (r) {
      return r.kind === "numref" && r.template !== null && r.template.indexOf("%%s") >= 0;
    });
    if (holes.length === templated.length) {
      holes.forEach(function (a, i) { show(a, templated[i], a.textContent); });
    }
    links.forEach(function (a) {
      var r = role((a.getAttribute("href") || "").replace(/^#/, ""));
      if (r) {
        show(a, r, a.textContent);
      }
    });
    root.querySelectorAll('span[title="Cross Reference Not Found"]').forEach(function (el) {
      var key = el.textContent.trim();
      var r = role(key);
      if (r && show(el, r, key)) {
        el.setAttribute("title", r.label);
        el.setAttribute("data-microagg-ref", r.label);
      }
    });
  }
  // A chapter is not "modified" by what JupyterLab itself adds when it opens or runs it and
  // Jupytext never writes (language_info, outputs, the cell metadata jupytext.toml leaves out).
  var UNSAVED = %(unsaved)s;
  function saved(json) {
    var meta = Object.assign({}, json.metadata);
    delete meta.language_info;
    return JSON.stringify([meta, json.cells.map(function (c) {
      var md = Object.assign({}, c.metadata);
      UNSAVED.forEach(function (key) { delete md[key]; });
      var src = Array.isArray(c.source) ? c.source.join("") : c.source;
      return [c.cell_type, src, md];
    })]);
  }
  function watch(panel) {
    var context = panel.context;
    if (panel.__microaggWatched || !context || !panel.content || !panel.content.widgets) {
      return;
    }
    panel.__microaggWatched = true;
    context.ready.then(function () {
      var model = context.model;
      var onDisk = saved(model.toJSON());
      var check = function () {
        if (model.dirty && saved(model.toJSON()) === onDisk) {
          model.dirty = false;
        }
      };
      context.fileChanged.connect(function () { onDisk = saved(model.toJSON()); });
      model.stateChanged.connect(function (_, change) {
        if (change.name === "dirty" && change.newValue) {
          check();
        }
      });
      check();
    });
  }
  function patchAll(app) {
    var widgets = app.shell.widgets("main");
    var next = widgets.next();
    while (next && !next.done && next.value !== undefined) {
      var panel = next.value;
      watch(panel);
      var cells = panel.content && panel.content.widgets;
      if (cells) {
        cells.forEach(function (cell) {
          if (cell.model && cell.model.type === "markdown" && cell.rendered) {
            readable(cell.node, cell.model.sharedModel.getSource());
          }
        });
      }
      next = widgets.next();
    }
  }
  var readablePlugin = {
    id: "%(name)s:readable-references",
    description: "Show references to other pages and citations as readable text.",
    autoStart: true,
    requires: [],
    optional: [],
    activate: function (app) {
      var timer = null;
      new MutationObserver(function () {
        if (timer === null) {
          timer = setTimeout(function () {
            timer = null;
            patchAll(app);
          }, 200);
        }
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
      setInterval(function () { patchAll(app); }, 2000);  // and whatever the observer missed
    }
  };
  var scope = (window._JUPYTERLAB = window._JUPYTERLAB || {});
  scope["%(name)s"] = {
    init: function () { return Promise.resolve(); },
    get: function (module) {
      if (module !== "./extension") {
        return Promise.reject(new Error("%(name)s has no module " + module));
      }
      var module_ = { __esModule: true, default: [plugin, readablePlugin] };
      return Promise.resolve(function () { return module_; });
    }
  };
})();
"""


def text_pages(root: Path = ROOT) -> list[str]:
    """File names of the book's pages that are not notebooks (they open as Markdown)."""
    return sorted(p.name for p in pages(root) if not is_notebook(p))


def _numbered(root: Path) -> list[Path]:
    """The pages of the numbered parts of ``_toc.yml``, in order (Chapter 1, 2, ...)."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    files = [c["file"] for part in toc.get("parts", []) if part.get("numbered")
             for c in part.get("chapters", [])]
    return [root / f"{f}.md" for f in files]


#: A figure's name (a code cell's ``figure: name:`` or a ``{figure}``'s ``:name:``) and an
#: equation's label (``$$ (eq-...)``), as the chapters write them.
_FIGURE = re.compile(r"\s*:?name:\s*(fig-[\w.-]+)\s*")
_EQUATION = re.compile(r"\s*\$\$\s*\(([\w.-]+)\)\s*")


def labels(root: Path = ROOT) -> dict[str, dict[str, str]]:
    """Label -> title (and number) of every labelled heading of the book's pages (a
    chapter's number), and of the numbered chapters' figures ("Fig. 5.2", number "5.2") and
    equations ("(1.1)"), numbered within their chapter in order, as the book numbers them."""
    numbers = {p.resolve(): str(i) for i, p in enumerate(_numbered(root), 1)}
    out: dict[str, dict[str, str]] = {}
    for page in pages(root):
        lines = page.read_text(encoding="utf-8").splitlines()
        chapter = numbers.get(page.resolve())
        counts = {"fig": 0, "eq": 0}
        for i, line in enumerate(lines):
            label = re.fullmatch(r"\(([\w:.-]+)\)=", line.strip())
            heading = re.match(r"(#+)\s+(.*)", lines[i + 1]) if i + 1 < len(lines) else None
            if label and heading:
                entry = {"title": heading.group(2).strip()}
                if len(heading.group(1)) == 1 and chapter:
                    entry["number"] = chapter
                out[label.group(1)] = entry
            for kind, pattern, shown in (("fig", _FIGURE, "Fig. {}"), ("eq", _EQUATION, "({})")):
                found = pattern.fullmatch(line)
                if found and chapter:
                    counts[kind] += 1
                    number = f"{chapter}.{counts[kind]}"
                    out[found.group(1)] = {"title": shown.format(number), "number": number}
    return out


def citations(root: Path = ROOT) -> dict[str, str]:
    """Citation key -> "Author, year" / "A and B, year" / "A et al., year" from references.bib."""
    text = (root / "references.bib").read_text(encoding="utf-8")
    out = {}
    for entry in re.split(r"\n(?=@)", text):
        key = re.match(r"@\w+\{([^,\s]+),", entry)
        author = re.search(r"\bauthor\s*=\s*\{(.*?)\},?\s*\n", entry, re.DOTALL)
        year = re.search(r"\byear\s*=\s*\{?(\d{4})", entry)
        if not (key and author and year):
            continue
        names = [a.split(",")[0].strip() if "," in a else a.split()[-1]
                 for a in re.split(r"\s+and\s+", " ".join(author.group(1).split()))]
        names = [n.replace("{", "").replace("}", "") for n in names]
        who = (names[0] if len(names) == 1 else f"{names[0]} and {names[1]}"
               if len(names) == 2 else f"{names[0]} et al.")
        out[key.group(1)] = f"{who}, {year.group(1)}"
    return out


def unsaved_cell_metadata(root: Path = ROOT) -> list[str]:
    """Cell metadata keys that ``chapters/jupytext.toml`` leaves out when a chapter is saved."""
    import tomllib

    config = tomllib.loads((root / "chapters" / "jupytext.toml").read_text(encoding="utf-8"))
    return [k[1:] for k in config["cell_metadata_filter"].split(",") if k.startswith("-")]


def write_extension(share: Path, names: list[str], root: Path = ROOT) -> Path:
    """Write the ``microagg-pages`` JupyterLab extension for ``names`` into ``share``."""
    folder = share / "labextensions" / EXTENSION
    static = folder / "static"
    static.mkdir(parents=True, exist_ok=True)
    pattern = "^(" + "|".join(re.escape(n) for n in names) + ")$"
    (static / "remoteEntry.js").write_text(REMOTE_ENTRY % {
        "name": EXTENSION, "file_type": FILE_TYPE, "pattern": json.dumps(pattern),
        "labels": json.dumps(labels(root), ensure_ascii=False),
        "cites": json.dumps(citations(root), ensure_ascii=False),
        "unsaved": json.dumps(unsaved_cell_metadata(root))}, encoding="utf-8")
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
    (folder / "package.json").write_text(json.dumps(package, indent=2) + "\n", encoding="utf-8")
    return folder


def main(prefix: Path, root: Path = ROOT) -> Path:
    """Write the settings overrides and the page extension into ``prefix``; return the former."""
    share = prefix / "share" / "jupyter"
    path = share / "lab" / "settings" / "overrides.json"
    settings = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    viewers = settings.setdefault(PLUGIN, {}).setdefault("defaultViewers", {})
    viewers.update(VIEWERS)
    viewers[FILE_TYPE] = "Editor"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    write_extension(share, text_pages(root), root)
    return path


if __name__ == "__main__":
    print("JupyterLab settings:", main(Path(sys.argv[1] if len(sys.argv) > 1 else ".venv")))
