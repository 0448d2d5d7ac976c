"""``setup``: choose a provider, give it a key or a local URL, check it with one cheap call, pick
a model from what it serves, save the settings file (0600) and print the command to run next
(or, when servers are running, whether each has taken the change up: they follow the file).
Asked in a terminal, it first says which local runtimes (Ollama, LM Studio) answer on this
machine and offers them; an OpenAI-compatible server is asked for its URL.

Every answer can come from a flag, so scripts run it without a terminal; what a flag does not
give is asked for with rich prompts when standard input is a terminal (the key without echo, the
models shown as a table), else it is an error naming the flag.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, NamedTuple

from pydantic import ValidationError

from llm_service import LLMError, lazy
from llm_service.catalog import is_chat_model
from llm_service.profiles import PROFILES, PROVIDER_NAMES, ProviderProfile, provider_name
from llm_service.runtimes import RUNTIME_LABELS, RUNTIME_PROVIDERS, detect_runtimes
from plugin_bridge.app.settings.config import (
    BridgeSettings,
    answers,
    choose_provider,
    default_model,
    write_settings_file,
)
from plugin_bridge.app.settings.keys import KEY_FIELDS, rebound
from plugin_bridge.app.settings.providers import build_provider
from plugin_bridge.cli.commandline import command_line
from plugin_bridge.cli.models import MODEL_COLUMNS, model_row
from plugin_bridge.cli.running import running_servers
from plugin_bridge.cli.setup_bots import BotSetupError, offer_bots
from plugin_bridge.wire.errors import field_problems

if TYPE_CHECKING:
    from rich import console as rich_console
    from rich import markup as rich_markup
    from rich import prompt as rich_prompt
    from rich import table as rich_table

    from llm_service import Provider
    from llm_service.catalog import ModelInfo
    from llm_service.profiles import ProviderName
    from plugin_bridge.app.settings.config import BridgeSettings
else:
    rich_console = lazy.module("rich.console")
    rich_markup = lazy.module("rich.markup")
    rich_prompt = lazy.module("rich.prompt")
    rich_table = lazy.module("rich.table")


class SetupError(Exception):
    """Setup cannot go on; ``str()`` says what to pass or fix."""


class BotFlags(NamedTuple):
    """``setup``'s flags for the chat-app bots (a token given: only that bot is set up)."""

    telegram_token: str | None = None
    telegram_user: int | None = None
    telegram_api_url: str | None = None
    discord_token: str | None = None
    discord_user: int | None = None
    discord_api_url: str | None = None


