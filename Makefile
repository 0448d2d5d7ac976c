# Two commands do all set-up: `make serve` and `make test`. Both build .venv/ from uv.lock with uv
# (installed with pip when missing) on this machine's python3; uv never downloads a Python.
# `make install` puts the `obsidian-ai-bridge` command on the user's PATH from this checkout.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.synced
UV = $(shell command -v uv 2>/dev/null || echo $(PYTHON) -m uv)
export UV_PYTHON_DOWNLOADS := never
VAULT ?= examples/vault
ARGS ?=
BENCH_NOTES ?= 10000

# uv.lock's versions of the runtime dependencies, written to the file named after it, as
# constraints for uv's tool installer (the lock stays as it is: --frozen).
PINS = $(UV) export --frozen --no-hashes --no-emit-project --no-default-groups --quiet -o

PLUGIN := obsidian-plugin
PLUGIN_STAMP := $(PLUGIN)/node_modules/.installed
PLUGIN_ID := ai-bridge-assistant

.PHONY: setup serve test lint typecheck pytest soak bench schema format clean \
	plugin plugin-test plugin-install chromium cjk-font screenshot install version release-assets

setup: $(STAMP)

$(STAMP): uv.lock pyproject.toml
	@command -v uv >/dev/null 2>&1 || $(PYTHON) -m uv --version >/dev/null 2>&1 \
		|| $(PYTHON) -m pip install --quiet uv
	$(UV) sync --locked --python $(PYTHON)
	@# uv's cache then holds what `uv tool install <the release's wheel>` resolves and installs
	@# (sync reads the lock, so it fetches no index pages), and what `make install` does: the
	@# browser test runs the install card's command offline (UV_OFFLINE=1), and the install test
	@# `make install`. A throwaway tool folder; the user's tools stay.
	@tmp="$$(mktemp -d)"; export UV_TOOL_DIR="$$tmp/tools" UV_TOOL_BIN_DIR="$$tmp/bin"; \
		{ $(UV) tool install --quiet --python $(PYTHON) . && $(PINS) "$$tmp/pins.txt" \
		&& $(UV) tool install --quiet --force --python $(PYTHON) --constraints "$$tmp/pins.txt" .; \
		} >/dev/null 2>&1; rc=$$?; rm -rf "$$tmp"; \
		test $$rc -eq 0 || echo "uv tool install into a temporary folder failed: the install tests will not run offline"
	@touch $@

serve: $(STAMP)
	$(VENV)/bin/obsidian-ai-bridge serve --vault "$(VAULT)" $(ARGS)

test: lint typecheck pytest plugin-test

# The command for the user, from this checkout, with uv's tool installer (UV_TOOL_DIR and
# UV_TOOL_BIN_DIR choose where), its dependencies at uv.lock's versions (the ones the tests ran
# with: the tool installer does not read the lock, so the lock's pins go in as constraints);
# it ends saying where the command is and whether that folder is on PATH.
install:
	@command -v uv >/dev/null 2>&1 || $(PYTHON) -m uv --version >/dev/null 2>&1 \
		|| $(PYTHON) -m pip install --quiet uv
	@pins="$$(mktemp)"; $(PINS) "$$pins" \
		&& $(UV) tool install --force --python $(PYTHON) --constraints "$$pins" .; \
		rc=$$?; rm -f "$$pins"; test $$rc -eq 0
	@bin="$$($(UV) tool dir --bin)"; \
	echo "Installed $$bin/obsidian-ai-bridge"; \
	case ":$$PATH:" in \
		*":$$bin:"*) echo "$$bin is on PATH: run obsidian-ai-bridge serve --vault PATH/TO/YOUR/VAULT";; \
		*) echo "$$bin is not on PATH; add it (e.g. to ~/.profile), then open a new terminal:"; \
			echo "  export PATH=\"$$bin:\$$PATH\"";; \
	esac

# `make version V=x.y.z`: the one version in pyproject.toml, package.json, package-lock.json,
# both manifest.json files and versions.json; uv.lock follows (uv sync --locked still passes).
version:
	@test -n "$(V)" || { echo "usage: make version V=x.y.z"; exit 2; }
	$(PYTHON) scripts/set_version.py "$(V)"
	$(UV) lock

# dist/: what a release attaches (the plugin's main.js, manifest.json, styles.css; the wheel).
release-assets: plugin
	rm -rf dist
	$(UV) build --wheel --out-dir dist --python $(PYTHON)
	cp $(PLUGIN)/main.js $(PLUGIN)/manifest.json $(PLUGIN)/styles.css dist/
	@ls -l dist

