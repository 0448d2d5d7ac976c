"""Where a path from outside may point inside a vault, and which files the vault layer ignores.

Every path that comes from a model tool call or a plugin request goes through :func:`resolve_note`:
it must stay inside the vault root (no absolute paths, no ``..`` escape, no symlink leading out),
must not be inside a hidden system folder, and must name a note type we handle.
"""

from __future__ import annotations

import os
import re
import sys
import unicodedata
from pathlib import Path, PurePosixPath
from typing import Final

from plugin_bridge.vault.errors import VaultError

EXCLUDED_DIRS: Final = frozenset({".obsidian", ".git", ".trash", ".ai-bridge"})
"""Folders never read, written, indexed or watched (``.ai-bridge`` is our data dir when inside)."""
TEMP_PREFIX: Final = ".~aib-"
"""Prefix of our atomic-write temp files; the watcher and the indexer skip them."""
WRITABLE_SUFFIXES: Final = frozenset({".md"})
READABLE_SUFFIXES: Final = frozenset({".md", ".canvas", ".base"})
_EDITOR_TEMP_SUFFIXES: Final = (".tmp", ".swp", ".swx", ".swo", "~", ".crdownload", ".part")


def to_posix(rel_path: str) -> str:
    """Normalise a vault-relative path to forward slashes without a leading ``./``."""
    return PurePosixPath(rel_path.replace("\\", "/")).as_posix().removeprefix("./")


def is_hidden(rel_path: str) -> bool:
    """True when a part of the path starts with a dot: Obsidian shows no dot-file or dot-folder
    (``.obsidian``, ``.git``, ``.trash``, our ``.~aib-`` temp files among them)."""
    return any(
        part.startswith(".") and part != "." for part in rel_path.replace("\\", "/").split("/")
    )


def is_ignored(rel_path: str) -> bool:
    """True for paths the vault layer never treats as notes: hidden ones and editors' temp
    files (see :mod:`plugin_bridge.vault.files` for the whole rule)."""
    return is_hidden(rel_path) or rel_path.endswith(_EDITOR_TEMP_SUFFIXES)


