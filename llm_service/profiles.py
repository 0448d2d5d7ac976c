"""The providers by name and what the bridge and the plugin know of each: one row a provider.

:data:`ProviderName` is the list of providers; the bridge's CLI choices, settings validation and
wire enum (and, through the generated schema, the plugin's lists) are derived from it. A model
provider's facts (label, key variable, default origin, key rule, local or hosted, default base
URL, recommended models, whether compatible servers speak its API, whether it embeds, a local
runtime's address variable and start command) are one :class:`ProviderProfile` row of
:data:`PROFILES`, which every table of the bridge and the plugin reads, and the bridge branches
on these facts, never on a provider's name. A model spec is ``provider:model`` or
``provider/model``, split only when the part before the first ``:`` or ``/`` is a provider
name: Ollama tags (``ollama:llama3.1:8b``) keep their ``:`` and LM Studio ids (``qwen/qwen3-4b``)
stay whole. Nothing here imports a provider or an SDK, so the
providers read their rows from here and :mod:`llm_service.factory` builds them.
"""

from __future__ import annotations

from typing import Final, Literal, NamedTuple, get_args

from llm_service.errors import UnknownProviderError

ProviderName = Literal["anthropic", "openai", "ollama"]
"""Every provider ``llm_service`` builds, by the name specs and settings use."""
PROVIDER_NAMES: Final[tuple[ProviderName, ...]] = get_args(ProviderName)


class ProviderProfile(NamedTuple):
    """What the bridge and the plugin know of one provider, besides its code."""

    name: ProviderName
    label: str
    """Its name as users read it (in messages, the CLI and the plugin)."""
    key_variable: str | None
    """The SDK's API key variable, which the settings read too; None: it takes no key."""
    base_url_variable: str | None
    """The SDK's own base URL variable, read at launch beside the key variable."""
    default_origin: str | None
    """The origin the SDK goes to when no base URL is set (a key's default binding)."""
    needs_key: bool
    """Whether it needs its key at any base URL (a gateway passes it on); a keyed provider
    that does not needs one only at its default origin (local servers ignore it)."""
    local: bool
    """Whether it runs on the user's machine (else a hosted API)."""
    default_base_url: str | None
    """The address used when none is set; None: the SDK's own (``default_origin``)."""
    recommended_models: tuple[str, ...]
    """Best first: the bridge's default model is the first."""
    own_models: str | None = None
    """A regular expression that only this vendor's model ids match (``^claude-``): a bare
    model id that matches goes to this provider when it is configured; None: no such prefix."""
    compatible_servers: bool = False
    """Whether other servers speak its API at a base URL (LM Studio, vLLM, llama.cpp): setup
    offers one, and there a chat model left unset is the one the server has loaded."""
    embeds: bool = False
    """Whether it serves embeddings too: an embedder of its name (``openai:MODEL``) goes where
    it goes, with its key (a key sent with ``embedder_base_url`` is bound there)."""
    host_variable: str | None = None
    """The runtime's own address variable (``OLLAMA_HOST``: a URL or a bare ``host:port``),
    its address when no base URL is set."""
    start_command: str | None = None
    """The command that starts this local runtime, named when nothing answers at its address."""

    def lacks_key(self, key: str | None, base_url: str | None) -> bool:
        """Whether it cannot run with ``key`` (None: none) at ``base_url`` (None: its own)."""
        if self.key_variable is None or key is not None:
            return False
        return self.needs_key or base_url is None


PROFILES: Final[dict[ProviderName, ProviderProfile]] = {
    profile.name: profile
    for profile in (
        ProviderProfile(
            name="anthropic",
            label="Anthropic",
            key_variable="ANTHROPIC_API_KEY",
            base_url_variable="ANTHROPIC_BASE_URL",
            default_origin="https://api.anthropic.com",
            needs_key=True,
            local=False,
            default_base_url=None,
            recommended_models=("claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5"),
            own_models=r"^claude-",
        ),
        ProviderProfile(
            name="openai",
            label="OpenAI",
            key_variable="OPENAI_API_KEY",
            base_url_variable="OPENAI_BASE_URL",
            default_origin="https://api.openai.com",
            needs_key=False,
            local=False,
            default_base_url=None,
            recommended_models=("gpt-6.1-sol", "gpt-6.1-terra", "gpt-6-luna"),
            own_models=r"^(gpt-|chatgpt-|o[1-9](-|$))",
            compatible_servers=True,
            embeds=True,
        ),
        ProviderProfile(
            name="ollama",
            label="Ollama",
            key_variable=None,
            base_url_variable=None,
            default_origin=None,
            needs_key=False,
            local=True,
            default_base_url="http://127.0.0.1:11434",
            recommended_models=("qwen3:8b", "llama3.1:8b", "mistral-nemo"),
            embeds=True,
            host_variable="OLLAMA_HOST",
            start_command="ollama serve",
        ),
    )
}
"""One row per provider, in :data:`PROVIDER_NAMES` order (a test keeps the two equal)."""
KEYED: Final[tuple[ProviderProfile, ...]] = tuple(
    profile for profile in PROFILES.values() if profile.key_variable is not None
)
"""The providers that take an API key."""


class ModelSpec(NamedTuple):
    """A model, and the provider that serves it when the spec named one (a NamedTuple, not a
    dataclass: the command line imports this module before it listens)."""

    provider: ProviderName | None
    model: str

    def __str__(self) -> str:
        if self.provider is None:
            return self.model
        return f"{self.provider}:{self.model}" if self.model else self.provider


def provider_name(name: str) -> ProviderName | None:
    """``name`` as a provider name (any case, spaces around ignored), or None."""
    lowered = name.strip().lower()
    return next((known for known in PROVIDER_NAMES if known == lowered), None)


def parse_model_spec(spec: str) -> ModelSpec:
    """``"anthropic:claude-…"`` or ``"openai/gpt-…"`` as provider and model. A spec whose part
    before the first ``:`` or ``/`` is not a provider name is a model of its own, provider None
    (``"qwen/qwen3-4b"``, ``"llama3.1:8b"``); a provider name alone has the model ``""``."""
    spec = spec.strip()
    name = provider_name(spec)
    if name is not None:
        return ModelSpec(name, "")
    cuts = [i for i in (spec.find(":"), spec.find("/")) if i >= 0]
    if cuts:
        cut = min(cuts)
        name = provider_name(spec[:cut])
        if name is not None:
            return ModelSpec(name, spec[cut + 1 :].strip())
    return ModelSpec(None, spec)


def unknown_provider(given: str) -> UnknownProviderError:
    """The error for ``given``, which names no provider (one sentence with the accepted forms)."""
    forms = ", ".join(f"{name}:MODEL" for name in PROVIDER_NAMES)
    return UnknownProviderError(f"{given.strip()!r} names no known provider: use {forms}.")
