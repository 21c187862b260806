"""The downloadable chapter notebooks read as plain Markdown (``tools/export_notebooks.py``).

Colab and a Jupyter without jupyterlab-myst showed the MyST markup of the copies as raw text
(``{glue:text}`sse:.1f```, ``{numref}`...```) and every solution in full. The copies now
carry the numbers and names the built site shows; these tests run the conversion on a small
site written here (the built site's copies are checked in ``tests/site/test_site.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
export_notebooks = pytest.importorskip("export_notebooks")

PAGE = """<html><body>
<section id="chap-demo"><span id="chap-demo"></span><h1><span class="section-number">3. </span>
Demo chapter<a class="headerlink" href="#chap-demo">#</a></h1>
<span id="sec-demo-part"></span><h2><span class="section-number">3.2. </span>The part
<a class="headerlink" href="#the-part">#</a></h2>
<div class="math notranslate nohighlight" id="equation-eq-demo">
<span class="eqno">(3.1)<a class="headerlink" href="#equation-eq-demo">#</a></span>\\[x\\]</div>
<div class="exercise admonition" id="ex-a">
<p class="admonition-title"><span class="caption-number">Exercise 3.1 </span> (By hand)</p></div>
<figure class="align-default" id="fig-demo">
<img alt="a figure"/><figcaption><p><span class="caption-number">Fig. 3.4 </span>
<span class="caption-text">Demo</span></p></figcaption></figure>
</section></body></html>"""


@pytest.fixture
def site(tmp_path):
    html = tmp_path / "html"
    (html / "chapters").mkdir(parents=True)
    (html / "chapters" / "demo.html").write_text(PAGE, encoding="utf-8")
    glue = tmp_path / "jupyter_execute" / "chapters"
    glue.mkdir(parents=True)
    record = {"sse": {"data": {"text/plain": "208.6666667"}},
              "name": {"data": {"text/plain": "'Census'"}}}
    (glue / "demo.glue.json").write_text(json.dumps(record), encoding="utf-8")
    return html


def test_roles_become_what_the_site_shows(site):
    targets = export_notebooks.Targets.from_site(site)
    glue = export_notebooks.glue_values(site, "demo")
    cites = {"solanas2006vmdav": "Solanas and Martínez-Ballesté, 2006"}
    text = ("(sec-x)=\n## Title\n\nSSE {glue:text}`sse:.1f` on {glue:text}`name`, as in "
            "{numref}`Chapter %s <chap-demo>`, {ref}`sec-demo-part`, {numref}`fig-demo`, "
            "{eq}`eq-demo` and {cite}`solanas2006vmdav`; {glue:text}`missing`; {ref}`ex-a`.\n\n"
            "$$\nx = 1\n$$ (eq-demo)\n")
    plain = export_notebooks.plain_markdown(text, targets, glue, cites)
    assert plain.startswith("## Title")  # the label line is gone
    assert ("SSE 208.7 on Census, as in Chapter 3, “The part”, Fig. 3.4, (3.1) and "
            "[Solanas and Martínez-Ballesté, 2006]; `missing`; Exercise 3.1.") in plain
    assert "$$\nx = 1\n\\tag{3.1}\n$$" in plain and "(eq-demo)" not in plain


def test_exercises_and_solutions_fold(site):
    targets = export_notebooks.Targets.from_site(site)
    cells = [
        nbformat.v4.new_markdown_cell("## Exercises\n\n```{exercise} By hand\n:label: ex-a\n\n"
                                      "Compute it.\n```\n\n```{solution-start} ex-a\n"
                                      ":class: dropdown\n```\n\nThe answer is 2."),
        nbformat.v4.new_code_cell("print(2)"),
        nbformat.v4.new_markdown_cell("So 2.\n\n```{solution-end}\n```\n\n:::{admonition} Note\n"
                                      ":class: tip\nA note.\n:::"),
        nbformat.v4.new_code_cell("x = 1"),
    ]
    out = export_notebooks.plain_cells(cells, targets, {}, {})
    md = [c.source for c in out if c.cell_type == "markdown"]
    assert md[0] == "## Exercises\n\n**Exercise 3.1: By hand.** Compute it."
    assert md[1] == export_notebooks.SOLVED
    assert md[2].startswith("<details>") and "The answer is 2." in md[2]
    assert md[3].startswith("<details>") and "So 2." in md[3]
    assert md[4] == "> **Note**\n>\n> A note."
    code = [c for c in out if c.cell_type == "code"]
    assert code[0].metadata["jupyter"]["source_hidden"] and code[0].metadata["cellView"] == "form"
    assert "jupyter" not in code[1].metadata  # after the solution: shown
    assert not any("```{" in m or ":::" in m for m in md)


def test_citations_read_the_bibliography():
    cites = export_notebooks.citations(ROOT / "references.bib")
    assert cites["solanas2006vmdav"] == "Solanas and Martínez-Ballesté, 2006"
    assert cites["balasch2014gomm"].startswith("Balasch-Masoliver et al., ")


def test_the_notebooks_install_the_package_they_were_made_with(tmp_path):
    """A notebook runner's review: the install cell took the repository's newest commit
    (and the page offered a PyPI install that does not exist), so a notebook downloaded
    today checks its numbers against tomorrow's package."""
    import subprocess

    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True, check=False).stdout.strip()
    url = export_notebooks.repository_url()
    if head:
        assert export_notebooks.requirement() == f"microagg[fast] @ git+{url}@{head}"
        assert f"@{head}" in export_notebooks.install_cell().source
    (tmp_path / "_config.yml").write_text(f"repository:\n  url: {url}\n", encoding="utf-8")
    assert export_notebooks.requirement(tmp_path) == f"microagg[fast] @ git+{url}"  # no git


def test_a_build_from_uncommitted_sources_says_the_pin_is_not_them(tmp_path, capsys):
    """The install cell pins the checkout's last commit; built from edited sources, the
    notebooks would install other code than the site's numbers came from: a warning names
    the files, and a clean checkout gives none."""
    import subprocess

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                       cwd=tmp_path, check=True, capture_output=True)

    url = export_notebooks.repository_url()
    (tmp_path / "_config.yml").write_text(f"repository:\n  url: {url}\n", encoding="utf-8")
    (tmp_path / "microagg").mkdir()
    (tmp_path / "microagg" / "_core.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "notes.md").write_text("a\n", encoding="utf-8")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "one")
    build = export_notebooks.requirement.__wrapped__  # (the cache keeps one answer per root)
    assert "@" in build(tmp_path).split("git+")[1]
    assert capsys.readouterr().err == ""
    (tmp_path / "notes.md").write_text("b\n", encoding="utf-8")  # (not the package: quiet)
    build(tmp_path)
    assert capsys.readouterr().err == ""
    (tmp_path / "microagg" / "_core.py").write_text("x = 2\n", encoding="utf-8")
    (tmp_path / "microagg" / "_new.py").write_text("y = 1\n", encoding="utf-8")
    build(tmp_path)
    err = capsys.readouterr().err
    assert "warning" in err and "microagg/_core.py" in err and "microagg/_new.py" in err