def run(
    provider: str | None,
    api_key: str | None,
    base_url: str | None,
    model: str | None,
    *,
    bots: BotFlags | None = None,
    ask: Callable[[str], str] | None = None,
    ask_secret: Callable[[str], str] | None = None,
) -> int:
    interactive = sys.stdin.isatty()
    if interactive and ask is None:
        ask, ask_secret = _rich_prompts()
    bots = bots or BotFlags()
    try:
        if bots.telegram_token is None and bots.discord_token is None:  # bots only otherwise
            code = asyncio.run(_setup(provider, api_key, base_url, model, ask, ask_secret))
            if code:
                return code
        offer_bots(ask, ask_secret, *bots)
        return 0
    except (SetupError, BotSetupError) as exc:
        print(exc, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nSetup stopped; nothing was saved.", file=sys.stderr)
        return 130


async def _setup(
    provider: str | None,
    api_key: str | None,
    base_url: str | None,
    model: str | None,
    ask: Callable[[str], str] | None,
    ask_secret: Callable[[str], str] | None,
) -> int:
    found = await _local_runtimes() if provider is None and ask is not None else {}
    if provider is None:
        default = next(iter(found), "")  # Ollama's when it answers, else LM Studio's
        shown = f" [{default}]" if default else ""
        question = f"Provider ({', '.join(PROVIDER_NAMES)}){shown}: "
        provider = _answer(ask, "--provider", question, default, valid=provider_name)
    name = provider_name(provider)
    if name is None:
        raise SetupError(f"Unknown provider '{provider}': use one of {', '.join(PROVIDER_NAMES)}.")
    provider = name
    profile = PROFILES[name]
    if profile.compatible_servers and api_key is None and base_url is None and ask is not None:
        suggested = found.get(name, "")
        base_url = (
            ask(
                f"{profile.label}-compatible server URL (LM Studio, vLLM, llama.cpp, OpenRouter; "
                f"empty for {profile.label}'s API) [{suggested}]: "
            ).strip()
            or suggested
            or None
        )
    key_source = "the key given with --api-key" if api_key else None
    if api_key is None and _needs_key(profile, base_url, ask):
        where = f" for {base_url}" if base_url else ""
        api_key = _answer(ask_secret, "--api-key", f"{profile.label} API key{where}: ")
        key_source = "the key you typed"
    if profile.local and base_url is None and ask is not None:
        suggested = found.get(name, profile.default_base_url or "")
        base_url = ask(f"{profile.label} URL [{suggested}]: ").strip() or found.get(name)
    # a new provider brings its own address and model: the old ones are not carried over
    values: dict[str, object] = {"provider": provider, "base_url": base_url, "model": None}
    if api_key:
        values[KEY_FIELDS[name]] = api_key
    current = BridgeSettings()
    values.update(rebound(current, values, provider))  # the key is for that base URL
    try:
        settings = BridgeSettings.model_validate({**current.model_dump(), **values})
    except ValidationError as exc:
        raise SetupError(f"Invalid settings: {field_problems(exc)}.") from None
    built = build_provider(settings, choose_provider(settings))
    if built is None:
        raise SetupError(f"{profile.label} needs an API key: pass --api-key.")
    built.max_attempts = 1  # a check: an unreachable server or a refused key is not retried
    try:
        models = [m for m in await _checked_models(built, name, key_source) if is_chat_model(m)]
    except LLMError as exc:
        raise SetupError(f"The check failed: {exc}") from None
    finally:
        await built.aclose()
    names = [m.id for m in models]
    print(f"{provider} answers; it serves {len(names)} chat models.")
    if model is None:
        model = _pick_model(ask, models, _default_model(current, provider, names))
    values["model"] = model
    path = write_settings_file(values)
    print(f"Saved to {path} (readable by you only).")
    servers = await running_servers(provider, model)
    for server in servers:
        if server.took_up:
            print(
                f"The server of the vault '{server.vault}' is running and has taken the change "
                f"up: it uses {provider} model {model} now, no restart needed."
            )
        else:
            print(
                f"The server of the vault '{server.vault}' is running but has not taken the "
                "change up: its log says why; restart it to use the new settings."
            )
    if not servers:
        print(f"Next: {command_line('serve', '--vault', 'PATH/TO/YOUR/VAULT')}")
    return 0


def _needs_key(
    profile: ProviderProfile, base_url: str | None, ask: Callable[[str], str] | None
) -> bool:
    """Whether setup must have a key (the profile's rule): a provider that needs its key
    wherever it is (a gateway passes the key on), and a keyed one at its own API; an
    OpenAI-compatible server at a base URL needs none. Without a terminal to ask on, a
    provider that needs its key at a base URL says why."""
    if profile.needs_key and base_url is not None and ask is None:
        raise SetupError(
            f"{profile.label} needs an API key at {base_url} too (a gateway passes it on): "
            f"pass --api-key, or leave out --base-url for {profile.label}'s own API."
        )
    return profile.lacks_key(None, base_url)


def _default_model(current: BridgeSettings, provider: ProviderName, names: list[str]) -> str:
    """The model an empty answer takes, one of ``names`` (the chat models the provider serves):
    the one saved for this provider, else its recommended one, else its first."""
    saved = current.model if current.provider == provider else None
    for candidate in (saved, default_model(provider)):
        if candidate in names:
            return candidate
    return names[0] if names else ""


def _pick_model(ask: Callable[[str], str] | None, models: Sequence[ModelInfo], default: str) -> str:
    """The chat model: asked in a terminal (the table of ``models`` first), else the default."""
    if ask is None:
        if not default:
            raise SetupError("No model to use: pass --model.")
        return default
    if sys.stdin.isatty():
        _show_models(models)
    names = [m.id for m in models]
    shown = ", ".join(names[:12]) + (" …" if len(names) > 12 else "")
    return _answer(ask, "--model", f"Model [{default}] ({shown}): ", default)


async def _checked_models(
    provider: Provider, name: ProviderName, key_source: str | None
) -> list[ModelInfo]:
    """The provider's models: the cheap call that checks its address and key. Nothing that
    answers at the address fails at once (not after retries); a refused key is named as the
    key that was given (``key_source``: with --api-key, or typed), not an environment
    variable."""
    url = provider.base_url or PROFILES[name].default_origin or ""
    if url and not await answers(url):
        start = PROFILES[name].start_command
        hint = f"start it (`{start}`)" if start else "check the address"
        raise SetupError(f"Nothing answers at {url}: {hint}, or pass the right --base-url.")
    try:
        return await provider.list_models()
    except LLMError as exc:
        if exc.code != "auth_error" or key_source is None:
            raise
        raise SetupError(
            f"{PROFILES[name].label} refused {key_source} ({exc.status or 'auth error'}): check "
            "it and run setup again; nothing was saved."
        ) from None


async def _local_runtimes() -> dict[ProviderName, str]:
    """The local runtimes that answer (Ollama first, then LM Studio), as the provider that
    speaks to each → the base URL to use, said on the terminal as they are found."""
    found: dict[ProviderName, str] = {}
    for runtime in await detect_runtimes():
        if not runtime.reachable:
            continue
        chat = [m.id for m in runtime.models if not m.embedding]
        listed = ", ".join(chat[:6]) + (" …" if len(chat) > 6 else "")
        print(
            f"Found {RUNTIME_LABELS[runtime.kind]} at {runtime.base_url} "
            f"({len(chat)} chat models: {listed})."
        )
        found[RUNTIME_PROVIDERS[runtime.kind]] = runtime.base_url
    return found


def _answer(
    ask: Callable[[str], str] | None,
    flag: str,
    prompt: str,
    default: str = "",
    *,
    valid: Callable[[str], object] = bool,
) -> str:
    """The answer to ``prompt`` (``default`` for an empty one), asked again until it is one
    that ``valid`` accepts; without a terminal, SetupError naming ``flag``."""
    if ask is None:
        raise SetupError(f"No terminal to ask on: pass {flag}.")
    while True:
        answer = ask(prompt).strip() or default
        if answer and valid(answer):
            return answer
        print(
            "Please answer (Ctrl-C stops setup; nothing is saved)."
            if not answer
            else f"'{answer}' is not one of the choices.",
            file=sys.stderr,
        )


def _rich_prompts() -> tuple[Callable[[str], str], Callable[[str], str]]:
    """Questions asked with rich (loaded on first use: only an interactive setup pays). While
    a question waits, Ctrl-C is Python's own KeyboardInterrupt: the first one stops setup (the
    event loop's handler would only cancel the task, which a blocking read never notices)."""

    def ask(question: str) -> str:
        with _interruptible():
            return rich_prompt.Prompt.ask(
                rich_markup.escape(question.rstrip(": ")), default="", show_default=False
            )

    def ask_secret(question: str) -> str:
        with _interruptible():
            return rich_prompt.Prompt.ask(rich_markup.escape(question.rstrip(": ")), password=True)

    return ask, ask_secret


@contextmanager
def _interruptible() -> Iterator[None]:
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _show_models(models: Sequence[ModelInfo]) -> None:
    """The provider's models as a table: context, output limit, tools and prices."""
    table = rich_table.Table(*MODEL_COLUMNS)
    for model in models[:30]:
        table.add_row(*model_row(model))
    rich_console.Console().print(table)
