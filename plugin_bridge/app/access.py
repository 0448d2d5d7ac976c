"""The access policy: which vault tools a caller sees, whether its writes run, and who reviews
them, for every transport.

:class:`ToolAccess` is the one place that decides it, from three things: the caller's scope
(:meth:`Caller.allows`), the setting ``http_allow_writes`` (read at every call) and whether the
plugin is open (:meth:`WriteThrough.plugin`). It builds the vault tools' registries, once each,
and hands every run (:class:`~plugin_bridge.app.vault_tools.ToolRun`: a chat turn's tool loop,
one ``tools/execute``, one HTTP or MCP call) a view of one of them bound to it: its writes made
for its caller (the audit line names it), held to what its user reviewed, and reviewed by

- the client of the WebSocket connection that sent the turn or ``tools/execute`` (a key without
  ``write`` is refused at review): :meth:`ToolAccess.for_turn`, :meth:`ToolAccess.for_client`;
- a chat app's user, with its buttons; a user who may not write is not offered the writes;
- over HTTP (the ``vault`` model, the local tool routes, ``/mcp``), the local plugin for a
  ``write`` key while the plugin is open; otherwise the writes run only with the setting and a
  caller that may write, else are refused naming the setting: :meth:`ToolAccess.over_http`,
  :meth:`ToolAccess.for_mcp`;
- over MCP's stdio, nobody here: the writes run with ``--allow-writes`` (the MCP client asks).

docs/architecture.md has the table, one row per transport. A transport asks this object and
runs what it gets (:class:`~plugin_bridge.app.tools.Tools`); none reads the setting or decides a
write itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Final, Literal

from llm_service.tools import Permission, ToolRegistry
from plugin_bridge.app.clients import OWNER_CALLER, Caller
from plugin_bridge.app.tools import Tools
from plugin_bridge.app.turn.confirm import ask_plugin, nobody_asks
from plugin_bridge.app.turn.setup import (
    SETUP_TOOL,
    register_setup_tool,
    setup_handler,
    showing_the_note,
)
from plugin_bridge.app.vault_tools import (
    WRITE_TOOL_NAMES,
    ToolRun,
    offer_related,
    register_vault_tools,
    write_handlers,
)

if TYPE_CHECKING:
    from llm_service.tools import ConfirmCallback
    from plugin_bridge.app.settings.config import BridgeSettings
    from plugin_bridge.app.turn.confirm import ClientReviewer, Reviewer
    from plugin_bridge.app.write_through import WriteThrough
    from plugin_bridge.vault.vault import Vault
    from plugin_bridge.wire.context import Peer

HTTP_WRITES_OFF: Final = (
    "writes over HTTP are off: turn on the setting http_allow_writes "
    "(AI_BRIDGE_HTTP_ALLOW_WRITES=true) to let HTTP clients write"
)
"""Why an HTTP client's write (``/mcp``, ``/api/local-llm/execute-tools``) is refused."""
STDIO_WRITES_OFF: Final = (
    "this MCP server is read-only: start it with --allow-writes to let clients write"
)
"""Why a write of the ``mcp`` command's client is refused."""

RegistryKind = Literal["chat", "setup", "ask", "allow", "deny"]
"""The registries: every conversation's (writes asked, the MCP servers' tools added), the
setup turn's, and the vault tools alone with writes asked, run or refused (HTTP and MCP)."""
_WRITES: Final[dict[RegistryKind, Permission]] = {
    "chat": "ask",
    "setup": "ask",
    "ask": "ask",
    "allow": "allow",
    "deny": "deny",
}
"""Each registry's write permission."""


def write_refusal(name: str, writes_off: str) -> str:
    """The one sentence refusing write tool ``name``, ``writes_off`` saying which switch is off."""
    return f"{name} changes notes, and {writes_off}."