MAX_NAME_BYTES: Final = 255
"""The longest file or folder name (in UTF-8 bytes) common file systems accept."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


_BIDI: Final = re.compile("[\u202a-\u202e\u2066-\u2069]")
"""Bidirectional overrides and isolates: they make a name read as another one."""
WINDOWS_RESERVED: Final = frozenset(
    {"CON", "PRN", "AUX", "NUL"} | {f"{kind}{n}" for kind in ("COM", "LPT") for n in range(1, 10)}
)
"""Names Windows refuses for any file or folder, whatever their extension (``con.md``)."""


def check_length(posix: str) -> None:
    """Refuse a path with a name over 255 bytes: no file system holds one, so such a note
    cannot exist (a read says so instead of failing with ENAMETOOLONG)."""
    for name in posix.split("/"):
        if len(name.encode("utf-8")) > MAX_NAME_BYTES:
            raise VaultError(
                "forbidden_path",
                f"'{name[:40]}…' is longer than {MAX_NAME_BYTES} bytes, which file systems "
                "refuse: use a shorter name.",
                path=posix[:300],
            )


_UNPORTABLE: Final = re.compile(r'[:*?"<>|]')
"""Characters Windows, macOS (``:``), iOS or Android refuse in a file name."""


def check_new_names(posix: str) -> None:
    """Refuse, for a note about to be made, names that another device of a synced vault
    cannot hold or shows as something else: Windows' reserved names (``con.md``,
    ``aux/x.md``), the characters ``: * ? " < > |``, a name ending in a dot or a space, and
    bidirectional override characters. Every path that makes a note comes here, so each
    name gets the same sentence wherever it was asked for."""
    for name in posix.split("/"):
        why = _unportable(name)
        if why is not None:
            raise VaultError(
                "forbidden_path",
                f"'{name}' {why}, so the vault could not sync to all of Windows, macOS, iOS "
                "and Android: choose another name.",
                path=posix,
            )
        if _BIDI.search(name):
            raise VaultError(
                "forbidden_path",
                f"{posix!r} contains a bidirectional override character, which makes a name "
                "read as another: remove it.",
                path=posix,
            )


def _unportable(name: str) -> str | None:
    """Why a device of a synced vault cannot hold the file or folder name ``name``."""
    if name.split(".")[0].upper() in WINDOWS_RESERVED:
        return "is a name Windows reserves for a device"
    found = sorted(set(_UNPORTABLE.findall(name)))
    if found:
        listed = " and ".join(f"'{char}'" for char in found)
        return f"holds {listed}, which some systems refuse in a name"
    if name.endswith((".", " ")):
        return "ends with a dot or a space, which Windows drops"
    return None


def check_names(posix: str) -> None:
    """Refuse, with one sentence, a path whose names a file system or a sync service would
    mangle: a name over 255 bytes, a control character, a leading or trailing space."""
    check_length(posix)
    for name in posix.split("/"):
        if _CONTROL.search(name):
            raise VaultError(
                "forbidden_path",
                f"{posix!r} contains a control character (a line break or a tab, say): "
                "remove it from the name.",
                path=posix,
            )
        if name != name.strip():
            raise VaultError(
                "forbidden_path",
                f"'{name}' starts or ends with a space, which sync services and Windows trim: "
                "remove the space.",
                path=posix,
            )


def resolve_note(
    root: Path,
    rel_path: str,
    *,
    write: bool = False,
    excluded: frozenset[Path] = frozenset(),
    suffixes: frozenset[str] | None = None,
) -> Path:
    """The absolute path of ``rel_path`` inside ``root`` or ``VaultError(forbidden_path)``.

    ``root`` must already be resolved. ``excluded`` holds extra absolute folders to refuse (the
    data dir when it sits inside the vault). ``suffixes``: the kinds of file allowed instead
    of notes (attachments). Missing files are fine: existence is the caller's.
    """
    pure = _inside_by_name(rel_path, write=write)
    allowed = suffixes or (WRITABLE_SUFFIXES if write else READABLE_SUFFIXES)
    if pure.suffix.lower() not in allowed:
        kinds = ", ".join(sorted(allowed))
        verb = "written" if write else "read"
        raise VaultError(
            "forbidden_path", f"Only {kinds} notes can be {verb}: '{rel_path}'.", path=rel_path
        )
    candidate = root.joinpath(*pure.parts)
    _inside_by_link(root, rel_path, candidate, excluded)
    return candidate


def _inside_by_name(rel_path: str, *, write: bool) -> PurePosixPath:
    """``rel_path`` as a relative, visible path outside the system folders (its text alone
    says so), or ``VaultError(forbidden_path)``."""
    if not rel_path or not rel_path.strip():
        raise VaultError("forbidden_path", "Give a note path relative to the vault root.")
    if "\x00" in rel_path:
        raise VaultError("forbidden_path", "A note path cannot contain a NUL character.")
    # Reads forgive blanks around the whole path; a write never trims a name silently.
    posix = to_posix(rel_path if write else rel_path.strip())
    if write:
        check_names(posix)
    else:
        check_length(posix)
    pure = PurePosixPath(posix)
    # C:/x or C: (on Windows also C:x); elsewhere a:b.md is a name, refused for new notes
    drive = len(posix) > 1 and posix[1] == ":" and (sys.platform == "win32" or posix[2:3] in "/")
    if pure.is_absolute() or drive:
        raise VaultError(
            "forbidden_path",
            f"'{rel_path}' is absolute: give a path relative to the vault root.",
            path=rel_path,
        )
    if ".." in pure.parts:
        raise VaultError(
            "forbidden_path",
            f"'{rel_path}' leaves the vault: remove the '..' parts.",
            path=rel_path,
        )
    if any(part in EXCLUDED_DIRS for part in pure.parts):
        raise VaultError(
            "forbidden_path",
            f"'{rel_path}' is inside a system folder ({', '.join(sorted(EXCLUDED_DIRS))}).",
            path=rel_path,
        )
    if is_hidden(posix):
        raise VaultError(
            "forbidden_path",
            f"'{rel_path}' is hidden (a name starting with '.'), and Obsidian shows no hidden "
            "files or folders: use a visible path.",
            path=rel_path,
        )
    return pure


def _inside_by_link(root: Path, rel_path: str, candidate: Path, excluded: frozenset[Path]) -> None:
    """``VaultError(forbidden_path)`` when ``candidate`` (``rel_path`` inside ``root``) leads,
    through a link, out of the vault, into a hidden folder or into an ``excluded`` one."""
    real = Path(os.path.realpath(candidate))
    if not real.is_relative_to(root):
        raise VaultError(
            "forbidden_path",
            f"'{rel_path}' points outside the vault through a link.",
            path=rel_path,
        )
    if is_hidden(real.relative_to(root).as_posix()):
        raise VaultError(
            "forbidden_path", f"'{rel_path}' links into a hidden or system folder.", path=rel_path
        )
    if any(real.is_relative_to(folder) for folder in excluded):
        raise VaultError(
            "forbidden_path", f"'{rel_path}' is inside the assistant's data folder.", path=rel_path
        )


def name_key(name: str) -> str:
    """What a file system that ignores case and Unicode normalisation compares (macOS,
    Windows, sync services): two names with one key are one file there."""
    return unicodedata.normalize("NFC", name).casefold()


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
