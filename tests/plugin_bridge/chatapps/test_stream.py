"""One answer streamed into a chat: at most one edit per interval however fast the model
writes, a rate limit waited out, the whole answer delivered last (in pieces past the limit)."""

from __future__ import annotations

import asyncio
import itertools
import time

from plugin_bridge.chatapps.stream import RateLimited, Stream, Unformattable
from plugin_bridge.chatapps.text import split_text


class Surface:
    """A chat that records what it is sent, with when; ``limited`` sends answer 429 first."""

    def __init__(self, limit: int = 100, limited: int = 0, refuse_format: bool = False) -> None:
        self.limit = limit
        self.limited = limited
        self.refuse_format = refuse_format
        self.log: list[tuple[float, str, str, bool]] = []
        self.typed = 0

    @property
    def chat_id(self) -> str:
        return "1"

    def pieces(self, text: str) -> list[tuple[str, str]]:
        return [(f"<b>{p}</b>", p) for p in split_text(text, self.limit)]

    def preview(self, text: str) -> str:
        return text[: self.limit]

    async def send(self, text: str, *, formatted: bool) -> str:
        return self._record("send", text, formatted)

    async def edit(self, message: str, text: str, *, formatted: bool) -> None:
        self._record("edit", text, formatted)

    def _record(self, kind: str, text: str, formatted: bool) -> str:
        if self.limited:
            self.limited -= 1
            raise RateLimited(0.2)
        if formatted and self.refuse_format:
            raise Unformattable("can't parse entities")
        self.log.append((time.monotonic(), kind, text, formatted))
        return str(len(self.log))

    async def typing(self) -> None:
        self.typed += 1

    async def ask(self, text: str, token: str) -> str:
        raise AssertionError("no approval here")


async def test_edits_are_spaced_by_the_interval_however_fast_the_model_writes() -> None:
    chat = Surface(limit=10_000)
    stream = Stream(chat, interval=0.3)
    for n in range(40):
        stream.add(f"word{n} ")
        await asyncio.sleep(0.025)
    await stream.finish(stream.text.strip())
    times = [t for t, *_ in chat.log]
    assert 3 <= len(times) <= 6, "about one edit per interval, not one per delta"
    assert all(b - a >= 0.29 for a, b in itertools.pairwise(times))
    assert chat.log[-1][2:] == (f"<b>{stream.text.strip()}</b>", True)
    assert chat.typed >= 1


async def test_a_rate_limit_is_waited_out_and_nothing_is_lost() -> None:
    chat = Surface(limited=2)
    stream = Stream(chat, interval=0.01)
    stream.add("Hello")
    started = time.monotonic()
    await stream.finish("Hello there")
    assert chat.log[0][0] - started >= 0.35, "two waits of 0.2 s"
    assert chat.log[-1][2] == "<b>Hello there</b>"


async def test_a_long_answer_continues_in_more_messages_and_a_refused_format_goes_plain() -> None:
    chat = Surface(limit=20, refuse_format=True)
    stream = Stream(chat, interval=0.01)
    answer = "one two three four five six seven eight nine ten eleven"
    stream.add(answer)
    await asyncio.sleep(0.05)  # the streamed message is sent
    await stream.finish(answer)
    delivered = [(kind, text) for _, kind, text, formatted in chat.log if not formatted]
    final = [text for kind, text in delivered[1:]]
    assert "".join(final) == answer
    assert all(len(text) <= 20 for text in final)
    assert delivered[1][0] == "edit", "the first piece replaces the streamed message"
