"""An MCP server given over the wire runs only once the user approves it in Obsidian.

``settings/update`` may add or change ``[mcp.servers.NAME]``: a command the server starts, or
a URL it connects to. Before anything is saved or started, every new or changed command line
(or URL) is shown to the local plugin that authenticated with the info file's token, as the
server request ``settings/confirm``. A denial, no answer within :data:`CONFIRM_TIMEOUT`
seconds, or no plugin to ask refuses the whole update (-32030): nothing is saved or started.
Servers written by hand in the settings file, or through ``setup``, never pass here.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from plugin_bridge.wire.errors import RpcError, WireCode
from plugin_bridge.wire.models import SETTINGS_CONFIRM, SettingsConfirmParams, dump

if TYPE_CHECKING:
    from plugin_bridge.app.settings.config import McpServer, McpSettings
    from plugin_bridge.wire.context import Peer

logger = logging.getLogger(__name__)

CONFIRM_TIMEOUT: Final = 60.0


def _launch(server: Mapping[str, Any]) -> tuple[object, ...]:
    """What decides what runs: the command, its arguments and environment, or the URL."""
    env = server.get("env") or {}
    return (
        server.get("command"),
        tuple(server.get("args") or ()),
        tuple(sorted(env.items())),
        server.get("url"),
    )


def command_line(server: Mapping[str, Any]) -> str | None:
    """The exact command line, ``NAME=value`` of its environment first, shell-quoted."""
    command = server.get("command")
    if command is None:
        return None
    env = [f"{name}={value}" for name, value in sorted((server.get("env") or {}).items())]
    return shlex.join([*env, command, *(server.get("args") or ())])


def needing_approval(
    current: McpSettings, servers: Mapping[str, Mapping[str, Any] | None]
) -> dict[str, Mapping[str, Any]]:
    """The servers of an update whose command line or URL is new or changed."""
    known: dict[str, McpServer] = dict(current.servers)
    changed: dict[str, Mapping[str, Any]] = {}
    for name, server in servers.items():
        if server is None:
            continue
        before = known.get(name)
        if before is None or _launch(before.model_dump()) != _launch(server):
            changed[name] = server
    return changed


async def approve(
    plugin: Peer | None,
    current: McpSettings,
    servers: Mapping[str, Mapping[str, Any] | None],
) -> None:
    """Ask ``plugin`` about each new or changed server; raise -32030 unless all are approved."""
    for name, server in needing_approval(current, servers).items():
        line, url = command_line(server), server.get("url")
        if plugin is None or plugin.closed:
            raise _refused(name, "no Obsidian plugin is connected to approve it")
        params = SettingsConfirmParams(
            server=name,
            command_line=line,
            url=url,
            title=f"Allow the MCP server '{name}' to run: {line or url}?",
        )
        try:
            async with asyncio.timeout(CONFIRM_TIMEOUT):
                answer = await plugin.request(SETTINGS_CONFIRM.method, dump(params))
        except TimeoutError:
            raise _refused(name, f"no answer came within {CONFIRM_TIMEOUT:.0f} s") from None
        approved = False
        if answer.error is None:
            try:
                approved = SETTINGS_CONFIRM.parse(answer.result).approved
            except ValueError:
                approved = False
        if not approved:
            raise _refused(name, "the user did not approve it")
        logger.info("the MCP server %s was approved in Obsidian", name)


def _refused(name: str, why: str) -> RpcError:
    logger.warning("settings/update refused: the MCP server %s was not approved (%s)", name, why)
    return RpcError(
        WireCode.TOOL_DENIED,
        f"The MCP server '{name}' was not started or saved: {why}; approve it in Obsidian.",
        {"index": 0, "name": name, "results": []},
    )
