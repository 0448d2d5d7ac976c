"""What both bots do, whatever the app: who may talk, the commands, files, and a question as
the application's turn (the panel's tool loop, search, context note, budgets, usage and
conversations), streamed into the chat, with writes shown for Approve / Deny.

The adapters (:mod:`.telegram`, :mod:`.discord`) turn the app's events into :class:`Incoming`
and button presses into :meth:`ChatCore.pressed`, and drive the chat through a
:class:`~.stream.ChatSurface`; this module decides nothing the application decides.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from llm_service import LLMError, ResponseComplete, TextDelta
from plugin_bridge.app.capture import MAX_FILE_BYTES, capture, save_attachment
from plugin_bridge.app.clients import AppUser
from plugin_bridge.app.turn.confirm import CHAT_APP_CONFIRM_TIMEOUT, WriteReview, ask_chat
from plugin_bridge.app.turn.conversation import TurnRequest
from plugin_bridge.chatapps.stream import EDIT_INTERVAL, ChatSurface, Stream, formatted_or_plain
from plugin_bridge.chatapps.text import sources_markdown
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.wire.errors import RpcError, WireCode, to_wire_error
from plugin_bridge.wire.models import NoteContext

if TYPE_CHECKING:
    from plugin_bridge.app.assistant import Assistant
    from plugin_bridge.app.settings.config import DiscordSettings, TelegramSettings
    from plugin_bridge.app.vault_tools import Writer
    from plugin_bridge.chatapps.store import ChatAppStore
    from plugin_bridge.vault.vault import Vault

logger = logging.getLogger(__name__)

STRANGER_REPLY: Final = "This assistant is private."
STRANGER_EVERY: Final = 3600.0
"""At most one reply to a user not in allowed_users per this many seconds."""
MAX_STRANGERS: Final = 10_000
"""Strangers remembered before those answered over an hour ago are forgotten."""
SEARCH_HITS: Final = 5
HELP: Final = (
    "Ask anything about your notes, or send a photo or a PDF with a question.\n"
    "/note TEXT: add a line to your capture note\n"
    "/search QUERY: find notes\n"
    "/new: start a new conversation\n"
    "/help: this help"
)
COMMANDS: Final = (
    ("note", "Add a line to your capture note"),
    ("search", "Find notes"),
    ("new", "Start a new conversation"),
    ("help", "What this bot does"),
)
FileKind = Literal["image", "pdf", "voice", "sticker", "file"]


def document_kind(name: str, media_type: str) -> FileKind:
    """A sent document's kind by its media type (``image/…``) or PDF name: image, pdf or file."""
    if media_type.startswith("image/"):
        return "image"
    if media_type == "application/pdf" or name.lower().endswith(".pdf"):
        return "pdf"
    return "file"


@dataclass(frozen=True, slots=True)
class SentFile:
    """A file sent to the bot; ``fetch`` downloads it."""

    name: str
    size: int | None
    kind: FileKind
    fetch: Callable[[], Awaitable[bytes]]


@dataclass(frozen=True, slots=True)
class Incoming:
    """A message from the chat app, as the core reads it."""

    user: int
    chat: ChatSurface
    text: str
    private: bool = True
    mentioned: bool = False
    attachment: SentFile | None = None


@dataclass
class _Pending:
    """A write shown for Approve / Deny: who may answer, and the answer."""

    user: int
    answer: asyncio.Future[bool]


