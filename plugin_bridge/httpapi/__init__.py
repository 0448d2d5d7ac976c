"""The bridge's HTTP API on 127.0.0.1: an ASGI app (Starlette) served by uvicorn in the
server's own event loop, on a port of its own (the info file's ``httpUrl``).

:mod:`.guard` refuses what the WebSocket refuses (Origin, Host), a missing or wrong bearer token
and oversized bodies; :mod:`.app` builds the routes (docs/http.md lists them); :mod:`.server`
runs uvicorn on an already listening socket.
"""
