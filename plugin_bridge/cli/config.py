"""``config path`` and ``config show``: where the settings file is, and what is in effect."""

from __future__ import annotations

import json
import sys

from plugin_bridge.app.settings.config import SettingsError, config_file, load_settings, shown


def run(action: str) -> int:
    if action == "path":
        print(config_file())
        return 0
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(json.dumps(shown(settings), indent=2, ensure_ascii=False))
    return 0
