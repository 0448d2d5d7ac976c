"""The command a user pastes to run this CLI again (its own module: ``setup`` and ``serve`` print
one, and importing the package's ``__init__`` from them made a circle)."""

from __future__ import annotations

import sys
from pathlib import Path


def command_line(*args: str) -> str:
    """A command that runs this CLI when pasted into a shell: the venv's ``obsidian-ai-bridge``
    entry point when installed, else this Python with ``-m plugin_bridge``."""
    import shlex

    entry = Path(sys.executable).with_name("obsidian-ai-bridge")
    head = [str(entry)] if entry.exists() else [sys.executable, "-m", "plugin_bridge"]
    return shlex.join([*head, *args])
