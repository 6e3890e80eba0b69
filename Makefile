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

.PHONY: quickstart test lint
quickstart: $(VENV)/.installed
	$(PY) examples/quickstart.py

test: $(VENV)/.installed lint
	$(VENV)/bin/lit -v lit_tests
	$(PY) -m pytest -q tests

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
