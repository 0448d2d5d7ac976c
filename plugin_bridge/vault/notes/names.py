"""Names that collide: two names equal but for case or Unicode normalisation are one file on
macOS and Windows and under sync services, so a new note may not twin an existing one."""

from __future__ import annotations

import os
from pathlib import Path

from plugin_bridge.vault.paths import name_key


def twin_of(full: Path) -> Path | None:
    """Another entry of ``full``'s folder whose name equals its name but for case or Unicode
    normalisation, if there is one."""
    key = name_key(full.name)
    try:
        entries = list(os.scandir(full.parent))
    except (FileNotFoundError, NotADirectoryError):
        return None
    for entry in entries:
        if entry.name != full.name and name_key(entry.name) == key:
            return full.parent / entry.name
    return None
