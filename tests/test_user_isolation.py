"""No test reads or writes the machine's user: every test has its own HOME and XDG folders
(tests/conftest.py), proved by running a test in a child pytest whose HOME holds a poisoned
settings file, state and cache."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from platformdirs import user_cache_dir, user_config_dir, user_data_dir, user_state_dir

from plugin_bridge.app.settings.config import config_file, load_settings, read_config
from plugin_bridge.vault.datadir import data_dir_for
from tests.conftest import REPO_ROOT, USER_FOLDERS

APP = "obsidian-ai-bridge"
POISON = 'provider = "poisoned"\nmodel = "poisoned-model"\nembedder = "ollama:poisoned"\n'


def test_the_user_folders_are_the_tests_own(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """HOME, the settings file, the state, the caches and a vault's data folder all lie in
    this run's temporary folder; the settings are the defaults; a write lands there too."""
    ours = tmp_path_factory.getbasetemp()
    folders = [
        Path.home(),
        config_file(),
        Path(user_config_dir(APP)),
        Path(user_state_dir(APP)),
        Path(user_cache_dir("llm-service")),
        Path(user_data_dir(APP)),
        data_dir_for(tmp_path / "vault"),
    ]
    outside = [folder for folder in folders if not folder.is_relative_to(ours)]
    assert not outside, f"outside the test's folders: {outside}"
    assert read_config() == {}
    settings = load_settings()
    assert settings.provider is None and settings.model is None and settings.embedder is None
    state = data_dir_for(tmp_path / "vault")
    state.mkdir(parents=True)
    (state / "written-by-a-test").write_text("x", encoding="utf-8")


def _poisoned_home(home: Path) -> dict[str, bytes]:
    """A HOME as after ``obsidian-ai-bridge setup`` and a served vault, every file poisoned;
    its files and their contents."""
    files = {
        ".config/obsidian-ai-bridge/config.toml": POISON,
        ".local/state/obsidian-ai-bridge/vaults/poisoned/server.json": '{"url": "ws://poison"}',
        ".cache/llm-service/poisoned.json": "{}",
        ".local/share/obsidian-ai-bridge/poisoned": "x",
    }
    for name, text in files.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text, encoding="utf-8")
    return _tree(home)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_poisoned_home_changes_no_result(tmp_path: Path) -> None:
    """The test above, run by a child pytest with HOME set to a poisoned folder and no XDG
    or settings variables (as in the user's shell), passes and leaves that folder as it was.
    Without the conftest's folders it fails: HOME is the poisoned one, and its state folder
    gets the test's write."""
    home = tmp_path / "home"
    before = _poisoned_home(home)
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in USER_FOLDERS and not name.startswith("AI_BRIDGE_")
    }
    env |= {"HOME": str(home), "USERPROFILE": str(home)}
    node = f"{Path(__file__).relative_to(REPO_ROOT)}::test_the_user_folders_are_the_tests_own"
    child = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--basetemp",
            str(tmp_path / "run"),
            node,
        ],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == 0, child.stdout[-3000:] + child.stderr[-2000:]
    assert "1 passed" in child.stdout
    assert _tree(home) == before
