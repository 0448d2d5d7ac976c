"""The vault's notes and custom prompts through the official MCP client, over stdio (the `mcp`
command serving the vault) and over /mcp (a `serve` process): resources paged through a
2,000-note vault, read, and followed (an edit made on disk is told, by `subscriptions/listen`
on a 2026-07-28 connection and by `resources/subscribe` on a handshake-era one); the prompts
folder's notes as prompts with their arguments (hostile prompt notes left out)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import warnings
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import mcp_types as types
import pytest
import pytest_asyncio
from mcp.shared.exceptions import MCPError

from plugin_bridge.app.subscriptions import MAX_STREAMS_PER_CLIENT, MAX_URIS_PER_STREAM
from plugin_bridge.wire.client import BridgeClient
from tests.helpers.bridge import copy_example_vault
from tests.helpers.mcp import HeldClient, http_client, mcp_command
from tests.helpers.notes import hostile_prompts
from tests.helpers.serve import START_WAIT, Served, cli_env, start_serve

pytestmark = pytest.mark.asyncio(loop_scope="module")

BULK = 2_000
SUMMARIZE = """---
name: Summarize
description: A short summary
insert: selection
---
Summarize the text in three bullet points.
"""
EXPLAIN = """---
insert: note
---
Explain this note to a newcomer.
"""


@dataclass
class Setup:
    transport: str
    vault: Path
    client: HeldClient
    served: Served | None


def bulk_vault(tmp: Path) -> Path:
    vault = copy_example_vault(tmp)
    bulk = vault / "Bulk"
    bulk.mkdir()
    for n in range(BULK):
        (bulk / f"Note {n:04}.md").write_text(f"# Bulk note {n}\n\nText {n}.\n", encoding="utf-8")
    prompts = vault / "Assistant" / "Prompts"
    prompts.mkdir(parents=True)
    (prompts / "Summary.md").write_text(SUMMARIZE, encoding="utf-8")
    (prompts / "Explain note.md").write_text(EXPLAIN, encoding="utf-8")
    for name, text in hostile_prompts().items():  # left out of the list, the others kept
        (prompts / name).write_text(text, encoding="utf-8")
    return vault


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["stdio", "http"])
async def setup(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Setup]:
    tmp = tmp_path_factory.mktemp(request.param)
    vault = bulk_vault(tmp)
    info = ("--info-file", str(tmp / "server.json"))
    if request.param == "stdio":
        env = cli_env(tmp) | {"AI_BRIDGE_CONFIG": str(tmp / "none.toml")}
        client = await HeldClient(mcp_command(vault, tmp / "data", env, *info)).open()
        try:
            yield Setup("stdio", vault, client, None)
        finally:
            await client.close()
        return
    served = await start_serve(tmp, *info, vault=vault)
    url, token = f"{served.info['httpUrl']}/mcp", str(served.info["token"])
    try:
        await sdk_loaded(url, token)
        async with http_client(url, token) as c:
            yield Setup("http", vault, c, served)
    finally:
        served.process.terminate()
        await served.process.wait()


async def sdk_loaded(url: str, token: str) -> None:
    """Once /mcp has imported the SDK (its first request does, unless the server's own warm-up
    did): on a busy machine that can outlast the client's 10 s protocol probe, and the client
    would then settle for the handshake era."""
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx.AsyncClient(timeout=60) as http:
        await http.post(url, json=ping, headers=headers)


async def all_resources(client: HeldClient) -> tuple[list[types.Resource], int]:
    """Every listed note and the number of pages, once the index has the whole vault."""
    async with asyncio.timeout(60):
        while True:
            listed: list[types.Resource] = []
            pages, cursor = 0, None
            while True:
                page = await client.client.list_resources(cursor=cursor, cache_mode="bypass")
                listed += page.resources
                pages += 1
                cursor = page.next_cursor
                if cursor is None:
                    break
            bulk = [r for r in listed if r.name.startswith("Bulk/")]
            if len(bulk) == BULK and all(r.title for r in bulk):  # titles: the index's
                return listed, pages
            await asyncio.sleep(0.2)


async def test_list_resources_pages_through_the_vault(setup: Setup) -> None:
    assert setup.client.client.server_capabilities.resources is not None
    listed, pages = await all_resources(setup.client)
    on_disk = {
        path.relative_to(setup.vault).as_posix()
        for path in setup.vault.rglob("*")
        if path.suffix in (".md", ".canvas", ".base")
    }
    assert pages > 1
    assert [r.name for r in listed] == sorted(on_disk)  # each note once, in path order
    note = next(r for r in listed if r.name == "Bulk/Note 0042.md")
    assert note.uri == "note://Bulk/Note%200042.md"
    assert (note.title, note.mime_type) == ("Note 0042", "text/markdown")
    assert note.size == len("# Bulk note 42\n\nText 42.\n")
    with pytest.raises(MCPError, match="cursor"):
        await setup.client.client.list_resources(cursor="not a cursor!", cache_mode="bypass")


async def test_read_resource(setup: Setup) -> None:
    read = await setup.client.client.read_resource(
        "note://Bulk/Note%200007.md", cache_mode="bypass"
    )
    (contents,) = read.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.text == "# Bulk note 7\n\nText 7.\n"
    templates = (await setup.client.client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["note://{path}"]


async def test_a_listen_subscription_sees_edits_on_disk_and_through_the_server(
    setup: Setup,
) -> None:
    uri = "note://Bulk/Note%200100.md"
    assert setup.client.client.protocol_version == "2026-07-28"
    info = json.loads((setup.vault.parent / "server.json").read_text())
    wire = await BridgeClient.connect(info["url"], info["token"])
    try:
        async with setup.client.client.listen(resource_subscriptions=[uri]) as subscription:
            events = aiter(subscription)
            (setup.vault / "Bulk" / "Note 0100.md").write_text("edited\n", encoding="utf-8")
            async with asyncio.timeout(START_WAIT):
                on_disk = await anext(events)
            await wire.request("note/append", {"path": "Bulk/Note 0100.md", "text": "more\n"})
            async with asyncio.timeout(START_WAIT):
                through_the_server = await anext(events)
    finally:
        await wire.close()
    assert getattr(on_disk, "uri", None) == getattr(through_the_server, "uri", None) == uri


async def test_list_prompts_and_get_prompt(setup: Setup) -> None:
    prompts = {p.name: p for p in (await setup.client.client.list_prompts()).prompts}
    assert set(prompts) == {"Summarize", "Explain note"}
    summarize, explain = prompts["Summarize"], prompts["Explain note"]
    assert (summarize.title, summarize.description) == ("Summarize", "A short summary")
    assert [(a.name, a.required) for a in summarize.arguments or []] == [
        ("selection", True),
        ("text", False),
    ]
    assert explain.title == "Explain note"
    assert [a.name for a in explain.arguments or []] == ["note", "text"]
    got = await setup.client.client.get_prompt(
        "Summarize", {"selection": "Kafka keeps logs.", "text": "Be brief."}
    )
    first, second = (message.content for message in got.messages)
    assert isinstance(first, types.TextContent) and isinstance(second, types.TextContent)
    assert first.text == "Summarize the text in three bullet points.\n\nBe brief."
    assert second.text == "Kafka keeps logs."
    got = await setup.client.client.get_prompt("Explain note", {"note": "Bulk/Note 0003.md"})
    embedded = got.messages[1].content
    assert isinstance(embedded, types.EmbeddedResource)
    assert embedded.resource.uri == "note://Bulk/Note%200003.md"
    with pytest.raises(MCPError, match="needs the argument 'selection'"):
        await setup.client.client.get_prompt("Summarize", {})
    with pytest.raises(MCPError, match="There is no prompt"):
        await setup.client.client.get_prompt("Nope", {})


async def test_a_handshake_era_subscription_sees_an_edit_made_on_disk(setup: Setup) -> None:
    """resources/subscribe, then notifications/resources/updated on the connection (stdio;
    /mcp is stateless, so there a handshake-era client is not offered ``subscribe``)."""
    if setup.transport != "stdio":
        assert setup.served is not None
        info = setup.served.info
        async with http_client(f"{info['httpUrl']}/mcp", str(info["token"]), mode="legacy") as c:
            resources = c.client.server_capabilities.resources
            assert resources is not None and not resources.subscribe
        return
    uri = "note://Bulk/Note%200200.md"
    updated: asyncio.Queue[str] = asyncio.Queue()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.put_nowait(str(message.params.uri))

    tmp = setup.vault.parent
    env = cli_env(tmp) | {"AI_BRIDGE_CONFIG": str(tmp / "none.toml")}
    info = ("--info-file", str(tmp / "server.json"))
    legacy = await HeldClient(
        mcp_command(setup.vault, tmp / "data", env, *info),
        mode="legacy",
        message_handler=on_message,
    ).open()
    try:
        assert legacy.client.protocol_version == "2025-11-25"
        assert legacy.client.server_capabilities.resources is not None
        assert legacy.client.server_capabilities.resources.subscribe
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated from 2026-07-28, which this is not
            await legacy.client.subscribe_resource(uri)
        (setup.vault / "Bulk" / "Note 0200.md").write_text("edited by hand\n", encoding="utf-8")
        async with asyncio.timeout(START_WAIT):
            assert await updated.get() == uri
    finally:
        await legacy.close()


async def test_a_listen_stream_over_the_cap_is_refused_with_its_sentence(setup: Setup) -> None:
    """1,001 note URIs on one stream: refused before anything is followed; the client can
    follow a note right after."""
    uris = [f"note://Bulk/Note%20{n:04}.md" for n in range(MAX_URIS_PER_STREAM + 1)]
    with pytest.raises(MCPError, match=f"One stream follows at most {MAX_URIS_PER_STREAM} notes"):
        async with setup.client.client.listen(resource_subscriptions=uris) as subscription:
            await anext(aiter(subscription))
    async with setup.client.client.listen(resource_subscriptions=uris[:1]) as subscription:
        events = aiter(subscription)
        (setup.vault / "Bulk" / "Note 0000.md").write_text("edited again\n", encoding="utf-8")
        async with asyncio.timeout(START_WAIT):
            assert getattr(await anext(events), "uri", None) == uris[0]


async def test_a_client_holds_at_most_four_listen_streams(setup: Setup) -> None:
    async with contextlib.AsyncExitStack() as streams:
        for n in range(MAX_STREAMS_PER_CLIENT):
            uri = f"note://Bulk/Note%20{n:04}.md"
            await streams.enter_async_context(
                setup.client.client.listen(resource_subscriptions=[uri])
            )
        with pytest.raises(MCPError, match="follows notes on 4 streams already"):
            async with setup.client.client.listen(
                resource_subscriptions=["note://Welcome.md"]
            ) as subscription:
                await anext(aiter(subscription))
