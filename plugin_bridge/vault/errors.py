"""Errors of the vault layer.

Exception tree::

    Exception
    └── VaultError        a note operation was refused; ``.code`` says why:
                          not_found, exists, conflict, forbidden_path, too_large, not_text,
                          invalid_edit

The bridge maps each code to its JSON-RPC error; the tool loop shows the message to the model.
"""

from __future__ import annotations

from typing import Literal

VaultErrorCode = Literal[
    "not_found", "exists", "conflict", "forbidden_path", "too_large", "not_text", "invalid_edit"
]


class VaultError(Exception):
    """A refused note operation; ``str(error)`` is one sentence saying what to do instead."""

    def __init__(self, code: VaultErrorCode, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.code: VaultErrorCode = code
        self.message = message
        self.path = path
