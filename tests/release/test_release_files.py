"""What a release is made of, checked without making one: the plugin's files at the repository
root equal obsidian-plugin's, names and versions agree everywhere, ``make version`` sets them
all, and the workflows parse, pass zizmor and run the steps they should."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import REPO_ROOT

PLUGIN = REPO_ROOT / "obsidian-plugin"
WORKFLOWS = REPO_ROOT / ".github" / "workflows"
VERSIONED = (
    "pyproject.toml",
    "manifest.json",
    "versions.json",
    "obsidian-plugin/package.json",
    "obsidian-plugin/package-lock.json",
    "obsidian-plugin/manifest.json",
    "obsidian-plugin/versions.json",
    "scripts/set_version.py",
)


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_root_manifest_and_versions_are_the_plugins() -> None:
    """Obsidian's community store and BRAT read manifest.json and versions.json at the root."""
    for name in ("manifest.json", "versions.json"):
        assert (REPO_ROOT / name).read_text() == (PLUGIN / name).read_text(), name


def test_names_versions_and_license_agree() -> None:
    manifest, package = _json(PLUGIN / "manifest.json"), _json(PLUGIN / "package.json")
    lock = _json(PLUGIN / "package-lock.json")
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert package["name"] == lock["name"] == lock["packages"][""]["name"] == manifest["id"]
    assert package["description"] == manifest["description"]
    assert package["license"] == project["license"] == "MIT"
    assert (REPO_ROOT / "LICENSE").read_text().startswith("MIT License")
    versions = {project["version"], package["version"], lock["version"], manifest["version"]}
    assert versions == {lock["packages"][""]["version"]}
    assert _json(PLUGIN / "versions.json")[manifest["version"]] == manifest["minAppVersion"]
    assert project["name"] == "obsidian-ai-bridge" in project["scripts"]


def test_make_version_sets_every_copy_and_keeps_the_formatting(tmp_path: Path) -> None:
    for name in VERSIONED:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / name, tmp_path / name)
    before = {name: (tmp_path / name).read_text() for name in VERSIONED}
    script = tmp_path / "scripts" / "set_version.py"
    refused = subprocess.run([sys.executable, script, "1.2"], capture_output=True, text=True)
    assert refused.returncode == 2 and "x.y.z" in refused.stderr
    assert {name: (tmp_path / name).read_text() for name in VERSIONED} == before
    subprocess.run([sys.executable, script, "9.8.7"], check=True, capture_output=True)
    project = tomllib.loads((tmp_path / "pyproject.toml").read_text())["project"]
    lock = _json(tmp_path / "obsidian-plugin" / "package-lock.json")
    assert project["version"] == lock["version"] == lock["packages"][""]["version"] == "9.8.7"
    for name in ("manifest.json", "versions.json"):
        assert (tmp_path / name).read_text() == (tmp_path / "obsidian-plugin" / name).read_text()
    manifest = _json(tmp_path / "manifest.json")
    assert manifest["version"] == _json(tmp_path / "obsidian-plugin" / "package.json")["version"]
    assert _json(tmp_path / "versions.json")["9.8.7"] == manifest["minAppVersion"]
    assert (tmp_path / "versions.json").read_text().endswith('\t"9.8.7": "1.7.2"\n}\n')
    for name in [n for n in VERSIONED[:-1] if not n.endswith("versions.json")]:
        # only the version lines changed: the rest, indentation included, as it was
        changed = [
            (old, new)
            for old, new in zip(
                before[name].splitlines(), (tmp_path / name).read_text().splitlines(), strict=False
            )
            if old != new
        ]
        assert all("9.8.7" in new for _old, new in changed), (name, changed)


def _steps(workflow: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    data = yaml.safe_load((WORKFLOWS / workflow).read_text())
    (job,) = data["jobs"].values()
    return data, job["steps"]


def test_the_release_workflow_attaches_the_four_files_on_a_version_tag() -> None:
    data, steps = _steps("release.yml")
    triggers = data[True]  # YAML 1.1 reads the key `on` as True
    assert list(triggers) == ["push"] and triggers["push"]["tags"] == ["[0-9]+.[0-9]+.[0-9]+"]
    runs = [step.get("run", "") for step in steps]
    assert "make release-assets" in runs
    assert any("gh release create" in run and "dist/*" in run for run in runs)
    # Published, not a draft: a draft's download URL (the plugin's install card) does not work.
    assert not any("--draft" in run for run in runs)
    assert data["permissions"] == {"contents": "write"}


def test_ci_runs_make_test() -> None:
    _data, steps = _steps("ci.yml")
    assert [step["run"] for step in steps if "run" in step] == ["make test"]


def test_the_workflows_pass_zizmor() -> None:
    """zizmor (from PyPI) checks them offline: pinned actions, no leaked credentials."""
    zizmor = Path(sys.executable).with_name("zizmor")
    checked = subprocess.run(
        [zizmor, "--offline", "--no-progress", WORKFLOWS], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_every_hint_spells_the_command_as_the_readme_installs_it() -> None:
    """README, docs and the server's own hints say `obsidian-ai-bridge serve --vault …`, the
    command the README's install step puts on PATH; the README's first section installs it."""
    readme = (REPO_ROOT / "README.md").read_text()
    first = readme.split("\n## ")[1]
    assert first.startswith("Install")
    for step in ("uv tool install obsidian-ai-bridge", "pipx install obsidian-ai-bridge"):
        assert step in first
    assert "make install" in first and "make test" not in first
    texts = [REPO_ROOT / "README.md", *(REPO_ROOT / "docs").glob("*.md")]
    texts += (REPO_ROOT / "plugin_bridge").rglob("*.py")
    spelled = {
        (path.name, match.group(1))
        for path in texts
        for match in re.finditer(r"([^\s`'\"(]+) serve --vault", path.read_text())
    }
    assert spelled and {command for _name, command in spelled} == {"obsidian-ai-bridge"}, spelled
