"""Which provider and model a client's ``model`` id names, and which ids a client may use.

The rule (docs/http.md gives it to users):

- ``provider/model`` (LiteLLM's convention) and ``provider:model`` (the settings') name a
  provider, as :func:`llm_service.parse_model_spec` reads them: split only when the part before
  the first ``/`` or ``:`` is a provider name, so LM Studio's ``qwen/qwen3-4b`` stays whole (and
  an id the chat provider lists whole, LM Studio's ``openai/gpt-oss-20b``, stays whole too). A
  known provider that is not configured is a 400 naming those that are.
- The configured chat, fast and deep models go where the settings send them.
- A bare id with an unambiguous vendor prefix (``gpt-``, ``o1`` … ``o9``, ``chatgpt-``: OpenAI;
  ``claude-``: Anthropic) goes to that vendor when it is configured, unless the chat provider's
  own model list holds the id (Ollama's ``gpt-oss:20b``). Any other bare id goes to the chat
  provider.
- The model is then looked up in its provider's list as the provider reads ids
  (:func:`~plugin_bridge.app.model_ids.listed_id`: ``llama3.2`` is ``llama3.2:latest``,
  ``claude-sonnet-4-5`` its dated id) and sent as the list has it. Each list is fetched once and
  kept for :data:`~plugin_bridge.app.model_lists.LIST_SECONDS` (with the runtime's
  providers), and read again once before an id is given up on (a model loaded since). A
  server without a models endpoint accepts every id.
- Still missing: an id that names its provider (``provider/…``, or a bare vendor id on that
  vendor) is :class:`ModelNotFound` (404) before any chat request, naming the provider and the
  closest listed ids; any other id (a gateway's, LM Studio's) is sent once as it is, and the
  provider's own 404 is the client's 404 ``model_not_found``.
"""

from __future__ import annotations

import logging
import re
import time
from typing import TYPE_CHECKING, Final

from llm_service import LLMError
from llm_service.profiles import PROFILES, PROVIDER_NAMES, ProviderName, parse_model_spec
from plugin_bridge.app.model_ids import close_ids, listed_id
from plugin_bridge.app.settings.config import (
    BridgeSettings,
    SettingsError,
    base_url_for,
    default_model,
)
from plugin_bridge.app.settings.keys import can_run
from plugin_bridge.app.settings.providers import PURPOSES, Route
from plugin_bridge.wire.errors import ModelNotFound, RpcError, WireCode

if TYPE_CHECKING:
    from llm_service import Provider
    from plugin_bridge.app.runtime import Runtime

logger = logging.getLogger(__name__)

VENDOR_PREFIXES: Final[tuple[tuple[re.Pattern[str], ProviderName], ...]] = tuple(
    (re.compile(profile.own_models), name)
    for name, profile in PROFILES.items()
    if profile.own_models is not None
)
"""Each vendor's own model ids (its profile's ``own_models``)."""


def vendor_of(model: str) -> ProviderName | None:
    """The provider a bare model id's prefix names unambiguously, if any."""
    return next((name for pattern, name in VENDOR_PREFIXES if pattern.match(model)), None)


