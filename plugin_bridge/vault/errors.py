"""Errors of the vault layer.

Exception tree::

    Exception
    └── VaultError        a note operation was refused; ``.code`` says why:
                          not_found, exists, conflict, forbidden_path, too_large, not_text,
                          invalid_edit, invalid_query (an operator search cannot answer),
                          no_such_heading (note/read's heading), write_failed (disk full,
                          read-only: nothing changed),
                          no_file_handles (the process is at its limit of open files)

The bridge maps each code to its JSON-RPC error; the tool loop shows the message to the model.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Final, Literal

VaultErrorCode = Literal[
    "not_found",
    "exists",
    "conflict",
    "forbidden_path",
    "too_large",
    "not_text",
    "invalid_edit",
    "invalid_query",
    "no_such_heading",
    "write_failed",
    "no_file_handles",
]


class VaultError(Exception):
    """A refused note operation; ``str(error)`` is one sentence saying what to do instead."""

    def __init__(self, code: VaultErrorCode, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.code: VaultErrorCode = code
        self.message = message
        self.path = path


OUT_OF_HANDLES: Final = frozenset({errno.EMFILE, errno.ENFILE})
NO_HANDLES: Final = (
    "the server has as many files open as the system allows: close other programs or "
    "connections, or raise the limit (ulimit -n), and try again"
)
_WRITE_FAILURES: Final[dict[int, str]] = {
    errno.EMFILE: NO_HANDLES,
    errno.ENFILE: NO_HANDLES,
    errno.ENOSPC: "the disk is full: free some space and try again",
    errno.EDQUOT: "the disk quota is used up: free some space and try again",
    errno.EROFS: "its file system is read-only: make it writable and try again",
    errno.EACCES: "there is no permission to write in its folder: check the folder's permissions",
    errno.EPERM: "there is no permission to write in its folder: check the folder's permissions",
}


@contextlib.contextmanager
def reporting_write_failures(rel: str) -> Iterator[None]:
    """Turn an OSError of a write to ``rel`` (whose note is left as it was) into
    VaultError(write_failed) with one sentence saying why and what to do."""
    try:
        yield
    except OSError as exc:
        reason = _WRITE_FAILURES.get(exc.errno or 0)
        if reason is None:
            reason = f"{os.strerror(exc.errno) if exc.errno else exc}: try again"
        raise VaultError(
            "write_failed", f"'{rel}' could not be written and is unchanged; {reason}.", path=rel
        ) from exc


def vault_missing(root: Path, rel: str) -> VaultError:
    """A write while the vault folder is gone: making it anew would block its restore."""
    return VaultError(
        "write_failed",
        f"'{rel}' was not written because the vault folder {root} is missing (moved, deleted "
        "or unmounted): bring it back and try again.",
        path=rel,
    )


@contextlib.contextmanager
def reporting_read_failures(rel: str) -> Iterator[None]:
    """Turn the OSErrors of a read of ``rel`` that say something to the user into
    VaultError: no_file_handles (EMFILE, ENFILE) and forbidden_path (a path longer than the
    file system allows); others pass."""
    try:
        yield
    except OSError as exc:
        if exc.errno in OUT_OF_HANDLES:
            raise VaultError(
                "no_file_handles", f"'{rel}' could not be read: {NO_HANDLES}.", path=rel
            ) from exc
        if exc.errno == errno.ENAMETOOLONG:
            raise VaultError(
                "forbidden_path",
                f"'{rel[:80]}…' is longer than the file system allows: use a shorter path.",
                path=rel[:300],
            ) from exc
        raise
