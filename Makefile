# Two commands do all set-up on a fresh machine: `make serve` and `make test` (see README.md).
# Every install step lives here; re-running a target on a set-up tree reinstalls nothing (stamp files).

SHELL := /bin/sh
.DEFAULT_GOAL := help

VENV := .venv
PY := $(VENV)/bin/python
DEPS_STAMP := $(VENV)/.deps-stamp
NODE_STAMP := node_modules/.package-lock.json
VENDOR_DIR := docs/assets/vendor
VENDOR_STAMP := $(VENDOR_DIR)/.stamp
CACHE_DIR := build/cache
PYODIDE_STAMP := build/pyodide/.stamp
PYODIDE_MATPLOTLIB_STAMP := build/cache/pyodide-matplotlib/.stamp
PLUGIN_PROJECT := build_scripts/mkdocs_plugin
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_ARGS ?=
BENCH ?=
# The site engine: mkdocs (MkDocs + Material, the default) or zensical (its successor). Both build the same site.
ENGINE ?= mkdocs

# Material prints its end-of-life notice (May 2027) on every build. We know: the build pipeline runs under Zensical
# too (`make build ENGINE=zensical`), so moving to it is a change of one variable.
export NO_MKDOCS_2_WARNING := 1

.PHONY: help setup serve build links test test-fast check test-stress bench chromium clean distclean move-old-caches \
        trained-weights

help:  ## List the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 12

setup: $(DEPS_STAMP) $(VENDOR_STAMP) $(PYODIDE_STAMP) trained-weights  ## Install everything the site build needs.

serve: setup  ## Build everything and serve the site on http://127.0.0.1:8000 with live reload (ENGINE=zensical too).
	$(PY) -m build_scripts.pipeline serve --engine $(ENGINE) --dev-addr $(HOST):$(PORT)

build: setup  ## Build the static site into site/ (what a static host serves); ENGINE=zensical builds it with Zensical.
	$(PY) -m build_scripts.pipeline build --engine $(ENGINE)

links: build  ## Build, then check every internal link, anchor and image; list the external links (never fetched).
	$(PY) -m build_scripts.pipeline links --engine $(ENGINE)

test: setup chromium  ## Install what the tests need (Chromium too), then run the whole suite.
	$(PY) -m pytest $(PYTEST_ARGS)

test-fast: setup  ## The inner loop: the kernel and site tests, no browser (narrow with PYTEST_ARGS="-k quiz").
	$(PY) -m pytest tests/kernels tests/site $(PYTEST_ARGS)

# A contributor's check before asking for a merge: every page's blocks as the build reads them, the strict build, and
# the pages changed since CHECK_BASE (docs/ files, or pages placing a changed sandbox) in Chromium.
CHECK_BASE ?= main
check: setup chromium  ## Lint every page, build strict, load the pages changed since main in Chromium.
	$(PY) -m build_scripts.pipeline check
	@PYTHONPATH=tests $(PY) -m changed_pages $(CHECK_BASE)
	CHECK_BASE=$(CHECK_BASE) $(PY) -m pytest -q tests/browser/test_changed_pages_live.py $(PYTEST_ARGS)

# The browser suite STRESS_RUNS times in a row with every core kept busy by the tests' own bounded load
# (tests/cpu_load.py): the suite must not depend on an idle machine. Stops at the first failing run.
STRESS_RUNS ?= 5
test-stress: setup chromium  ## Run the browser tests 5 times in a row with both cores busy; all must pass.
	@cores=$$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2); \
	for run in $$(seq 1 $(STRESS_RUNS)); do \
	  echo "== stress run $$run of $(STRESS_RUNS) ($$cores busy processes)"; \
	  $(PY) -m pytest tests/browser -q --cpu-load=$$cores $(PYTEST_ARGS) || exit 1; \
	done; echo "== $(STRESS_RUNS) of $(STRESS_RUNS) stress runs passed"

bench: setup $(PYODIDE_MATPLOTLIB_STAMP)  ## Run the benchmarks and print a table of ratios.
	$(PY) -m benchmarks $(BENCH)

# The venv is made once with a Python >= 3.12 (see build_scripts/find_python.sh for how it is found).
$(PY):
	@python=$$(sh build_scripts/find_python.sh) || exit 1; \
	echo "Creating $(VENV) with $$python"; \
	"$$python" -m venv $(VENV)

