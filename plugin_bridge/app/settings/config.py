"""Server settings, and which model provider they select.

Sources, the first that has a value wins: command-line options (init values), environment
variables (``AI_BRIDGE_<NAME>``, e.g. ``AI_BRIDGE_ALLOWED_ORIGINS='["app://obsidian.md"]'``, and the
API keys ``ANTHROPIC_API_KEY`` / ``OPENAI_API_KEY``), the settings file (TOML, see
:func:`config_file`), then the defaults. Keys are ``SecretStr``: they never appear in a repr or a
log.

Provider choice: ``--provider`` if given, else anthropic when ANTHROPIC_API_KEY is set, else
openai when OPENAI_API_KEY is set, else none. A chosen provider whose key is missing counts as
none (openai with ``--base-url`` needs no key: local servers ignore it, and without ``--model``
it uses the model the server has loaded). Without a provider the server still serves search and
notes; chat answers -32011 with :attr:`ProviderChoice.missing`, which names where the setting
came from and the fix there (:mod:`.sources`).
"""

from __future__ import annotations

import asyncio
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal
from urllib.parse import urlsplit

import tomli_w
from platformdirs import user_config_dir
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from llm_service.embedders import Model2VecEmbedder, make_embedder
from llm_service.embedders.spec import parse_spec
from llm_service.errors import LLMError
from llm_service.profiles import PROFILES, ProviderName, parse_model_spec, provider_name
from plugin_bridge.app.remote import parse_listen
from plugin_bridge.app.settings.keys import KEY_FIELDS, KEY_VARIABLES, can_run, check_url, key_for
from plugin_bridge.app.settings.sources import launch_bindings, named_provider, no_key
from plugin_bridge.wire.models.settings import MCP_NAME_PATTERN
from plugin_bridge.wire.security import DEFAULT_ALLOWED_ORIGINS

if TYPE_CHECKING:
    from llm_service.embedders import Embedder

NO_PROVIDER: Final = (
    "No model provider is configured: run `obsidian-ai-bridge setup`, or export "
    "ANTHROPIC_API_KEY or start with --provider ollama."
)
PLUGIN_CLIENT: Final = "ai-bridge-assistant"
"""The Obsidian plugin's ``client.name`` in initialize (its manifest id)."""
NO_PROVIDER_IN_PLUGIN: Final = (
    "No model provider is set up yet: pick a local model or paste an API key in the setup card "
    "of the assistant panel, or under Settings → AI bridge assistant."
)
"""The -32011 message for the plugin, whose own settings set a provider (not flags)."""


CONFIG_ENV: Final = "AI_BRIDGE_CONFIG"
CONFIG_NAME: Final = "config.toml"
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""C0 and C1 control characters and DEL: refused in names, globs, paths and URLs."""


def config_file() -> Path:
    """The settings file: ``$AI_BRIDGE_CONFIG``, else ``config.toml`` in the user's config
    folder (platformdirs: ``~/.config/obsidian-ai-bridge`` on Linux)."""
    given = os.environ.get(CONFIG_ENV)
    return Path(given) if given else Path(user_config_dir("obsidian-ai-bridge")) / CONFIG_NAME


McpServerName = Annotated[str, StringConstraints(pattern=MCP_NAME_PATTERN)]


class McpServer(BaseModel):
    """One ``[mcp.servers.NAME]``: a command started over stdio, or a streamable HTTP URL."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str | None = Field(None, min_length=1, max_length=1000)
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    """Added to the few variables a server inherits (PATH, HOME, …); masked by settings/get."""
    url: str | None = Field(None, pattern=r"^https?://", max_length=2000)
    headers: dict[str, str] = Field(default_factory=dict)
    """Sent with every request (say, Authorization); masked by settings/get."""
    permission: Literal["allow", "ask", "deny"] = "ask"
    """Whether its tools run freely, after the user's approval (tool/confirm), or never."""

    @model_validator(mode="after")
    def _one_transport(self) -> McpServer:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a program started over stdio) or url")
        if self.url is not None and (self.args or self.env):
            raise ValueError("args and env go with command, not with url")
        if self.command is not None and self.headers:
            raise ValueError("headers go with url, not with command")
        return self


