"""Method handlers, one module per area; :func:`build_router` registers them all."""

from __future__ import annotations

from plugin_bridge.handlers import (
    chat,
    clients,
    commands,
    conversations,
    prompts,
    search,
    session,
    settings,
    setup,
    tools,
    usage,
    vault,
)
from plugin_bridge.handlers.context import AppRouter, authorize


def build_router() -> AppRouter:
    """A router with every method of the protocol."""
    router = AppRouter(authorize)
    areas = (
        session,
        settings,
        setup,
        search,
        vault,
        chat,
        conversations,
        prompts,
        commands,
        tools,
        usage,
        clients,
    )
    for area in areas:
        area.register(router)
    return router
