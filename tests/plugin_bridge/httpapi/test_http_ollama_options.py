"""/v1 on an Ollama chat provider (the real httpx client against the fake Ollama API): a tool
call it cannot force is a 400 naming it, with no request; a response format is its ``format``."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.fakes import ollama as ollama_fake
from tests.fakes.http import FakeHTTPServer
from tests.helpers.bridge import running_bridge

QUESTION = [{"role": "user", "content": "Weather?"}]
TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
SCHEMA = {"type": "object", "properties": {"celsius": {"type": "integer"}}}


@pytest.mark.asyncio
async def test_ollama_refuses_forced_tools_and_takes_a_format(tmp_path: Path) -> None:
    async with FakeHTTPServer() as server:
        provider = ollama_fake.make_provider(server, max_attempts=1)
        async with running_bridge(
            tmp_path, provider=provider, provider_name="ollama", model=ollama_fake.MODEL, http=True
        ) as bridge:
            headers = {"Authorization": f"Bearer {bridge.app.token}"}
            async with httpx.AsyncClient(base_url=bridge.http_url, headers=headers) as http:
                for choice in (
                    "required",
                    {"type": "function", "function": {"name": "get_weather"}},
                ):
                    body = {"model": ollama_fake.MODEL, "messages": QUESTION, "tools": [TOOL]}
                    refused = await http.post(
                        "/v1/chat/completions", json={**body, "tool_choice": choice}
                    )
                    assert refused.status_code == 400
                    assert "Ollama cannot force a tool call" in refused.json()["error"]["message"]
                assert not server.requests

                server.enqueue(ollama_fake.text_reply('{"celsius": 4}', stream=False))
                answer = await http.post(
                    "/chat",
                    json={
                        "messages": QUESTION,
                        "response_format": {
                            "type": "json_schema",
                            "json_schema": {"name": "w", "schema": SCHEMA},
                        },
                    },
                )
    assert answer.status_code == 200, answer.text
    assert answer.json()["content"] == '{"celsius": 4}'
    assert server.requests[0].json()["format"] == SCHEMA