class McpSettings(BaseModel):
    """The ``[mcp]`` table: MCP servers whose tools the model may call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    servers: dict[McpServerName, McpServer] = Field(default_factory=dict)
    restart_backoff: float = Field(1.0, gt=0, le=300)
    """Seconds before a failed server is started again; doubled after each failure (≤ 60 s)."""


BotScope = Literal["read", "chat", "write"]


def _token_from(variable: str) -> Callable[[], SecretStr | None]:
    def token() -> SecretStr | None:
        value = os.environ.get(variable)
        return SecretStr(value) if value else None

    return token


class _ChatAppSettings(BaseModel):
    """What both bots take (``[telegram]``, ``[discord]``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    allowed_users: tuple[int, ...] = ()
    """The chat app's user ids that may talk to the bot; none: the bot does not start."""
    scope: BotScope = "chat"
    """As for client keys: read (search only), chat, write (writes after Approve)."""
    capture_note: str = Field("Inbox.md", min_length=1, max_length=1000)
    """The note ``/note TEXT`` appends a timestamped line to (created when missing)."""

    @field_validator("api_url", check_fields=False)
    @classmethod
    def _api_url(cls, value: str) -> str:
        return check_url(value).rstrip("/")


class TelegramSettings(_ChatAppSettings):
    """``[telegram]``: the Telegram bot."""

    bot_token: SecretStr | None = Field(default_factory=_token_from("AI_BRIDGE_TELEGRAM_BOT_TOKEN"))
    """From BotFather; or AI_BRIDGE_TELEGRAM_BOT_TOKEN."""
    api_url: str = "https://api.telegram.org"
    """The Bot API server (a local one, or a test stand-in)."""


class DiscordSettings(_ChatAppSettings):
    """``[discord]``: the Discord bot."""

    bot_token: SecretStr | None = Field(default_factory=_token_from("AI_BRIDGE_DISCORD_BOT_TOKEN"))
    """From the Developer Portal; or AI_BRIDGE_DISCORD_BOT_TOKEN."""
    api_url: str = "https://discord.com/api/v10"
    """The REST base; the gateway is the address GET /gateway/bot answers."""


def _key_alias(name: ProviderName) -> AliasChoices:
    """Where provider ``name``'s key is read: ``NAME_api_key``, and its SDK's variable."""
    return AliasChoices(KEY_FIELDS[name], KEY_VARIABLES[name])


class BridgeSettings(BaseSettings):
    """Everything ``serve`` needs to know."""

    model_config = SettingsConfigDict(env_prefix="AI_BRIDGE_", extra="forbid", frozen=True)

    vault: Path | None = None
    provider: ProviderName | None = None
    model: str | None = None
    """The chat model: ``MODEL`` on the configured provider, or ``PROVIDER:MODEL``."""
    fast_model: str | None = None
    """For titles, summaries and other small jobs (``MODEL`` on the chat's provider, or
    ``PROVIDER:MODEL``, e.g. ``ollama:qwen3:4b``); the chat model when unset."""
    deep_model: str | None = None
    """What a client asks for when the user wants the strongest model (like ``fast_model``);
    the chat model when unset."""
    base_url: str | None = None
    """The chat provider's address (an OpenAI-compatible server, an Ollama elsewhere)."""
    base_urls: dict[ProviderName, str] = Field(default_factory=dict)
    """Each provider's address, for the models of other purposes on other providers; the chat
    provider's is ``base_url`` when that is set."""
    host: str = "127.0.0.1"
    port: int = Field(0, ge=0, le=65535)
    http_port: int = Field(0, ge=0, le=65535)
    """The HTTP API's port (0: a free one; the info file's ``httpUrl`` says which)."""
    http_allow_writes: bool = False
    """Let the ``vault`` model of the HTTP API create and change notes (nobody is there to
    approve a write over HTTP, so they are refused by default)."""
    http_timeout: float = Field(15.0, gt=0, le=30)
    """Seconds an HTTP connection may stay idle, or take to send a request's head or body,
    before it is closed."""
    remote_listen: str | None = None
    """``HOST:PORT`` of the listener for other machines (off when unset): the HTTP routes and
    the WebSocket at ``/ws``, over TLS, client keys only (see :mod:`plugin_bridge.app.remote`)."""
    tls_cert: Path | None = None
    """The remote listener's certificate (PEM; with ``tls_key``), e.g. from ``tailscale
    cert``; unset: a self-signed one made in the data folder."""
    tls_key: Path | None = None
    remote_insecure_http: bool = False
    """Serve the remote listener over plain HTTP (only inside a tunnel that encrypts, such as
    WireGuard or Tailscale)."""
    data_dir: Path | None = None
    info_file: Path | None = None
    allowed_origins: tuple[str, ...] = DEFAULT_ALLOWED_ORIGINS
    daily_budget_usd: float | None = Field(None, gt=0)
    monthly_budget_usd: float | None = Field(None, gt=0)
    max_tokens: int = Field(4096, ge=1, le=1_000_000)
    """The most tokens of one answer; capped by the model's own limit where known."""
    temperature: float | None = Field(None, ge=0, le=2)
    timeout: float | None = Field(None, gt=0, le=3600)
    """Seconds one provider request may take (default: 60, Ollama 120)."""
    ollama_host: str | None = Field(
        None, validation_alias=AliasChoices("ollama_host", "OLLAMA_HOST")
    )
    """Ollama's own OLLAMA_HOST, used when no base_url is set."""
    exclude: tuple[str, ...] = ()
    """Folders and globs the assistant never sees (search, tools, watcher), e.g. ``Archive``."""
    context_note: str = Field("Assistant.md", min_length=1, max_length=1000)
    """The vault note whose text is every conversation's standing context."""
    prompts_folder: str = Field("Assistant/Prompts", min_length=1, max_length=1000)
    """The vault folder whose notes are the custom prompts."""
    conversations_folder: str | None = Field(None, min_length=1, max_length=1000)
    """When set, every conversation is also a note in this vault folder, updated each turn."""
    embedder: str | None = None
    """``ollama:MODEL``, ``openai:MODEL`` or ``model2vec:PATH``: semantic and hybrid search;
    none means lexical search only."""
    embedder_base_url: str | None = None
    """The embedder's server (default: Ollama's address, or OpenAI's API)."""
    embedder_requests_per_minute: float | None = Field(None, gt=0)
    embedder_concurrency: int = Field(2, ge=1, le=32)
    embedder_confirm_over_usd: float = Field(0.50, ge=0)
    """A paid embedder asks (``index/progress`` phase confirm) before a job estimated above it."""
    vector_ann_threshold: int = Field(300_000, ge=1)
    """Vectors (chunks) from which an approximate (HNSW) index answers semantic searches
    instead of an exact scan; applies when the embedder starts."""
    pdf_max_mb: float = Field(50, gt=0, le=4096)
    """PDFs larger than this (MB) are neither indexed nor read; applies at start."""
    mcp: McpSettings = Field(default_factory=McpSettings)
    """MCP servers as the model's tools (``[mcp.servers.NAME]``)."""
    telegram: TelegramSettings | None = None
    """The Telegram bot (``[telegram]``), started by serve when present."""
    discord: DiscordSettings | None = None
    """The Discord bot (``[discord]``), started by serve when present."""
    # A key and its bound origin per keyed provider (``llm_service.profiles.KEYED``; a test
    # keeps the two lists equal), read through :meth:`key_of` and :meth:`key_host_of`.
    anthropic_api_key: SecretStr | None = Field(None, validation_alias=_key_alias("anthropic"))
    """Also read from the SDK's variable (ANTHROPIC_API_KEY)."""
    anthropic_api_key_host: str | None = None
    """The origin the key may go to (:mod:`.keys`); None: the provider's default origin."""
    openai_api_key: SecretStr | None = Field(None, validation_alias=_key_alias("openai"))
    """Also read from the SDK's variable (OPENAI_API_KEY)."""
    openai_api_key_host: str | None = None
    """The origin the key may go to (:mod:`.keys`); None: the provider's default origin."""

    @field_validator("embedder")
    @classmethod
    def _embedder_spec(cls, value: str | None) -> str | None:
        if value is not None:
            parse_spec(value)
        return value

    @field_validator(
        "base_url", "embedder_base_url", "anthropic_api_key_host", "openai_api_key_host"
    )
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        return None if value is None else check_url(value)

    @field_validator("remote_listen")
    @classmethod
    def _listen_address(cls, value: str | None) -> str | None:
        if value is not None:
            parse_listen(value)
        return value

    @field_validator("base_urls")
    @classmethod
    def _http_urls(cls, value: dict[ProviderName, str]) -> dict[ProviderName, str]:
        for url in value.values():
            check_url(url)
            if _CONTROL.search(url):
                raise ValueError("contains a control character: remove it")
        return value

    @field_validator(
        "model",
        "fast_model",
        "deep_model",
        "exclude",
        "context_note",
        "prompts_folder",
        "conversations_folder",
        "embedder",
        "base_url",
        "embedder_base_url",
    )
    @classmethod
    def _no_control_characters(cls, value: object) -> object:
        for text in value if isinstance(value, tuple) else (value,):
            if isinstance(text, str) and _CONTROL.search(text):
                raise ValueError(
                    "contains a control character (a line break, tab or DEL, say): remove it"
                )
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Flags, then the environment, then the settings file, then the defaults."""
        return init_settings, env_settings, TomlConfigSettingsSource(settings_cls, config_file())

    def key_of(self, name: ProviderName) -> SecretStr | None:
        """Provider ``name``'s key as set (None: none, or a provider that takes none)."""
        keys = {"anthropic": self.anthropic_api_key, "openai": self.openai_api_key}
        return keys.get(name)

    def key_host_of(self, name: ProviderName) -> str | None:
        """The origin provider ``name``'s key is bound to (None: its default origin)."""
        hosts = {"anthropic": self.anthropic_api_key_host, "openai": self.openai_api_key_host}
        return hosts.get(name)


def load_settings(**flags: object) -> BridgeSettings:
    """The settings for these flags, with the keys given at launch bound to the base URLs given
    beside them (:func:`.sources.launch_bindings`), or :class:`SettingsError` naming the bad key
    and where it came from (the settings file, the environment or a flag)."""
    try:
        values: dict[str, Any] = dict(flags)  # field values of any type: pydantic checks them
        settings = BridgeSettings(**values)
        bindings = launch_bindings(settings, flags)
        return BridgeSettings(**{**values, **bindings}) if bindings else settings
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(part) for part in error["loc"]) or "settings"
        raise SettingsError(
            f"Setting '{key}' is invalid ({error['msg']}): fix it in {config_file()}, the "
            f"AI_BRIDGE_{key.upper()} environment variable or the --{key.replace('_', '-')} flag."
        ) from None
    except (OSError, ValueError) as exc:  # an unreadable file, TOML that does not parse
        raise SettingsError(f"The settings file {config_file()} cannot be read ({exc}).") from None


