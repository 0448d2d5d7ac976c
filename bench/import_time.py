"""How long `import llm_service` takes (target < 0.2 s), best of several fresh interpreters.

Also times importing each provider SDK for comparison, since those are what we keep lazy.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

RUNS = 7
TARGETS = ["llm_service", "plugin_bridge", "anthropic", "openai"]


def import_seconds(module: str) -> float:
    """Cumulative import time of ``module`` as ``-X importtime`` reports it (best of RUNS)."""
    best = float("inf")
    for _ in range(RUNS):
        out = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import {module}"],
            capture_output=True,
            text=True,
            check=True,
        ).stderr
        pattern = rf"^import time:\s+\d+ \|\s+(\d+) \|\s?{re.escape(module)}$"
        match = re.search(pattern, out, re.MULTILINE)
        if match:
            best = min(best, int(match.group(1)) / 1e6)
    return best


def main() -> None:
    results = {module: import_seconds(module) for module in TARGETS}
    print(f"{'module':<16}{'import (s)':>12}")
    for module, seconds in results.items():
        print(f"{module:<16}{seconds:>12.3f}")
    ratio = results["anthropic"] / results["llm_service"]
    print(f"llm_service imports {ratio:.0f}x faster than the anthropic SDK it wraps")
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "import_time.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
