"""The checks in front of every HTTP route: Host and Origin (403), the bearer token (401) and
the body size (413), with the bridge's error shape, or OpenAI's on /v1/*; and the info file's
httpUrl from a real ``serve``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from plugin_bridge.httpapi.guard import MAX_BODY_BYTES
from tests.helpers.bridge import Bridge, running_bridge
from tests.helpers.serve import serve

pytestmark = pytest.mark.asyncio(loop_scope="module")

ROUTES = [
    ("GET", "/health"),
    ("POST", "/chat"),
    ("POST", "/chat/stream"),
    ("GET", "/api/local-llm/tools"),
    ("POST", "/api/local-llm/execute-tools"),
    ("GET", "/v1/models"),
    ("POST", "/v1/chat/completions"),
    ("POST", "/no/such/route"),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bridge(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Bridge]:
    async with running_bridge(tmp_path_factory.mktemp("guard"), http=True) as bridge:
        yield bridge


def client(bridge: Bridge, token: str | None = None) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {token or bridge.app.token}"}
    return httpx.AsyncClient(base_url=bridge.http_url, headers=headers, timeout=10)


def assert_refusal(response: httpx.Response, status: int, code: str, path: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    if path.startswith("/v1/"):
        assert body["error"]["code"] == code
        assert body["error"]["message"]
        assert body["error"]["type"]
    else:
        assert body["error"] == code
        assert body["message"]


async def test_health_answers_with_the_token(bridge: Bridge) -> None:
    async with client(bridge) as http:
        response = await http.get("/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["toolCount"] == len(bridge.app.access.tools.tool_specs()) > 0
    assert "lmstudio" in body["supportedFormats"]


@pytest.mark.parametrize(("method", "path"), ROUTES)
@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer wrong", "Basic dXNlcjpwYXNz", "Bearer", "Token x"],
)
async def test_a_missing_or_wrong_token_is_401(
    bridge: Bridge, method: str, path: str, authorization: str | None
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    async with httpx.AsyncClient(base_url=bridge.http_url, timeout=10) as http:
        response = await http.request(method, path, headers=headers, json={})
    assert_refusal(response, 401, "auth_failed", path)
    assert response.headers["www-authenticate"].startswith("Bearer ")
    assert bridge.app.token not in response.text


async def test_the_scheme_is_case_insensitive(bridge: Bridge) -> None:
    async with httpx.AsyncClient(base_url=bridge.http_url, timeout=10) as http:
        response = await http.get(
            "/health", headers={"Authorization": f"bearer {bridge.app.token}"}
        )
    assert response.status_code == 200


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_a_foreign_origin_is_403(bridge: Bridge, method: str, path: str) -> None:
    async with client(bridge) as http:
        response = await http.request(
            method, path, headers={"Origin": "https://evil.example"}, json={}
        )
    assert_refusal(response, 403, "forbidden", path)


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_a_foreign_host_is_403(bridge: Bridge, method: str, path: str) -> None:
    async with client(bridge) as http:
        response = await http.request(method, path, headers={"Host": "rebind.example:80"}, json={})
    assert_refusal(response, 403, "forbidden", path)


async def test_the_obsidian_origin_is_allowed(bridge: Bridge) -> None:
    async with client(bridge) as http:
        response = await http.get("/health", headers={"Origin": "app://obsidian.md"})
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("method", "path"), [r for r in ROUTES if r[0] == "POST" and "no" not in r[1]]
)
async def test_a_body_over_the_limit_is_413(bridge: Bridge, method: str, path: str) -> None:
    body = b"x" * (MAX_BODY_BYTES + 1)
    async with client(bridge) as http:
        declared = await http.request(method, path, content=body)

        async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted as read
            for start in range(0, len(body), 1 << 20):
                yield body[start : start + (1 << 20)]

        chunked = await http.request(method, path, content=chunks())
    assert_refusal(declared, 413, "too_large", path)
    assert_refusal(chunked, 413, "too_large", path)


async def test_serve_writes_http_url_and_answers_there(tmp_path: Path) -> None:
    async with serve(tmp_path, "--info-file", str(tmp_path / "server.json")) as served:
        url = served.info["httpUrl"]
        token = served.info["token"]
        assert isinstance(url, str) and url.startswith("http://127.0.0.1:")
        assert url != served.info["url"]
        async with httpx.AsyncClient(base_url=url, timeout=10) as http:
            ok = await http.get("/health", headers={"Authorization": f"Bearer {token}"})
            refused = await http.get("/health")
    assert ok.status_code == 200 and ok.json()["status"] == "ok"
    assert refused.status_code == 401
    assert json.loads(refused.text)["error"] == "auth_failed"
