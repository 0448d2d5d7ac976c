"""Settings that cannot break start-up: control characters refused, path settings checked
when set, the settings file written by a TOML library and read back, and a model2vec path
whose problem never tells whether it exists."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from plugin_bridge.app.settings.config import (
    BridgeSettings,
    config_file,
    load_settings,
    read_config,
    save_config,
)
from tests.helpers.bridge import running_bridge


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"exclude": ["a\u007fb"]}, "exclude"),
        ({"exclude": ["Archive", "x\ny"]}, "exclude"),
        ({"models": {"chat": "gpt\u0000x"}}, "model"),
        ({"promptsFolder": "Prompts\u0085"}, "promptsFolder"),
    ],
)
async def test_control_characters_are_refused_and_start_up_still_works(
    tmp_path: Path, params: dict[str, object], field: str
) -> None:
    """-32602 naming the field; nothing is written, so the next update and the next start
    still work (a raw DEL in config.toml used to stop both)."""
    async with running_bridge(tmp_path, settings=BridgeSettings()) as bridge:
        wire = await bridge.wire()
        error = await wire.error("settings/update", params)
        later = await wire.result("settings/update", {"maxTokens": 1000})
    assert error["code"] == -32602 and f"'{field}" in error["message"]
    assert later["maxTokens"] == 1000
    assert load_settings().max_tokens == 1000


def test_the_settings_file_escapes_every_value_and_reads_back(tmp_path: Path) -> None:
    """Whatever the strings hold, the file parses back to the same values (tables too)."""
    values = {
        "exclude": ['quote " and \\ backslash', "tab\tand\u007fdel", "Ünïcode 学"],
        "model": "m",
        "mcp": {"servers": {"notes": {"command": "x", "args": ["--flag", "a\nb"]}}},
    }
    path = save_config(values)
    assert tomllib.loads(path.read_text(encoding="utf-8")) == values
    assert read_config() == values
    assert path.stat().st_mode & 0o777 == 0o600
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_value_toml_cannot_hold_leaves_the_old_file(tmp_path: Path) -> None:
    save_config({"model": "kept"})
    with pytest.raises((TypeError, ValueError)):
        save_config({"model": object()})
    assert read_config() == {"model": "kept"}


BAD_LOCATIONS = ["../escape", "/tmp/elsewhere", ".obsidian", "/etc/passwd", "a/../../b", "C:/x"]


@pytest.mark.parametrize("field", ["conversationsFolder", "promptsFolder", "contextNote"])
@pytest.mark.parametrize("value", BAD_LOCATIONS)
async def test_path_settings_are_vault_paths(tmp_path: Path, field: str, value: str) -> None:
    """Checked when set under the rules of note paths, -32602 naming the field; nothing kept."""
    if field == "contextNote" and not value.endswith(".md"):
        value += ".md"
    async with running_bridge(tmp_path, settings=BridgeSettings()) as bridge:
        error = await (await bridge.wire()).error("settings/update", {field: value})
    assert error["code"] == -32602 and f"'{field}'" in error["message"]
    assert not config_file().exists()


async def test_good_path_settings_are_kept(tmp_path: Path) -> None:
    async with running_bridge(tmp_path, settings=BridgeSettings()) as bridge:
        result = await (await bridge.wire()).result(
            "settings/update",
            {
                "conversationsFolder": "Assistant/Chats",
                "promptsFolder": "Prompts",
                "contextNote": "About me.md",
            },
        )
    assert result["conversationsFolder"] == "Assistant/Chats"
    assert read_config()["context_note"] == "About me.md"


async def test_a_model2vec_path_answers_the_same_whether_it_exists_or_not(
    tmp_path: Path,
) -> None:
    """One message for a missing path, a file, an empty folder and an unreadable one."""
    (tmp_path / "file").write_text("x")
    (tmp_path / "empty").mkdir()
    locked = tmp_path / "locked"
    locked.mkdir()
    os.chmod(locked, 0)
    paths = [tmp_path / "absent", tmp_path / "file", tmp_path / "empty", locked, Path("/etc")]
    async with running_bridge(tmp_path, settings=BridgeSettings()) as bridge:
        wire = await bridge.wire()
        errors = [
            await wire.error("settings/update", {"embedder": f"model2vec:{path}"}) for path in paths
        ]
    os.chmod(locked, 0o700)
    assert {e["code"] for e in errors} == {-32602}
    assert len({e["message"] for e in errors}) == 1
    assert str(tmp_path) not in errors[0]["message"]
