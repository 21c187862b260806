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

.PHONY: help book test lab data env vendor clean clean-all bench lint

help:
	@echo "make book    build the book into $(SITE) (creates $(VENV), fetches data and web assets)"
	@echo "make test    unit tests, chapters under nbval, strict book build, browser check"
	@echo "make lab     JupyterLab on chapters/ (the .md chapters open as notebooks)"
	@echo "make data    copy the reference data from $(SHARED)/data/raw into data/raw and verify it"
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
.PHONY: assignments
assignments: env
	$(BIN)/python tools/assignments.py build
