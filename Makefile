# Two commands do all set-up: `make serve` and `make test`. Both build .venv/ from uv.lock with uv
# (installed with pip when missing) on this machine's python3; uv never downloads a Python.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.synced
UV = $(shell command -v uv 2>/dev/null || echo $(PYTHON) -m uv)
export UV_PYTHON_DOWNLOADS := never
VAULT ?= examples/vault
ARGS ?=
BENCH_NOTES ?= 10000

.PHONY: setup serve test lint typecheck pytest soak bench schema format clean

setup: $(STAMP)

$(STAMP): uv.lock pyproject.toml
	@command -v uv >/dev/null 2>&1 || $(PYTHON) -m uv --version >/dev/null 2>&1 \
		|| $(PYTHON) -m pip install --quiet uv
	$(UV) sync --locked --python $(PYTHON)
	@touch $@

serve: $(STAMP)
	$(VENV)/bin/obsidian-ai-bridge serve --vault "$(VAULT)" $(ARGS)

test: lint typecheck pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

pytest: $(STAMP)
	$(VENV)/bin/pytest

# The long reliability runs (marker `soak`), left out of `make test`.
soak: $(STAMP)
	$(VENV)/bin/pytest -m soak --timeout 900 tests/reliability

# The bench group (LiteLLM, for bench/side_by_side.py) is installed here only, never by setup.
# Bytecode first, as pip would have compiled it: otherwise (with PYTHONDONTWRITEBYTECODE) every
# lazy import in a benchmark compiles its sources again.
bench: $(STAMP)
	$(UV) sync --locked --group bench --python $(PYTHON)
	$(VENV)/bin/python -m compileall -q -j 0 $(VENV)/lib llm_service plugin_bridge > /dev/null
	$(VENV)/bin/python bench/search.py --notes $(BENCH_NOTES)
	$(VENV)/bin/python bench/search.py --sizes 1000,10000,30000 --edits 5
	$(VENV)/bin/python bench/import_time.py
	$(VENV)/bin/python bench/startup.py
	$(VENV)/bin/python bench/bridge_latency.py
	$(VENV)/bin/python bench/stalls.py
	$(VENV)/bin/python bench/stalls.py --pace 0.01
	$(VENV)/bin/python bench/side_by_side.py

schema: $(STAMP)
	$(VENV)/bin/python -m plugin_bridge schema > docs/protocol.schema.json

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
