"""A small MCP server (the official SDK's MCPServer, formerly FastMCP) as a tool source for the
bridge's tests: ``python -m tests.fakes.mcp_server [--http PORT]`` from the repository root.

Tools: ``echo`` (its text back, with how many times this process started, read from the file in
``$FAKE_MCP_STARTS``), ``add``, ``fail`` (an error result), ``authorization`` (the header the
call came with, over HTTP) and ``crash`` (the process exits mid-call, as a server that dies does).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("fake")


def _starts() -> int:
    """Count this start in ``$FAKE_MCP_STARTS`` (a file), so tests see restarts."""
    path = os.environ.get("FAKE_MCP_STARTS")
    if not path:
        return 1
    file = Path(path)
    count = int(file.read_text() or 0) + 1 if file.exists() else 1
    file.write_text(str(count))
    return count


STARTS = _starts()


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return f"{text} (start {STARTS})"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def fail(reason: str) -> str:
    """Always fails with the reason."""
    raise ToolError(reason)


@server.tool()
def authorization(ctx: Context) -> str:
    """The Authorization header this call came with ('' over stdio)."""
    return (ctx.headers or {}).get("authorization", "")


@server.tool()
def crash() -> str:
    """The process exits at once, mid-call."""
    os._exit(3)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
