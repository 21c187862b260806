# The project's commands. On a fresh machine you need only Python 3.11, make and npm:
#   make book   build the book (sets everything up on first use)
#   make test   every check CI runs
# Run `make help` for the rest.

SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
SHARED ?= ../shared
# Re-install the package and toolchain only when pyproject.toml changes.
STAMP := $(VENV)/.microagg-installed
# Web assets for offline math and widgets; not _static/ (see ../shared/TOOLCHAIN.md).
VENDOR := _vendor
# axe-core: the accessibility rules the browser tests run on every page (tests/site/); not
# copied into the site (_config.yml excludes it from the static files).
NPM_PACKAGES := mathjax@3.2.2 @jupyter-widgets/html-manager@1.0.15 requirejs@2.3.7 axe-core@4.14.1
VENDOR_STAMP := $(VENDOR)/.vendored
SITE := _build/html
CFFCONVERT := $(VENV)/cffconvert

.PHONY: help book test lab data env vendor clean clean-all bench lint pdf

help:
	@echo "make book    build the book into $(SITE) (creates $(VENV), fetches data and web assets)"
	@echo "make test    unit tests, chapters under nbval, strict book build, PDF, browser check"
	@echo "make pdf     the whole book as _build/latex/book.pdf (needs TeX Live: see README)"
	@echo "make lab     JupyterLab on chapters/ (the .md chapters open as notebooks, other pages as Markdown)"
	@echo "make assignments   course assignments into _build/assignments/<name>/{student,autograder}/"
	@echo "make grade ASSIGNMENT=a2_mdav SUBMISSION=path/a2_mdav.ipynb RESULTS=folder"
	@echo "             grade one submission with otter run (creates RESULTS, writes results.json)"
	@echo "make grade-all ASSIGNMENT=a2_mdav SUBMISSIONS=folder RESULTS=folder [JOBS=2] [REGRADE=1]"
	@echo "             grade a class (a folder or .ipynb per student): RESULTS/grades.csv;"
	@echo "             JOBS notebooks at once; run again to resume, REGRADE=1 grades all again;"
	@echo "             one run at a time into a RESULTS (it holds RESULTS/grade-all.lock)"
	@echo "make data    copy the reference data from $(SHARED)/data/raw into data/raw and verify it"
	@echo "make env     create $(VENV) with the package, the book toolchain and the test tools"
	@echo "make vendor  fetch the web assets for offline math and widgets into $(VENDOR)"
	@echo "make bench   run every tests/benchmarks/bench_*.py"
	@echo "make lint    ruff"
	@echo "make clean   remove build products and vendored assets (keeps $(VENV) and data/raw)"
	@echo "make clean-all   also remove $(VENV) and data/raw"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[book,test,fast,dask]'
	# wheels of a plain install (the package's own dependencies, nbclient, ipykernel) for the
	# test that runs exported chapters in a fresh environment without touching the network
	rm -rf $(VENV)/wheelhouse
	$(BIN)/python -m pip wheel --quiet -w $(VENV)/wheelhouse . nbclient ipykernel
	rm -rf build
	# cffconvert (tests/test_publishing.py) pins jsonschema<4 while Jupyter needs >=4.18: it
	# gets a venv of its own
	rm -rf $(CFFCONVERT) && $(BIN)/python -m venv $(CFFCONVERT)
	$(CFFCONVERT)/bin/python -m pip install --quiet 'cffconvert==2.0.0'
	touch $@

env: $(STAMP)

data: $(STAMP)
	$(BIN)/microagg data --source $(SHARED)/data/raw --dest data/raw

$(VENDOR_STAMP): Makefile
	rm -rf $(VENDOR) && mkdir -p $(VENDOR)/npm
	cd $(VENDOR)/npm && npm pack --silent $(NPM_PACKAGES) >/dev/null
	mkdir -p $(VENDOR)/mathjax $(VENDOR)/html-manager $(VENDOR)/requirejs $(VENDOR)/axe-core
	tar -xzf $(VENDOR)/npm/mathjax-3.2.2.tgz -C $(VENDOR)/mathjax --strip-components=2 package/es5
	tar -xzf $(VENDOR)/npm/jupyter-widgets-html-manager-1.0.15.tgz -C $(VENDOR)/html-manager \
	    --strip-components=2 --exclude='*.map' package/dist
	tar -xzf $(VENDOR)/npm/requirejs-2.3.7.tgz -C $(VENDOR)/requirejs --strip-components=1 package/require.js
	tar -xzf $(VENDOR)/npm/axe-core-4.14.1.tgz -C $(VENDOR)/axe-core --strip-components=1 \
	    package/axe.min.js package/LICENSE
	rm -rf $(VENDOR)/npm
	touch $@

