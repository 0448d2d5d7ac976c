"""``make version V=x.y.z``: set the one version everywhere it is kept.

pyproject.toml (the server reads its version from the installed package's metadata),
obsidian-plugin/package.json and package-lock.json, the plugin's manifest.json and its copy at
the repository root, and a new ``versions.json`` entry (version → minAppVersion) in both copies,
as Obsidian's community store and BRAT read them. The Makefile then refreshes uv.lock.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "obsidian-plugin"
VERSION = re.compile(r"^\d+\.\d+\.\d+$")


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not VERSION.match(argv[0]):
        print("usage: make version V=x.y.z (three numbers, e.g. 0.2.0)", file=sys.stderr)
        return 2
    version = argv[0]
    set_pyproject(ROOT / "pyproject.toml", version)
    for path in (PLUGIN / "package.json", PLUGIN / "manifest.json"):
        update_json(path, lambda data: data.update(version=version))
    update_json(PLUGIN / "package-lock.json", lambda data: _set_lock(data, version))
    manifest = read_json(PLUGIN / "manifest.json")
    update_json(
        PLUGIN / "versions.json", lambda data: data.update({version: manifest["minAppVersion"]})
    )
    for name in ("manifest.json", "versions.json"):
        (ROOT / name).write_text((PLUGIN / name).read_text(encoding="utf-8"), encoding="utf-8")
    print(
        f"Version {version} set in pyproject.toml, package.json, package-lock.json, both "
        "manifest.json files and versions.json."
    )
    return 0


def set_pyproject(path: Path, version: str) -> None:
    text = path.read_text(encoding="utf-8")
    head, sep, rest = text.partition("[project]\n")
    new, count = re.subn(r'(?m)^version = "[^"]*"$', f'version = "{version}"', rest, count=1)
    if not sep or count != 1:
        raise SystemExit(f"{path} has no [project] version line")
    path.write_text(head + sep + new, encoding="utf-8")


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def update_json(path: Path, change: Any) -> None:
    """Change ``path``'s JSON in place, keeping its indentation (tabs or spaces)."""
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    change(data)
    indent = re.search(r"\n([ \t]+)\S", text)
    path.write_text(
        json.dumps(data, indent=indent.group(1) if indent else 2, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )


def _set_lock(data: dict[str, Any], version: str) -> None:
    data["version"] = version
    data["packages"][""]["version"] = version


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
