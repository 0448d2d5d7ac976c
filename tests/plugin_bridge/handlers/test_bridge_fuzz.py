"""Fuzzing over a real socket: any frames get JSON-RPC answers and never drop the connection."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.sync.client import connect

from tests.helpers.bridge import WAIT, init_params, running_bridge
from tests.plugin_bridge.wire.test_protocol import json_values

# Methods that cannot write or wait for the client (note/create and tools/execute could).
SAFE_METHODS = [
    "initialize",
    "health",
    "vault/search",
    "note/read",
    "tools/list",
    "chat/send",
    "chat/clear",
    "command/searchSummarize",
    "models/list",
    "$/cancelRequest",
    "no/such",
]
messages = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "2.0", "1.0"])},
    optional={
        "id": st.integers() | st.text(max_size=6) | st.none() | st.floats(allow_nan=False),
        "method": st.sampled_from(SAFE_METHODS) | st.text(max_size=10),
        "params": json_values,
        "result": json_values,
    },
).map(json.dumps)
frames = messages | st.text(max_size=200) | st.binary(max_size=200) | json_values.map(json.dumps)


@pytest.fixture(scope="module")
def server_in_thread(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A bridge running on its own event loop in a thread (hypothesis tests are sync)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    context = running_bridge(Path(tmp_path_factory.mktemp("fuzz")))
    bridge = asyncio.run_coroutine_threadsafe(context.__aenter__(), loop).result(WAIT * 4)
    try:
        yield bridge.url, bridge.app.token
    finally:
        asyncio.run_coroutine_threadsafe(context.__aexit__(None, None, None), loop).result(WAIT)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(WAIT)
        loop.close()


def assert_json_rpc(message: dict[str, Any]) -> None:
    assert message["jsonrpc"] == "2.0"
    if "method" in message:
        assert isinstance(message["method"], str)
        return
    assert "id" in message
    assert ("result" in message) != ("error" in message)
    if "error" in message:
        assert isinstance(message["error"]["code"], int)
        assert isinstance(message["error"]["message"], str)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batch=st.lists(frames, min_size=1, max_size=4))
def test_fuzzed_frames_are_answered_and_the_connection_survives(
    server_in_thread: tuple[str, str], batch: list[str | bytes]
) -> None:
    """After any frames, a health request on the same connection is still answered."""
    url, token = server_in_thread
    with connect(url, open_timeout=WAIT) as ws:
        ws.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": "init",
                    "method": "initialize",
                    "params": init_params(token),
                }
            )
        )
        assert "result" in json.loads(ws.recv(timeout=WAIT))
        for frame in batch:
            ws.send(frame)
        ws.send(json.dumps({"jsonrpc": "2.0", "id": "sentinel", "method": "health"}))
        while True:
            message = json.loads(ws.recv(timeout=WAIT))
            assert_json_rpc(message)
            if message.get("id") == "sentinel" and "result" in message:
                break
