"""The ``tool/confirm`` round trip: ask the client that sent the running request to approve a call.

:func:`ask_client` builds the confirm callback that the app hands to llm_service's tool registry.
No answer within the timeout, an error answer, a malformed answer, or no client to ask all mean
"denied"; denied call ids are recorded on the request's context.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Final

from plugin_bridge.wire.context import current_request
from plugin_bridge.wire.models import ToolConfirmParams, ToolConfirmResult, dump

if TYPE_CHECKING:
    from llm_service import ToolCall
    from llm_service.tools import ConfirmCallback
    from plugin_bridge.vault.notes.vault import Vault
    from plugin_bridge.wire.protocol import Response

logger = logging.getLogger(__name__)

CONFIRM_METHOD: Final = "tool/confirm"
DEFAULT_CONFIRM_TIMEOUT: Final = 120.0


def ask_client(vault: Vault, *, timeout: float = DEFAULT_CONFIRM_TIMEOUT) -> ConfirmCallback:
    """A confirm callback that sends ``tool/confirm`` (with a preview of writes to ``vault``)."""

    async def confirm(call: ToolCall) -> bool | dict[str, Any]:
        ctx = current_request.get()
        if ctx is None:
            logger.info("tool %s needs approval and no client is asking: denied", call.name)
            return False
        from plugin_bridge.app.vault_tools import remember_review

        version, preview = await asyncio.to_thread(_preview, vault, call)
        remember_review(call, version)  # the approved write must find the note as shown
        params = ToolConfirmParams(tool=call.name, arguments=call.arguments, preview=preview)
        try:
            async with asyncio.timeout(timeout):
                answer = await ctx.peer.request(CONFIRM_METHOD, dump(params))
        except TimeoutError:
            logger.info("tool/confirm for %s unanswered in %.0f s: denied", call.name, timeout)
            approved: bool | dict[str, Any] = False
        else:
            approved = _approved(answer)
        if approved is False:
            ctx.denied.add(call.id)
        return approved

    return confirm


def _preview(vault: Vault, call: ToolCall) -> tuple[str | None, str | None]:
    """The version of the note the call changes (read first: a change after it makes the
    approved write a conflict, never a write on a version nobody saw) and the diff."""
    from plugin_bridge.app.vault_tools import preview_tool_call, reviewed_version
    from plugin_bridge.vault.errors import VaultError

    version = reviewed_version(vault, call)
    try:
        return version, preview_tool_call(vault, call)
    except VaultError:
        return version, None


def _approved(answer: Response) -> bool | dict[str, Any]:
    """False (denied), True (approved as asked) or the arguments the user approved instead."""
    from pydantic import ValidationError

    if answer.error is not None:
        return False
    try:
        result = ToolConfirmResult.model_validate(answer.result, strict=True)
    except ValidationError:
        logger.info("ignoring a malformed tool/confirm answer: denied")
        return False
    if result.approved and result.arguments is not None:
        return result.arguments
    return result.approved
