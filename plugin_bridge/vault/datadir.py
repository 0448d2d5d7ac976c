"""Per-vault state folder: search index, undo snapshots, audit log, and the server info file."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Final

from llm_service import lazy

if TYPE_CHECKING:
    import platformdirs
else:
    platformdirs = lazy.module("platformdirs")

APP_NAME: Final = "obsidian-ai-bridge"
INFO_FILE_NAME: Final = "server.json"
"""The server info file's name in the data folder (see :mod:`plugin_bridge.wire.infofile`)."""


PRIVATE_FILE: Final = 0o600
"""The mode of every file the server or the CLI writes in its own folders."""


def private_folder(path: Path) -> Path:
    """``path``, created with its missing parents at mode 0700, whoever comes first (``clients
    add`` before the first ``serve``, or the server); a ``path`` this user owns that others can
    read already (made by an older version) is closed to them too."""
    missing: list[Path] = []
    folder = path
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    for created in reversed(missing):
        try:
            created.mkdir(mode=0o700)
        except FileExistsError:
            continue
    stat = path.stat()
    if stat.st_mode & 0o077 and getattr(os, "geteuid", lambda: -1)() == stat.st_uid:
        path.chmod(0o700)
    return path


def vault_key(root: Path) -> str:
    """A stable folder name for a vault: its name (sanitised) and 12 hex of sha256(abs path)."""
    resolved = str(root.resolve())
    slug = re.sub(r"[^\w.-]+", "-", root.resolve().name, flags=re.UNICODE).strip("-.") or "vault"
    return f"{slug[:40]}-{hashlib.sha256(resolved.encode()).hexdigest()[:12]}"


def vaults_dir() -> Path:
    """``<user state dir>/obsidian-ai-bridge/vaults``: every vault's default data folder."""
    return Path(platformdirs.user_state_dir(APP_NAME)) / "vaults"


def default_data_dir(root: Path) -> Path:
    """``<user state dir>/obsidian-ai-bridge/vaults/<vault key>``, outside the vault."""
    return vaults_dir() / vault_key(root)


def default_info_file(vault_root: Path) -> Path:
    """Where the server for ``vault_root`` writes its info file unless told otherwise."""
    return default_data_dir(vault_root) / INFO_FILE_NAME


def data_dir_for(root: Path, given: Path | None = None) -> Path:
    """The data folder of the vault at ``root``: ``given`` (``--data-dir``), else
    ``$AI_BRIDGE_DATA_DIR``, else :func:`default_data_dir`."""
    from_env = os.environ.get("AI_BRIDGE_DATA_DIR")
    return given or (Path(from_env) if from_env else default_data_dir(root))
