"""``make install`` installs what uv.lock pins: uv's tool installer does not read the lock, so
without the lock's pins it resolved newer versions than the tests ran with (anthropic, openai,
cryptography 51, which has no macOS x86_64 wheel). Run offline from uv's cache (``make setup``
fills it), into a throwaway tool folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import REPO_ROOT
from tests.release.test_wheel import _uv

PROJECT = "obsidian-ai-bridge"


def _locked_runtime() -> dict[str, str]:
    """uv.lock's version of every runtime dependency that applies on this machine."""
    exported = subprocess.run(
        [*_uv(), "export", "--frozen", "--no-hashes", "--no-emit-project", "--no-default-groups"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    environment = default_environment()
    pins: dict[str, str] = {}
    for line in exported.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate(environment):
            (spec,) = requirement.specifier
            pins[canonicalize_name(requirement.name)] = spec.version
    return pins


def _installed(python: Path) -> dict[str, str]:
    listed = subprocess.run(
        [
            python,
            "-c",
            "import importlib.metadata as m, json; "
            "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    versions: dict[str, str] = json.loads(listed)
    return {canonicalize_name(name): version for name, version in versions.items()}


@pytest.mark.timeout(300)
def test_make_install_installs_the_locked_versions(tmp_path: Path) -> None:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    env = {
        **os.environ,
        "UV_OFFLINE": "1",
        "UV_TOOL_DIR": str(tmp_path / "tools"),
        "UV_TOOL_BIN_DIR": str(tmp_path / "bin"),
    }
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(
        [make, "-s", "install"], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    if done.returncode != 0 and "network was disabled" in done.stderr:
        pytest.skip("uv's cache lacks a locked package: run `make setup` with the network once")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "bin" / PROJECT).exists()
    installed = _installed(tmp_path / "tools" / PROJECT / "bin" / "python")
    assert installed.pop(PROJECT) is not None
    assert installed == _locked_runtime()
