"""A running server follows the settings file: ``setup`` run beside it changes the model without
a restart (and wins over the launch flags), a bad file is refused with one log line, and the
server's own writes change nothing."""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path

import pytest

from plugin_bridge.app.live_settings import SettingsFileWatch
from plugin_bridge.app.settings.config import BridgeSettings, config_file, save_config
from plugin_bridge.wire.client import BridgeClient
from tests.fakes import openai as fake
from tests.fakes.http import FakeHTTPServer
from tests.helpers.bridge import WAIT, running_bridge, wait_for
from tests.helpers.serve import START_WAIT, run_cli, serve


async def _setup(tmp_path: Path, fake_http: FakeHTTPServer, model: str) -> str:
    """``obsidian-ai-bridge setup`` for the fake server, as a user runs it beside the server;
    what it printed."""
    fake_http.enqueue(fake.models_reply("first-model", "second-model"))
    url = fake_http.url + "/v1"
    code, out, err = await run_cli(
        tmp_path, "setup", "--provider", "openai", "--base-url", url, "--model", model
    )
    assert code == 0, err
    return out


async def test_setup_beside_a_running_app_changes_its_model_and_a_bad_file_is_refused(
    tmp_path: Path, fake_http: FakeHTTPServer, caplog: pytest.LogCaptureFixture
) -> None:
    """The app was started with the model as a flag; setup saves another: the next turn uses
    setup's. Then a file that does not parse: one warning, the settings in effect stay."""
    caplog.set_level(logging.INFO, logger="plugin_bridge.app.live_settings")
    url = fake_http.url + "/v1"
    flags = BridgeSettings(provider="openai", base_url=url, model="first-model")
    async with running_bridge(tmp_path, settings=flags) as bridge:
        app = bridge.app
        watching = asyncio.create_task(SettingsFileWatch(app).run(debounce_ms=50))
        try:
            await asyncio.sleep(0.3)  # the watch is set up
            await _setup(tmp_path, fake_http, "second-model")
            await wait_for(lambda: app.config.model == "second-model")
            fake_http.enqueue(fake.text_reply("from the second model"))
            reply = await (await bridge.wire()).result("chat/send", {"text": "hi"})
            assert reply["text"] == "from the second model"
            assert fake_http.requests[-1].json()["model"] == "second-model"

            in_effect = app.settings
            config_file().write_text("model = [unclosed\n", encoding="utf-8")
            await wait_for(lambda: "is refused" in caplog.text)
            assert app.settings is in_effect
        finally:
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)
    refused = [r for r in caplog.records if "is refused" in r.getMessage()]
    assert len(refused) == 1 and refused[0].levelno == logging.WARNING
    assert "\n" not in refused[0].getMessage()


async def test_the_servers_own_writes_change_nothing(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """settings/update writes the file: reading it back applies nothing (the providers are not
    rebuilt); a change made by hand afterwards is applied."""
    settings = BridgeSettings(provider="openai", base_url=fake_http.url + "/v1", model="m1")
    async with running_bridge(tmp_path, settings=settings) as bridge:
        watch = SettingsFileWatch(bridge.app)
        await (await bridge.wire()).result("settings/update", {"models": {"chat": "m2"}})
        providers = bridge.app.providers
        assert not await watch.reload()
        assert bridge.app.providers is providers
        save_config({"model": "m3"})
        assert await watch.reload()
        assert bridge.app.providers.model == "m3"


async def test_a_file_that_names_a_provider_that_cannot_work_is_refused(
    tmp_path: Path, fake_http: FakeHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anthropic without a key: refused, nothing built, the running provider stays."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    settings = BridgeSettings(provider="openai", base_url=fake_http.url + "/v1", model="m1")
    async with running_bridge(tmp_path, settings=settings) as bridge:
        watch = SettingsFileWatch(bridge.app)
        providers = bridge.app.providers
        save_config({"provider": "anthropic"})
        assert not await watch.reload()
        assert bridge.app.providers is providers and bridge.app.config.provider == "openai"


async def test_a_running_serve_process_picks_up_setup_without_a_restart(
    tmp_path: Path, fake_http: FakeHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`serve --model first-model`, then `setup --model second-model` in another terminal:
    settings/get of the same server says second-model, and setup says the server took the
    change up instead of telling the user to start one."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # the subprocesses' too
    url = fake_http.url + "/v1"
    args = ("--provider", "openai", "--base-url", url, "--model", "first-model")
    async with serve(tmp_path, *args) as served:
        assert served.process.stderr is not None
        async with asyncio.timeout(START_WAIT):
            while b"Ready." not in await served.process.stderr.readline():
                pass  # the settings file is followed from here on
        info = served.info
        client = await BridgeClient.connect(str(info["url"]), str(info["token"]))
        try:
            assert (await client.request("settings/get"))["models"]["chat"] == "first-model"
            said = await _setup(tmp_path, fake_http, "second-model")
            assert "Next: " not in said
            assert (
                "The server of the vault 'vault' is running and has taken the change up: it "
                "uses openai model second-model now, no restart needed."
            ) in said
            async with asyncio.timeout(WAIT):
                while True:  # until the server says so (or the timeout)
                    settings = await client.request("settings/get")
                    if settings["models"]["chat"] == "second-model":
                        break
                    await asyncio.sleep(0.1)
        finally:
            await client.close()
        served.process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(START_WAIT):
            assert await served.process.wait() == 0


async def test_a_new_provider_in_the_file_drops_the_launch_base_url(
    tmp_path: Path, fake_http: FakeHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Started with --provider openai --base-url (flags); setup then saves Ollama without a
    base URL: the flag's address is not carried over to the new provider."""
    from tests.fakes.http import Reply

    monkeypatch.setenv("OLLAMA_HOST", fake_http.url)
    flags = BridgeSettings(provider="openai", base_url="http://127.0.0.1:9/v1", model="m1")
    fake_http.enqueue(
        Reply.json({"models": [{"name": "qwen3:4b"}]}),
        Reply.json({"capabilities": ["completion", "tools"]}),
    )
    async with running_bridge(tmp_path, settings=flags) as bridge:
        watch = SettingsFileWatch(bridge.app)
        save_config({"provider": "ollama", "model": "qwen3:4b"})
        assert await watch.reload()
        chat = bridge.app.providers.chat
    assert bridge.app.config.base_url is None
    assert chat is not None and (chat.name, chat.model) == ("ollama", "qwen3:4b")
    assert chat.provider.base_url == fake_http.url
