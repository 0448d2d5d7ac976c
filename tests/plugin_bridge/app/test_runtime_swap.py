"""The runtime value and how ``BridgeApp.apply`` swaps it: what can fail happens before the swap
(tests/plugin_bridge/app/test_settings_apply.py); what follows the swap (the embedder, the MCP
servers, closing the old providers) is logged when it fails, never half-applied, and the old
providers are closed exactly once.

Providers are the real OpenAI SDK against the fake of tests/fakes (no call is made: only the
model changes, so no key is checked)."""

from __future__ import annotations

import asyncio
import logging
import tomllib
from pathlib import Path

import pytest

from plugin_bridge.app.live_settings import stage
from plugin_bridge.app.settings.config import BridgeSettings, McpSettings, config_file
from plugin_bridge.app.settings.providers import ProviderSetup
from tests.fakes.http import FakeHTTPServer
from tests.helpers.bridge import running_bridge


def _local(fake_http: FakeHTTPServer, model: str = "first-model") -> BridgeSettings:
    return BridgeSettings(provider="openai", base_url=fake_http.url + "/v1", model=model)


def _closes_counted(setup: ProviderSetup, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each close of ``setup``'s providers, recorded (then made as before)."""
    closes: list[str] = []
    real = setup.aclose

    async def counted() -> None:
        closes.append("closed")
        await real()

    monkeypatch.setattr(setup, "aclose", counted)
    return closes


def _newer(settings: BridgeSettings) -> BridgeSettings:
    """A new model (new providers) and new MCP options (the MCP servers followed)."""
    mcp = McpSettings(restart_backoff=settings.mcp.restart_backoff + 1)
    return settings.model_copy(update={"model": "second-model", "mcp": mcp})


async def test_a_failure_after_the_swap_is_logged_and_the_new_settings_stay(
    tmp_path: Path,
    fake_http: FakeHTTPServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Following the MCP servers raises after the file is written: the new settings and
    providers are in effect (as the file says), one warning names the step, and the old
    providers are closed once (not again when the server stops)."""
    settings = _local(fake_http)
    async with running_bridge(tmp_path, settings=settings) as bridge:
        app = bridge.app
        old = app.runtime
        closes = _closes_counted(old.providers, monkeypatch)

        async def refuse(mcp: McpSettings) -> None:
            raise RuntimeError("the MCP servers cannot follow")

        monkeypatch.setattr(app, "use_mcp_servers", refuse)
        newer = _newer(settings)
        with caplog.at_level(logging.WARNING, logger="plugin_bridge.app.state"):
            await app.apply(newer)
        assert app.settings is newer and app.providers is not old.providers
        assert app.providers.model == "second-model"
        assert closes == ["closed"]
        said = [r.getMessage() for r in caplog.records if r.name == "plugin_bridge.app.state"]
        assert said == [
            "Settings applied, but following the MCP servers failed "
            "(RuntimeError: the MCP servers cannot follow)."
        ]
    assert tomllib.loads(config_file().read_text())["model"] == "second-model"
    assert closes == ["closed"]


async def test_old_providers_that_fail_to_close_are_closed_once_and_logged(
    tmp_path: Path,
    fake_http: FakeHTTPServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Closing the old providers raises: apply still succeeds, the failure is one warning, and
    the server's end closes the new providers only (the old ones are never closed twice)."""
    settings = _local(fake_http)
    async with running_bridge(tmp_path, settings=settings) as bridge:
        app = bridge.app
        old_closes: list[str] = []

        async def failing_close() -> None:
            old_closes.append("closed")
            raise OSError("the old client would not close")

        monkeypatch.setattr(app.providers, "aclose", failing_close)
        with caplog.at_level(logging.WARNING, logger="plugin_bridge.app.state"):
            await app.apply(settings.model_copy(update={"model": "second-model"}), save=())
        new_closes = _closes_counted(app.providers, monkeypatch)
        assert old_closes == ["closed"] and app.providers.model == "second-model"
        assert any("closing the old providers failed" in r.getMessage() for r in caplog.records)
    assert old_closes == ["closed"] and new_closes == ["closed"]


async def test_an_apply_cancelled_after_the_swap_still_closes_the_old_providers(
    tmp_path: Path, fake_http: FakeHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The request is cancelled while the MCP servers follow the new settings: the new
    runtime stays in effect and the old providers are closed, once."""
    settings = _local(fake_http)
    async with running_bridge(tmp_path, settings=settings) as bridge:
        app = bridge.app
        closes = _closes_counted(app.providers, monkeypatch)
        following = asyncio.Event()

        async def slow(mcp: McpSettings) -> None:
            following.set()
            await asyncio.Event().wait()

        monkeypatch.setattr(app, "use_mcp_servers", slow)
        newer = _newer(settings)
        applying = asyncio.create_task(app.apply(newer, save=()))
        await asyncio.wait_for(following.wait(), 15)
        applying.cancel()
        with pytest.raises(asyncio.CancelledError):
            await applying
        assert app.settings is newer and closes == ["closed"]


async def test_staging_keeps_the_providers_and_their_model_lists_unless_they_change(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """A change of answer length stages a runtime over the same providers and model lists; a
    new model stages new providers with no list read yet (so ModelRoutes never asks the old
    providers' lists)."""
    settings = _local(fake_http)
    async with running_bridge(tmp_path, settings=settings) as bridge:
        current = bridge.app.runtime
        kept = await stage(current, settings.model_copy(update={"max_tokens": 100}))
        assert kept.runtime.providers is current.providers and not kept.new_providers
        assert kept.runtime.lists is current.lists and kept.runtime.config.max_tokens == 100
        rebuilt = await stage(current, settings.model_copy(update={"model": "second-model"}))
        try:
            assert rebuilt.new_providers and rebuilt.runtime.providers is not current.providers
            assert rebuilt.runtime.lists is not current.lists
        finally:
            await rebuilt.discard()
        assert bridge.app.runtime is current  # staging changes nothing in effect
