"""Names that collide: two names equal but for case or Unicode normalisation are one file on
macOS and Windows and under sync services, so a new note may not twin an existing one."""

from __future__ import annotations

import os
import sys
import unicodedata
from pathlib import Path


def name_key(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()


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


def case_sensitive(folder: Path) -> bool:
    """Whether the file system holding ``folder`` tells names apart by case: probed with an
    entry of the folder whose name has letters (or the folder itself), else the platform's
    default (macOS and Windows: no)."""
    for entry in [*_first_entries(folder), folder]:
        swapped = entry.with_name(entry.name.swapcase())
        if swapped.name != entry.name:
            try:
                return not os.path.samefile(entry, swapped)
            except OSError:
                return True  # the swapped name does not exist: a different name
    return sys.platform not in ("darwin", "win32")


def _first_entries(folder: Path, count: int = 20) -> list[Path]:
    try:
        with os.scandir(folder) as entries:
            return [Path(entry.path) for _, entry in zip(range(count), entries, strict=False)]
    except OSError:
        return []
