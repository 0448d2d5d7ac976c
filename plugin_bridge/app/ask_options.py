"""What one model call asks for besides its messages (:class:`AskOptions`), as every transport
gives it to :class:`~plugin_bridge.app.assistant.Assistant` (and the titles ask the fast model)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from plugin_bridge.app.clients import OWNER_CALLER, Caller

if TYPE_CHECKING:
    from llm_service import ToolSpec
    from llm_service.options import ResponseFormat, ToolChoice
    from plugin_bridge.app.settings.providers import Purpose


@dataclass(frozen=True, slots=True)
class AskOptions:
    """What one call asks for besides its messages."""

    model: str | None = None
    """A client's model id (``vault``, ``provider/model``, a bare id; see
    :mod:`~plugin_bridge.app.model_routes`); None: the route of ``route``."""
    route: Purpose = "chat"
    system: str | None = None
    tools: Sequence[ToolSpec] = ()
    tool_choice: ToolChoice | None = None
    response_format: ResponseFormat | None = None
    max_tokens: int | None = None
    """None: the settings' answer length."""
    temperature: float | None = None
    """None: the settings' temperature."""
    caller: Caller = OWNER_CALLER
    """Who asks: the usage is recorded under its key, and the ``vault`` model's tools are those
    the access policy gives it over HTTP."""
    client: str | None = None
    """The client program's name (its ``initialize``): with no provider, the plugin is told to
    set one in its settings, other clients with the flags and environment."""
    conversation: str | None = None
    """The conversation the call serves (a title's): its usage is counted with it."""
