"""The user's custom prompts (the notes of the prompts folder,
:mod:`plugin_bridge.app.turn.prompts`) as MCP prompts, which Claude Desktop and Claude Code
offer as commands.

A prompt's ``name`` and ``title`` are its front matter's ``name``, else the note's file name
without ``.md``. Its arguments follow its ``insert``: ``selection`` (the text it works on) or
``note`` (a note's path, whose text comes as an embedded ``note://`` resource), both required;
every prompt also takes an optional ``text`` that follows the instruction, as a message typed
after choosing the prompt in the plugin does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Final

import mcp_types as types
from mcp.shared.exceptions import MCPError

from plugin_bridge.app.turn.prompts import Prompt
from plugin_bridge.mcp.resources import mime_type, note_uri

TEXT: Final = types.PromptArgument(
    name="text", description="What to add after the instruction (optional).", required=False
)
INSERTED: Final = {
    "selection": types.PromptArgument(
        name="selection", description="The text the prompt works on.", required=True
    ),
    "note": types.PromptArgument(
        name="note",
        description="The path of the note the prompt works on, e.g. Projects/Kafka.md.",
        required=True,
    ),
}
ReadText = Callable[[str], Awaitable[tuple[str, str]]]
"""A note's path (as the vault spells it) and text, by path; ValueError saying why not."""


def mcp_prompt(prompt: Prompt) -> types.Prompt:
    """A custom prompt as ``prompts/list`` shows it."""
    inserted = INSERTED.get(prompt.insert)
    return types.Prompt(
        name=prompt.name,
        title=prompt.name,
        description=prompt.description or None,
        arguments=[*([inserted] if inserted else []), TEXT],
    )


async def prompt_messages(
    prompt: Prompt, arguments: Mapping[str, str], read_text: ReadText
) -> types.GetPromptResult:
    """``prompts/get``: the instruction (and ``text``) as the user's message, then what it
    works on. MCPError (invalid params) for a missing argument or a note that cannot be read."""
    inserted = INSERTED.get(prompt.insert)
    given = {name: value for name, value in arguments.items() if value}
    if inserted is not None and inserted.name not in given:
        raise MCPError(
            types.INVALID_PARAMS,
            f"The prompt {prompt.name!r} needs the argument {inserted.name!r}: "
            f"{(inserted.description or '').lower()}",
        )
    text = prompt.instruction + (f"\n\n{given['text']}" if "text" in given else "")
    messages = [types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))]
    if "selection" in given and prompt.insert == "selection":
        selected = types.TextContent(type="text", text=given["selection"])
        messages.append(types.PromptMessage(role="user", content=selected))
    if "note" in given and prompt.insert == "note":
        try:
            path, content = await read_text(given["note"])
        except ValueError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from exc
        contents = types.TextResourceContents(
            uri=note_uri(path), mime_type=mime_type(path), text=content
        )
        embedded = types.EmbeddedResource(type="resource", resource=contents)
        messages.append(types.PromptMessage(role="user", content=embedded))
    return types.GetPromptResult(description=prompt.description or None, messages=messages)