class ModelRoutes:
    """The routing rule of the module docstring over one runtime's providers, their model
    lists kept with them (:class:`~plugin_bridge.app.model_lists.ModelLists`): a settings
    change is a new runtime, and so new routes."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._lists = runtime.lists

    def clear(self) -> None:
        """Forget every fetched list (the next request fetches again)."""
        self._lists.clear()

    async def resolve(self, spec: str) -> Route:
        """The provider and model of a client's id, the model as its provider lists it;
        ModelNotFound when an id that names its provider is not listed, RpcError (400) when it
        names a provider that is not configured."""
        configured = self._configured_route(spec)
        if configured is not None:
            return configured
        asked = time.monotonic()
        chat = self.runtime.route("chat")
        parsed = parse_model_spec(spec)
        whole = None
        if parsed.provider is not None:
            whole = await self._chat_lists(spec, chat, fetch=parsed.provider == chat.name)
        if whole is not None:
            route, named = whole, False
        elif parsed.provider is not None:
            name = parsed.provider
            provider = chat.provider if name == chat.name else self._other(name)
            route, named = Route(name, provider, parsed.model or default_model(name)), True
        else:
            route = await self._bare(spec, chat)
            named = vendor_of(spec) == route.name
        if route.model in self._configured_models(route.name):
            return route
        return await self._as_listed(route, spec, named=named, asked=asked)

    def configured(self) -> list[ProviderName]:
        """The providers this server can route to, the chat provider first."""
        chat = self.runtime.providers.name
        names = [chat] if chat is not None else []
        settings = self.runtime.config
        return names + [n for n in PROVIDER_NAMES if n != chat and routable(settings, n)]

    async def usable(self) -> list[str]:
        """The ids a request can use besides ``vault``: the configured chat, fast and deep
        models, then the chat provider's listed models (bare) and every other configured
        provider's (``provider/model``). A list that cannot be fetched is left out."""
        runtime = self.runtime
        if runtime.providers.chat is None:
            return []
        settings = runtime.config
        ids = [m for m in (runtime.providers.model, settings.fast_model, settings.deep_model) if m]
        chat = runtime.route("chat")
        for name in self.configured():
            try:
                provider = chat.provider if name == chat.name else self._other(name)
                listed = await self._lists.listed(name, provider)
            except (LLMError, RpcError) as exc:
                logger.warning("could not list the models of %s: %s", name, exc)
                continue
            prefix = "" if name == chat.name else f"{name}/"
            ids += [prefix + model for model in sorted(listed or ())]
        return list(dict.fromkeys(ids))

    # -- internals ----------------------------------------------------------------------

    def _configured_route(self, spec: str) -> Route | None:
        """The route of the purpose whose configured model ``spec`` is (as written in the
        settings, or as its provider/model)."""
        runtime = self.runtime
        providers = runtime.providers
        if providers.chat is None:
            runtime.route("chat")  # -32011 saying what to configure
        settings = runtime.config
        written = {"chat": providers.model, "fast": settings.fast_model}
        written["deep"] = settings.deep_model
        for purpose in PURPOSES:
            if purpose != "chat" and not providers.configured(purpose):
                continue
            route = runtime.route(purpose)
            names = (written[purpose], f"{route.name}/{route.model}", f"{route.name}:{route.model}")
            if spec in names:
                return route
        return None

    def _configured_models(self, name: ProviderName | None) -> set[str]:
        """The configured models that run on provider ``name``."""
        runtime = self.runtime
        purposes = [p for p in PURPOSES if p == "chat" or runtime.providers.configured(p)]
        return {r.model for r in (runtime.route(p) for p in purposes) if r.name == name}

    async def _chat_lists(self, spec: str, chat: Route, *, fetch: bool) -> Route | None:
        """The chat provider's route for ``spec`` whole, when its list holds it whole (LM
        Studio's ``openai/gpt-oss-20b``, not OpenAI's ``gpt-oss-20b``; a gateway's
        ``anthropic/…``). ``fetch``: the list may be read for it (the id names the chat
        provider, whose list the request reads anyway); else only a kept list is looked at, so
        that a chat provider that is down costs another provider's requests nothing."""
        if not fetch and not self._lists.kept(chat.name):
            return None
        try:
            listed = await self._lists.listed(chat.name, chat.provider)
        except LLMError:
            return None  # the provider named in the id may still answer
        found = None if listed is None else listed_id(spec, listed)
        return None if found is None else Route(chat.name, chat.provider, found)

    async def _bare(self, model: str, chat: Route) -> Route:
        vendor = vendor_of(model)
        if vendor is None or vendor == chat.name or vendor not in self.configured():
            return Route(chat.name, chat.provider, model)
        try:
            listed = await self._lists.listed(chat.name, chat.provider)
        except LLMError as exc:  # the chat provider is down: the vendor may still answer
            logger.warning("could not list the models of %s: %s", chat.name, exc)
            listed = None
        found = None if listed is None else listed_id(model, listed)
        if found is not None:
            return Route(chat.name, chat.provider, found)
        return Route(vendor, self._other(vendor), model)

    async def _as_listed(self, route: Route, spec: str, *, named: bool, asked: float) -> Route:
        """``route`` with its model as its provider lists it, the list read again once when
        it lacks the model (unless it was read for this request, ``asked`` or later); an id
        still missing is refused when it names its provider (``named``), else sent as it is."""
        lists = self._lists
        listed = await lists.listed(route.name, route.provider)
        found = route.model if listed is None else listed_id(route.model, listed)
        if found is None and not named and lists.sent_unlisted(route.name, route.model):
            return route
        if found is None:
            listed = await lists.listed(route.name, route.provider, read_after=asked)
            found = route.model if listed is None else listed_id(route.model, listed)
        if found is not None:
            return Route(route.name, route.provider, found)
        if not named:
            lists.send_unlisted(route.name, route.model)
            return route
        label = PROFILES[route.name].label if route.name else "the configured provider"
        close = close_ids(route.model, listed or ())
        closest = f" (the closest it lists: {', '.join(close)})" if close else ""
        raise ModelNotFound(
            f"The model '{spec}' does not exist on {label}{closest}: GET /v1/models lists the "
            "models this server can use."
        )

    def _other(self, name: ProviderName) -> Provider:
        """Provider ``name`` besides the chat provider, or a 400 naming the configured ones."""
        runtime = self.runtime
        if name == runtime.providers.name:
            return runtime.route("chat").provider
        if not routable(runtime.config, name):
            configured = ", ".join(self.configured()) or "none"
            raise RpcError(
                WireCode.INVALID_PARAMS,
                f"Provider {name} is not configured on this server (configured: {configured}): "
                "set its API key in the settings, or use a configured one.",
            )
        try:
            return runtime.providers.provider(name)
        except SettingsError as exc:
            raise RpcError(WireCode.INVALID_PARAMS, str(exc)) from exc


def routable(settings: BridgeSettings, name: ProviderName) -> bool:
    """Whether the settings let this server call ``name`` besides the chat provider: it can run
    at its address (:func:`~plugin_bridge.app.settings.keys.can_run`, the profile's key rule),
    and a local runtime's address was given (its default one is not tried unasked)."""
    profile = PROFILES[name]
    given = name in settings.base_urls or (
        profile.host_variable is not None and settings.ollama_host is not None
    )
    if profile.local and not given:
        return False
    return can_run(settings, name, base_url_for(settings, name, None))
