# The two entry points of the README. Both create .venv, install the pinned
# requirements and build tilec into it (editable), then run.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

$(VENV)/.installed: requirements.txt requirements-test.txt setup.py CMakeLists.txt dialects/*
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -r requirements-test.txt
	$(PY) -m pip install -q --no-build-isolation -e .
	touch $@

# naga (npm naga-wasm) for the webgpu target's SPIR-V -> WGSL stage; without npm its tests skip
NAGA := $(VENV)/naga/node_modules/naga-wasm/dist/node.js
$(NAGA): | $(VENV)/.installed
	command -v npm >/dev/null && npm install --silent --no-fund --no-audit --prefix $(VENV)/naga \
		naga-wasm@30.1.0 || echo "npm not found: the webgpu target cannot make WGSL"

.PHONY: quickstart test lint
quickstart: $(VENV)/.installed
	$(PY) examples/quickstart.py

test: $(VENV)/.installed $(NAGA) lint
	$(VENV)/bin/lit -v lit_tests
	$(PY) -m pytest -q tests

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
