"""Session methods: initialize (the handshake's token check), health, models/list."""

from __future__ import annotations

import logging
from typing import get_args

from llm_service.catalog import is_chat_model
from llm_service.discovery import ModelCache, known_models
from llm_service.pricing import RECOMMENDED_MODELS
from plugin_bridge import DISTRIBUTION, __version__
from plugin_bridge.app.clients import RemotePeer, method_scope
from plugin_bridge.app.settings.config import PLUGIN_CLIENT, SettingsError
from plugin_bridge.app.state import BridgeApp
from plugin_bridge.handlers.context import AppRouter, Context
from plugin_bridge.handlers.search import embedder_status
from plugin_bridge.wire.errors import RpcError, WireCode
from plugin_bridge.wire.models import (
    HEALTH,
    MODELS_LIST,
    SESSION_INITIALIZE,
    CallerInfo,
    Capabilities,
    Empty,
    HealthResult,
    IndexStatus,
    InitializeParams,
    InitializeResult,
    McpServerStatus,
    ModelInfoModel,
    ModelsListParams,
    ModelsListResult,
    ServerInfo,
    ToolFormat,
    VaultInfo,
)
from plugin_bridge.wire.protocol import PROTOCOL_VERSION

logger = logging.getLogger(__name__)


async def initialize(ctx: Context, params: InitializeParams) -> InitializeResult:
    """Authenticate with the info file's token or a client key; must be the first request of a
    connection."""
    caller = await ctx.app.clients.authenticate(params.token, ctx.app.token, ctx.caller)
    if caller is None:
        revoked = await ctx.app.clients.revoked_name(params.token)
        raise RpcError(
            WireCode.UNAUTHORIZED,
            f"The client key '{revoked}' was revoked: ask the vault's owner for a new one."
            if revoked is not None
            else "Wrong client key: this address takes client keys only; make one with 'clients "
            "add'."
            if isinstance(ctx.caller, RemotePeer)
            else "Wrong token: read the current one from the server info file, or use a client "
            "key from 'clients add'.",
        )
    ctx.caller = caller
    if params.protocol_version != PROTOCOL_VERSION:
        raise RpcError(
            WireCode.INVALID_PARAMS,
            f"Unsupported protocolVersion {params.protocol_version}: this server speaks "
            f"protocolVersion {PROTOCOL_VERSION}.",
        )
    logger.info("client %.60s %.30s initialized", params.client.name, params.client.version)
    app = ctx.app
    if params.client.name == PLUGIN_CLIENT:
        app.writes.attach(ctx.peer, "token" if caller.is_owner else "client-key")
    return InitializeResult(
        protocol_version=PROTOCOL_VERSION,
        server=ServerInfo(name=DISTRIBUTION, version=__version__),
        capabilities=Capabilities(
            methods=sorted(m for m in ctx.methods if caller.allows(method_scope(m))),
            chat=app.providers.chat is not None,
        ),
        caller=CallerInfo(name=caller.name, scope=caller.scope),
        vault=VaultInfo(
            name=app.vault.name,
            note_count=app.vault.index.note_count,
            embedder=embedder_status(app.vault),
        ),
    )


async def health(ctx: Context, params: Empty) -> HealthResult:
    """Server status: version, provider and model, index size and progress, the tool formats
    and how many tools a conversation gets."""
    return health_of(ctx.app)


def health_of(app: BridgeApp) -> HealthResult:
    """The server's status, as the WebSocket's ``health`` and HTTP's ``GET /health`` give it."""
    index = app.vault.index
    done, total = index.progress
    return HealthResult(
        status="ok",
        version=__version__,
        provider=app.providers.name,
        model=app.providers.model,
        index=IndexStatus(
            notes=index.note_count,
            pending=index.pending,
            done=done,
            total=total,
            embedder=embedder_status(app.vault),
            unreadable_pdfs=app.unreadable_pdfs(),
        ),
        recommended_models={name: list(models) for name, models in RECOMMENDED_MODELS.items()},
        supported_formats=list(get_args(ToolFormat)),
        tool_count=len(app.access.tools.get_registered_tools()),
        mcp_servers=[
            McpServerStatus.model_validate(status, from_attributes=True)
            for status in app.mcp_status()
        ],
        bots={bot.name: bot.shown for bot in app.bots},
    )


async def list_models(ctx: Context, params: ModelsListParams) -> ModelsListResult:
    """Models a configured provider serves (``provider``, default the chat provider), with
    context window, limits and prices where known; cached for a day in the data folder; when
    the provider cannot be reached, the last list or the built-in catalog."""
    app = ctx.app
    chat = app.route("chat", ctx.client)
    name, provider = chat.name, chat.provider
    if params.provider is not None and params.provider != chat.name:
        name = params.provider
        try:
            provider = app.providers.provider(name)
        except SettingsError as exc:
            raise RpcError(WireCode.INVALID_PARAMS, str(exc)) from exc
    cache = ModelCache(app.vault.data_dir)
    models, source = await known_models(provider, name, cache, refresh=params.refresh)
    return ModelsListResult(
        models=[
            ModelInfoModel.model_validate(m, from_attributes=True).model_copy(
                update={"embedding": not is_chat_model(m)}
            )
            for m in models
        ],
        source=source,
    )


def register(router: AppRouter) -> None:
    router.register(SESSION_INITIALIZE, initialize)
    router.register(HEALTH, health)
    router.register(MODELS_LIST, list_models)