class ChatCore:
    """One bot's behaviour (see the module docstring)."""

    def __init__(
        self,
        name: str,
        settings: TelegramSettings | DiscordSettings,
        assistant: Assistant,
        vault: Vault,
        writer: Writer,
        store: ChatAppStore,
        *,
        confirm_timeout: float = CHAT_APP_CONFIRM_TIMEOUT,
        edit_interval: float = EDIT_INTERVAL,
    ) -> None:
        self.name = name
        self.settings = settings
        self.assistant = assistant
        self.vault = vault
        self.writer = writer
        self.store = store
        self.confirm_timeout = confirm_timeout
        self.edit_interval = edit_interval
        self._allowed = frozenset(settings.allowed_users)
        self._strangers: dict[int, float] = {}
        self._pending: dict[str, _Pending] = {}
        self._chats: dict[str, asyncio.Lock] = {}
        self._settling: set[asyncio.Task[None]] = set()

    def allowed(self, user: int) -> bool:
        return user in self._allowed

    async def handle(self, message: Incoming) -> None:
        """Answer one message (already recorded as taken by the adapter)."""
        if not self.allowed(message.user):
            await self._stranger(message)
            return
        if not message.private and not message.mentioned:
            return
        user = AppUser(str(message.user), self.settings.scope, self.name)
        lock = self._chats.setdefault(message.chat.chat_id, asyncio.Lock())
        async with lock:
            try:
                await self._answer(message, user)
            except Exception:
                logger.exception("%s: a message could not be answered", self.name)
                await self._say(message.chat, "Something went wrong; please try again.")

    async def pressed(self, user: int, token: str, approve: bool) -> str:
        """A button press: the sentence the app shows the presser."""
        pending = self._pending.get(token)
        if pending is None or pending.answer.done():
            return "This request is no longer waiting for an answer."
        if pending.user != user:
            return "Only the user who asked may answer."
        pending.answer.set_result(approve)
        return "Approved." if approve else "Denied."

    # -- what a message asks -------------------------------------------------------------

    async def _answer(self, message: Incoming, user: AppUser) -> None:
        chat, text = message.chat, message.text.strip()
        command, _, rest = text.partition(" ")
        command = command.split("@")[0].lower()
        if message.attachment is not None:
            await self._file(message, user, text)
        elif command in ("/help", "/start"):
            await self._say(chat, HELP)
        elif command == "/new":
            await self.store.execute(lambda s: s.set_conversation(self.name, chat.chat_id, None))
            await self._say(chat, "Started a new conversation.")
        elif command == "/note":
            await self._note(chat, user, rest)
        elif command == "/search":
            await self._search(chat, rest)
        elif not text:
            await self._say(chat, "Send a question, or /help to see what I can do.")
        elif not user.allows("chat"):
            await self._say(chat, "This bot may only search (scope read): use /search QUERY.")
        else:
            await self.ask(chat, user, text)

    async def _note(self, chat: ChatSurface, user: AppUser, text: str) -> None:
        if not text.strip():
            await self._say(chat, "Write the note after the command: /note Call the plumber.")
            return
        if not user.allows("chat"):
            await self._say(chat, "This bot may only search (scope read).")
            return
        try:
            path = await capture(self.vault, self.writer, self.settings.capture_note, text, user)
        except VaultError as exc:
            await self._say(chat, exc.message)
            return
        await self._say(chat, f"Added to {path.removesuffix('.md')}.")

    async def _search(self, chat: ChatSurface, query: str) -> None:
        if not query.strip():
            await self._say(chat, "Say what to look for: /search meeting notes.")
            return
        try:
            found = await self.vault.search(query, SEARCH_HITS)
        except VaultError as exc:
            await self._say(chat, exc.message)
            return
        if not found.hits:
            await self._say(chat, f"No notes match “{query.strip()}”.")
            return
        lines = []
        for hit in found.hits:
            folder = hit.path.rpartition("/")[0] or "/"
            snippet = " ".join(hit.snippet.replace("**", "").split())[:200]
            lines.append(f"**{hit.title}** ({folder})\n{snippet}")
        await self._say(chat, "\n\n".join(lines))

    async def _file(self, message: Incoming, user: AppUser, text: str) -> None:
        chat, attachment = message.chat, message.attachment
        assert attachment is not None
        if not user.allows("chat"):
            await self._say(chat, "This bot may only search (scope read): files are not saved.")
            return
        if attachment.size is not None and attachment.size > MAX_FILE_BYTES:
            await self._say(chat, "Files over 20 MB are not saved: send a smaller one.")
            return
        data = await attachment.fetch()
        try:
            path = await self.vault.run(save_attachment, self.vault, attachment.name, data)
        except VaultError as exc:
            await self._say(chat, exc.message)
            return
        name = path.rpartition("/")[2]
        if attachment.kind in ("voice", "sticker", "file"):
            extra = " (voice notes are not transcribed)" if attachment.kind == "voice" else ""
            await self._say(chat, f"Saved {name} in your vault{extra}.")
        elif not text:
            await self._say(chat, f"Saved {name} in your vault. Ask me about it in a caption.")
        else:
            await self.ask(chat, user, text, [NoteContext(note=path)])

    async def _stranger(self, message: Incoming) -> None:
        logger.info("%s: user %d is not in allowed_users: not answered", self.name, message.user)
        now = time.monotonic()
        if len(self._strangers) > MAX_STRANGERS:  # a flood of strangers: forget the old ones
            self._strangers = {u: t for u, t in self._strangers.items() if now - t < STRANGER_EVERY}
        last = self._strangers.get(message.user)
        if (last is None or now - last >= STRANGER_EVERY) and message.private:
            self._strangers[message.user] = now
            await self._say(message.chat, STRANGER_REPLY)

    # -- a question: the application's turn ----------------------------------------------

    async def ask(
        self,
        chat: ChatSurface,
        user: AppUser,
        text: str,
        context: list[NoteContext] | None = None,
    ) -> None:
        stream = Stream(chat, self.edit_interval)
        try:
            answer = await self._turn(chat, user, text, context or [], stream)
        except (RpcError, LLMError, VaultError) as exc:
            answer = to_wire_error(exc).message
        except BaseException:
            stream.cancel()
            raise
        await stream.finish(answer)

    async def _turn(
        self,
        chat: ChatSurface,
        user: AppUser,
        text: str,
        context: list[NoteContext],
        stream: Stream,
    ) -> str:
        chat_id = chat.chat_id
        conversation = await self.store.execute(lambda s: s.conversation(self.name, chat_id))
        reviewer = ask_chat(self.vault, self._shower(chat, user), timeout=self.confirm_timeout)
        request = TurnRequest(
            text,
            conversation_id=conversation,
            context=context,
            caller=user,
            client=self.name,
            reviewer=reviewer,
        )
        try:
            turn = await self.assistant.turn(request)
        except RpcError as exc:
            if conversation is None or exc.code != WireCode.INVALID_PARAMS:
                raise
            request = TurnRequest(
                text, context=context, caller=user, client=self.name, reviewer=reviewer
            )
            turn = await self.assistant.turn(request)  # its conversation was deleted
        final = ""
        async with aclosing(turn.events()) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    stream.add(event.text)
                elif isinstance(event, ResponseComplete):
                    final = event.response.text
        conversation_id = turn.conversation_id
        await self.store.execute(lambda s: s.set_conversation(self.name, chat_id, conversation_id))
        parts = [final.strip() or stream.text.strip() or "(no answer)"]
        parts += turn.warnings
        if turn.sources:
            parts.append(sources_markdown(self.vault.name, turn.sources))
        return "\n\n".join(parts)

    def _shower(self, chat: ChatSurface, user: AppUser) -> Callable[[WriteReview], Awaitable[bool]]:
        """How a write is shown in ``chat`` for ``user``'s Approve / Deny."""

        async def show(review: WriteReview) -> bool:
            token = secrets.token_hex(8)
            where = f"\n`{review.path}`" if review.path else ""
            diff = f"\n```diff\n{review.diff}\n```" if review.diff else ""
            text = f"**{review.title}**{where}{diff}"
            formatted = chat.pieces(text)[0][0]
            message = await chat.ask(formatted, token)
            answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
            self._pending[token] = _Pending(int(user.name), answer)
            outcome = "Denied: nothing was written (no answer in 5 minutes)."
            try:
                approved = await answer
                outcome = "Approved." if approved else "Denied: nothing was written."
                return approved
            finally:
                del self._pending[token]
                # its own task: a cancelled wait (the timeout) must not cancel the edit
                settle = asyncio.create_task(
                    self._settle(chat, message, f"{review.title}\n{outcome}")
                )
                self._settling.add(settle)
                settle.add_done_callback(self._settling.discard)

        return show

    async def _settle(self, chat: ChatSurface, message: str, text: str) -> None:
        async def put(body: str, fmt: bool) -> str | None:
            await chat.edit(message, body, formatted=fmt)
            return message

        formatted, plain = chat.pieces(text)[0]
        try:
            await formatted_or_plain(put, formatted, plain)
        except Exception:
            logger.warning("%s: an approval message was not updated", self.name, exc_info=True)

    async def _say(self, chat: ChatSurface, text: str) -> None:
        """Send ``text`` (the model's Markdown) whole, in as many messages as it takes."""
        for formatted, plain in chat.pieces(text):

            async def put(body: str, fmt: bool) -> str | None:
                return await chat.send(body, formatted=fmt)

            await formatted_or_plain(put, formatted, plain)
