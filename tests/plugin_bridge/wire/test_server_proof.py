"""$/serverProof: a client that opens the WebSocket with a nonce gets, as the first frame,
proof that the server knows the token, before the client reveals it (docs/protocol.md)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.helpers.bridge import WAIT, Wire, init_params, running_bridge


def expected_proof(token: str, nonce: str) -> str:
    """As docs/protocol.md says: HMAC-SHA256, key the token's UTF-8 bytes, message the nonce's
    UTF-8 bytes as sent, base64url without padding."""
    digest = hmac.new(token.encode(), nonce.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


async def test_a_nonce_gets_the_proof_as_the_first_frame_then_initialize_works(
    tmp_path: Path,
) -> None:
    nonce = secrets.token_urlsafe(32)
    async with running_bridge(tmp_path) as bridge:
        wire = Wire(await connect(f"{bridge.url}/?nonce={nonce}", open_timeout=WAIT))
        first = await wire.recv()
        init = await wire.result("initialize", init_params(bridge.app.token))
    assert first == {
        "jsonrpc": "2.0",
        "method": "$/serverProof",
        "params": {"proof": expected_proof(bridge.app.token, nonce)},
    }
    assert len(first["params"]["proof"]) == 43
    assert first["params"]["proof"] != expected_proof("another-token", nonce)
    assert init["protocolVersion"] == 1


async def test_without_a_nonce_no_proof_is_sent(tmp_path: Path) -> None:
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire(initialize=False)
        await wire.request("health", {}, id=1)
        first = await wire.recv()
    assert first["id"] == 1 and first["error"]["code"] == -32002


@pytest.mark.parametrize(
    "query", ["nonce=short", "nonce=a%2Bb" + "c" * 30, "nonce=" + "a" * 43 + "&nonce=" + "b" * 43]
)
async def test_a_malformed_nonce_is_refused_at_the_handshake(tmp_path: Path, query: str) -> None:
    async with running_bridge(tmp_path) as bridge:
        with pytest.raises(InvalidStatus) as refused:
            await connect(f"{bridge.url}/?{query}", open_timeout=WAIT)
    assert refused.value.response.status_code == 400
