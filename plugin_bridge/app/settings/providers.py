"""The providers the settings select: one :class:`ProviderSetup`, built by :func:`build_setup`
at start (``serve``) and on ``settings/update``, never assembled anywhere else.

The chat model runs on the chat provider; the fast and deep models may name other providers
(``ollama:qwen3:4b`` for titles and summaries while chat uses a hosted model). Each provider is
built once, by :func:`llm_service.make_provider`, with its own key and base URL
(:func:`~plugin_bridge.app.settings.config.base_url_for`), and shared by every purpose on it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from llm_service import LLMError, OpenAIProvider, make_provider
from llm_service.profiles import ProviderName, parse_model_spec
from plugin_bridge.app.settings.config import (
    NO_PROVIDER,
    PROBE_SECONDS,
    BridgeSettings,
    ProviderChoice,
    SettingsError,
    base_url_for,
    choose_provider,
)
from plugin_bridge.app.settings.keys import KEY_VARIABLES, can_run, key_for
from plugin_bridge.app.settings.sources import SETUP, key_fix, label

if TYPE_CHECKING:
    from llm_service import Provider
    from llm_service.providers.base import ProviderOptions

Purpose = Literal["chat", "fast", "deep"]
PURPOSES: Final[tuple[Purpose, ...]] = ("chat", "fast", "deep")


@dataclass(frozen=True, slots=True)
class Route:
    """Where the model calls of one purpose go; ``name`` None for a provider that has none
    (the scripted one of tests and demos)."""

    name: ProviderName | None
    provider: Provider
    model: str


class ProviderSetup:
    """The chat route and the routes of the other purposes, over one provider per name."""

    def __init__(
        self,
        chat: Route | None,
        *,
        settings: BridgeSettings | None = None,
        missing: str = NO_PROVIDER,
    ) -> None:
        self.chat = chat
        """None: no provider (search and notes work; chat answers -32011 with ``missing``)."""
        self.missing = missing
        self.settings = settings if settings is not None else BridgeSettings.model_construct()
        self._providers: dict[ProviderName, Provider] = {}
        if chat is not None and chat.name is not None:
            self._providers[chat.name] = chat.provider

    @property
    def name(self) -> ProviderName | None:
        return None if self.chat is None else self.chat.name

    @property
    def model(self) -> str | None:
        return None if self.chat is None else self.chat.model

    def describe(self) -> str:
        """One line for the start-up banner: the chat provider and model, and the fast and
        deep models where configured; without a provider, what to set."""
        if self.chat is None:
            return f"no provider (search and notes work; chat needs one). {self.missing}"
        others = [f"{p} model {self._spec(p)}" for p in PURPOSES if self.configured(p)]
        return ", ".join([f"provider {self.chat.name}, model {self.chat.model}", *others])

    def configured(self, purpose: Purpose) -> bool:
        """Whether ``purpose`` has a model of its own (else it runs on the chat model)."""
        return purpose != "chat" and bool(self._spec(purpose))

    def route(self, purpose: Purpose) -> Route | None:
        """The provider and model of ``purpose``: its own model when configured (a bare name
        on the chat provider), else the chat route. Raises SettingsError (one sentence) when
        its provider cannot be built."""
        return self.route_spec(self._spec(purpose))

    def route_spec(self, spec: str | None) -> Route | None:
        """The route of a model spec (a bare name on the chat provider, or ``provider:model``);
        the chat route for none. Raises SettingsError when its provider cannot be built."""
        if self.chat is None or not spec:
            return self.chat
        parsed = parse_model_spec(spec)
        model = parsed.model or self.chat.model
        if parsed.provider is None or parsed.provider == self.chat.name:
            return Route(self.chat.name, self.chat.provider, model)
        return Route(parsed.provider, self.provider(parsed.provider), model)

    def provider(self, name: ProviderName) -> Provider:
        """Provider ``name`` as the settings configure it (built on first use, then shared);
        SettingsError when it lacks a key."""
        provider = self._providers.get(name)
        if provider is None:
            provider = build_named(self.settings, name, chat=self.name)
            if provider is None:
                raise SettingsError(_needs_key(name))
            self._providers[name] = provider
        return provider

    def check(self) -> None:
        """SettingsError when a purpose's model names a provider that cannot be built."""
        for purpose in PURPOSES:
            self.route(purpose)

    async def warm_up(self) -> None:
        for provider in self._built():
            await provider.warm_up()

    async def aclose(self) -> None:
        """Close every provider of this setup."""
        for provider in self._built():
            await provider.aclose()

    def _built(self) -> list[Provider]:
        chat = [self.chat.provider] if self.chat is not None else []
        return list({id(p): p for p in [*chat, *self._providers.values()]}.values())

    def _spec(self, purpose: Purpose) -> str | None:
        if purpose == "fast":
            return self.settings.fast_model
        if purpose == "deep":
            return self.settings.deep_model
        return None


