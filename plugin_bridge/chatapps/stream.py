"""One answer streamed into a chat app by editing one message (at most one edit per
``interval``, a rate limit's wait honoured), then delivered whole: split within the app's limit,
formatted, and sent again as plain text when the app refuses the formatting."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Final, Protocol

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

logger = logging.getLogger(__name__)

EDIT_INTERVAL: Final = 1.0
"""Seconds between two edits of a streamed message (Telegram allows about one a second)."""
TYPING_EVERY: Final = 4.0
"""A typing action shows for about 5 s: sent again this often while the model works."""
MAX_WAITS: Final = 20
"""Rate-limit waits one delivery sits out before it gives up (logged)."""


class BotRefused(Exception):
    """The app refused the bot for good (a bad token): not retried; ``str()`` is the sentence."""


class RateLimited(Exception):
    """The app answered 429: wait ``seconds`` before the next request."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"rate limited for {seconds:g} s")
        self.seconds = seconds


class Unformattable(Exception):
    """The app refused the message's formatting ("can't parse entities")."""


class ChatSurface(Protocol):
    """One chat as an adapter drives it (Telegram's chat, Discord's channel)."""

    @property
    def chat_id(self) -> str: ...

    def pieces(self, text: str) -> list[tuple[str, str]]:
        """``text`` as messages within the app's limit: (formatted, plain) pairs."""
        ...

    def preview(self, text: str) -> str:
        """``text`` cut to what one plain message holds (the streamed message)."""
        ...

    async def send(self, text: str, *, formatted: bool) -> str:
        """Send a message; its id. RateLimited, Unformattable."""
        ...

    async def edit(self, message: str, text: str, *, formatted: bool) -> None:
        """Replace a message's text (and drop its buttons). RateLimited, Unformattable."""
        ...

    async def typing(self) -> None: ...

    async def ask(self, text: str, token: str) -> str:
        """Send ``text`` (formatted) with Approve / Deny buttons carrying ``token``; its id."""
        ...


async def patiently(request: Callable[[], Awaitable[str | None]]) -> str | None:
    """``request()``, waiting out each rate limit (at most :data:`MAX_WAITS` times)."""
    for _ in range(MAX_WAITS):
        try:
            return await request()
        except RateLimited as limited:
            await asyncio.sleep(limited.seconds)
    logger.warning("a chat app kept answering 429: a message was not delivered")
    return None


async def formatted_or_plain(
    send: Callable[[str, bool], Awaitable[str | None]], formatted: str, plain: str
) -> str | None:
    """``send`` the formatted text, or the plain text when the app refuses its formatting."""
    try:
        return await patiently(lambda: send(formatted, True))
    except Unformattable:
        logger.info("a chat app refused a message's formatting: sent as plain text")
        return await patiently(lambda: send(plain, False))


class Stream:
    """See the module docstring: :meth:`add` the deltas, then :meth:`finish` with the answer."""

    def __init__(self, chat: ChatSurface, interval: float = EDIT_INTERVAL) -> None:
        self.chat = chat
        self.interval = interval
        self.text = ""
        self.message: str | None = None
        self._changed = asyncio.Event()
        self._done = False
        self._task: asyncio.Task[None] | None = None
        self._typing = asyncio.create_task(self._keep_typing())

    def add(self, delta: str) -> None:
        self.text += delta
        self._changed.set()
        if self._task is None:
            self._task = asyncio.create_task(self._run())

    async def _keep_typing(self) -> None:
        while True:
            with contextlib.suppress(RateLimited, OSError):
                await self.chat.typing()
            await asyncio.sleep(TYPING_EVERY)

    async def _run(self) -> None:
        while True:
            await self._changed.wait()
            if self._done:
                return
            self._changed.clear()
            preview = self.chat.preview(self.text)
            try:
                if self.message is None:
                    self.message = await self.chat.send(preview, formatted=False)
                else:
                    await self.chat.edit(self.message, preview, formatted=False)
            except RateLimited as limited:
                await asyncio.sleep(limited.seconds)
                self._changed.set()
                continue
            await asyncio.sleep(self.interval)

    async def finish(self, answer: str) -> None:
        """Deliver ``answer`` whole: its first piece replaces the streamed message, the rest
        follow as new messages."""
        self._typing.cancel()
        self._done = True
        self._changed.set()
        if self._task is not None:
            await self._task
        for index, (formatted, plain) in enumerate(self.chat.pieces(answer)):
            message = self.message if index == 0 else None

            async def put(text: str, fmt: bool, message: str | None = message) -> str | None:
                if message is None:
                    return await self.chat.send(text, formatted=fmt)
                await self.chat.edit(message, text, formatted=fmt)
                return message

            await formatted_or_plain(put, formatted, plain)

    def cancel(self) -> None:
        self._typing.cancel()
        if self._task is not None:
            self._task.cancel()