# The Obsidian plugin: npm ci from the lock file, generated wire types current, strict tsc,
# Obsidian's review rules (eslint-plugin-obsidianmd) with no warnings, the bundle, then vitest
# (core units, the client against the real server, the panel in headless Chromium).
$(PLUGIN_STAMP): $(PLUGIN)/package-lock.json
	cd $(PLUGIN) && npm ci --no-audit --no-fund
	@touch $@

plugin: $(PLUGIN_STAMP)
	cd $(PLUGIN) && node scripts/gen-types.mjs --check
	cd $(PLUGIN) && npx tsc --noEmit
	cd $(PLUGIN) && npx eslint --max-warnings 0 .
	cd $(PLUGIN) && node esbuild.config.mjs production

plugin-test: plugin $(STAMP) chromium
	cd $(PLUGIN) && npx vitest run

# Debian's chromium for the browser test; where apt cannot install it the test says it skipped.
chromium:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 \
		&& (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) \
		|| echo "chromium is missing and apt-get cannot install it: the browser test will be skipped"; }

# Refresh the pictures in docs/ from the browser tests (the panel, mid-answer, a review, the
# rewrite preview, the related view, the settings tab, the install and setup cards, the start,
# a tool call's details, uv's failure and a command that failed to start).
screenshot: plugin $(STAMP) chromium
	cd $(PLUGIN) && SCREENSHOT_DIR=$(CURDIR)/docs npx vitest run tests/browser

plugin-install: plugin
	@test "$(origin VAULT)" != file -a -d "$(VAULT)" || { echo "usage: make plugin-install VAULT=/path/to/vault"; exit 2; }
	mkdir -p "$(VAULT)/.obsidian/plugins/$(PLUGIN_ID)"
	cp $(PLUGIN)/main.js $(PLUGIN)/manifest.json $(PLUGIN)/styles.css "$(VAULT)/.obsidian/plugins/$(PLUGIN_ID)/"
	@echo "Installed into $(VAULT)/.obsidian/plugins/$(PLUGIN_ID): enable it in Obsidian under Settings → Community plugins."

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache

typecheck: $(STAMP)
	$(VENV)/bin/mypy

pytest: $(STAMP) cjk-font
	$(VENV)/bin/pytest

# A Chinese font for the tests' Chinese PDF (Debian's fonts-wqy-microhei); else that test skips.
cjk-font:
	@test -e /usr/share/fonts/truetype/wqy/wqy-microhei.ttc || { command -v apt-get >/dev/null 2>&1 \
		&& (apt-get install -y -qq fonts-wqy-microhei >/dev/null 2>&1 \
			|| (apt-get update -qq && apt-get install -y -qq fonts-wqy-microhei >/dev/null)) \
		|| echo "no CJK font and apt-get cannot install one: the Chinese PDF test will be skipped"; }

# The long reliability runs (marker `soak`), left out of `make test`.
soak: $(STAMP)
	$(VENV)/bin/pytest -m soak --timeout 900 tests/reliability

# The bench group (LiteLLM, for bench/side_by_side.py) is installed here only, never by setup.
# Bytecode first, as pip would have compiled it: otherwise (with PYTHONDONTWRITEBYTECODE) every
# lazy import in a benchmark compiles its sources again.
bench: $(STAMP)
	$(UV) sync --locked --group bench --python $(PYTHON)
	$(VENV)/bin/python -m compileall -q -j 0 $(VENV)/lib llm_service plugin_bridge > /dev/null
	$(VENV)/bin/python -m bench.report --notes $(BENCH_NOTES)

schema: $(STAMP)
	$(VENV)/bin/python -m plugin_bridge schema > docs/protocol.schema.json
	$(VENV)/bin/python -c "from pathlib import Path; from plugin_bridge.cli.schema import with_limits_table; p = Path('docs/protocol.md'); p.write_text(with_limits_table(p.read_text(encoding='utf-8')), encoding='utf-8')"
	@if [ -d $(PLUGIN)/node_modules ]; then cd $(PLUGIN) && node scripts/gen-types.mjs; \
		else echo "run make plugin once to regenerate obsidian-plugin/src/core/protocol.gen.ts"; fi

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache $(PLUGIN)/node_modules $(PLUGIN)/main.js
