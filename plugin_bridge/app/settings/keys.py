"""Which API key may go to which server: every stored key is bound to one origin.

The rule (docs/configuration.md, "Where keys go"): a key is bound to the origin (scheme, host,
port) it was given for: its provider's default host, or the base URL set in the same change as
the key. A URL of any other origin never receives it: requests there go without a key (LM
Studio, vLLM and Ollama need none), and a change of the provider's base URL to another origin
drops its stored key unless the same change sends a key again.

All of it is pure: :func:`key_for` says which key may go to a URL, :func:`can_run` whether a
provider can run at a URL with it (the one answer, from its profile's key rule), :func:`rebound`
what one settings change does to the bindings. The bound origins are settings too
(``<provider>_api_key_host``), saved with the keys. Base URLs: ``base_url`` (the chat
provider's), ``base_urls`` (one per provider) and ``embedder_base_url`` (the embedder's).
The settings are read through :class:`KeyedSettings`, the part of ``BridgeSettings`` these
rules need (this module sits below the settings class, which checks URLs with it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol
from urllib.parse import urlsplit

from llm_service.profiles import KEYED, PROFILES, ProviderName

if TYPE_CHECKING:
    from pydantic import SecretStr

DEFAULT_ORIGINS: Final[dict[ProviderName, str]] = {
    profile.name: profile.default_origin for profile in KEYED if profile.default_origin
}
"""Where each keyed provider's SDK goes when no base URL is set."""
KEY_FIELDS: Final[dict[ProviderName, str]] = {
    profile.name: f"{profile.name}_api_key" for profile in KEYED
}
"""The settings (and settings file) name of each keyed provider's key; ``BridgeSettings``
declares one field each (a test keeps them equal), read through ``key_of``."""
KEY_VARIABLES: Final[dict[ProviderName, str]] = {
    profile.name: profile.key_variable or "" for profile in KEYED
}
"""The SDKs' key variables, which the settings read too."""
HOST_FIELDS: Final[dict[ProviderName, str]] = {
    profile.name: f"{profile.name}_api_key_host" for profile in KEYED
}
"""The setting that records the origin of each provider's key (None: its default host)."""


class KeyedSettings(Protocol):
    """What the key rules, and the messages about keys (:mod:`.sources`), read of the
    settings: ``BridgeSettings`` has it."""

    @property
    def provider(self) -> ProviderName | None: ...

    @property
    def model(self) -> str | None: ...

    @property
    def base_url(self) -> str | None: ...

    @property
    def base_urls(self) -> Mapping[ProviderName, str]: ...

    def key_of(self, name: ProviderName) -> SecretStr | None: ...

    def key_host_of(self, name: ProviderName) -> str | None: ...


def check_url(value: str) -> str:
    """``value`` if it is an http(s) URL with a host, else ValueError saying what to give."""
    parts = urlsplit(value.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError("give an http:// or https:// URL, e.g. http://127.0.0.1:1234/v1")
    port = parts.netloc.rpartition("@")[2].rpartition("]")[2].partition(":")[2]
    if port and not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
        raise ValueError(
            f"the port '{port[:20]}' is not a number from 1 to 65535 in ASCII digits, "
            "e.g. http://127.0.0.1:1234/v1"
        )
    return value


def origin(url: str) -> str:
    """``scheme://host:port`` of an http(s) URL: lower case, the default port written out."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port or (443 if scheme == "https" else 80)
    return f"{scheme}://{f'[{host}]' if ':' in host else host}:{port}"


def may_send(provider: ProviderName, bound: str | None, url: str | None) -> bool:
    """Whether ``provider``'s key, bound to ``bound`` (None: the default host), may go to
    ``url`` (None: the default host)."""
    default = DEFAULT_ORIGINS[provider]
    return origin(url or default) == origin(bound or default)


def key_for(settings: KeyedSettings, provider: ProviderName, url: str | None) -> str | None:
    """The key of ``provider`` that may go to ``url``; None when there is none, or it is
    bound to another origin."""
    secret = settings.key_of(provider)
    key = secret.get_secret_value().strip() if secret is not None else ""
    if key and may_send(provider, settings.key_host_of(provider), url):
        return key
    return None


def can_run(settings: KeyedSettings, provider: ProviderName, url: str | None) -> bool:
    """Whether ``provider`` can run at ``url`` (None: its own API) with the key the settings
    hold for that address: the one answer, from its profile's rule (a local runtime needs no
    key; a keyed provider needs it at its own API, and at any URL when ``needs_key``)."""
    return not PROFILES[provider].lacks_key(key_for(settings, provider, url), url)


def rebound(
    current: KeyedSettings, changes: Mapping[str, Any], chat_provider: ProviderName | None
) -> dict[str, Any]:
    """What ``changes`` (settings field names) to the settings ``current`` do to the keys'
    bindings, as more changes; ``chat_provider`` is the chat provider after them.

    - A key sent is bound to its provider's base URL sent with it (``base_url`` for the chat
      provider, ``base_urls[provider]``, or ``embedder_base_url`` for a provider that embeds:
      openai), else to its provider's default host.
    - A provider's base URL sent (``base_url``, ``base_urls``) that is of another origin than
      its key drops that key, unless the same change sends one. An ``embedder_base_url`` of
      another origin only gets no key.
    """
    extra: dict[str, Any] = {}
    for provider, key_field in KEY_FIELDS.items():
        new_url = _new_url(provider, current, changes, chat_provider)
        url, drops = new_url if new_url is not None else (None, False)
        if key_field in changes:
            extra[HOST_FIELDS[provider]] = origin(url) if url and changes[key_field] else None
        elif drops and not may_send(provider, current.key_host_of(provider), url):
            extra[key_field] = None
            extra[HOST_FIELDS[provider]] = None
    return extra


def _new_url(
    provider: ProviderName,
    current: KeyedSettings,
    changes: Mapping[str, Any],
    chat_provider: ProviderName | None,
) -> tuple[str | None, bool] | None:
    """The base URL of ``provider`` that ``changes`` set, and whether setting it may drop the
    provider's key; None when they set none."""
    if provider == chat_provider and "base_url" in changes:
        return changes["base_url"], True
    if "base_urls" in changes:
        new = (changes["base_urls"] or {}).get(provider)
        if new != current.base_urls.get(provider):
            return new, True
    if PROFILES[provider].embeds and "embedder_base_url" in changes:
        return changes["embedder_base_url"], False
    return None
