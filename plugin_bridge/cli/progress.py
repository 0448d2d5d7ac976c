"""``serve``'s embedding progress on stderr: a bar redrawn in place on a terminal, one line per
phase change otherwise (a log file)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Final, TextIO

if TYPE_CHECKING:
    from plugin_bridge.vault.semantic.semantic_index import Progress, SemanticIndex

BAR_WIDTH: Final = 30


def show_progress(semantic: SemanticIndex, out: TextIO | None = None) -> None:
    """Also draw ``semantic``'s progress on ``out`` (stderr), after whatever it reported to."""
    stream = out or sys.stderr
    forward = semantic.on_progress
    last_phase = ""

    def report(progress: Progress) -> None:
        nonlocal last_phase
        if forward is not None:
            forward(progress)
        if stream.isatty():
            end = "\n" if progress.phase != "embedding" else ""
            stream.write("\r" + progress_line(progress) + end)
        elif progress.phase != last_phase:
            stream.write(progress_line(progress) + "\n")
        stream.flush()
        last_phase = progress.phase

    semantic.on_progress = report


def progress_line(progress: Progress) -> str:
    """``[######------] 512/1024 chunks embedded (fake:x)`` and the like, one line."""
    if progress.phase == "confirm":
        cost = "unknown" if progress.estimated_usd is None else f"${progress.estimated_usd:.2f}"
        return (
            f"Embedding {progress.total} chunks with {progress.model} needs about "
            f"{progress.estimated_tokens} tokens ({cost}): approve it in the plugin "
            "(index/confirmEmbedding)."
        )
    if progress.phase == "error":
        return f"Embedding stopped: {progress.error}"
    if progress.phase == "ready":
        return f"Semantic search ready: {progress.done} chunks embedded with {progress.model}."
    if progress.phase == "loading":
        return f"Loading vectors of {progress.model}…"
    filled = BAR_WIDTH * progress.done // max(progress.total, 1)
    bar = "#" * filled + "-" * (BAR_WIDTH - filled)
    return f"[{bar}] {progress.done}/{progress.total} chunks embedded ({progress.model})"
