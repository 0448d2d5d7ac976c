"""One rule on every path, table-driven: a null for an optional argument is "not given", and a
new note's name that a synced device cannot hold is refused with the same sentence, whichever
way the call comes:

- the standalone `mcp` process (it serves the vault), and one forwarding to a `serve`;
- /mcp on that server (HTTP writes on), its tools/execute (WebSocket) and
  /api/local-llm/execute-tools (HTTP), and for names note/create (the user's own writes);
- the model's own calls: the tool registry's run_tool_call, which the tool loop uses.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
import pytest_asyncio

from llm_service.messages import ToolCall
from llm_service.tools import ToolRegistry
from plugin_bridge.app.vault_tools import register_vault_tools
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.paths import check_new_names
from plugin_bridge.vault.vault import Vault
from plugin_bridge.wire.client import BridgeClient, RpcCallError
from tests.helpers.bridge import copy_example_vault
from tests.helpers.mcp import HeldClient, http_client, mcp_command, text_of
from tests.helpers.serve import cli_env, start_serve

pytestmark = pytest.mark.asyncio(loop_scope="module")

Call = Callable[[str, dict[str, Any]], Awaitable[tuple[bool, str]]]
"""A tool call on one path: (is it an error, its text)."""

NULLS = {
    "search_notes": {"query": "kafka", "limit": None},
    "list_notes": {"folder": None, "limit": None},
    "read_note": {"path": "Welcome.md", "offset": None},
    "append_to_note": {"path": "Inbox.md", "content": "- more\n", "expected_hash": None},
}
NAMES = ["a:b?.md", "con.md", "Trailing dot./x.md", 'say "hi".md', "a<b>.md", "star*.md", "p|q.md"]


def sentence(name: str) -> str:
    """The sentence the one rule (vault/paths.py) refuses ``name`` with."""
    with pytest.raises(VaultError) as refused:
        check_new_names(name)
    return refused.value.message


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def paths(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, Call]]:
    tmp = tmp_path_factory.mktemp("rule")
    env = cli_env(tmp) | {"AI_BRIDGE_CONFIG": str(tmp / "none.toml")}
    served = await start_serve(
        tmp,
        *("--info-file", str(tmp / "server.json")),
        vault=copy_example_vault(tmp),
        env={"AI_BRIDGE_HTTP_ALLOW_WRITES": "true"},
    )
    alone_vault = copy_example_vault(tmp / "alone")
    alone = await HeldClient(
        mcp_command(alone_vault, tmp / "alone-data", env, "--allow-writes")
    ).open()
    forwarding = await HeldClient(
        mcp_command(
            tmp / "vault",
            tmp / "data",
            env,
            "--info-file",
            str(tmp / "server.json"),
            "--allow-writes",
        )
    ).open()
    info = served.info

    async def approve(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"approved": True}

    wire = await BridgeClient.connect(str(info["url"]), str(info["token"]), on_request=approve)
    registry = ToolRegistry()
    model_vault = Vault(copy_example_vault(tmp / "model"), tmp / "model-data", watch=False)
    register_vault_tools(registry, model_vault, write_permission="allow")
    await model_vault.start()
    headers = {"Authorization": f"Bearer {info['token']}"}
    try:
        async with (
            http_client(f"{info['httpUrl']}/mcp", str(info["token"])) as over_http,
            httpx.AsyncClient(base_url=str(info["httpUrl"]), headers=headers, timeout=60) as http,
        ):

            def mcp(client: HeldClient) -> Call:
                async def call(name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
                    result = await client.call(name, arguments)
                    return bool(result.is_error), text_of(result)

                return call

            async def tools_execute(name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
                done = await wire.request(
                    "tools/execute", {"calls": [{"name": name, "arguments": arguments}]}
                )
                if done["invalidCalls"]:
                    return True, done["invalidCalls"][0]["reason"]
                return done["results"][0]["isError"], done["results"][0]["content"]

            async def execute_tools(name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
                call = {"id": "call-1", "function": {"name": name, "arguments": arguments}}
                response = await http.post(
                    "/api/local-llm/execute-tools", json={"tool_calls": [call]}
                )
                body = response.json()
                if body["invalidCalls"]:
                    assert body["invalidCalls"][0]["tool_call_id"] == "call-1"
                    return True, body["invalidCalls"][0]["reason"]
                (result,) = body["results"]
                assert (result["tool_call_id"], result["role"]) == ("call-1", "tool")
                return result["isError"], result["content"]

            async def model(name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
                block = await registry.run_tool_call(ToolCall("model-1", name, arguments))
                return block.is_error, block.content

            async def note_create(name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
                assert name == "create_note"
                try:
                    return False, json.dumps(await wire.request("note/create", arguments))
                except RpcCallError as exc:
                    return True, exc.message

            yield {
                "stdio standalone": mcp(alone),
                "stdio forwarded": mcp(forwarding),
                "/mcp": mcp(over_http),
                "tools/execute": tools_execute,
                "execute-tools": execute_tools,
                "the model's calls": model,
                "note/create": note_create,
            }
    finally:
        await model_vault.close()
        await wire.close()
        await forwarding.close()
        await alone.close()
        served.process.terminate()
        await served.process.wait()


PATHS = [
    "stdio standalone",
    "stdio forwarded",
    "/mcp",
    "tools/execute",
    "execute-tools",
    "the model's calls",
]


@pytest.mark.parametrize("path", PATHS)
async def test_null_for_an_optional_argument_is_not_given(
    paths: dict[str, Call], path: str
) -> None:
    for name, arguments in NULLS.items():
        is_error, text = await paths[path](name, arguments)
        assert not is_error, f"{path}: {name}: {text}"
        if name == "read_note":
            assert json.loads(text)["path"] == "Welcome.md"


@pytest.mark.parametrize("path", [*PATHS, "note/create"])
async def test_names_other_devices_cannot_hold_are_refused_with_one_sentence(
    paths: dict[str, Call], path: str
) -> None:
    for name in NAMES:
        is_error, text = await paths[path]("create_note", {"path": name, "content": "x"})
        assert is_error, f"{path}: {name} was created"
        assert sentence(name) in text, (path, text)
