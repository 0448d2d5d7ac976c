"""The setup conversation (*Introduce yourself*): the assistant asks what the vault is for, how
the user likes answers and what to leave alone, then writes the context note with one
``complete_setup {content}`` call.

A turn sent with ``chat/send {setup: true}`` gets :func:`setup_prompt` as its system prompt and
the tools of :func:`register_setup_tool`'s registry: the vault tools plus ``complete_setup``.
That write is reviewed like every other: permission "ask", so the client is asked with
``tool/confirm`` (its arguments show the note's ``path`` beside the ``content``, and the preview
is the diff against the note as it is); the note store keeps the undo snapshot and the audit
entry. Later conversations carry the note as their standing context.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from plugin_bridge.app.clients import OWNER_CALLER
from plugin_bridge.app.tool_args import CompleteSetupArgs
from plugin_bridge.app.vault_tools import ToolRun, store_writer

if TYPE_CHECKING:
    from llm_service.messages import ToolCall
    from llm_service.tools import ConfirmCallback, ToolHandler, ToolOutput, ToolRegistry
    from plugin_bridge.app.vault_tools import Writer
    from plugin_bridge.vault.vault import Vault

SETUP_TOOL: Final = CompleteSetupArgs.TOOL
FIRST_MESSAGE: Final = "Hello! Let's set you up for this vault."
"""The user's message of a setup turn sent without text (the assistant then asks first)."""


def setup_prompt(vault_name: str, note_path: str, exists: bool) -> str:
    """The system prompt of a setup turn."""
    link = note_path.removesuffix(".md")
    start = (
        f"The user already wrote what you should know in [[{link}]] (given as context): start "
        "from it, ask what has changed, and keep what still holds. "
        if exists
        else ""
    )
    return (
        f"You are the assistant inside the user's Obsidian vault named “{vault_name}”, getting "
        "to know its user. Have a short, friendly conversation, one question at a time, about: "
        "what this vault is for; how they like answers (length, tone, language, format); what "
        f"you should leave alone (folders, notes or topics). {start}You may look through the "
        "vault with the tools to make your questions concrete; do not change any note. When "
        f"you know enough (three or four answers are plenty), call {SETUP_TOOL} once with the "
        f"whole text of the note [[{link}]]: short Markdown sections for what the vault is "
        "for, how the user likes answers, and what to leave alone, in the user's words and "
        "language. The user reviews it before it is saved; then thank them in one sentence."
    )


def register_setup_tool(
    registry: ToolRegistry,
    vault: Vault,
    note_path: Callable[[], str],
    writer: Writer | None = None,
) -> None:
    """Add ``complete_setup`` to ``registry``: it writes ``note_path()`` (the context note
    setting, read when the call runs) with permission "ask", through ``writer`` (the app's
    write-through to Obsidian; the note store by default), as the owner's (a view of the
    registry runs :func:`setup_handler` for another caller)."""
    write = writer or store_writer(vault.notes)
    complete_setup = setup_handler(vault, note_path, write, ToolRun(OWNER_CALLER))
    registry.register_tool(
        SETUP_TOOL,
        "Save what you learned about the user as their context note (the note every later "
        "conversation starts from), replacing what it says now. Call it once, at the end of "
        "the setup conversation, with the note's whole Markdown text. The user reviews it "
        "first. Returns the path and hash.",
        CompleteSetupArgs.input_schema(),
        complete_setup,
        permission="ask",
    )


def setup_handler(
    vault: Vault, note_path: Callable[[], str], writer: Writer, run: ToolRun
) -> ToolHandler:
    """``complete_setup``'s handler for ``run``: the context note written for its caller."""

    async def complete_setup(args: dict[str, Any]) -> ToolOutput:
        content = CompleteSetupArgs.model_validate(args).content
        plan = await vault.notes.execute(
            lambda notes: notes.plan_create(note_path(), content, overwrite=True)
        )
        written = await writer(plan, "model", run.caller)
        return {"path": written.path, "hash": written.hash}

    return complete_setup


def showing_the_note(confirm: ConfirmCallback, note_path: Callable[[], str]) -> ConfirmCallback:
    """``confirm`` for a registry with ``complete_setup``: the client is shown that call with
    the note's ``path`` added to its arguments (for the diff, the review and Undo); arguments
    it approves instead are handed back without it."""

    async def ask(call: ToolCall) -> bool | dict[str, Any]:
        if call.name != SETUP_TOOL:
            return await confirm(call)
        shown = dataclasses.replace(call, arguments={"path": note_path(), **call.arguments})
        answer = await confirm(shown)
        if isinstance(answer, dict):
            return {key: value for key, value in answer.items() if key != "path"}
        return answer

    return ask
