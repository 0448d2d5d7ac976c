"""The wire: JSON-RPC framing, the router, the WebSocket server and client, the wire models.

Knows neither the handlers nor the application state (``RequestContext`` is generic in it).
"""