# The explainer package (editable) with the dev tools, and the tiny distribution that registers our MkDocs plugin.
$(DEPS_STAMP): pyproject.toml $(PLUGIN_PROJECT)/pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --editable '.[dev]' ./$(PLUGIN_PROJECT)
	@touch $@

$(NODE_STAMP): package.json package-lock.json
	@command -v npm >/dev/null 2>&1 || { \
	  echo "error: npm not found; it installs KaTeX and the Pyodide runtime. Install Node.js (e.g. apt-get install nodejs npm)." >&2; \
	  exit 1; }
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# Third-party browser files the site serves itself, so a page fetches nothing from another origin: KaTeX's CSS and
# fonts only, since formulas are typeset at build time (build_scripts/markdown/math.py). Made again when this
# recipe changes, so no file an older recipe copied stays in the site.
$(VENDOR_STAMP): $(NODE_STAMP) Makefile
	rm -rf $(VENDOR_DIR)
	mkdir -p $(VENDOR_DIR)/katex
	cp -R node_modules/katex/dist/fonts $(VENDOR_DIR)/katex/fonts
	cp node_modules/katex/dist/katex.min.css $(VENDOR_DIR)/katex/
	@touch $@

# The offline Pyodide runtime (npm core + numpy/micropip/packaging wheels checked against its lock), in
# build/pyodide/<version>/; the wheels are cached in build/cache/pyodide-wheels/ so a rebuild downloads nothing.
$(PYODIDE_STAMP): build_scripts/pyodide_runtime.py $(NODE_STAMP) $(DEPS_STAMP)
	@$(MAKE) --no-print-directory move-old-caches
	$(PY) -m build_scripts.pyodide_runtime prepare
	@touch $@

# The ablation lab's trained weights in explainer/data/ (ignored by git, shipped in the wheel), which the tests and
# the build read: trained once into build/cache/trained/ (about 15 s of CPU), then only checked and copied. Every site
# build checks them again first (build_scripts/pipeline/publish.py, package_data).
trained-weights: $(DEPS_STAMP)
	@$(PY) -m build_scripts.trained_weights

# Our caches used to live in .cache/, which Zensical owns (`zensical build --clean` empties it): a clone that has
# them there moves them to build/cache/ once (with the first set-up after the move) instead of downloading and
# retraining. (Drop once no clone needs it.)
move-old-caches:
	@mkdir -p $(CACHE_DIR)
	@for cache in pyodide-wheels training figures; do \
	  if [ -d .cache/$$cache ] && [ ! -e $(CACHE_DIR)/$$cache ]; then \
	    echo "moving .cache/$$cache to $(CACHE_DIR)/$$cache"; mv .cache/$$cache $(CACHE_DIR)/$$cache; \
	  fi; \
	done

# Benchmarks only: Pyodide's own matplotlib 3.8.4 and the wheels it needs, checked against the official lock like the
# runtime's numpy, cached in build/cache/pyodide-matplotlib/ (bench_matplotlib_pyodide draws our figures with it inside
# the site's worker; the site never ships it).
$(PYODIDE_MATPLOTLIB_STAMP): benchmarks/pyodide_matplotlib.py $(PYODIDE_STAMP)
	$(PY) -m benchmarks.pyodide_matplotlib prepare
	@touch $@

chromium:  ## Make sure Debian's Chromium is installed (the browser tests drive it; never a downloaded build).
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "Installing Debian chromium"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	else \
	  echo "error: chromium not found. Install Debian's package as root: apt-get install chromium" >&2; \
	  echo "       (or put a Chromium binary named 'chromium' on PATH)" >&2; \
	  exit 1; \
	fi

# Everything in build/ goes but the downloaded, checked Pyodide wheels (delete build/cache/pyodide-wheels to fetch
# them again): the next build renders every figure and trains the experiment's grid again.
clean:  ## Remove build outputs (site, figures, training runs, trained weights, wheel, vendored files); keep the Pyodide wheels.
	rm -rf site $(VENDOR_DIR) explainer/data
	@if [ -d build ]; then \
	  find build -mindepth 1 -maxdepth 1 ! -name cache -exec rm -rf {} +; \
	  find build/cache -mindepth 1 -maxdepth 1 ! -name pyodide-wheels -exec rm -rf {} + 2>/dev/null; true; \
	fi

distclean: clean  ## Also remove the venv and node_modules.
	rm -rf $(VENV) node_modules .pytest_cache .hypothesis
