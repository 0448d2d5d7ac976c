"""``python -m plugin_bridge``: see :mod:`plugin_bridge.cli`."""

from __future__ import annotations

from plugin_bridge.cli import main

raise SystemExit(main())
