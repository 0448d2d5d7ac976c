"""The legacy HTTP+SSE transport (``GET /sse``, ``POST /messages``) through the SDK's
``sse_client``, on a ``serve`` process's HTTP port and on its remote listener, with the keys and
scopes of ``/mcp``: a key opens the transport and a tool call works, no key is 401, a read key
is refused a write, and ``resources/subscribe`` works there (a stateful connection), while
``/mcp``, stateless, offers handshake-era clients no ``subscribe``."""

from __future__ import annotations

import asyncio
import socket
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import mcp_types as types
import pytest
import pytest_asyncio
from mcp.client.sse import sse_client

from plugin_bridge.app.clients import ClientKeys
from tests.helpers.mcp import HeldClient, http_client, json_of, text_of
from tests.helpers.serve import START_WAIT, Served, start_serve

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    tmp = tmp_path_factory.mktemp("sse")
    remote = f"127.0.0.1:{_free_port()}"
    served = await start_serve(
        tmp,
        "--info-file",
        str(tmp / "server.json"),
        "--remote",
        remote,
        "--remote-insecure-http",
    )
    try:
        yield served
    finally:
        served.process.terminate()
        await served.process.wait()


def keys(served: Served) -> ClientKeys:
    return ClientKeys(served.info_file.parent / "data")


@asynccontextmanager
async def sse(url: str, key: str, **options: object) -> AsyncIterator[HeldClient]:
    headers = {"Authorization": f"Bearer {key}"}
    transport = sse_client(url, headers=headers, timeout=START_WAIT)
    client = await HeldClient(transport, **options).open()
    try:
        yield client
    finally:
        await client.close()


@pytest.mark.parametrize("listener", ["httpUrl", "remoteUrl"])
async def test_a_key_opens_the_sse_transport_and_calls_a_tool(
    served: Served, listener: str
) -> None:
    url = f"{served.info[listener]}/sse"
    reader = keys(served).add(f"sse-reader-{listener}", "read")
    async with sse(url, reader) as client:
        assert "search_notes" in await client.tools()
        listed = json_of(await client.call("list_notes", {"folder": "Projects"}))
        assert "Projects/Kafka pipeline.md" in listed["notes"]
        refused = await client.call("create_note", {"path": "Sse.md", "content": "x"})
    assert refused.is_error and "scope write" in text_of(refused)
    assert not (served.info_file.parent / "vault" / "Sse.md").exists()


@pytest.mark.parametrize("listener", ["httpUrl", "remoteUrl"])
async def test_no_key_is_401(served: Served, listener: str) -> None:
    async with httpx.AsyncClient(timeout=START_WAIT) as http:
        opened = await http.get(f"{served.info[listener]}/sse")
        posted = await http.post(f"{served.info[listener]}/messages?session_id=0", json={})
    for refused in (opened, posted):
        assert refused.status_code == 401
        assert refused.json()["error"] == "auth_failed"
        assert "missing or wrong client key" in refused.json()["message"]


async def test_a_connections_messages_take_only_its_own_key(served: Served) -> None:
    """Another key cannot post into a connection it did not open (its session id leaked)."""
    opened: list[str] = []
    owner = keys(served).add("sse-owner", "read")
    other = keys(served).add("sse-other", "read")
    url = f"{served.info['httpUrl']}/sse"
    transport = sse_client(
        url, headers={"Authorization": f"Bearer {owner}"}, on_session_created=opened.append
    )
    client = await HeldClient(transport).open()
    try:
        ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
        async with httpx.AsyncClient(timeout=START_WAIT) as http:
            stolen = await http.post(
                f"{served.info['httpUrl']}/messages?session_id={opened[0]}",
                json=ping,
                headers={"Authorization": f"Bearer {other}"},
            )
        assert stolen.status_code == 404
        assert "search_notes" in await client.tools()
    finally:
        await client.close()


async def test_subscribe_works_over_sse_and_is_not_offered_on_stateless_mcp(
    served: Served,
) -> None:
    updated: asyncio.Queue[str] = asyncio.Queue()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.put_nowait(str(message.params.uri))

    key = keys(served).add("sse-follower", "read")
    url = f"{served.info['httpUrl']}/sse"
    async with sse(url, key, mode="legacy", message_handler=on_message) as client:
        resources = client.client.server_capabilities.resources
        assert resources is not None and resources.subscribe and resources.list_changed
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated from 2026-07-28, which this is not
            await client.client.subscribe_resource("note://Welcome.md")
        note = served.info_file.parent / "vault" / "Welcome.md"
        note.write_text(note.read_text(encoding="utf-8") + "\nEdited.\n", encoding="utf-8")
        async with asyncio.timeout(START_WAIT):
            assert await updated.get() == "note://Welcome.md"
    async with http_client(f"{served.info['httpUrl']}/mcp", key, mode="legacy") as stateless:
        resources = stateless.client.server_capabilities.resources
        assert resources is not None and not resources.subscribe


async def test_stopping_the_server_ends_an_open_sse_stream(tmp_path: Path) -> None:
    """A held ``GET /sse`` stream ends when the server stops (it does not keep the server
    waiting for its graceful-shutdown timeout)."""
    with (tmp_path / "stderr.txt").open("w") as stderr:
        served = await start_serve(
            tmp_path, "--info-file", str(tmp_path / "server.json"), stderr=stderr
        )
        token = str(served.info["token"])
        async with httpx.AsyncClient(timeout=START_WAIT) as http:
            headers = {"Authorization": f"Bearer {token}"}
            async with http.stream("GET", f"{served.info['httpUrl']}/sse", headers=headers) as r:
                lines = r.aiter_lines()
                assert await anext(lines) == "event: endpoint"
                served.process.terminate()
                rest = [line async for line in lines]  # the stream ends
        assert await served.process.wait() == 0
    assert all(not line.startswith("event: message") for line in rest)
    assert "graceful shutdown exceeded" not in (tmp_path / "stderr.txt").read_text()
