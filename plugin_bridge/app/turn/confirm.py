"""Who reviews a write: the ``tool/confirm`` round trip, and a chat app's buttons.

Each builds the confirm callback of one :class:`~plugin_bridge.app.vault_tools.ToolRun` (the
access policy hands it to llm_service's tool registry): :func:`ask_client` asks the client of
the connection it is given (a WebSocket request's), :func:`ask_plugin` the local plugin (a
client key's write over HTTP), :func:`ask_chat` a chat app's user. For a write ``tool/confirm``
says what the write does: a ``title`` in words and, per note, the text ``before`` and ``after``
(the plugin builds its review from those alone). The answer may approve, deny, or approve with
``changes``: the text the user kept of each note, written exactly, and only while the note is
still as it was reviewed. No answer within the timeout, an error answer, a malformed answer, or
no client to ask all mean "denied"; denied call ids are recorded on the run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from pydantic import ValidationError

from llm_service.tools import ToolRefused
from plugin_bridge.app.tool_sources import SEPARATOR, server_of
from plugin_bridge.app.vault_tools import ToolRun, confirm_title, kept_arguments, plan_tool_call
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.wire.models import TOOL_CONFIRM, FileChange, ToolConfirmParams, dump

if TYPE_CHECKING:
    from llm_service import ToolCall
    from llm_service.tools import ConfirmCallback
    from plugin_bridge.vault.notes.store import PlannedWrite
    from plugin_bridge.vault.vault import Vault
    from plugin_bridge.wire.context import Peer
    from plugin_bridge.wire.protocol import Response

logger = logging.getLogger(__name__)

DEFAULT_CONFIRM_TIMEOUT: Final = 120.0
CHAT_APP_CONFIRM_TIMEOUT: Final = 300.0
"""A chat app's Approve / Deny left unanswered this long is Deny."""
REVIEW_LINES: Final = 30
"""A chat app's review shows at most this many lines of the diff, then "…"."""


@dataclass(frozen=True, slots=True)
class WriteReview:
    """What a chat app shows before a tool call runs: one sentence, and for a write the note
    and a short diff."""

    title: str
    path: str | None
    diff: str


Show = Callable[["WriteReview"], Awaitable[bool]]
"""Shows a review in a chat app and returns the user's answer (True: Approve)."""
Reviewer = Callable[[ToolRun], "ConfirmCallback"]
"""Who reviews a run's writes: the confirm callback of one run."""
ClientReviewer = Callable[["Peer", ToolRun], "ConfirmCallback"]
"""The confirm callback of one run whose writes the client of a connection reviews."""


def ask_chat(vault: Vault, show: Show, *, timeout: float = CHAT_APP_CONFIRM_TIMEOUT) -> Reviewer:
    """A chat app's conversation's reviewer: the write is planned (one the vault refuses is
    refused without asking), shown with ``show``, and run only when the user approves within
    ``timeout`` (no answer is Deny)."""
    return lambda run: _chat_confirm(vault, show, timeout, run)


def _chat_confirm(vault: Vault, show: Show, timeout: float, run: ToolRun) -> ConfirmCallback:
    async def confirm(call: ToolCall) -> bool:
        plan = await vault.run(_plan, vault, call)
        if plan is not None:
            run.remember_review(plan.path, plan.old_hash)
        server = server_of(call.name)
        review = WriteReview(
            title=confirm_title(call, plan) if server is None else mcp_title(call.name, server),
            path=None if plan is None else plan.path,
            diff="" if plan is None else short_diff(plan.diff),
        )
        try:
            async with asyncio.timeout(timeout):
                return await show(review)
        except TimeoutError:
            logger.info("%s unanswered in %.0f s in a chat app: denied", call.name, timeout)
            return False

    return confirm


def short_diff(diff: str, lines: int = REVIEW_LINES) -> str:
    """At most ``lines`` lines of ``diff``, with "…" when there were more."""
    kept = diff.splitlines()
    return "\n".join(kept[:lines] + (["…"] if len(kept) > lines else []))


def ask_client(vault: Vault, *, timeout: float = DEFAULT_CONFIRM_TIMEOUT) -> ClientReviewer:
    """The reviewer of a WebSocket request's run: ``tool/confirm`` to the client of the
    connection given (saying what a write to ``vault`` does); a key without scope ``write``
    is refused without asking."""

    def reviewer(peer: Peer, run: ToolRun) -> ConfirmCallback:
        async def confirm(call: ToolCall) -> bool | dict[str, Any]:
            if not run.caller.allows("write"):
                logger.info("tool %s refused: the key %s may not write", call.name, run.caller.name)
                run.denied.add(call.id)
                return False
            approved = await review(vault, peer, call, timeout, run)
            if approved is False:
                run.denied.add(call.id)
            return approved

        return confirm

    return reviewer


