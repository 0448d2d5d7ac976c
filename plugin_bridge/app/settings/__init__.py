"""Settings: the server settings, changes over the wire, the cached model list."""
