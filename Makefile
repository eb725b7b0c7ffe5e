# RigPort: environments, lint, tests, demo, benchmarks and the extension zip.
#
#   make test      lint, then the whole suite on bpy 4.2 LTS and on bpy 5.0
#   make demo      run demo/run_demo.py with bpy 5.0
#   make package   validate and build dist/rigport-<version>.zip
#
# Every environment is created on first use from the pinned files in
# requirements/; a stamp file per environment keeps later runs from
# reinstalling until its requirement files change.

SHELL := /bin/bash
.DEFAULT_GOAL := help

# Python 3.11: python3.11 if on PATH, else python3 (checked before use).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY42 := $(VENV)/bpy42/bin/python
PY50 := $(VENV)/bpy50/bin/python
RUFF := $(VENV)/lint/bin/ruff
PYTEST_ARGS ?= -q
# pytest-blender, where installed, would take over a plain run: keep it out.
PYTEST := -m pytest -p no:pytest-blender
PIP_INSTALL := -m pip install --no-deps --only-binary=:all: --no-input --progress-bar off

.PHONY: help venv lint test test42 test50 demo bench package clean distclean

help:
	@echo "make test      ruff, then pytest on bpy 4.2 and bpy 5.0 (creates .venv/ first)"
	@echo "make test42    pytest on bpy 4.2 only;  make test50: on bpy 5.0 only"
	@echo "make lint      ruff check ."
	@echo "make demo      .venv/bpy50/bin/python demo/run_demo.py"
	@echo "make bench     every format's benchmark on bpy 5.0 and 4.2 into BENCHMARKS.md"
	@echo "make package   validate and build the extension zip into dist/"
	@echo "make venv      create .venv/bpy42, .venv/bpy50 and .venv/lint"
	@echo "make clean     remove dist/ and caches;  make distclean: also .venv/"
	@echo "Extra pytest arguments: make test PYTEST_ARGS='-q -k mdl'"

venv: $(VENV)/bpy42/.stamp $(VENV)/bpy50/.stamp $(VENV)/lint/.stamp

# One environment per requirements/<name>.txt. --no-deps: every package is
# pinned in the files themselves; pip check proves nothing is missing.
$(VENV)/%/.stamp: requirements/%.txt requirements/common.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || { \
	  echo "error: $(PYTHON) is not Python 3.11 (bpy wheels need 3.11); use make PYTHON=..." >&2; \
	  exit 1; }
	@echo "== creating $(VENV)/$* from requirements/$*.txt"
	test -x $(VENV)/$*/bin/python || $(PYTHON) -m venv $(VENV)/$*
	$(VENV)/$*/bin/python $(PIP_INSTALL) -r requirements/$*.txt
	$(VENV)/$*/bin/python -m pip check
	touch $@

# The lint environment has ruff only. .venv/bin/ruff is a convenience link.
$(VENV)/lint/.stamp: requirements/lint.txt
	@echo "== creating $(VENV)/lint from requirements/lint.txt"
	test -x $(VENV)/lint/bin/python || $(PYTHON) -m venv $(VENV)/lint
	$(VENV)/lint/bin/python $(PIP_INSTALL) -r requirements/lint.txt
	mkdir -p $(VENV)/bin && ln -sf ../lint/bin/ruff $(VENV)/bin/ruff
	touch $@

lint: $(VENV)/lint/.stamp
	$(RUFF) check .

test42: $(VENV)/bpy42/.stamp
	@echo "== pytest on bpy 4.2"
	$(PY42) $(PYTEST) $(PYTEST_ARGS) tests/

test50: $(VENV)/bpy50/.stamp
	@echo "== pytest on bpy 5.0"
	$(PY50) $(PYTEST) $(PYTEST_ARGS) tests/

# Lint and both test runs always run; the target fails if any of them failed.
# pytest exits 5 when it collected no test: that is a failure here too.
test: venv
	@lint=ok; t42=ok; t50=ok; \
	$(MAKE) --no-print-directory lint || lint=FAILED; \
	$(MAKE) --no-print-directory test42 || t42=FAILED; \
	$(MAKE) --no-print-directory test50 || t50=FAILED; \
	echo "== make test: ruff $$lint, bpy 4.2 $$t42, bpy 5.0 $$t50"; \
	[ $$lint$$t42$$t50 = okokok ]

demo: $(VENV)/bpy50/.stamp
	$(PY50) demo/run_demo.py

# Every format's benchmark on bpy 5.0 and 4.2, each into its own section of
# BENCHMARKS.md (bench/sections.py keeps the other sections). About 20 minutes.
SECTION := $(PY50) bench/sections.py BENCHMARKS.md
define bench_both
	set -o pipefail; { echo "### bpy 5.0"; echo; $(PY50) bench/$(1); echo; \
	  echo "### bpy 4.2"; echo; $(PY42) bench/$(1); } | $(SECTION) $(2) "$(3)"
endef

bench: $(VENV)/bpy50/.stamp $(VENV)/bpy42/.stamp
	$(PY50) bench/run_bench.py --python $(PY50) --python $(PY42)
	$(call bench_both,unigine_bench.py,unigine,Unigine MESH (bench/unigine_bench.py))
	$(call bench_both,bench_renderware.py --repeat 2,renderware,RenderWare DFF (bench/bench_renderware.py))
	$(call bench_both,mrtk_bench.py,mrtk,MRTK input recordings (bench/mrtk_bench.py))
	$(call bench_both,bonespro_bench.py,bonespro,BonesPro text exports (bench/bonespro_bench.py))

# Built with the CLI of the oldest supported Blender (4.2); tests/ also
# validates and installs the zip on 5.0.
package: $(VENV)/bpy42/.stamp
	$(PY42) tools/extension.py build --output-dir dist

clean:
	rm -rf dist .pytest_cache .ruff_cache
	find . -path ./.venv -prune -o -name __pycache__ -type d -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
