"""Settings changed over the wire (``settings/update``) or in the settings file: validated,
then applied as one transaction by a :class:`SettingsApplier` (the composition root).
:func:`stage` builds, from the runtime in effect, what is new (the next
:class:`~plugin_bridge.app.runtime.Runtime`, with new providers when they changed, and the
embedder) and :class:`Staged` closes it again when a later step fails."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from pydantic import BaseModel, SecretStr, ValidationError
from pydantic.alias_generators import to_camel

from llm_service import lazy
from llm_service.errors import LLMError
from plugin_bridge.app.runtime import Runtime
from plugin_bridge.app.settings.config import (
    BridgeSettings,
    McpSettings,
    SettingsError,
    build_embedder,
    choose_provider,
    config_file,
    embedder_problem,
    load_settings,
    read_config,
    write_settings_file,
)
from plugin_bridge.app.settings.keys import DEFAULT_ORIGINS, HOST_FIELDS, KEY_FIELDS, rebound
from plugin_bridge.app.settings.providers import build_setup
from plugin_bridge.app.settings.sources import label, named_provider
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.wire.errors import RpcError, WireCode

if TYPE_CHECKING:
    import watchfiles

    from llm_service.embedders import Embedder
    from plugin_bridge.app.settings.providers import ProviderSetup
    from plugin_bridge.vault.notes.store import NoteStore
else:
    watchfiles = lazy.module("watchfiles")

logger = logging.getLogger(__name__)

KEYS: Final = tuple(KEY_FIELDS.values())
"""Write-only settings: set, never read back unmasked."""
CHECKED: Final = frozenset({"provider", "base_url", "base_urls", *KEYS})
"""Changes that make the server check the provider with a cheap call before keeping them."""
REBUILT: Final = CHECKED | {
    "model",
    "fast_model",
    "deep_model",
    "timeout",
    "ollama_host",
    *HOST_FIELDS.values(),
}
"""Changes that need a new :class:`ProviderSetup` (other changes keep the one in use)."""
WAKE_MS: Final = 500
"""How often the settings file's watch wakes to see whether it was stopped."""
EMBEDDER_FIELDS: Final = frozenset({"embedder", "embedder_base_url"})
"""Changes that switch the embedder (the old vectors serve until the new ones are ready)."""


class SettingsApplier(Protocol):
    """Who puts settings in effect: the runtime in effect, and the transaction that stages
    the next one and swaps it in."""

    @property
    def runtime(self) -> Runtime:
        """The runtime in effect."""
        ...

    async def apply(self, settings: BridgeSettings, *, save: Iterable[str] | None = None) -> None:
        """Put ``settings`` in effect as one transaction, writing ``save`` (field names;
        None: every changed one) to the settings file; SettingsError or LLMError changing
        nothing."""
        ...


async def update_settings(
    app: SettingsApplier, notes: NoteStore, changes: dict[str, Any]
) -> BridgeSettings:
    """Apply ``changes`` (settings field names; None sets one back to its default) or raise,
    changing nothing: -32602 for an invalid value (a path setting checked against ``notes``'
    rules) or a provider that cannot work, -32010 when the provider refuses a new key."""
    current = app.runtime.config
    try:
        extra = rebound(current, changes, named_provider(_validated(current, changes)))
        changes = {**changes, **extra}
        updated = _validated(current, changes)
    except SettingsError as exc:
        raise RpcError(WireCode.INVALID_PARAMS, str(exc)) from exc
    await asyncio.to_thread(_check_locations, notes, changes)
    try:
        await app.apply(updated, save=changes.keys())
    except SettingsError as exc:
        message = _dropped_key(current, extra, updated) or str(exc)
        raise RpcError(WireCode.INVALID_PARAMS, message) from exc
    return updated


def _dropped_key(
    current: BridgeSettings, extra: dict[str, Any], updated: BridgeSettings
) -> str | None:
    """The message for a change of base URL that dropped the chat provider's key, which left
    no provider: only over the wire does the key have to come again with the URL."""
    name = named_provider(updated)
    if name is None or KEY_FIELDS.get(name) not in extra:
        return None
    if choose_provider(updated).name is not None:
        return None
    bound = current.key_host_of(name) or DEFAULT_ORIGINS[name]
    return (
        f"The {label(name)} key was given for {bound}: send it again together with that base "
        "URL (the key never goes to an address it was not given for)."
    )


