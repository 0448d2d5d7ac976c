"""Installing needs no compiler: every runtime dependency in uv.lock (the project's dependencies
and theirs, with extras and platform markers followed; not the dev, test or bench groups) has a
wheel for macOS arm64 and x86_64, Windows amd64 and Linux x86_64 and aarch64 (glibc 2.28 and
later), for CPython 3.11, 3.12 and 3.13. Pure-Python wheels count, and abi3 wheels for the
versions after theirs."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest
from packaging.markers import Marker
from packaging.tags import Tag, compatible_tags, cpython_tags, mac_platforms
from packaging.utils import canonicalize_name, parse_wheel_filename

from tests.conftest import REPO_ROOT

PROJECT = "obsidian-ai-bridge"
PYTHONS = ((3, 11), (3, 12), (3, 13))
GLIBC = 28
"""The oldest glibc minor version counted (2.28: Debian 10, Ubuntu 20.04, RHEL 8)."""


def _linux(arch: str) -> list[str]:
    legacy = {5: "manylinux1", 12: "manylinux2010", 17: "manylinux2014"}
    tags = [f"manylinux_2_{minor}_{arch}" for minor in range(GLIBC, 4, -1)]
    return tags + [f"{name}_{arch}" for minor, name in legacy.items() if minor <= GLIBC]


PLATFORMS: dict[str, tuple[dict[str, str], list[str]]] = {
    "macOS arm64": (
        {"sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "arm64"},
        list(mac_platforms((14, 0), "arm64")),
    ),
    "macOS x86_64": (
        {"sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "x86_64"},
        list(mac_platforms((14, 0), "x86_64")),
    ),
    "Windows amd64": (
        {"sys_platform": "win32", "platform_system": "Windows", "platform_machine": "AMD64"},
        ["win_amd64"],
    ),
    "Linux x86_64": (
        {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64"},
        _linux("x86_64"),
    ),
    "Linux aarch64": (
        {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "aarch64"},
        _linux("aarch64"),
    ),
}


def _environment(system: dict[str, str], python: tuple[int, int]) -> dict[str, str]:
    version = f"{python[0]}.{python[1]}"
    return {
        **system,
        "os_name": "nt" if system["sys_platform"] == "win32" else "posix",
        "python_version": version,
        "python_full_version": f"{version}.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "platform_release": "",
        "platform_version": "",
        "implementation_version": f"{version}.0",
        "extra": "",
    }


def _applies(dependency: dict[str, Any], environment: dict[str, str]) -> bool:
    marker = dependency.get("marker")
    return marker is None or Marker(marker).evaluate(environment)


Packages = dict[tuple[str, str], dict[str, Any]]


def _locked(dependency: dict[str, Any], packages: Packages) -> tuple[str, str]:
    """The (name, version) a dependency entry names: its ``version`` when the lock holds
    several (e.g. numpy for Python 3.11 and for 3.12 on), else the one."""
    name = canonicalize_name(dependency["name"])
    if "version" in dependency:
        return name, dependency["version"]
    (version,) = [v for n, v in packages if n == name]
    return name, version


def _runtime(packages: Packages, environment: dict[str, str]) -> set[tuple[str, str]]:
    """The packages the project needs at run time in ``environment``: its dependencies and
    theirs (with the extras asked for), markers evaluated."""
    seen: set[tuple[tuple[str, str], str | None]] = set()
    (project,) = [p for (name, _), p in packages.items() if name == PROJECT]
    todo = [dep for dep in project["dependencies"] if _applies(dep, environment)]
    while todo:
        dependency = todo.pop()
        locked = _locked(dependency, packages)
        package = packages[locked]
        for extra in [None, *dependency.get("extra", [])]:
            if (locked, extra) in seen:
                continue
            seen.add((locked, extra))
            wanted = (
                package.get("dependencies", [])
                if extra is None
                else package.get("optional-dependencies", {}).get(extra, [])
            )
            todo += [dep for dep in wanted if _applies(dep, environment)]
    needed = {locked for locked, _ in seen}
    return needed


def _has_wheel(package: dict[str, Any], supported: set[Tag]) -> bool:
    for wheel in package.get("wheels", []):
        filename = wheel["url"].rsplit("/", 1)[-1]
        if supported & set(parse_wheel_filename(filename)[3]):
            return True
    return False


@pytest.mark.parametrize("python", PYTHONS, ids=lambda v: f"py{v[0]}.{v[1]}")
@pytest.mark.parametrize("platform", list(PLATFORMS))
def test_every_runtime_dependency_installs_from_a_wheel(
    platform: str, python: tuple[int, int]
) -> None:
    lock = tomllib.loads((REPO_ROOT / "uv.lock").read_text(encoding="utf-8"))
    packages = {(canonicalize_name(p["name"]), p["version"]): p for p in lock["package"]}
    system, platforms = PLATFORMS[platform]
    interpreter = f"cp{python[0]}{python[1]}"
    supported = {
        *cpython_tags(python, [interpreter], platforms),
        *compatible_tags(python, interpreter, platforms),
    }
    needed = _runtime(packages, _environment(system, python))
    assert {"numpy", "usearch"} <= {name for name, _ in needed}  # the walk follows the tree
    missing = sorted(
        f"{name} {version}"
        for name, version in needed
        if not _has_wheel(packages[name, version], supported)
    )
    assert not missing, f"no wheel for {platform}, Python {python[0]}.{python[1]}: {missing}"


def test_a_package_with_only_its_source_is_found() -> None:
    """The check itself: hnswlib 0.8.0 as it was locked (its source alone) fails it."""
    source_only = {"name": "hnswlib", "version": "0.8.0", "sdist": {"url": "hnswlib.tar.gz"}}
    wheel = {"url": "https://x/numpy-2.4.0-cp312-cp312-win_amd64.whl"}
    supported = set(cpython_tags((3, 12), ["cp312"], ["win_amd64"]))
    assert not _has_wheel(source_only, supported)
    assert _has_wheel({"wheels": [wheel]}, supported)
    assert not _has_wheel({"wheels": [wheel]}, set(cpython_tags((3, 13), ["cp313"], ["win_amd64"])))