def build_named(
    settings: BridgeSettings,
    name: ProviderName,
    *,
    chat: ProviderName | None,
    model: str | None = None,
) -> Provider | None:
    """Provider ``name`` with its key, base URL and the settings' timeout (nothing is imported
    or contacted yet); None when it needs a key the settings lack."""
    base_url = base_url_for(settings, name, chat)
    if not can_run(settings, name, base_url):
        return None
    key = key_for(settings, name, base_url)
    options: ProviderOptions = {"base_url": base_url}
    if key is not None:
        options["key_hint"] = key_fix(settings, name)
    if settings.timeout is not None:
        options["timeout"] = settings.timeout
    provider = make_provider(name, api_key=key, **options)
    provider.model = model
    return provider


def build_provider(settings: BridgeSettings, choice: ProviderChoice) -> Provider | None:
    """The chat provider ``choice`` names, or None."""
    if choice.name is None:
        return None
    return build_named(settings, choice.name, chat=choice.name, model=choice.model)


async def key_problem(settings: BridgeSettings, choice: ProviderChoice) -> str | None:
    """Why the hosted provider's key cannot work, asked at start with one cheap call (the key
    is refused); None when it works, when there is no key to check, or when the provider
    cannot be reached now: the server then starts all the same (search works offline) and the
    first message says what is wrong."""
    name = choice.name
    if name is None or key_for(settings, name, base_url_for(settings, name, name)) is None:
        return None
    checker = build_provider(settings, choice)
    if checker is None:
        return None
    checker.max_attempts = 1  # a refused key is not retried; an unreachable API not waited for
    try:
        await checker.warm_up()  # the SDK's import is not the API's answer time
        async with asyncio.timeout(PROBE_SECONDS * 2):
            await checker.validate_key()
    except LLMError as exc:
        if exc.code == "auth_error":
            return (
                f"{label(name)} refused the API key ({exc.status or exc.code}): "
                f"{key_fix(settings, name)}."
            )
        logging.getLogger(__name__).warning("could not check the %s key now: %s", name, exc)
    except TimeoutError:
        logging.getLogger(__name__).warning("could not check the %s key now (no answer)", name)
    finally:
        await checker.aclose()
    return None


async def build_setup(settings: BridgeSettings, *, check_key: bool = False) -> ProviderSetup:
    """The one way to the providers of ``settings``: the chat provider (checked with a cheap
    call when ``check_key``; an OpenAI-compatible server asked which model it has loaded) and
    the routes of the other purposes, checked. Raises SettingsError (one sentence), or the
    provider's LLMError when the check fails."""
    choice = choose_provider(settings)
    provider = build_provider(settings, choice)
    try:
        if provider is not None and check_key:
            await provider.validate_key()
        choice = await with_served_model(choice, provider)
        chat = None
        if provider is not None and choice.name is not None and choice.model is not None:
            chat = Route(choice.name, provider, choice.model)
        setup = ProviderSetup(chat, settings=settings, missing=choice.missing)
        setup.check()
    except BaseException:
        if provider is not None:
            await provider.aclose()
        raise
    return setup


async def with_served_model(choice: ProviderChoice, provider: Provider | None) -> ProviderChoice:
    """``choice`` with a model: an OpenAI-compatible server (LM Studio, vLLM, llama.cpp) given
    none answers with the model it has loaded, never an OpenAI model name. Raises
    :class:`SettingsError` when the server cannot say or has no chat model loaded."""
    if choice.model is not None or provider is None:
        return choice

    assert isinstance(provider, OpenAIProvider)  # the one provider whose choice has no model
    try:
        model = await provider.served_model()
    except LLMError as exc:
        raise SettingsError(f"Cannot ask {provider.base_url} for its models: {exc}") from None
    if model is None:
        raise SettingsError(
            f"The server at {provider.base_url} has no chat model loaded: load one (in LM "
            "Studio: `lms load MODEL`), or pass --model."
        )
    provider.model = model
    return ProviderChoice(choice.name, model, choice.missing)


def _needs_key(name: ProviderName) -> str:
    variable = KEY_VARIABLES.get(name, "its key")
    return (
        f"A model on {name} is configured but {name} has no key: export {variable}, or "
        f"{SETUP} to give one (or {name}'s base URL for a local server), or choose a model on "
        "another provider."
    )