@dataclass(slots=True)
class Staged:
    """What :func:`stage` built for new settings, not in use yet."""

    runtime: Runtime
    """The next runtime: new providers when a provider, model, address or key changed; else
    the ones in use (with their model lists)."""
    changed: frozenset[str]
    new_providers: bool
    """Whether ``runtime.providers`` were built for it (and are closed if it is discarded)."""
    embedder: Embedder | None
    """The new embedder when ``embedder_changed`` (None: semantic search stops)."""
    embedder_changed: bool

    async def discard(self) -> None:
        """Close what was built (nothing the runtime in effect holds)."""
        try:
            if self.new_providers:
                await self.runtime.providers.aclose()
        finally:
            if self.embedder is not None:
                await self.embedder.aclose()


async def stage(current: Runtime, settings: BridgeSettings) -> Staged:
    """Build what ``settings`` change against the runtime in effect (a provider checked with
    a cheap call when the provider, an address or a key changed), without using any of it;
    SettingsError (one sentence) or the provider's LLMError when it cannot work, with nothing
    left open."""
    in_effect = current.config
    fields = BridgeSettings.model_fields
    changed = frozenset(f for f in fields if getattr(in_effect, f) != getattr(settings, f))
    if changed & REBUILT:
        runtime = Runtime(settings, await _providers_for(settings, changed))
    else:
        runtime = replace(current, settings=settings)
    embedder_changed = bool(changed & EMBEDDER_FIELDS)
    staged = Staged(runtime, changed, bool(changed & REBUILT), None, embedder_changed)
    try:
        if staged.embedder_changed:
            staged.embedder = build_embedder(settings)
            problem = await asyncio.to_thread(embedder_problem, settings, staged.embedder)
            if problem is not None:
                raise SettingsError(_unrevealing(settings, problem))
    except BaseException:
        await staged.discard()
        raise
    return staged


def save_fields(settings: BridgeSettings, fields: Iterable[str]) -> None:
    """Write ``fields`` of ``settings`` to the settings file (durably); SettingsError when it
    cannot be written."""
    try:
        write_settings_file({name: _plain(getattr(settings, name)) for name in fields})
    except (OSError, ValueError) as exc:
        problem = f"The settings file cannot be written ({exc}): nothing changed."
        raise SettingsError(problem) from exc


async def _providers_for(settings: BridgeSettings, changed: frozenset[str]) -> ProviderSetup:
    """The providers ``settings`` select, the chat provider checked with a cheap call when
    the provider, an address or a key changed; SettingsError when they cannot work."""
    checked = bool(changed & CHECKED)
    if checked and settings.provider is not None:
        choice = choose_provider(settings)
        if choice.name is None:
            raise SettingsError(choice.missing)
    return await build_setup(settings, check_key=checked)


def _validated(current: BridgeSettings, changes: dict[str, Any]) -> BridgeSettings:
    """``current`` with ``changes``, or SettingsError naming the fields (as the wire names
    them)."""
    values = {**current.model_dump(), **changes}
    for key in [key for key, value in changes.items() if value is None]:
        # back to its default (not to the file's or environment's value it is replacing)
        values[key] = BridgeSettings.model_fields[key].get_default(call_default_factory=True)
    try:
        validated = BridgeSettings.model_validate(values)
        if "mcp" in changes:  # exactly as given: the file's servers would merge back in
            mcp = McpSettings.model_validate(changes["mcp"])
            validated = validated.model_copy(update={"mcp": mcp})
        return validated
    except ValidationError as exc:
        problems = [
            f"'{_wire_name(error['loc'])}': {error['msg'].rstrip('.')}"
            for error in exc.errors(include_url=False)[:3]
        ]
        raise SettingsError(f"Invalid settings: {'; '.join(problems)}.") from exc


def _wire_name(loc: tuple[int | str, ...]) -> str:
    """A settings field as the wire spells it: ``contextNote``, ``exclude.0``."""
    return ".".join(to_camel(part) if isinstance(part, str) else str(part) for part in loc)


