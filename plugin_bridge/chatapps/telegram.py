"""The Telegram bot (``[telegram]``): python-telegram-bot's ``Bot`` pointed at ``api_url``,
long-polling ``getUpdates``. Each update id is recorded durably before the update is handled
(a re-delivered one is skipped); messages become :class:`~.core.Incoming`, button presses
:meth:`~.core.ChatCore.pressed`; the chat is driven through :class:`TelegramChat`."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import warnings
from datetime import timedelta
from typing import TYPE_CHECKING, Final

from llm_service import lazy
from plugin_bridge.chatapps.core import (
    COMMANDS,
    ChatCore,
    FileKind,
    Incoming,
    SentFile,
    document_kind,
)
from plugin_bridge.chatapps.store import ChatAppStore
from plugin_bridge.chatapps.stream import BotRefused, RateLimited, Unformattable
from plugin_bridge.chatapps.text import TELEGRAM_LIMIT, telegram_pieces

if TYPE_CHECKING:
    from collections.abc import Iterator

    import telegram
    import telegram.error
    import telegram.request

else:
    telegram = lazy.module("telegram")

logger = logging.getLogger(__name__)

NAME: Final = "telegram"
POLL_SECONDS: Final = 25
MARKDOWN: Final = "MarkdownV2"


def make_bot(token: str, api_url: str) -> telegram.Bot:
    """A Bot talking to ``api_url`` (the Bot API's ``/bot<token>/`` and ``/file/bot<token>/``)."""
    return telegram.Bot(
        token,
        base_url=f"{api_url}/bot",
        base_file_url=f"{api_url}/file/bot",
        request=telegram.request.HTTPXRequest(connection_pool_size=16),
        get_updates_request=telegram.request.HTTPXRequest(read_timeout=POLL_SECONDS + 10),
    )


def retry_seconds(error: telegram.error.RetryAfter) -> float:
    with warnings.catch_warnings():  # an int now, a timedelta in PTB's next major version
        warnings.simplefilter("ignore")
        value = error.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


class TelegramChat:
    """One Telegram chat (see :class:`~.stream.ChatSurface`)."""

    def __init__(self, bot: telegram.Bot, chat_id: int) -> None:
        self.bot = bot
        self.id = chat_id

    @property
    def chat_id(self) -> str:
        return str(self.id)

    def pieces(self, text: str) -> list[tuple[str, str]]:
        return telegram_pieces(text, TELEGRAM_LIMIT)

    def preview(self, text: str) -> str:
        return text if len(text) <= TELEGRAM_LIMIT else f"{text[: TELEGRAM_LIMIT - 1]}…"

    async def send(self, text: str, *, formatted: bool) -> str:
        with _translated():
            sent = await self.bot.send_message(
                self.id, text, parse_mode=MARKDOWN if formatted else None
            )
        return str(sent.message_id)

    async def edit(self, message: str, text: str, *, formatted: bool) -> None:
        with _translated():
            try:
                await self.bot.edit_message_text(
                    text,
                    chat_id=self.id,
                    message_id=int(message),
                    parse_mode=MARKDOWN if formatted else None,
                    reply_markup=None,
                )
            except telegram.error.BadRequest as exc:
                if "not modified" not in exc.message.lower():
                    raise

    async def typing(self) -> None:
        with _translated():
            await self.bot.send_chat_action(self.id, telegram.constants.ChatAction.TYPING)

    async def ask(self, text: str, token: str) -> str:
        buttons = telegram.InlineKeyboardMarkup(
            [
                [
                    telegram.InlineKeyboardButton("Approve", callback_data=f"approve:{token}"),
                    telegram.InlineKeyboardButton("Deny", callback_data=f"deny:{token}"),
                ]
            ]
        )
        try:
            with _translated():
                sent = await self.bot.send_message(
                    self.id, text, parse_mode=MARKDOWN, reply_markup=buttons
                )
        except Unformattable:
            with _translated():
                sent = await self.bot.send_message(self.id, text, reply_markup=buttons)
        return str(sent.message_id)


@contextlib.contextmanager
def _translated() -> Iterator[None]:
    """PTB's 429 and "can't parse entities" as the core's exceptions."""
    try:
        yield None
    except telegram.error.RetryAfter as exc:
        raise RateLimited(retry_seconds(exc)) from None
    except telegram.error.BadRequest as exc:
        if "can't parse" in exc.message.lower() or "can't find end" in exc.message.lower():
            raise Unformattable(exc.message) from None
        raise


def diagnose(exc: BaseException) -> str:
    """The sentence for a failed connection; BotRefused for a token Telegram refuses."""
    if isinstance(exc, telegram.error.InvalidToken):
        raise BotRefused(
            "The bot token was refused (getMe): paste the token BotFather gave into "
            "bot_token in [telegram]."
        )
    if isinstance(exc, telegram.error.NetworkError | OSError):
        return "Telegram cannot be reached (the network is down, or api_url is wrong)"
    logger.warning("telegram: the bot stopped", exc_info=exc)
    return f"The bot stopped ({type(exc).__name__})"


class TelegramBot:
    """Polls one bot's updates and hands them to ``core`` (see the module docstring)."""

    def __init__(self, core: ChatCore, token: str, api_url: str) -> None:
        self.core = core
        self.bot = make_bot(token, api_url)
        self.username = ""
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Check the token (getMe, once), register the commands; InvalidToken or a network
        error."""
        await self.bot.initialize()
        self.username = self.bot.username
        commands = [telegram.BotCommand(name, text) for name, text in COMMANDS]
        await self.bot.set_my_commands(commands)

    async def poll(self) -> None:
        """Take updates until cancelled; a failing poll raises (the runner retries)."""
        store = self.core.store
        offset = await store.execute(lambda s: s.last_update(NAME))
        while True:
            updates = await self.bot.get_updates(
                offset=offset + 1,
                timeout=POLL_SECONDS,
                allowed_updates=["message", "callback_query"],
            )
            for update in updates:
                update_id = update.update_id
                offset = max(offset, update_id)
                if not await store.execute(
                    functools.partial(ChatAppStore.take_update, bot=NAME, update_id=update_id)
                ):
                    logger.info("telegram: update %d was handled before: skipped", update_id)
                    continue
                task = asyncio.create_task(self._handle(update), name=f"telegram {update_id}")
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _handle(self, update: telegram.Update) -> None:
        try:
            if update.callback_query is not None:
                await self._pressed(update.callback_query)
            elif update.message is not None:
                incoming = self._incoming(update.message)
                if incoming is not None:
                    await self.core.handle(incoming)
        except Exception:
            logger.exception("telegram: update %d failed", update.update_id)

    async def _pressed(self, query: telegram.CallbackQuery) -> None:
        choice, _, token = (query.data or "").partition(":")
        answer = await self.core.pressed(query.from_user.id, token, choice == "approve")
        with contextlib.suppress(telegram.error.TelegramError):
            await query.answer(answer)

    def _incoming(self, message: telegram.Message) -> Incoming | None:
        user = message.from_user
        if user is None:
            return None
        text = message.text or message.caption or ""
        mention = f"@{self.username}".lower()
        mentioned = bool(self.username) and mention in text.lower()
        if mentioned:
            text = text.replace(f"@{self.username}", "").strip()
        return Incoming(
            user=user.id,
            chat=TelegramChat(self.bot, message.chat.id),
            text=text,
            private=message.chat.type == telegram.constants.ChatType.PRIVATE,
            mentioned=mentioned,
            attachment=self._attachment(message),
        )

    def _attachment(self, message: telegram.Message) -> SentFile | None:
        kind: FileKind
        if message.photo:
            photo = message.photo[-1]
            file_id, size, name, kind = (
                photo.file_id,
                photo.file_size,
                f"photo-{photo.file_unique_id}.jpg",
                "image",
            )
        elif message.document is not None:
            doc = message.document
            name = doc.file_name or f"file-{doc.file_unique_id}"
            kind = document_kind(name, doc.mime_type or "")
            file_id, size = doc.file_id, doc.file_size
        elif message.voice is not None:
            voice = message.voice
            file_id, size, name, kind = (
                voice.file_id,
                voice.file_size,
                f"voice-{voice.file_unique_id}.ogg",
                "voice",
            )
        elif message.sticker is not None:
            sticker = message.sticker
            suffix = "webm" if sticker.is_video else "tgs" if sticker.is_animated else "webp"
            file_id, size, name, kind = (
                sticker.file_id,
                sticker.file_size,
                f"sticker-{sticker.file_unique_id}.{suffix}",
                "sticker",
            )
        else:
            return None

        async def fetch() -> bytes:
            file = await self.bot.get_file(file_id)
            return bytes(await file.download_as_bytearray())

        return SentFile(name, size, kind, fetch)

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            await self.bot.shutdown()
