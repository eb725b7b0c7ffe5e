# RigPort: environments, lint, tests, demo, benchmarks and the extension zip.
#
#   make test      lint, then the whole suite on bpy 4.2 LTS, 4.5 LTS, 5.0
#                  and 5.2 LTS (make test42, test45, test50, test52: one)
#   make demo      every format through import, export and check (bpy 5.0)
#   make package   validate and build dist/rigport-<version>*.zip
#
# Every environment is created on first use from the pinned files in
# requirements/; a stamp file per environment keeps later runs from
# reinstalling until its requirement files change.

SHELL := /bin/bash
.DEFAULT_GOAL := help

# Python 3.11 (bpy 4.2, 4.5, 5.0) and Python 3.13 (bpy 5.2): PYTHON311= and
# PYTHON313= when given, else python3.11/python3.13 on PATH, else pyenv's.
comma := ,
find_python = $(shell for c in "$$(command -v python$(1))" $$(ls -d "$$(pyenv root 2>/dev/null || echo $$HOME/.pyenv)"/versions/$(1)*/bin/python$(1) 2>/dev/null); do \
  [ -n "$$c" ] && "$$c" -c 'import sys; sys.exit(sys.version_info[:2] != ($(subst .,$(comma),$(1))))' 2>/dev/null && { echo "$$c"; break; }; done)
PYTHON311 ?= $(call find_python,3.11)
PYTHON313 ?= $(call find_python,3.13)
VENV ?= .venv
VERSIONS := 42 45 50 52
PY42 := $(VENV)/bpy42/bin/python
PY45 := $(VENV)/bpy45/bin/python
PY50 := $(VENV)/bpy50/bin/python
PY52 := $(VENV)/bpy52/bin/python
RUFF := $(VENV)/lint/bin/ruff
PYTEST_ARGS ?= -q
# pytest-blender, where installed, would take over a plain run: keep it out.
PYTEST := -m pytest -p no:pytest-blender
PIP_INSTALL := -m pip install --no-deps --only-binary=:all: --no-input --progress-bar off

.PHONY: help venv lint test $(addprefix test,$(VERSIONS)) demo bench package clean distclean

help:
	@echo "make test      ruff, then pytest on bpy 4.2, 4.5, 5.0 and 5.2, TEST_JOBS at a time (creates .venv/ first)"
	@echo "make test42    pytest on bpy 4.2 only (also test45, test50, test52)"
	@echo "make lint      ruff check ."
	@echo "make demo      every format through import, export and check, on bpy 5.0"
	@echo "make bench     every format's benchmark into BENCHMARKS.md"
	@echo "make package   validate and build the extension zips into dist/"
	@echo "make venv      create .venv/bpy42, bpy45, bpy50, bpy52, .venv/lint and .venv/node"
	@echo "make clean     remove dist/ and caches;  make distclean: also .venv/"
	@echo "Python: PYTHON311=... PYTHON313=... (found: $(or $(PYTHON311),none) and $(or $(PYTHON313),none))"
	@echo "Extra pytest arguments: make test PYTEST_ARGS='-q -k mdl'"

venv: $(foreach v,$(VERSIONS),$(VENV)/bpy$(v)/.stamp) $(VENV)/lint/.stamp $(VENV)/node/.stamp

# The interpreter each environment needs, checked before use.
python_for = $(if $(filter 52,$(1)),$(PYTHON313),$(PYTHON311))
pyver_for = $(if $(filter 52,$(1)),3.13,3.11)

# One environment per requirements/<name>.txt. --no-deps: every package is
# pinned in the files themselves; pip check proves nothing is missing.
$(VENV)/bpy%/.stamp: requirements/bpy%.txt requirements/common.txt
	@py='$(call python_for,$*)'; want='$(call pyver_for,$*)'; \
	[ -n "$$py" ] || { echo "error: Python $$want is missing (bpy $* needs it): put python$$want on PATH, install it with pyenv, or use make PYTHON$${want/./}=/path/to/python$$want" >&2; exit 1; }; \
	"$$py" -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$$want'.split('.'))))" || { \
	  echo "error: $$py is not Python $$want (bpy $* needs it); use make PYTHON$${want/./}=..." >&2; exit 1; }; \
	echo "== creating $(VENV)/bpy$* from requirements/bpy$*.txt with $$py"; \
	test -x $(VENV)/bpy$*/bin/python || "$$py" -m venv $(VENV)/bpy$*
	$(VENV)/bpy$*/bin/python $(PIP_INSTALL) -r requirements/bpy$*.txt
	$(VENV)/bpy$*/bin/python -m pip check
	touch $@

# The lint environment has ruff only. .venv/bin/ruff is a convenience link.
$(VENV)/lint/.stamp: requirements/lint.txt
	@[ -n "$(PYTHON311)" ] || { echo "error: Python 3.11 is missing: use make PYTHON311=..." >&2; exit 1; }
	@echo "== creating $(VENV)/lint from requirements/lint.txt"
	test -x $(VENV)/lint/bin/python || $(PYTHON311) -m venv $(VENV)/lint
	$(VENV)/lint/bin/python $(PIP_INSTALL) -r requirements/lint.txt
	mkdir -p $(VENV)/bin && ln -sf ../lint/bin/ruff $(VENV)/bin/ruff
	touch $@

# matplotlib for the benchmark's plot (make bench only; tests never need it).
$(VENV)/plot/.stamp: requirements/plot.txt
	@[ -n "$(PYTHON311)" ] || { echo "error: Python 3.11 is missing: use make PYTHON311=..." >&2; exit 1; }
	@echo "== creating $(VENV)/plot from requirements/plot.txt"
	test -x $(VENV)/plot/bin/python || $(PYTHON311) -m venv $(VENV)/plot
	$(VENV)/plot/bin/python $(PIP_INSTALL) -r requirements/plot.txt
	$(VENV)/plot/bin/python -m pip check
	touch $@