class ToolAccess:
    """Who sees which tools, which writes run and who reviews them (see the module docstring).

    ``settings`` gives the settings in effect (read at every call); ``ask_client`` builds the
    confirm callback of a run whose writes the client of a connection reviews."""

    def __init__(
        self,
        vault: Vault,
        writes: WriteThrough,
        settings: Callable[[], BridgeSettings],
        ask_client: ClientReviewer,
    ) -> None:
        self._vault = vault
        self._writes = writes
        self._settings = settings
        self._ask_client = ask_client
        self._ask_plugin = ask_plugin(vault, writes.plugin)
        self._registries: dict[RegistryKind, ToolRegistry] = {}

    @property
    def tools(self) -> ToolRegistry:
        """Every conversation's tools (the vault's, writes asked; the MCP servers' are added
        to it): what a run's view shows, and what health counts."""
        return self._registry("chat")

    def writes_over_http(self) -> bool:
        """Whether HTTP clients' writes run without a review (the setting http_allow_writes)."""
        return self._settings().http_allow_writes

    def plugin_reviews(self, caller: Caller) -> bool:
        """Whether ``caller``'s writes over HTTP go to the local plugin's review: a client key
        with ``write``, while the plugin (the info file's token) is connected."""
        return not caller.is_owner and caller.allows("write") and self._writes.plugin() is not None

    # -- the WebSocket and the chat apps ---------------------------------------------------

    def for_client(self, peer: Peer, caller: Caller) -> Tools:
        """``tools/list`` and ``tools/execute``: every tool, each write reviewed by the client
        of ``peer`` (a key without ``write`` is refused there)."""
        run = ToolRun(caller)
        return self._bound(self.tools, run, self._ask_client(peer, run))

    def for_turn(
        self,
        caller: Caller,
        *,
        setup: bool = False,
        peer: Peer | None = None,
        reviewer: Reviewer | None = None,
    ) -> ToolRegistry:
        """A conversation turn's tools: with ``reviewer`` (a chat app's buttons), every tool,
        the writes only to a caller that may write; else every tool reviewed by the client
        of ``peer`` (nobody to ask: denied), with complete_setup for a ``setup`` turn."""
        run = ToolRun(caller)
        if reviewer is not None:
            hidden = () if caller.allows("write") else WRITE_TOOL_NAMES
            return self._bound(self.tools, run, reviewer(run), hidden).registry
        confirm = nobody_asks if peer is None else self._ask_client(peer, run)
        if setup:
            return self._bound(
                self._registry("setup"), run, showing_the_note(confirm, self._note)
            ).registry
        return self._bound(self.tools, run, confirm).registry

    # -- HTTP and MCP --------------------------------------------------------------------

    def over_http(self, caller: Caller) -> Tools:
        """The vault tools as HTTP clients and the ``vault`` model use them: reads allowed; a
        ``write`` key's writes reviewed by the local plugin when one is open (``tool/confirm``
        to it, then ``note/apply``); otherwise writes refused unless the setting
        http_allow_writes is on and the caller may write."""
        run = ToolRun(caller)
        if self.plugin_reviews(caller):
            return self._bound(self._registry("ask"), run, self._ask_plugin(run))
        allow = self.writes_over_http() and caller.allows("write")
        return self._bound(self._registry("allow" if allow else "deny"), run, None)

    def mcp_writes(self, caller: Caller | None, switch: bool | None) -> bool:
        """Whether an MCP client sees and runs the write tools. ``caller``: the key behind an
        HTTP session (None: stdio's, the user's own); ``switch``: the ``mcp`` command's
        ``--allow-writes`` (None: the setting http_allow_writes, read now). A key without
        ``write`` never; a ``write`` key also while the plugin reviews its writes."""
        allowed = self._writes_on(switch)
        if caller is None:
            return allowed
        return caller.allows("write") and (allowed or self.plugin_reviews(caller))

    def for_mcp(self, caller: Caller | None, switch: bool | None) -> Tools:
        """An MCP client's tools (see :meth:`mcp_writes`): a write key's writes reviewed by
        the plugin while it is open; else run without asking here (the MCP client asks its
        user), and while writes are off a call of one is refused with the sentence naming
        the switch (the setting over HTTP, ``--allow-writes`` over stdio)."""
        run = ToolRun(caller or OWNER_CALLER)
        if caller is not None and self.plugin_reviews(caller):
            return self._bound(self._registry("ask"), run, self._ask_plugin(run))
        allowed = self._writes_on(switch)
        writes_off = HTTP_WRITES_OFF if switch is None else STDIO_WRITES_OFF
        hidden = (
            {} if allowed else {name: write_refusal(name, writes_off) for name in WRITE_TOOL_NAMES}
        )
        return self._bound(self._registry("allow"), run, None, hidden)

    # -- internals ------------------------------------------------------------------------

    def _writes_on(self, switch: bool | None) -> bool:
        """The MCP writes' switch: ``--allow-writes`` when given, else the setting."""
        return self.writes_over_http() if switch is None else switch

    def _note(self) -> str:
        return self._settings().context_note

    def _bound(
        self,
        registry: ToolRegistry,
        run: ToolRun,
        confirm: ConfirmCallback | None,
        hidden: Iterable[str] | Mapping[str, str] = (),
    ) -> Tools:
        """``registry`` seen by ``run``: its writes made for its caller and held to what its
        user reviewed, asking ``confirm``, without the tools of ``hidden``."""
        writer = self._writes.write
        handlers = write_handlers(self._vault, writer, run)
        if registry.permission(SETUP_TOOL) is not None:
            handlers[SETUP_TOOL] = setup_handler(self._vault, self._note, writer, run)
        return Tools(registry.view(confirm, hidden=hidden, handlers=handlers), run)

    def _registry(self, kind: RegistryKind) -> ToolRegistry:
        """The registry of ``kind``, built on first use; related_notes offered while the
        vault has an embedder."""
        registry = self._registries.get(kind)
        if registry is None:
            registry = self._registries[kind] = ToolRegistry()
            register_vault_tools(
                registry, self._vault, write_permission=_WRITES[kind], writer=self._writes.write
            )
            if kind == "setup":
                register_setup_tool(registry, self._vault, self._note, self._writes.write)
        else:
            offer_related(registry, self._vault)  # the embedder may have changed
        return registry