async def nobody_asks(call: ToolCall) -> bool:
    """The confirm callback of a run with no client to ask: denied."""
    logger.info("tool %s needs approval and no client is asking: denied", call.name)
    return False


def ask_plugin(
    vault: Vault, plugin: Callable[[], Peer | None], *, timeout: float = DEFAULT_CONFIRM_TIMEOUT
) -> Reviewer:
    """The reviewer of a client key's writes over HTTP (nobody is on that connection to ask):
    ``tool/confirm`` goes to the local plugin (``plugin()``: the newest connection of the
    plugin that authenticated with the info file's token); none connected means denied."""

    def reviewer(run: ToolRun) -> ConfirmCallback:
        async def confirm(call: ToolCall) -> bool | dict[str, Any]:
            peer = plugin()
            if peer is None:
                logger.info(
                    "tool %s needs the plugin's review and no plugin is open: denied", call.name
                )
                return False
            return await review(vault, peer, call, timeout, run)

        return confirm

    return reviewer


async def review(
    vault: Vault, peer: Peer, call: ToolCall, seconds: float, run: ToolRun
) -> bool | dict[str, Any]:
    """Ask ``peer`` to approve ``call`` (saying what a write does): False (denied), True, or
    the arguments that write what the user kept (held to the note as shown, in ``run``)."""
    plan = await vault.run(_plan, vault, call)  # ToolRefused: nobody is asked
    if plan is not None:  # the approved write must find the note as it is shown
        run.remember_review(plan.path, plan.old_hash)
    server = server_of(call.name)
    params = ToolConfirmParams(
        tool=call.name,
        server=server,
        arguments=call.arguments,
        title=confirm_title(call, plan) if server is None else mcp_title(call.name, server),
        call_id=call.id,
        changes=None
        if plan is None
        else [FileChange(path=plan.path, before=plan.before, after=plan.after)],
        preview=None if plan is None else plan.diff,
    )
    try:
        async with asyncio.timeout(seconds):
            answer = await peer.request(TOOL_CONFIRM.method, dump(params))
    except TimeoutError:
        logger.info("tool/confirm for %s unanswered in %.0f s: denied", call.name, seconds)
        return False
    return _approved(call, plan, answer)


def _plan(vault: Vault, call: ToolCall) -> PlannedWrite | None:
    """What the write ``call`` would do; ToolRefused when the vault refuses it (a path the
    rules refuse, a note that exists or is missing): no one is asked to approve a write that
    cannot be made, and the model reads the vault's sentence."""
    try:
        return plan_tool_call(vault, call)
    except VaultError as exc:
        raise ToolRefused(str(exc)) from None


def mcp_title(name: str, server: str) -> str:
    """The review's sentence for a tool of an MCP server: which tool, from which server."""
    tool = name.removeprefix(f"{server}{SEPARATOR}")
    return f"Allow the assistant to run {tool} from the MCP server '{server}'?"


def _approved(call: ToolCall, plan: PlannedWrite | None, answer: Response) -> bool | dict[str, Any]:
    """False (denied), True (approved as asked) or the arguments that write what was kept."""
    if answer.error is not None:
        return False
    try:
        result = TOOL_CONFIRM.parse(answer.result, strict=True)
    except ValidationError:
        logger.info("ignoring a malformed tool/confirm answer: denied")
        return False
    if not result.approved:
        return False
    if result.changes is not None:
        return _kept(call, plan, {change.path: change.after for change in result.changes})
    if result.arguments is not None:
        return result.arguments
    return True


def _kept(call: ToolCall, plan: PlannedWrite | None, kept: dict[str, str]) -> bool | dict[str, Any]:
    """The arguments that write exactly the kept text (held, like any approved write, to the
    version of the note that was reviewed: a note changed meanwhile is a conflict)."""
    if plan is None or set(kept) != {plan.path}:
        logger.info("kept changes for notes the call does not write: denied")
        return False
    try:
        return kept_arguments(call, plan, kept[plan.path])
    except ValueError:
        logger.info("kept text the tool cannot write: denied")
        return False
