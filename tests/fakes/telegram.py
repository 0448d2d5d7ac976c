"""A stand-in for the Telegram Bot API on 127.0.0.1 (aiohttp), speaking its shapes: Update,
Message, CallbackQuery, File; ``getUpdates`` long-polls with confirmation by offset;
``sendMessage`` / ``editMessageText`` check MarkdownV2 by the Bot API's escaping rules (400
"can't parse entities"); any method can be made to answer 429 with
``parameters.retry_after``; files are served from ``/file/bot<token>/<path>``.

A test plays the users: :meth:`FakeTelegram.send` (a message, a photo, a document),
:meth:`FakeTelegram.press` (a button), and reads what the bot did: ``messages`` (each message's
every text, with when), ``actions``, ``answers``, ``commands``."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Final

from aiohttp import web

TOKEN: Final = "123456:AAFakeTelegramTokenForTests_abcdefghij"
BOT_ID: Final = 123456
BOT_USERNAME: Final = "vault_test_bot"
RESERVED: Final = set("_*[]()~`>#+-=|{}.!")


@dataclass
class SentMessage:
    chat_id: int
    message_id: int
    texts: list[str]
    times: list[float]
    parse_modes: list[str | None]
    buttons: list[dict[str, Any]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.texts[-1]


LINK_SCHEMES: Final = frozenset({"http", "https", "tg", "ftp", "mailto"})
"""The schemes a MarkdownV2 link may have (others, obsidian:// among them, are refused)."""


def markdown_v2_problem(text: str) -> str | None:
    """Why the Bot API refuses ``text`` as MarkdownV2 (None: it takes it). The rules: outside
    entities every reserved character is escaped with a backslash; inside code and pre only `
    and \\ are (and must be); entities (* _ __ ~ || ` ``` [..](..)) are closed; a link's URL has
    a scheme Telegram opens."""
    open_marks: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            if i + 1 >= n:
                return "Character '\\' is reserved and must be escaped with the preceding '\\'"
            i += 2
            continue
        if text.startswith("```", i):
            end = _code_end(text, i + 3, "```")
            if end is None:
                return f"Can't find end of Pre entity at byte offset {i}"
            i = end + 3
            continue
        if c == "`":
            end = _code_end(text, i + 1, "`")
            if end is None:
                return f"Can't find end of Code entity at byte offset {i}"
            i = end + 1
            continue
        if c == "]" and "[" in open_marks:
            open_marks.remove("[")
            if text.startswith("(", i + 1):
                j = i + 2
                while j < n and text[j] != ")":
                    j += 2 if text[j] == "\\" else 1
                if j >= n:
                    return f"Can't find end of a url at byte offset {i}"
                scheme = text[i + 2 : j].partition(":")[0].lower()
                if scheme not in LINK_SCHEMES:
                    return "Unsupported URL protocol"
                i = j + 1
                continue
            i += 1
            continue
        mark = "__" if text.startswith("__", i) else "||" if text.startswith("||", i) else c
        if mark in ("*", "_", "__", "~", "||", "["):
            if mark != "[" and mark in open_marks:
                if open_marks[-1] != mark:
                    return f"Can't find end of an entity at byte offset {i}"
                open_marks.pop()
            else:
                open_marks.append(mark)
            i += len(mark)
            continue
        if c in RESERVED:
            return f"Character '{c}' is reserved and must be escaped with the preceding '\\'"
        i += 1
    if open_marks:
        return f"Can't find end of the entity starting with '{open_marks[-1]}'"
    return None


def _code_end(text: str, start: int, fence: str) -> int | None:
    i = start
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text.startswith(fence, i):
            return i
        if text[i] == "`" and fence == "```":
            return None  # an unescaped ` inside pre
        i += 1
    return None


def plain_of(markdown: str) -> str:
    """What a MarkdownV2 text shows: the escapes and entity marks removed (roughly)."""
    out = re.sub(r"```[\w+-]*\n?", "", markdown)
    out = re.sub(r"\\(.)", lambda m: "\0" + m.group(1), out)
    out = re.sub(r"[*_~`|]", "", out)
    return out.replace("\0", "")


class FakeTelegram:
    """``async with FakeTelegram() as api: api.url`` (the ``api_url`` to configure)."""

    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.url = ""
        self.updates: list[dict[str, Any]] = []
        self.confirmed = 0
        self._update_ids = itertools.count(1)
        self._message_ids = itertools.count(1000)
        self._new_update = asyncio.Event()
        self.messages: dict[int, SentMessage] = {}
        self.actions: list[tuple[int, str]] = []
        self.answers: list[tuple[str, str]] = []
        self.commands: list[dict[str, Any]] = []
        self.files: dict[str, tuple[str, bytes]] = {}
        self.calls: list[str] = []
        self.rate_limit: dict[str, list[int]] = {}
        """method -> retry_after of the next calls to answer 429."""
        self.limited: list[tuple[str, float]] = []
        self.refused_formatting = 0
        self.failing_polls = 0
        """The next getUpdates calls that answer 502 (a Bot API having a bad moment)."""
        self.refuse_markdown = False
        """When set, every MarkdownV2 text is refused (as a Bot API that cannot parse it)."""
        self.redeliver = False
        """When set, the next getUpdates hands out every update again, whatever its offset."""
        self._runner: web.AppRunner | None = None
        self._closing = False

    async def __aenter__(self) -> FakeTelegram:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._method)
        app.router.add_get("/file/bot{token}/{path:.*}", self._file)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        self._closing = True
        self._new_update.set()  # long polls under way answer now
        await self._runner.cleanup()

    # -- the users ------------------------------------------------------------------------

    def send(
        self,
        user: int,
        text: str | None = None,
        *,
        chat_id: int | None = None,
        chat_type: str = "private",
        photo: bytes | None = None,
        document: tuple[str, str, bytes] | None = None,
        voice: bytes | None = None,
        caption: str | None = None,
    ) -> int:
        """A user's message (a photo, or a document (name, mime type, bytes)); its update id."""
        chat = chat_id if chat_id is not None else user
        message: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": {"id": chat, "type": chat_type},
            "from": {"id": user, "is_bot": False, "first_name": f"User {user}"},
        }
        if text is not None:
            message["text"] = text
        if caption is not None:
            message["caption"] = caption
        if photo is not None:
            file_id = self._add_file("photos/photo.jpg", photo)
            message["photo"] = [
                {
                    "file_id": file_id,
                    "file_unique_id": f"u{file_id}",
                    "width": 10,
                    "height": 10,
                    "file_size": len(photo),
                }
            ]
        if document is not None:
            name, mime, data = document
            file_id = self._add_file(f"documents/{name}", data)
            message["document"] = {
                "file_id": file_id,
                "file_unique_id": f"u{file_id}",
                "file_name": name,
                "mime_type": mime,
                "file_size": len(data),
            }
        if voice is not None:
            file_id = self._add_file("voice/file_1.oga", voice)
            message["voice"] = {
                "file_id": file_id,
                "file_unique_id": f"u{file_id}",
                "duration": 2,
                "mime_type": "audio/ogg",
                "file_size": len(voice),
            }
        return self._push({"message": message})

    def press(self, user: int, message: SentMessage, label: str) -> int:
        """``user`` presses the button ``label`` under ``message``."""
        button = next(b for b in message.buttons if b["text"] == label)
        query = {
            "id": f"q{len(self.answers) + len(self.updates)}",
            "from": {"id": user, "is_bot": False, "first_name": f"User {user}"},
            "chat_instance": "1",
            "data": button["callback_data"],
            "message": {
                "message_id": message.message_id,
                "date": int(time.time()),
                "chat": {"id": message.chat_id, "type": "private"},
                "text": message.text,
            },
        }
        return self._push({"callback_query": query})

    def _push(self, update: dict[str, Any]) -> int:
        update_id = next(self._update_ids)
        self.updates.append({"update_id": update_id, **update})
        self._new_update.set()
        return update_id

    def _add_file(self, path: str, data: bytes) -> str:
        file_id = f"f{len(self.files) + 1}"
        self.files[file_id] = (path, data)
        return file_id

    def chat(self, chat_id: int) -> list[SentMessage]:
        return [m for m in self.messages.values() if m.chat_id == chat_id]

    # -- the Bot API ----------------------------------------------------------------------

    async def _params(self, request: web.Request) -> dict[str, Any]:
        params: dict[str, Any] = dict(request.query)
        if request.content_type == "application/json":
            params.update(await request.json())
        elif request.can_read_body:
            form = await request.post()
            params.update({k: v for k, v in form.items() if isinstance(v, str)})
        for key in ("reply_markup", "commands", "allowed_updates"):
            if isinstance(params.get(key), str):
                params[key] = json.loads(params[key])
        return params

    async def _method(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        self.calls.append(method)
        if request.match_info["token"] != self.token:
            return _error(401, "Unauthorized")
        params = await self._params(request)
        waits = self.rate_limit.get(method)
        if waits:
            seconds = waits.pop(0)
            self.limited.append((method, time.monotonic()))
            return _error(
                429,
                f"Too Many Requests: retry after {seconds}",
                {"retry_after": seconds},
            )
        handler = getattr(self, f"_{method}", None)
        if handler is None:
            return _error(404, "Not Found: method not found")
        result: Any = await handler(params)
        if isinstance(result, web.Response):
            return result
        return web.json_response({"ok": True, "result": result})

    async def _getMe(self, params: dict[str, Any]) -> Any:
        return {
            "id": BOT_ID,
            "is_bot": True,
            "first_name": "Vault",
            "username": BOT_USERNAME,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
        }

    async def _setMyCommands(self, params: dict[str, Any]) -> Any:
        self.commands = list(params.get("commands", []))
        return True

    async def _getUpdates(self, params: dict[str, Any]) -> Any:
        if self.failing_polls:
            self.failing_polls -= 1
            return _error(502, "Bad Gateway")
        offset = int(params.get("offset") or 0)
        if offset > 0:
            self.confirmed = max(self.confirmed, offset - 1)
        timeout = float(params.get("timeout") or 0)
        deadline = time.monotonic() + timeout
        while True:
            if self.redeliver:
                self.redeliver = False
                return self.updates
            pending = [u for u in self.updates if u["update_id"] > self.confirmed]
            if pending or self._closing or time.monotonic() >= deadline:
                return pending
            self._new_update.clear()
            try:
                async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                    await self._new_update.wait()
            except TimeoutError:
                return []

    def _check(self, params: dict[str, Any]) -> web.Response | None:
        if params.get("parse_mode") == "MarkdownV2":
            problem = (
                "refused" if self.refuse_markdown else markdown_v2_problem(str(params["text"]))
            )
            if problem is not None:
                self.refused_formatting += 1
                return _error(400, f"Bad Request: can't parse entities: {problem}")
        if len(str(params.get("text", ""))) > 4096:
            return _error(400, "Bad Request: message is too long")
        if not str(params.get("text", "")).strip():
            return _error(400, "Bad Request: message text is empty")
        return None

    async def _sendMessage(self, params: dict[str, Any]) -> Any:
        refused = self._check(params)
        if refused is not None:
            return refused
        chat_id = int(params["chat_id"])
        message_id = next(self._message_ids)
        buttons = [
            b for row in (params.get("reply_markup") or {}).get("inline_keyboard", []) for b in row
        ]
        self.messages[message_id] = SentMessage(
            chat_id,
            message_id,
            [params["text"]],
            [time.monotonic()],
            [params.get("parse_mode")],
            buttons,
        )
        return self._message(chat_id, message_id, params["text"])

    async def _editMessageText(self, params: dict[str, Any]) -> Any:
        refused = self._check(params)
        if refused is not None:
            return refused
        message = self.messages[int(params["message_id"])]
        if params["text"] == message.text and not message.buttons:
            return _error(400, "Bad Request: message is not modified")
        message.texts.append(params["text"])
        message.times.append(time.monotonic())
        message.parse_modes.append(params.get("parse_mode"))
        message.buttons = _buttons(params)
        return self._message(message.chat_id, message.message_id, params["text"])

    def _message(self, chat_id: int, message_id: int, text: str) -> dict[str, Any]:
        return {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private"},
            "from": {"id": BOT_ID, "is_bot": True, "first_name": "Vault"},
            "text": text,
        }

    async def _sendChatAction(self, params: dict[str, Any]) -> Any:
        self.actions.append((int(params["chat_id"]), str(params["action"])))
        return True

    async def _answerCallbackQuery(self, params: dict[str, Any]) -> Any:
        self.answers.append((str(params["callback_query_id"]), str(params.get("text", ""))))
        return True

    async def _getFile(self, params: dict[str, Any]) -> Any:
        path, data = self.files[str(params["file_id"])]
        return {
            "file_id": params["file_id"],
            "file_unique_id": f"u{params['file_id']}",
            "file_size": len(data),
            "file_path": path,
        }

    async def _file(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return web.Response(status=401)
        wanted = request.match_info["path"]
        for path, data in self.files.values():
            if path == wanted:
                return web.Response(body=data)
        return web.Response(status=404)


def _buttons(params: dict[str, Any]) -> list[dict[str, Any]]:
    keyboard = (params.get("reply_markup") or {}).get("inline_keyboard", [])
    return [button for row in keyboard for button in row]


def _error(status: int, description: str, parameters: dict[str, Any] | None = None) -> web.Response:
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if parameters is not None:
        body["parameters"] = parameters
    return web.json_response(body, status=status)