vendor: $(VENDOR_STAMP)

# --all: re-read (so re-execute) every chapter, even if only the package changed. Then put
# plain .ipynb copies of the chapters into the site (downloads, Colab, Binder).
book: env data vendor
	$(BIN)/jupyter-book build . --all --keep-going
	$(BIN)/python tools/export_notebooks.py $(SITE)
	@echo
	@echo "Start page: $(CURDIR)/$(SITE)/index.html"

test: env data vendor
	bash tools/run_tests.sh

# The whole book as one PDF: Jupyter Book's LaTeX builder (xelatex) with Debian's TeX Live (see
# README). The chapters' outputs come from the execution cache keyed on microagg/ and data/
# (tools/book_ext.py): right after `make book` nothing runs again, and after a change to the
# package or the data the chapters run first. --all: every page is read again for LaTeX (the
# HTML build keeps its doctrees in the same folder).
pdf: env data
	$(BIN)/jupyter-book build . --all --builder pdflatex
	@echo
	@echo "PDF: $(CURDIR)/_build/latex/book.pdf"

lab: env data
	$(BIN)/python tools/lab_settings.py $(VENV)
	$(BIN)/jupyter lab --ServerApp.root_dir=chapters $(if $(filter 0,$(shell id -u)),--allow-root)

bench: env data
	@shopt -s nullglob; files=(tests/benchmarks/bench_*.py); \
	if [ $${#files[@]} -eq 0 ]; then echo "no tests/benchmarks/bench_*.py yet"; exit 0; fi; \
	for f in "$${files[@]}"; do echo "== $$f"; $(BIN)/python "$$f" || exit 1; done

lint: env
	$(BIN)/ruff check microagg tests tools chapters/conftest.py

clean:
	rm -rf _build $(VENDOR) .jupyter_cache .pytest_cache .ruff_cache .hypothesis
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -print0 | xargs -0 rm -rf

clean-all: clean
	rm -rf $(VENV) data/raw

# Course assignments (chapters/assignments/*.md, otter-grader masters): student notebooks and
# autograder bundles in _build/assignments/<name>/{student,autograder}/ (tools/assignments.py;
# `$(BIN)/python tools/assignments.py check` also verifies them, as `make test` does).
.PHONY: assignments grade grade-all
assignments: env
	$(BIN)/python tools/assignments.py build
# `make grade ASSIGNMENT=a2_mdav SUBMISSION=alice/a2_mdav.ipynb RESULTS=results/alice`
# (chapters/instructors.md); builds the assignment first if its autograder zip is missing.
grade: env
	@test -n "$(ASSIGNMENT)" -a -n "$(SUBMISSION)" -a -n "$(RESULTS)" || { echo \
	  "usage: make grade ASSIGNMENT=a2_mdav SUBMISSION=path/a2_mdav.ipynb RESULTS=folder" >&2; exit 2; }
	$(BIN)/python tools/assignments.py grade "$(ASSIGNMENT)" "$(SUBMISSION)" "$(RESULTS)"
# `make grade-all ASSIGNMENT=a2_mdav SUBMISSIONS=submissions RESULTS=results`: a whole class
# (one folder, or one .ipynb, per student), with RESULTS/grades.csv; JOBS=N grades N notebooks
# at once (default: tools/assignments.py's GRADE_JOBS), REGRADE=1 regrades those kept. A second
# run into the same RESULTS stops at once (RESULTS/grade-all.lock).
grade-all: env
	@test -n "$(ASSIGNMENT)" -a -n "$(SUBMISSIONS)" -a -n "$(RESULTS)" || { echo \
	  "usage: make grade-all ASSIGNMENT=a2_mdav SUBMISSIONS=folder RESULTS=folder [JOBS=2] [REGRADE=1]" >&2; exit 2; }
	$(BIN)/python tools/assignments.py grade-all "$(ASSIGNMENT)" "$(SUBMISSIONS)" "$(RESULTS)" \
	  $(if $(JOBS),--jobs "$(JOBS)") $(if $(filter-out 0,$(REGRADE)),--regrade)
