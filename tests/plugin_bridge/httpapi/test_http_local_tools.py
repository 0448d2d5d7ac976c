"""/api/local-llm: results carry their call's id and role "tool" (an id made when the call has
none), invalid calls keep their index and gain the id; the tools listed are those a call may
run (writes only with http_allow_writes); a refused write names that setting."""

from __future__ import annotations

from dataclasses import replace

import pytest

from plugin_bridge.app.vault_tools import VAULT_TOOL_NAMES, WRITE_TOOL_NAMES
from tests.plugin_bridge.httpapi.conftest import Served

pytestmark = pytest.mark.asyncio(loop_scope="module")

READS = set(VAULT_TOOL_NAMES) - WRITE_TOOL_NAMES

CREATE = {"function": {"name": "create_note", "arguments": {"path": "New.md", "content": "x"}}}


async def test_results_and_invalid_calls_carry_the_calls_ids(served: Served) -> None:
    calls = [
        {"id": "call_a", "function": {"name": "read_note", "arguments": {"path": "Welcome.md"}}},
        {"function": {"name": "no_such_tool", "arguments": {}}},
        {"id": "call_c", "function": {"name": "list_notes", "arguments": '{"limit": null}'}},
        {"function": {"name": "read_note", "arguments": "{not json"}},
    ]
    async with served.http() as http:
        body = (await http.post("/api/local-llm/execute-tools", json={"tool_calls": calls})).json()
    first, third = body["results"]
    assert (first["tool_call_id"], first["role"], first["name"]) == ("call_a", "tool", "read_note")
    assert (third["tool_call_id"], third["isError"]) == ("call_c", False)
    second, fourth = body["invalidCalls"]
    assert (second["index"], fourth["index"]) == (1, 3)
    made = {second["tool_call_id"], fourth["tool_call_id"]}
    assert len(made) == 2 and all(call_id.startswith("call_") for call_id in made)


async def test_writes_are_listed_only_when_they_would_run(served: Served) -> None:
    app = served.bridge.app
    settings = app.config
    calls = [
        {"id": "bad", "function": {"name": "no_such_tool", "arguments": {}}},
        {"id": "r1", "function": {"name": "read_note", "arguments": {"path": "Welcome.md"}}},
        {"id": "w1", **CREATE},
    ]
    async with served.http() as http:
        off = (await http.get("/api/local-llm/tools")).json()["tools"]
        refused = await http.post("/api/local-llm/execute-tools", json={"tool_calls": calls})
        app.runtime = replace(
            app.runtime, settings=settings.model_copy(update={"http_allow_writes": True})
        )
        try:
            on = (await http.get("/api/local-llm/tools")).json()["tools"]
        finally:
            app.runtime = replace(app.runtime, settings=settings)
    assert {tool["name"] for tool in off} == READS
    assert {tool["name"] for tool in on} == READS | WRITE_TOOL_NAMES
    assert refused.status_code == 403
    body = refused.json()
    assert body["error"] == "tool_denied" and "http_allow_writes" in body["message"]
    assert (body["index"], [r["tool_call_id"] for r in body["results"]]) == (2, ["r1"])
    assert "--allow-writes" not in body["message"]
    assert not (served.bridge.vault.root / "New.md").exists()


@pytest.mark.parametrize("writes", [False, True], ids=["writes-off", "writes-on"])
async def test_the_local_health_counts_the_tools_listed(served: Served, writes: bool) -> None:
    app = served.bridge.app
    settings = app.config
    app.runtime = replace(
        app.runtime, settings=settings.model_copy(update={"http_allow_writes": writes})
    )
    try:
        async with served.http() as http:
            listed = (await http.get("/api/local-llm/tools")).json()["tools"]
            health = (await http.get("/api/local-llm/health")).json()
    finally:
        app.runtime = replace(app.runtime, settings=settings)
    assert health["toolCount"] == len(listed) == (len(VAULT_TOOL_NAMES) if writes else len(READS))
    assert health["status"] == "ok"