LOCATIONS: Final = {
    "context_note": False,
    "prompts_folder": True,
    "conversations_folder": True,
}
"""Path settings, checked when set under the rules of note paths (True: a folder)."""


def _check_locations(notes: NoteStore, changes: dict[str, Any]) -> None:
    """-32602 naming the field for a path setting that is not a vault path notes may use."""
    for field, folder in LOCATIONS.items():
        value = changes.get(field)
        if value is None:
            continue
        try:
            notes.check_location(value, folder=folder)
        except VaultError as exc:
            raise RpcError(
                WireCode.INVALID_PARAMS,
                f"Invalid settings: '{_wire_name((field,))}': {exc.message}",
            ) from exc


def _unrevealing(settings: BridgeSettings, problem: str) -> str:
    """The embedder's problem as a client may see it: for a model2vec path, one sentence
    whatever is wrong with it, so a client cannot learn which paths exist."""
    if settings.embedder is not None and settings.embedder.startswith("model2vec:"):
        return (
            "The model2vec embedder cannot use that path: give the folder of a model2vec "
            "model (config.json, tokenizer.json and model.safetensors) that the server can read."
        )
    return problem


def _plain(value: Any) -> Any:
    """A setting's value as the settings file holds it (TOML has no null: tables without
    their unset entries)."""
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    return list(value) if isinstance(value, tuple) else value


class SettingsFileWatch:
    """The settings file, followed while the server runs: a change made by ``setup`` (or in an
    editor) is applied through :meth:`SettingsApplier.apply` without a restart, and wins over
    the flags and environment variables of the launch until the next one.

    - Only what changed in the file is applied: a changed value as written; a removed one
      back to its environment variable or default; a new provider without its own model or
      base URL drops the old provider's (a flag's included).
    - The server's own writes (``settings/update``) change nothing: their values are in
      effect already.
    - A file that cannot be read, or settings that cannot work, are refused with one log line;
      the running settings stay.
    """

    def __init__(self, app: SettingsApplier, path: Path | None = None) -> None:
        self.app = app
        self.path = path or config_file()
        self._seen = _file_values(self.path)

    async def run(self, *, debounce_ms: int = 300) -> None:
        """Apply each change of the file until cancelled."""
        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            logger.warning("Not following the settings file %s (%s).", self.path, exc)
            return
        name = self.path.name
        stop = asyncio.Event()  # ends watchfiles' thread within WAKE_MS once cancelled
        try:
            async for _ in watchfiles.awatch(
                folder,
                watch_filter=lambda _change, changed: Path(changed).name == name,
                debounce=debounce_ms,
                recursive=False,
                stop_event=stop,
                rust_timeout=WAKE_MS,
            ):
                await self.reload()
        except (OSError, RuntimeError) as exc:
            logger.warning("Stopped following the settings file %s (%s).", self.path, exc)
        finally:
            stop.set()

    async def reload(self) -> bool:
        """Apply what changed in the file since it was last read; whether settings changed."""
        try:
            values, without_flags = await asyncio.to_thread(
                lambda: (read_config(self.path), load_settings())
            )
        except (OSError, ValueError, SettingsError) as exc:
            logger.warning(
                "The settings file %s changed but is refused (%s); the running settings stay.",
                self.path,
                exc,
            )
            return False
        seen, self._seen = self._seen, values
        changes = {key: value for key, value in values.items() if seen.get(key) != value}
        for key in seen.keys() - values.keys():
            changes[key] = getattr(without_flags, key)
        if "provider" in changes:
            changes.update({key: None for key in ("model", "base_url") if key not in values})
        current = self.app.runtime.config
        try:
            candidate = _validated(current, changes)
            extra = rebound(current, changes, named_provider(candidate))
            updated = _validated(current, {**extra, **changes})
            if updated == current:
                return False  # the server's own write, or nothing that matters
            await self.app.apply(updated, save=())
        except (SettingsError, LLMError) as exc:
            logger.warning(
                "The settings file %s changed but is refused: %s The running settings stay.",
                self.path,
                exc,
            )
            return False
        logger.info("Settings from %s applied.", self.path)
        return True


def _file_values(path: Path) -> dict[str, Any]:
    try:
        return read_config(path)
    except (OSError, ValueError):
        return {}
