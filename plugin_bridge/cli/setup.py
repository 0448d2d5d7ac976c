"""``setup``: choose a provider, give it a key or a local URL, check it with one cheap call, pick
a model from what it serves, save the settings file (0600) and print the command to run next.

Every answer can come from a flag, so scripts run it without a terminal; what a flag does not
give is asked for with rich prompts when standard input is a terminal (the key without echo, the
models shown as a table), else it is an error naming the flag.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from llm_service.factory import PROVIDER_NAMES, provider_name

if TYPE_CHECKING:
    from llm_service.catalog import ModelInfo

KEY_FLAGS: Final = {"anthropic": "anthropic_api_key", "openai": "openai_api_key"}


class SetupError(Exception):
    """Setup cannot go on; ``str()`` says what to pass or fix."""


def run(
    provider: str | None,
    api_key: str | None,
    base_url: str | None,
    model: str | None,
    *,
    ask: Callable[[str], str] | None = None,
    ask_secret: Callable[[str], str] | None = None,
) -> int:
    interactive = sys.stdin.isatty()
    if interactive and ask is None:
        ask, ask_secret = _rich_prompts()
    try:
        return asyncio.run(_setup(provider, api_key, base_url, model, ask, ask_secret))
    except SetupError as exc:
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
    from pydantic import ValidationError

    from llm_service import LLMError
    from llm_service.providers.openai import first_chat_model
    from plugin_bridge.app.settings.config import (
        BridgeSettings,
        build_provider,
        choose_provider,
        write_settings_file,
    )
    from plugin_bridge.app.settings.keys import rebound
    from plugin_bridge.wire.errors import field_problems

    if provider is None:
        provider = _answer(ask, "--provider", f"Provider ({', '.join(PROVIDER_NAMES)}): ")
    if provider_name(provider) is None:
        raise SetupError(f"Unknown provider '{provider}': use one of {', '.join(PROVIDER_NAMES)}.")
    provider = provider.strip().lower()
    if provider in KEY_FLAGS and api_key is None and base_url is None:
        api_key = _answer(ask_secret, "--api-key", f"{provider.capitalize()} API key: ")
    if provider == "ollama" and base_url is None and ask is not None:
        base_url = ask("Ollama URL [http://127.0.0.1:11434]: ").strip() or None
    values: dict[str, object] = {"provider": provider, "base_url": base_url}
    if api_key:
        values[KEY_FLAGS[provider]] = api_key
    current = BridgeSettings()
    values.update(rebound(current, values, provider))  # the key is for that base URL
    try:
        settings = BridgeSettings.model_validate({**current.model_dump(), **values})
    except ValidationError as exc:
        raise SetupError(f"Invalid settings: {field_problems(exc)}.") from None
    built = build_provider(settings, choose_provider(settings))
    if built is None:
        raise SetupError(f"{provider} needs an API key or --base-url: pass one.")
    try:
        models = await built.list_models()  # the cheap call that checks key or URL
    except LLMError as exc:
        raise SetupError(f"The check failed: {exc}") from None
    finally:
        await built.aclose()
    names = [m.id for m in models]
    print(f"{provider} answers; it serves {len(names)} models.")
    if model is None:
        default = choose_provider(settings).model or first_chat_model(names) or ""
        if ask is not None and sys.stdin.isatty():
            _show_models(models)
        shown = ", ".join(names[:12]) + (" …" if len(names) > 12 else "")
        answer = ask(f"Model [{default}] ({shown}): ").strip() if ask else ""
        model = answer or default
        if not model:
            raise SetupError("No model to use: pass --model.")
    values["model"] = model
    path = write_settings_file({k: v for k, v in values.items() if v is not None})
    print(f"Saved to {path} (readable by you only).")
    from plugin_bridge.cli import command_line

    print(f"Next: {command_line('serve', '--vault', 'PATH/TO/YOUR/VAULT')}")
    return 0


def _answer(ask: Callable[[str], str] | None, flag: str, prompt: str) -> str:
    if ask is None:
        raise SetupError(f"No terminal to ask on: pass {flag}.")
    answer = ask(prompt).strip()
    if not answer:
        raise SetupError(f"Nothing given: pass {flag} or answer the question.")
    return answer


def _rich_prompts() -> tuple[Callable[[str], str], Callable[[str], str]]:
    """Questions asked with rich (imported here: only an interactive setup pays for it)."""
    from rich.markup import escape
    from rich.prompt import Prompt

    def ask(question: str) -> str:
        return Prompt.ask(escape(question.rstrip(": ")), default="", show_default=False)

    def ask_secret(question: str) -> str:
        return Prompt.ask(escape(question.rstrip(": ")), password=True)

    return ask, ask_secret


def _show_models(models: Sequence[ModelInfo]) -> None:
    """The provider's models as a table: context, output limit, tools and prices."""
    from rich.console import Console
    from rich.table import Table

    from plugin_bridge.cli.models import MODEL_COLUMNS, model_row

    table = Table(*MODEL_COLUMNS)
    for model in models[:30]:
        table.add_row(*model_row(model))
    Console().print(table)
