"""A stand-in for Discord's REST API and gateway on 127.0.0.1 (aiohttp), speaking their shapes:
``GET /gateway/bot`` names the gateway (a WebSocket here: HELLO, IDENTIFY, READY, heartbeats,
then MESSAGE_CREATE and INTERACTION_CREATE dispatches, zlib-stream compressed when asked);
REST creates and edits messages, takes interaction callbacks and slash commands, and answers
429 with ``retry_after`` and ``Retry-After`` when told to.

A test plays the users: :meth:`FakeDiscord.send` (a DM, optionally with an attachment),
:meth:`FakeDiscord.press` (a button), :meth:`FakeDiscord.command` (a slash command), and reads
``messages``, ``callbacks``, ``commands``, ``typing``."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from aiohttp import WSMsgType, web

TOKEN: Final = "MTIzNDU2Nzg5MDEyMzQ1Njc4.FakeDc.DiscordTokenForTests_abcdefghijkl"
BOT_ID: Final = "900000000000000001"
_ids = itertools.count(1_100_000_000_000_000_000)


def snowflake() -> str:
    return str(next(_ids))


@dataclass
class PostedMessage:
    channel_id: str
    id: str
    texts: list[str]
    times: list[float]
    components: list[dict[str, Any]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.texts[-1]

    @property
    def buttons(self) -> list[dict[str, Any]]:
        return [c for row in self.components for c in row.get("components", [])]


def _user(user_id: str, name: str, *, bot: bool = False) -> dict[str, Any]:
    return {
        "id": user_id,
        "username": name,
        "discriminator": "0",
        "global_name": name,
        "avatar": None,
        "bot": bot,
        "public_flags": 0,
    }


def _now() -> str:
    return datetime.now(UTC).isoformat()


class FakeDiscord:
    """``async with FakeDiscord() as api: api.url`` (the ``api_url``: the REST base)."""

    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.url = ""
        self.gateway_url = ""
        self.messages: dict[str, PostedMessage] = {}
        self.callbacks: list[dict[str, Any]] = []
        self.commands: list[dict[str, Any]] = []
        self.typing: list[str] = []
        self.rate_limit: dict[str, list[float]] = {}
        """"POST messages" / "PATCH messages" -> retry_after of the next calls to answer 429."""
        self.limited: list[tuple[str, float]] = []
        self.attachments: dict[str, bytes] = {}
        self.identified = asyncio.Event()
        self.dispatched: list[dict[str, Any]] = []
        """Every event sent, in order (a reconnecting bot gets them again)."""
        self._sockets: list[web.WebSocketResponse] = []
        self._seq = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self._dm_channels: dict[str, str] = {}
        self._deflate: dict[int, Any] = {}

    async def __aenter__(self) -> FakeDiscord:
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_get("/attachments/{name}", self._attachment)
        app.router.add_route("*", "/api/v10/{path:.*}", self._rest)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}/api/v10"
        self.gateway_url = f"ws://127.0.0.1:{port}/gateway"
        self.root = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        for socket in list(self._sockets):
            await socket.close()
        assert self._runner is not None
        await self._runner.cleanup()

    # -- the users ------------------------------------------------------------------------

    def dm_channel(self, user: int) -> str:
        return self._dm_channels.setdefault(str(user), snowflake())

    async def send(
        self, user: int, content: str, *, attachment: tuple[str, str, bytes] | None = None
    ) -> str:
        """A direct message from ``user`` (with an attachment (name, type, bytes)); its id."""
        message_id = snowflake()
        attachments = []
        if attachment is not None:
            name, content_type, data = attachment
            self.attachments[name] = data
            url = f"{self.root}/attachments/{name}"
            attachments.append(
                {
                    "id": snowflake(),
                    "filename": name,
                    "size": len(data),
                    "url": url,
                    "proxy_url": url,
                    "content_type": content_type,
                }
            )
        await self.dispatch(
            "MESSAGE_CREATE",
            self._message(
                self.dm_channel(user),
                message_id,
                content,
                _user(str(user), f"user{user}"),
                attachments=attachments,
            ),
        )
        return message_id

    async def press(self, user: int, message: PostedMessage, label: str) -> None:
        button = next(b for b in message.buttons if b.get("label") == label)
        await self.dispatch(
            "INTERACTION_CREATE",
            self._interaction(
                user,
                message.channel_id,
                3,
                {"custom_id": button["custom_id"], "component_type": 2},
                message=self._message(
                    message.channel_id, message.id, message.text, _user(BOT_ID, "vault", bot=True)
                ),
            ),
        )

    async def command(self, user: int, name: str, value: str | None = None) -> None:
        options = [] if value is None else [{"name": "text", "type": 3, "value": value}]
        data = {"id": snowflake(), "name": name, "type": 1, "options": options}
        await self.dispatch(
            "INTERACTION_CREATE", self._interaction(user, self.dm_channel(user), 2, data)
        )

    def _interaction(
        self,
        user: int,
        channel: str,
        kind: int,
        data: dict[str, Any],
        message: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": snowflake(),
            "application_id": BOT_ID,
            "type": kind,
            "data": data,
            "channel_id": channel,
            "channel": {"id": channel, "type": 1},
            "user": _user(str(user), f"user{user}"),
            "token": f"interaction-token-{snowflake()}",
            "version": 1,
            "locale": "en-US",
            "app_permissions": "0",
            "entitlements": [],
            "authorizing_integration_owners": {"1": str(user)},
            "context": 1,
            "attachment_size_limit": 26_214_400,
        }
        if message is not None:
            body["message"] = message
        return body

    def _message(
        self,
        channel: str,
        message_id: str,
        content: str,
        author: dict[str, Any],
        *,
        attachments: list[dict[str, Any]] | None = None,
        components: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        return {
            "id": message_id,
            "channel_id": channel,
            "author": author,
            "content": content,
            "timestamp": _now(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": attachments or [],
            "embeds": [],
            "pinned": False,
            "type": 0,
            "flags": 0,
            "components": components or [],
        }

    def channel(self, user: int) -> list[PostedMessage]:
        channel = self.dm_channel(user)
        return [m for m in self.messages.values() if m.channel_id == channel]

    # -- the gateway ----------------------------------------------------------------------

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        await self.identified.wait()
        payload = {"op": 0, "t": event, "s": next(self._seq), "d": data}
        self.dispatched.append(payload)
        for socket in list(self._sockets):
            if not socket.closed:
                await self._send(socket, payload)

    async def _send(self, socket: web.WebSocketResponse, payload: dict[str, Any]) -> None:
        text = json.dumps(payload)
        deflate = self._deflate.get(id(socket))
        if deflate is None:
            await socket.send_str(text)
        else:
            data = deflate.compress(text.encode()) + deflate.flush(zlib.Z_SYNC_FLUSH)
            await socket.send_bytes(data)

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        if request.query.get("compress") == "zlib-stream":
            self._deflate[id(socket)] = zlib.compressobj()
        await self._send(
            socket, {"op": 10, "d": {"heartbeat_interval": 41250}, "s": None, "t": None}
        )
        async for message in socket:
            if message.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
                continue
            payload = json.loads(message.data)
            if payload["op"] == 1:
                await self._send(socket, {"op": 11, "d": None, "s": None, "t": None})
            elif payload["op"] == 2:
                if payload["d"]["token"] != self.token:
                    await socket.close(code=4004, message=b"Authentication failed.")
                    break
                self._sockets.append(socket)
                ready = {
                    "v": 10,
                    "user": _user(BOT_ID, "vault", bot=True)
                    | {"verified": True, "mfa_enabled": False, "flags": 0},
                    "guilds": [],
                    "session_id": "fake-session",
                    "resume_gateway_url": self.gateway_url,
                    "shard": [0, 1],
                    "application": {"id": BOT_ID, "flags": 0},
                    "private_channels": [],
                    "relationships": [],
                    "user_settings": {},
                    "presences": [],
                }
                await self._send(socket, {"op": 0, "t": "READY", "s": next(self._seq), "d": ready})
                self.identified.set()
        if socket in self._sockets:
            self._sockets.remove(socket)
        return socket

    # -- REST -----------------------------------------------------------------------------

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = request.match_info["path"]
        if path.startswith("interactions/"):  # authorised by the interaction's own token
            return self._callback(path.split("/"), await request.json())
        if request.headers.get("Authorization") != f"Bot {self.token}":
            return web.json_response({"message": "401: Unauthorized", "code": 0}, status=401)
        body = await request.json() if request.can_read_body else {}
        parts = path.split("/")
        key = f"{request.method} {parts[-1] if parts[0] == 'channels' else parts[0]}"
        waits = self.rate_limit.get(key)
        if waits:
            seconds = waits.pop(0)
            self.limited.append((key, time.monotonic()))
            return web.json_response(
                {"message": "You are being rate limited.", "retry_after": seconds, "global": False},
                status=429,
                headers={"Retry-After": str(seconds), "X-RateLimit-Scope": "user"},
            )
        if path == "gateway/bot":
            return web.json_response(
                {
                    "url": self.gateway_url,
                    "shards": 1,
                    "session_start_limit": {
                        "total": 1000,
                        "remaining": 999,
                        "reset_after": 0,
                        "max_concurrency": 1,
                    },
                }
            )
        if path == "users/@me":
            return web.json_response(
                _user(BOT_ID, "vault", bot=True)
                | {"flags": 0, "verified": True, "mfa_enabled": False}
            )
        if parts[0] == "applications" and parts[-1] == "commands":
            self.commands = [
                {
                    "id": snowflake(),
                    "application_id": BOT_ID,
                    "version": snowflake(),
                    "default_member_permissions": None,
                    "type": 1,
                    "nsfw": False,
                    "integration_types": [0, 1],
                    "contexts": [0, 1, 2],
                    **command,
                }
                for command in body
            ]
            return web.json_response(self.commands)
        if parts[0] == "channels" and parts[-1] == "typing":
            self.typing.append(parts[1])
            return web.Response(status=204)
        if parts[0] == "channels" and parts[2] == "messages":
            return self._message_rest(request.method, parts, body)
        return web.json_response({"message": "404: Not Found", "code": 0}, status=404)

    def _callback(self, parts: list[str], body: dict[str, Any]) -> web.Response:
        """POST /interactions/{id}/{token}/callback?with_response=true."""
        self.callbacks.append(body)
        message_id = snowflake()
        content = str(body.get("data", {}).get("content", ""))
        message = self._message("0", message_id, content, _user(BOT_ID, "vault", bot=True))
        return web.json_response(
            {
                "interaction": {"id": parts[1], "type": 3, "response_message_id": message_id},
                "resource": {"type": body["type"], "message": message},
            }
        )

    def _message_rest(self, method: str, parts: list[str], body: dict[str, Any]) -> web.Response:
        channel = parts[1]
        for number, row in enumerate(body.get("components") or [], 1):
            row.setdefault("id", number * 10)
            for index, component in enumerate(row.get("components", []), 1):
                component.setdefault("id", number * 10 + index)
        if len(str(body.get("content", ""))) > 2000:
            return web.json_response({"message": "Invalid Form Body", "code": 50035}, status=400)
        if method == "POST":
            message = PostedMessage(
                channel,
                snowflake(),
                [body.get("content", "")],
                [time.monotonic()],
                body.get("components") or [],
            )
            self.messages[message.id] = message
        else:
            message = self.messages[parts[3]]
            if "content" in body:
                message.texts.append(body["content"])
                message.times.append(time.monotonic())
            if "components" in body:
                message.components = body["components"] or []
        return web.json_response(
            self._message(
                channel,
                message.id,
                message.text,
                _user(BOT_ID, "vault", bot=True),
                components=message.components,
            )
        )

    async def _attachment(self, request: web.Request) -> web.Response:
        data = self.attachments.get(request.match_info["name"])
        return web.Response(status=404) if data is None else web.Response(body=data)