# Node packages (the glTF-Validator) from requirements/npm.txt into .venv/node.
# Without npm the tests that need them are skipped, so this only warns.
$(VENV)/node/.stamp: requirements/npm.txt
	@if command -v npm >/dev/null 2>&1; then \
	  echo "== installing requirements/npm.txt into $(VENV)/node"; \
	  npm install --prefix $(VENV)/node --no-audit --no-fund --no-save \
	    $$(grep -v '^#' requirements/npm.txt) && touch $@; \
	else \
	  echo "warning: npm is missing: the glTF-Validator tests will be skipped" >&2; \
	fi

lint: $(VENV)/lint/.stamp
	$(RUFF) check .

# How many versions `make test` runs at once: one per core by default
# (`make test TEST_JOBS=1` runs them one after another). The slowest tests of
# each run are listed at its end (--durations).
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
DURATIONS ?= 15

# A static pattern rule: GNU make skips implicit rules for .PHONY targets.
$(addprefix test,$(VERSIONS)): test%: $(VENV)/bpy%/.stamp
	@echo "== pytest on bpy $*"
	@start=$$(date +%s); rc=0; \
	$(VENV)/bpy$*/bin/python $(PYTEST) $(PYTEST_ARGS) --durations=$(DURATIONS) tests/ || rc=$$?; \
	echo "== pytest on bpy $* took $$(( $$(date +%s) - start )) s (exit $$rc)"; exit $$rc

# Lint, then every version's run, TEST_JOBS at a time; each run writes its own
# log, printed whole when it ends (under a lock, so two never interleave).
# Every step always runs; the target fails if any failed. pytest exits 5 when
# it collected no test: that is a failure here too.
test: venv
	@start=$$(date +%s); status=""; ok=1; \
	logs=$$(mktemp -d "$${TMPDIR:-/tmp}/rigport-test.XXXXXX"); trap 'rm -rf "$$logs"' EXIT; \
	$(MAKE) --no-print-directory lint && status="ruff ok" || { status="ruff FAILED"; ok=0; }; \
	echo "== pytest on bpy $(VERSIONS), $(TEST_JOBS) at a time"; \
	for v in $(VERSIONS); do \
	  while [ "$$(jobs -rp | wc -l)" -ge $(TEST_JOBS) ]; do wait -n || true; done; \
	  { rc=0; $(MAKE) --no-print-directory test$$v >"$$logs/$$v.log" 2>&1 || rc=$$?; \
	    echo $$rc >"$$logs/$$v.rc"; flock "$$logs/print.lock" cat "$$logs/$$v.log"; } & \
	done; \
	wait; \
	for v in $(VERSIONS); do \
	  if [ "$$(cat "$$logs/$$v.rc" 2>/dev/null)" = 0 ]; then status="$$status, bpy $$v ok"; \
	  else status="$$status, bpy $$v FAILED"; ok=0; fi; \
	done; \
	echo "== make test took $$(( $$(date +%s) - start )) s: $$status"; [ $$ok = 1 ]

demo: $(VENV)/bpy50/.stamp
	$(PY50) demo/run_demo.py

# Every format's benchmark on every supported bpy, each into its own section of
# BENCHMARKS.md (bench/sections.py keeps the other sections). Long: the Urho3D
# bench alone runs 1M-vertex imports against glTF, C++ FBX and C++ OBJ.
SECTION := $(PY50) bench/sections.py BENCHMARKS.md
define bench_all
	set -o pipefail; { for v in $(VERSIONS); do echo "### bpy $$v"; echo; \
	  $(VENV)/bpy$$v/bin/python bench/$(1) || exit 1; echo; done; } | $(SECTION) $(2) "$(3)"
endef

bench: venv $(VENV)/plot/.stamp
	$(PY50) bench/sizes_bench.py $(foreach v,$(VERSIONS),--python $(VENV)/bpy$(v)/bin/python) \
	  --plot bench/import-vs-size.png --plot-python $(VENV)/plot/bin/python
	$(PY50) bench/run_bench.py $(foreach v,$(VERSIONS),--python $(VENV)/bpy$(v)/bin/python) \
	  --extra bench/urho3d_notes.md
	$(call bench_all,unigine_bench.py,unigine,Unigine MESH (bench/unigine_bench.py))
	$(call bench_all,bench_renderware.py --repeat 2,renderware,RenderWare DFF (bench/bench_renderware.py))
	$(call bench_all,mrtk_bench.py,mrtk,MRTK input recordings (bench/mrtk_bench.py))
	$(call bench_all,bonespro_bench.py,bonespro,BonesPro text exports (bench/bonespro_bench.py))
	$(call bench_all,renderware_anim_bench.py,renderware_anim,RenderWare animations and textures (bench/renderware_anim_bench.py))
	$(call bench_all,anim_bench.py --repeat 3,anim_import,Animation import against Blender's calls (bench/anim_bench.py))
	$(call bench_all,many_anims_bench.py,many_anims,Many animations in one import (bench/many_anims_bench.py))
	set -o pipefail; $(PY50) bench/batch_bench.py --files 1000 --jobs 2 \
	  | $(SECTION) batch "batch.py on a library (bench/batch_bench.py)"

# Built with the CLI of the oldest supported Blender (4.2): one zip for every
# platform (Install from Disk) and one per platform (the extensions platform);
# tests/ also validates and installs the zip on every supported version.
package: $(VENV)/bpy42/.stamp
	$(PY42) tools/extension.py build --output-dir dist --split-platforms

clean:
	rm -rf dist .pytest_cache .ruff_cache
	find . -path ./.venv -prune -o -name __pycache__ -type d -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