class SettingsError(Exception):
    """Settings that cannot be used; ``str()`` is one sentence naming the key and the file."""


def shown(settings: BridgeSettings) -> dict[str, object]:
    """The effective settings for ``config show``: every key, secrets masked."""
    values = settings.model_dump(mode="json")
    for provider, field in KEY_FIELDS.items():
        secret = settings.key_of(provider)
        values[field] = None if secret is None else _mask(secret.get_secret_value())
    for bot in (settings.telegram, settings.discord):
        if bot is not None and bot.bot_token is not None:
            name = "telegram" if isinstance(bot, TelegramSettings) else "discord"
            values[name]["bot_token"] = _mask(bot.bot_token.get_secret_value())
    for server in values["mcp"]["servers"].values():
        for field in ("env", "headers"):
            server[field] = {key: _mask(value) for key, value in server[field].items()}
    return values


def write_settings_file(changes: dict[str, object]) -> Path:
    """Merge ``changes`` into the settings file (None removes a key); its path."""
    path = config_file()
    values = read_config(path)
    for key, value in changes.items():
        if value is None:
            values.pop(key, None)
        else:
            values[key] = list(value) if isinstance(value, tuple) else value
    return save_config(values, path)


def read_config(path: Path | None = None) -> dict[str, Any]:
    """The settings file as a dict (empty when there is none yet)."""
    try:
        return tomllib.loads((path or config_file()).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def save_config(values: dict[str, Any], path: Path | None = None) -> Path:
    """Write ``values`` (tables too: a nested dict is a ``[table]``) as the whole settings file,
    mode 0600: written by a TOML library, which escapes every string, to a temp file that is
    synced, read back and must give ``values`` again before it replaces the old file, and the
    folder synced after the rename: durable when this returns. ValueError when it would not
    (the old file is then left as it was)."""
    path = path or config_file()
    text = tomli_w.dumps(values)
    if tomllib.loads(text) != values:
        raise ValueError("these settings do not survive a round trip through TOML")
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    try:
        if tomllib.loads(temp.read_text(encoding="utf-8")) != values:
            raise ValueError(f"{temp} does not read back as what was written")
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    temp.replace(path)
    _sync_folder(path.parent)
    return path


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (POSIX; Windows cannot open a folder, and its
    ``MoveFileEx`` replace is durable once it returns)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _mask(secret: str) -> str:
    return f"{secret[:4]}…{secret[-2:]}" if len(secret) > 10 else "…"


@dataclass(frozen=True, slots=True)
class ProviderChoice:
    """The provider and model the settings select; ``name`` None means chat is unavailable."""

    name: ProviderName | None
    model: str | None
    missing: str = NO_PROVIDER
    """The -32011 message when ``name`` is None."""


def choose_provider(settings: BridgeSettings) -> ProviderChoice:
    """Which provider and model ``settings`` select (see the module docstring); a chat model
    named ``PROVIDER:MODEL`` selects its provider."""
    spec = parse_model_spec(settings.model) if settings.model else None
    named = spec.provider if spec is not None else None
    if named is not None and settings.provider is not None and settings.provider != named:
        return ProviderChoice(
            None,
            None,
            f"No model provider is configured: the chat model {settings.model} is on "
            f"{named} but the provider is {settings.provider}; change one of them.",
        )
    model = (spec.model or None) if spec is not None else None
    name = named_provider(settings)
    if name is None:
        return ProviderChoice(None, None)
    local = base_url_for(settings, name, name)
    if not can_run(settings, name, local):
        return ProviderChoice(None, None, no_key(settings, name, local, read_config_quietly()))
    if PROFILES[name].compatible_servers and local is not None:
        return ProviderChoice(name, model)  # None: the server's own, see served_model
    return ProviderChoice(name, model or default_model(name))


def read_config_quietly() -> dict[str, Any]:
    """The settings file's values, or none when it cannot be read (for messages)."""
    try:
        return read_config()
    except (OSError, ValueError):
        return {}


def base_url_for(
    settings: BridgeSettings, name: ProviderName, chat: ProviderName | None
) -> str | None:
    """Provider ``name``'s address: the chat provider's is ``base_url`` when set, every
    provider's ``base_urls[name]``; a local runtime's falls back to its own variable
    (OLLAMA_HOST, the ``ollama_host`` setting), then its default address."""
    url = settings.base_url if name == chat and settings.base_url else None
    url = url or settings.base_urls.get(name)
    if PROFILES[name].host_variable is not None:
        url = url or _ollama_host(settings)
    return url or PROFILES[name].default_base_url


PROBE_SECONDS: Final = 2.0
"""How long a TCP connection to a model server may take before it counts as unreachable."""


async def startup_problem(settings: BridgeSettings, choice: ProviderChoice) -> str | None:
    """Why ``serve`` must not start with these settings (one sentence), or None.

    A server started with no provider at all is valid (search works); but a provider that was
    asked for and cannot work, a base URL without a provider, or a local model server that does
    not answer, fail at start instead of leaving a server that silently has no provider.
    """
    if settings.base_url is not None and settings.provider is None:
        return (
            "--base-url needs --provider: openai for LM Studio, vLLM and other OpenAI-compatible "
            "servers, or ollama."
        )
    if settings.provider is not None and choice.name is None:
        return choice.missing.removeprefix("No model provider is configured: ")
    if choice.name is None:
        return None
    url = base_url_for(settings, choice.name, choice.name)
    profile = PROFILES[choice.name]
    # a local runtime, or a server at a base URL that needs no key (LM Studio, vLLM)
    local = profile.local or (not profile.needs_key and url is not None)
    if local and url is not None and not await answers(url):
        start = profile.start_command
        hint = f"start it with `{start}`" if start else "start it"
        return f"Nothing answers at {url}: {hint}, or pass the right --base-url."
    return None


async def answers(url: str) -> bool:
    """Whether something accepts TCP connections at ``url``'s host and port."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        async with asyncio.timeout(PROBE_SECONDS):
            _reader, writer = await asyncio.open_connection(parts.hostname or "127.0.0.1", port)
    except (OSError, TimeoutError):
        return False
    writer.close()
    return True


def default_model(name: ProviderName) -> str:
    return PROFILES[name].recommended_models[0]


def build_embedder(settings: BridgeSettings) -> Embedder | None:
    """The embedder the settings name (nothing is loaded or contacted yet), or None."""
    if settings.embedder is None:
        return None
    chat = choose_provider(settings).name

    kind, _ = parse_spec(settings.embedder)
    vendor = provider_name(kind)  # a provider's embedder goes where its provider goes
    base_url = settings.embedder_base_url
    if base_url is None and vendor is not None:
        base_url = base_url_for(settings, vendor, chat)
    return make_embedder(
        settings.embedder,
        api_key=key_for(settings, vendor, base_url) if vendor is not None else None,
        base_url=base_url,
        requests_per_minute=settings.embedder_requests_per_minute,
        concurrency=settings.embedder_concurrency,
    )


def embedder_problem(settings: BridgeSettings, embedder: Embedder | None) -> str | None:
    """Why the configured embedder cannot work (one sentence), or None."""
    if embedder is None:
        if settings.embedder_base_url is not None:
            return "--embedder-base-url needs --embedder (ollama:MODEL or openai:MODEL)."
        return None

    if isinstance(embedder, Model2VecEmbedder):
        try:
            embedder.load()
        except LLMError as exc:
            return str(exc)
    vendor = provider_name(embedder.kind)
    if vendor is not None and not can_run(settings, vendor, embedder.base_url):
        return (
            f"--embedder {settings.embedder} needs {PROFILES[vendor].key_variable} (or "
            "--embedder-base-url for a compatible server); set it and restart."
        )
    return None


def _ollama_host(settings: BridgeSettings) -> str | None:
    host = settings.ollama_host
    return f"http://{host}" if host and "://" not in host else host
