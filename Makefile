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

.PHONY: setup serve test lint typecheck pytest bench schema format clean

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

bench: $(STAMP)
	$(VENV)/bin/python bench/search.py --notes $(BENCH_NOTES)
	$(VENV)/bin/python bench/import_time.py
	$(VENV)/bin/python bench/startup.py
	$(VENV)/bin/python bench/bridge_latency.py
	$(VENV)/bin/python bench/retrieval.py
	$(VENV)/bin/python bench/semantic.py --notes $(BENCH_NOTES) --scaling
	$(VENV)/bin/python bench/semantic.py --notes 30000

schema: $(STAMP)
	$(VENV)/bin/python -m plugin_bridge schema > docs/protocol.schema.json

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
