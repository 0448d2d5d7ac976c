"""The command a user pastes to run this CLI again (its own module: ``setup`` and ``serve`` print
one, and importing the package's ``__init__`` from them made a circle)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

COMMAND: Final = "obsidian-ai-bridge"


def command_line(*args: str) -> str:
    """A command that runs this CLI when pasted into a shell, spelled as the README's install
    step makes it work: ``obsidian-ai-bridge ARGS`` when that command is on PATH, else this
    installation's own (a checkout's ``.venv/bin/obsidian-ai-bridge``), else this Python with
    ``-m plugin_bridge``."""
    import shlex
    import shutil

    entry = Path(sys.executable).with_name(COMMAND)
    if shutil.which(COMMAND):
        head = [COMMAND]
    elif entry.exists():
        head = [str(entry)]
    else:
        head = [sys.executable, "-m", "plugin_bridge"]
    return shlex.join([*head, *args])


def fail(code: int, message: str) -> int:
    """Print ``message`` (one sentence) to stderr; ``code``, the exit status to return."""
    print(message, file=sys.stderr)
    return code
