"""serve's embedding progress on stderr: one line per phase in a log, a bar on a terminal."""

from __future__ import annotations

import io

from plugin_bridge.cli.progress import progress_line, show_progress
from plugin_bridge.vault.semantic.semantic_index import Progress


class FakeSemantic:
    on_progress = None


def test_progress_lines_say_what_happens() -> None:
    """A bar while embedding, the estimate while waiting for approval, the count when ready."""
    assert progress_line(Progress("embedding", 5, 10, "fake:x")) == (
        "[" + "#" * 15 + "-" * 15 + "] 5/10 chunks embedded (fake:x)"
    )
    confirm = progress_line(
        Progress("confirm", 0, 900, "openai:m", estimated_tokens=1234, estimated_usd=0.75)
    )
    assert "1234 tokens ($0.75)" in confirm and "index/confirmEmbedding" in confirm
    assert "42 chunks embedded" in progress_line(Progress("ready", 42, 42, "fake:x"))


def test_a_log_gets_one_line_per_phase_and_the_clients_still_get_everything() -> None:
    """Not a terminal: phase changes only; the previous callback sees every report."""
    out = io.StringIO()
    seen: list[Progress] = []
    semantic = FakeSemantic()
    semantic.on_progress = seen.append  # type: ignore[assignment]
    show_progress(semantic, out)  # type: ignore[arg-type]
    for done in (0, 256, 512):
        semantic.on_progress(Progress("embedding", done, 600, "fake:x"))  # type: ignore[misc]
    semantic.on_progress(Progress("ready", 600, 600, "fake:x"))  # type: ignore[misc]
    assert len(seen) == 4
    assert out.getvalue().splitlines() == [
        "[" + "-" * 30 + "] 0/600 chunks embedded (fake:x)",
        "Semantic search ready: 600 chunks embedded with fake:x.",
    ]
