"""One place that builds the providers: ``make_provider("anthropic:claude-…")``.

The providers' names and facts are :mod:`llm_service.profiles`; this module turns a
``provider:model`` spec into the provider's class and instance. Nothing here imports an SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Unpack

from llm_service.profiles import ProviderName, parse_model_spec, unknown_provider

if TYPE_CHECKING:
    from llm_service.providers.base import Provider, ProviderOptions


def provider_class(name: ProviderName) -> type[Provider]:
    """The class of provider ``name``: the one :class:`~llm_service.providers.base.Provider`
    subclass in ``llm_service/providers/NAME.py`` (its module is imported, its SDK is not)."""
    from llm_service.providers.base import Provider

    module = importlib.import_module(f"llm_service.providers.{name}")
    found = [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Provider)
        and value.__module__ == module.__name__
    ]
    if len(found) != 1:
        raise TypeError(f"llm_service.providers.{name} must define one Provider, not {found}")
    return found[0]


def make_provider(
    spec: str, *, api_key: str | None = None, **options: Unpack[ProviderOptions]
) -> Provider:
    """The provider ``spec`` names, with the spec's model as its default model:
    ``make_provider("anthropic:claude-haiku-5-5")``, ``make_provider("ollama:llama3.1:8b",
    base_url=...)``, or ``make_provider("openai")`` (no default model: each call names one).

    ``api_key`` defaults to the SDK's environment variable; Ollama takes none (ValueError). A
    spec that names no provider raises :class:`~llm_service.errors.UnknownProviderError`."""
    parsed = parse_model_spec(spec)
    if parsed.provider is None:
        raise unknown_provider(spec)
    return provider_class(parsed.provider).build(parsed.model or None, api_key, **options)
