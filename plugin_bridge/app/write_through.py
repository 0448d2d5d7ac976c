"""Writes through Obsidian: before the server writes a note that exists, it asks the plugin to
apply the write with the server request ``note/apply``, so that an editor's unsaved text is seen.

The request goes to the most recently connected client whose ``client.name`` is the plugin's id
(:data:`~plugin_bridge.app.settings.config.PLUGIN_CLIENT`) and that authenticated with the info
file's token (:data:`Credential`; never a client key). Before it is asked, what recording the
write needs is kept durably (:class:`~plugin_bridge.vault.notes.asked.AskedWrites`), so a kill -9
before its answer is recorded loses neither the undo snapshot nor the audit line. Its answer
decides:

- ``{applied: true, hash}``: Obsidian wrote it (its editor or ``vault.process``); the server keeps
  the undo snapshot and the audit line as for its own writes, then checks that the file reaches
  that hash within :data:`CONFIRM_SECONDS` (Obsidian saves an editor within a few seconds). If
  it does not, the write is logged ``unconfirmed``, undo is kept working (it restores the note
  as it was planned from), and the write fails with ``write_failed`` (-32025), which the model
  and the user are told;
- ``{applied: false}`` (the note is not open), no plugin connected, no answer within the timeout
  (5 s), or any other error: the server writes itself, as before;
- error -32022: the note no longer matches what was reviewed; nothing is written (VaultError
  ``conflict``, which the model or the client is told).

A new note is written by the server at once: it cannot be open in an editor.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Final, Literal

from pydantic import ValidationError

from plugin_bridge.app.clients import audit_origin
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.wire.errors import WireCode
from plugin_bridge.wire.models import NOTE_APPLY, NoteApplyParams, dump

if TYPE_CHECKING:
    from plugin_bridge.app.clients import Caller
    from plugin_bridge.vault.notes.store import NoteStore, PlannedWrite, WriteResult
    from plugin_bridge.wire.context import Peer
    from plugin_bridge.wire.protocol import Response

logger = logging.getLogger(__name__)

DEFAULT_APPLY_TIMEOUT: Final = 5.0
CONFIRM_SECONDS: Final = 10.0
"""How long the file on disk may take to reach the hash the plugin answered."""
CONFIRM_POLL_SECONDS: Final = 0.05
Credential = Literal["token", "client-key"]
"""What a connection authenticated with: the info file's token, or a client key."""


class WriteThrough:
    """Makes planned writes, through the newest connected plugin when there is one."""

    def __init__(
        self,
        notes: NoteStore,
        *,
        timeout: float = DEFAULT_APPLY_TIMEOUT,
        confirm_seconds: float = CONFIRM_SECONDS,
    ) -> None:
        self.notes = notes
        self.timeout = timeout
        self.confirm_seconds = confirm_seconds
        self._plugins: list[Peer] = []

    def attach(self, peer: Peer, credential: Credential) -> bool:
        """A client named as the plugin finished ``initialize`` on ``peer``: asked from now on
        when it authenticated with the info file's token; whether it will be."""
        if credential != "token":
            return False
        self._plugins = [p for p in self._plugins if p is not peer and not p.closed]
        self._plugins.append(peer)
        return True

    def plugin(self) -> Peer | None:
        """The newest connected plugin (authenticated with the info file's token), if any."""
        return self._newest()

    def _newest(self) -> Peer | None:
        self._plugins = [p for p in self._plugins if not p.closed]
        return self._plugins[-1] if self._plugins else None

    async def write(self, plan: PlannedWrite, origin: str, caller: Caller) -> WriteResult:
        """Make ``plan`` for ``caller`` (see the module docstring; the audit line names
        ``origin`` and the caller); VaultError as the note store raises."""
        origin = audit_origin(origin, caller)
        peer = self._newest() if plan.before is not None else None
        notes = self.notes
        if peer is None:
            return await notes.execute(lambda notes: notes.write_planned(plan, origin))
        kept = await notes.execute(
            lambda notes: notes.asked.begin(plan.path, plan.action, plan.old, plan.old_hash, origin)
        )
        try:
            applied = await self._ask(peer, plan)
        except BaseException:
            await notes.execute(lambda notes: notes.asked.end(kept))
            raise

        def record(notes: NoteStore) -> WriteResult:
            try:  # None: the plugin did not apply it, so it is written here
                if applied is None:
                    return notes.write_planned(plan, origin)
                return notes.record_applied(plan, applied, origin)
            finally:
                notes.asked.end(kept)

        written = await notes.execute(record)
        if applied is None:
            return written
        if not await self._reaches(plan.path, applied):
            now = await notes.execute(lambda notes: notes.record_unconfirmed(plan, applied, origin))
            logger.warning(
                "note/apply said %s was written, and the file did not reach its hash", plan.path
            )
            raise VaultError(
                "write_failed",
                f"Obsidian said it wrote '{plan.path}' but the file did not change within "
                f"{self.confirm_seconds:g} s, so the change may not be saved: check the note"
                + (" (undo restores it as it was)." if now != plan.old_hash else "."),
                path=plan.path,
            )
        return written

    async def _reaches(self, path: str, wanted: str) -> bool:
        """Whether the note's file has hash ``wanted`` within ``confirm_seconds``."""
        deadline = asyncio.get_running_loop().time() + self.confirm_seconds
        while True:
            with contextlib.suppress(VaultError, OSError):
                if await self.notes.execute(lambda notes: notes.file_hash(path)) == wanted:
                    return True
            if asyncio.get_running_loop().time() >= deadline:
                return False
            await asyncio.sleep(CONFIRM_POLL_SECONDS)

    async def _ask(self, peer: Peer, plan: PlannedWrite) -> str | None:
        """The hash Obsidian wrote, or None for "the server writes"."""
        assert plan.before is not None
        params = NoteApplyParams(
            path=plan.path, before=plan.before, after=plan.after, expected_hash=plan.old_hash
        )
        try:
            async with asyncio.timeout(self.timeout):
                answer = await peer.request(NOTE_APPLY.method, dump(params))
        except TimeoutError:
            logger.info("note/apply unanswered in %.1f s: the server writes", self.timeout)
            return None
        return _outcome(plan.path, answer)


def _outcome(path: str, answer: Response) -> str | None:
    if answer.error is not None:
        if answer.error.get("code") == WireCode.NOTE_CONFLICT:
            raise VaultError(
                "conflict",
                f"'{path}' has changes in Obsidian that this write would overwrite, so nothing "
                "was written: read it again and redo the change.",
                path=path,
            )
        logger.info("note/apply failed in the plugin: the server writes")
        return None
    try:
        result = NOTE_APPLY.parse(answer.result)
    except ValidationError:
        logger.info("ignoring a malformed note/apply answer: the server writes")
        return None
    return result.hash if result.applied and result.hash else None
