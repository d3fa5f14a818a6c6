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

.PHONY: install lock book book-quick lab test lint format clean

# Installs are exact: requirements.lock (made by `make lock` from pyproject.toml with uv, every
# file hashed) pins every package but torch; torch (the pin read from pyproject.toml) comes from
# pip, which honours pip's own configuration (here: a local CPU wheel of torch; uv does not look
# there), without its dependencies, which the lock pins. uv installs the lock in parallel (25-35 s
# against 74-87 s for pip from a fresh venv, measured side by side); where uv cannot run or reach
# its index, pip installs the same lock.
TORCH := $(shell grep -o 'torch==[0-9.]*' pyproject.toml)
PIP := $(BIN)/python -m pip install --quiet --no-compile
QUIET_PIP := { grep -v 'is ignored: it is neither a file nor a directory' || true; }
LOCK := requirements.lock

$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(PIP) --no-deps '$(TORCH)' 2>&1 | $(QUIET_PIP)
	$(PIP) uv 2>&1 | $(QUIET_PIP)
	$(BIN)/uv pip install --quiet --python $(BIN)/python --require-hashes --no-deps -r $(LOCK) \
		|| $(PIP) --require-hashes --no-deps -r $(LOCK) 2>&1 | $(QUIET_PIP)
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -e . \
		|| $(PIP) --no-deps -e . 2>&1 | $(QUIET_PIP)
	touch $(STAMP)

# Refresh requirements.lock from pyproject.toml: the newest versions that satisfy it, for every
# platform (markers kept), hashed. torch itself is left out (pip installs the pin above: the
# index's wheel is a CUDA build), its own requirements are locked like the rest.
lock: install
	$(BIN)/python -c 'from importlib.metadata import requires; \
		print("\n".join(r for r in requires("torch") if "extra ==" not in r))' > $(VENV)/torch.in
	echo "$(TORCH) ; sys_platform == 'never'" > $(VENV)/torch-override.txt
	$(BIN)/uv pip compile --quiet pyproject.toml $(VENV)/torch.in --extra book --extra dev \
		--universal --python-version 3.11 --generate-hashes \
		--override $(VENV)/torch-override.txt --no-emit-package torch -o $(LOCK)

install: $(STAMP)

book: install
	$(BIN)/srlib book --jobs 2

book-quick: install
	$(BIN)/srlib book --quick

# JupyterLab on the project's folder, the chapters in view, with the project's kernel: this .venv,
# its kernels started as the book starts its own (`srlib lab`: runner.lab_environment). The
# settings in jupyter/ are copied into .venv, where JupyterLab reads them: no news feed, no update
# check and no extension search, so nothing reaches for the network when it starts. LAB_DIR
# serves another book's folder; LAB_ARGS adds JupyterLab options (the tests start it headless:
# --no-browser, a port, a token). As root (a container) it must be allowed to run.
LAB_CONFIG := $(VENV)/etc/jupyter/jupyter_server_config.json
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json
LAB_ARGS ?=
LAB_DIR ?= $(CURDIR)
LAB_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

$(LAB_CONFIG): jupyter/jupyter_server_config.json $(STAMP)
	mkdir -p $(@D) && cp $< $@

$(LAB_SETTINGS): jupyter/overrides.json $(STAMP)
	mkdir -p $(@D) && cp $< $@

lab: install $(LAB_CONFIG) $(LAB_SETTINGS)
	$(BIN)/srlib lab -- --ServerApp.root_dir="$(LAB_DIR)" \
		--ServerApp.default_url=/lab/tree/notebooks $(LAB_ROOT) $(LAB_ARGS)

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
