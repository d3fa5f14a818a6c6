# The two commands of the README: `make book` builds the whole book, `make test` runs the tests.
# Both create .venv on first use and install the project into it (torch pinned to 2.13.0;
# no byte-compiling up front: modules are compiled when first imported, not all 40 s at once).
# Byte code is written as modules are first imported, whatever the caller's environment says:
# with PYTHONDONTWRITEBYTECODE set (as on this machine) every process (each chapter's kernel, each
# CLI under test) recompiled torch, pandas and transformers, about 10 s each (17.8 s against
# 7.1 s to import the stack, measured side by side).
unexport PYTHONDONTWRITEBYTECODE
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.srlib-installed

.PHONY: install book book-quick test lint format clean

# torch (the pin read from pyproject.toml) and uv come from pip, which honours pip's own
# configuration (here: a local CPU wheel of torch; uv does not look there); the rest from uv,
# which resolves and installs the same versions in parallel: 25-35 s against 74-87 s for pip alone
# from a fresh venv, measured side by side. Where uv cannot run or reach its index, pip does it.
TORCH := $(shell grep -o 'torch==[0-9.]*' pyproject.toml)
PIP := $(BIN)/python -m pip install --quiet --no-compile
QUIET_PIP := { grep -v 'is ignored: it is neither a file nor a directory' || true; }

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(PIP) '$(TORCH)' uv 2>&1 | $(QUIET_PIP)
	$(BIN)/uv pip install --quiet --python $(BIN)/python -e '.[book,dev]' \
		|| $(PIP) -e '.[book,dev]' 2>&1 | $(QUIET_PIP)
	touch $(STAMP)

install: $(STAMP)

book: install
	$(BIN)/srlib book --jobs 2

book-quick: install
	$(BIN)/srlib book --quick

lint: install
	$(BIN)/ruff format --check srlib tests bench notebooks
	$(BIN)/ruff check srlib tests bench notebooks

test: lint
	$(BIN)/pytest

format: install
	$(BIN)/ruff format srlib tests bench notebooks
	$(BIN)/ruff check --fix srlib tests bench notebooks

clean:
	rm -rf _build book/_executed .pytest_cache .ruff_cache
