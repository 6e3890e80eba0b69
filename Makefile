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

.PHONY: quickstart test lint wheel
quickstart: $(VENV)/.installed
	$(PY) examples/quickstart.py

test: $(VENV)/.installed $(NAGA) lint
	$(VENV)/bin/lit -v lit_tests
	$(PY) -m pytest -q tests

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .

# A manylinux wheel in $(DIST): pip builds it (the native modules come from build/, installed
# with rpaths inside site-packages), auditwheel checks what they link and tags it with the
# oldest manylinux policy their symbols allow. libMLIRPythonCAPI and libLLVM stay out: the
# compiler extra's MLIR/LLVM wheels hold them, and the dialect finds them there.
DIST ?= dist
wheel: $(VENV)/.installed
	rm -rf $(DIST)/unrepaired && mkdir -p $(DIST)
	$(PY) -m pip wheel -q --no-build-isolation --no-deps -w $(DIST)/unrepaired .
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/auditwheel repair --exclude libMLIRPythonCAPI.so --exclude libLLVM.so \
		-w $(DIST) $(DIST)/unrepaired/tilec-*.whl
	rm -rf $(DIST)/unrepaired
