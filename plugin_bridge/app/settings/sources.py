"""Where a setting came from, so that a message names what the user touched and its fix there.

Three places give settings: a flag of the command line, an environment variable
(``ANTHROPIC_API_KEY``, ``AI_BRIDGE_MODEL``, …), and the settings file, which ``setup``, the
plugin's settings tab and its setup card write. :func:`source_of` tells which one a value in
effect came from (the file when it holds that value, else the environment variable that does,
else a flag); :func:`key_fix` and :func:`no_key` say what to do in that place.

Keys given at launch are the user's choice for that run (:func:`launch_bindings`): a key from
the environment goes to the base URL given beside it, by ``--base-url`` or by the SDK's own
variable (``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL``), and never to a base URL of the file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final, Literal

from llm_service.profiles import KEYED, PROFILES, PROVIDER_NAMES, ProviderName, parse_model_spec
from plugin_bridge.app.settings.keys import (
    DEFAULT_ORIGINS,
    HOST_FIELDS,
    KEY_FIELDS,
    KEY_VARIABLES,
    KeyedSettings,
    origin,
)

SettingSource = Literal["flag", "env", "file"]
SETUP: Final = "run `obsidian-ai-bridge setup` or open the setup card"
"""The fix of a setting that the settings file holds."""
SDK_URL_VARIABLES: Final = {
    name: profile.base_url_variable
    for name, profile in PROFILES.items()
    if profile.base_url_variable is not None
}
"""The SDKs' own base URL variables, read at launch beside their key variables."""
ALIASES: Final[dict[str, tuple[str, ...]]] = {
    **{KEY_FIELDS[name]: (variable,) for name, variable in KEY_VARIABLES.items()},
    "ollama_host": ("OLLAMA_HOST",),
}
"""The environment variables a setting reads besides ``AI_BRIDGE_<NAME>``."""


def label(name: ProviderName) -> str:
    """The provider's name as users read it (its profile's label)."""
    return PROFILES[name].label


def env_variable(field: str, value: object) -> str | None:
    """The environment variable that gives ``field`` this ``value``, or None."""
    for variable in (*ALIASES.get(field, ()), f"AI_BRIDGE_{field.upper()}"):
        given = os.environ.get(variable)
        if given is not None and given.strip() and given.strip() == _text(value):
            return variable
    return None


def source_of(field: str, value: object, file: Mapping[str, Any]) -> SettingSource | None:
    """Where ``value``, the value of ``field`` in effect, came from (``file``: the settings
    file's values); None when it has none."""
    if value is None:
        return None
    if field in file and _text(file[field]) == _text(value):
        return "file"
    if env_variable(field, value) is not None:
        return "env"
    return "flag"


def key_fix(settings: KeyedSettings, name: ProviderName) -> str:
    """What to do about ``name``'s key in the place it came from (a clause: no capital, no
    full stop)."""
    variable = env_variable(KEY_FIELDS[name], settings.key_of(name))
    if variable is not None:
        return f"the key comes from {variable}: export a valid one and restart the server"
    return f"the key was saved by setup or the settings tab: {SETUP} to give a new one"


def no_key(
    settings: KeyedSettings, name: ProviderName, url: str | None, file: Mapping[str, Any]
) -> str:
    """Why ``name`` has no key for ``url``, naming where the provider, the key and the base URL
    came from (``file``: the settings file's values), and what to do there."""
    variable = KEY_VARIABLES[name]
    field = KEY_FIELDS[name]
    if not _text(settings.key_of(name) or ""):
        chosen = (
            _where("provider", settings.provider, file)
            if settings.provider
            else _where("model", settings.model, file)
        )
        local = "" if PROFILES[name].needs_key else " (or a base URL for a local server)"
        return (
            f"No model provider is configured: {label(name)} (chosen by {chosen}) needs an API "
            f"key{local}; export {variable} and restart, or {SETUP}."
        )
    url = url or DEFAULT_ORIGINS[name]
    bound = settings.key_host_of(name) or DEFAULT_ORIGINS[name]
    return (
        f"No model provider is configured: the {label(name)} key from "
        f"{_where(field, settings.key_of(name), file)} is for {bound}, not for {url} from "
        f"{_url_source(settings, name, url, file)}; export {variable} and start with "
        f"--base-url {url} to send it there for this run, or {SETUP} to save a key for it."
    )


def _where(field: str, value: object, file: Mapping[str, Any]) -> str:
    """Where ``field``'s value ``value`` came from, as a message names it."""
    source = source_of(field, value, file)
    if source == "file":
        return "the settings file"
    if source == "env":
        return str(env_variable(field, value))
    if field in KEY_FIELDS.values():  # no flag gives a key: set over the wire, say
        return "the settings"
    return f"--{field.replace('_', '-')}" + (f" {value}" if field in ("provider", "model") else "")


def _url_source(
    settings: KeyedSettings, name: ProviderName, url: str, file: Mapping[str, Any]
) -> str:
    """Where provider ``name``'s base URL ``url`` came from."""
    if settings.base_url == url:
        return _where("base_url", url, file)
    variable = SDK_URL_VARIABLES.get(name)
    if variable is not None and os.environ.get(variable, "").strip() == url:
        return variable
    if (file.get("base_urls") or {}).get(name) == url:
        return "the settings file"
    return "the settings"


def launch_bindings(settings: KeyedSettings, flags: Mapping[str, object]) -> dict[str, Any]:
    """What the keys given at launch do, as settings: a key from the environment is bound to
    its provider's base URL given at launch (``--base-url`` for the chat provider, else the
    SDK's variable, which also sets that address), else to its default host, never to a base
    URL from the settings file. Keys from the file keep their bindings."""
    extra: dict[str, Any] = {}
    base_urls = dict(settings.base_urls)
    chat = named_provider(settings)
    for name in PROVIDER_NAMES:
        variable = SDK_URL_VARIABLES.get(name)
        sdk_url = os.environ.get(variable, "").strip() if variable else ""
        flag_url = flags.get("base_url") if name == chat else None
        if sdk_url and not flag_url and name not in _given(flags, "base_urls"):
            base_urls[name] = sdk_url
            if name == chat and settings.base_url is not None:
                extra["base_url"] = sdk_url
        field = KEY_FIELDS.get(name)
        if field is None or env_variable(field, settings.key_of(name)) is None:
            continue
        host = HOST_FIELDS[name]
        if env_variable(host, settings.key_host_of(name)) is not None:
            continue  # AI_BRIDGE_<PROVIDER>_API_KEY_HOST: bound where the user said
        url = flag_url or sdk_url
        extra[host] = origin(str(url)) if url else None
    if base_urls != settings.base_urls:
        extra["base_urls"] = base_urls
    return extra


def named_provider(settings: KeyedSettings) -> ProviderName | None:
    """The chat provider the settings name, keys aside: ``provider``, else the chat model's
    ``PROVIDER:``, else the first keyed provider with a key."""
    if settings.provider is not None:
        return settings.provider
    spec = parse_model_spec(settings.model) if settings.model else None
    if spec is not None and spec.provider is not None:
        return spec.provider
    for profile in KEYED:
        secret = settings.key_of(profile.name)
        if secret is not None and secret.get_secret_value().strip():
            return profile.name
    return None


def _given(flags: Mapping[str, object], field: str) -> Mapping[str, object]:
    value = flags.get(field)
    return value if isinstance(value, Mapping) else {}


def _text(value: object) -> str:
    secret = getattr(value, "get_secret_value", None)
    return str(secret() if secret is not None else value).strip()
