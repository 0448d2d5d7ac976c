"""bench/report.py puts the last run's tables into docs/benchmarks.md, keeping the prose."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO_ROOT


def _report() -> ModuleType:
    spec = importlib.util.spec_from_file_location("report", REPO_ROOT / "bench" / "report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_run_replaces_only_the_generated_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first run appends the section; the next replaces it; hand-written text stays."""
    report = _report()
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\nAnalysis by hand.\n", encoding="utf-8")
    monkeypatch.setattr(report, "DOC", doc)
    report.write_doc(report.section({"search": ("| a | b |\n", 0, 3.0)}))
    report.write_doc(report.section({"stalls": ("p99 lag 75 ms\n", 1, 9.0)}))
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Benchmarks\n\nAnalysis by hand.\n")
    assert text.count(report.START) == 1 and text.count(report.END) == 1
    assert "### stalls (9 s — exited 1)" in text and "p99 lag 75 ms" in text
    assert "### search" not in text


def test_the_committed_doc_has_one_generated_section() -> None:
    """docs/benchmarks.md carries the markers exactly once (make bench fills them)."""
    text = (REPO_ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    report = _report()
    assert text.count(report.START) == 1 and text.count(report.END) == 1
