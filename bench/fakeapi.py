"""A fake Anthropic + OpenAI API in its own process, for the benchmarks.

Answers ``POST .../v1/messages`` with the Anthropic bytes and ``POST .../chat/completions`` with
the OpenAI bytes of ``tests/fakes`` (byte-exact as the APIs send them), streamed as SSE when the
request body asks for ``"stream": true``, else as one JSON body. Every request gets the same
answer, so any number of clients can share it. Run it with :func:`start`.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _serve(port_out: Any, text: str, pace: float) -> None:
    from tests.fakes import anthropic, openai

    answers = {
        b"/messages": (anthropic.text_reply(text), anthropic.text_reply(text, stream=False)),
        b"/chat/completions": (openai.text_reply(text), openai.text_reply(text, stream=False)),
    }
    streams = {
        path: [b"%x\r\n%s\r\n" % (len(c), c) for c in streamed.chunks or []]
        for path, (streamed, _) in answers.items()
    }

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                body = await reader.readexactly(length)
                target = head.split(b" ", 2)[1].split(b"?")[0]
                path = next((p for p in answers if target.endswith(p)), None)
                if path is None:
                    writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                elif b'"stream":true' in body.replace(b" ", b""):
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                        b"transfer-encoding: chunked\r\n\r\n"
                    )
                    for event in streams[path] if pace else [b"".join(streams[path])]:
                        writer.write(event)
                        if pace:
                            await writer.drain()
                            await asyncio.sleep(pace)
                    writer.write(b"0\r\n\r\n")
                else:
                    whole = answers[path][1].body
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                        b"content-length: %d\r\n\r\n%s" % (len(whole), whole)
                    )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=512)
        port_out.send(server.sockets[0].getsockname()[1])
        await server.serve_forever()

    asyncio.run(main())


def start(text: str, pace: float = 0.0) -> tuple[str, mp.process.BaseProcess]:
    """Start the fake API answering ``text`` (one SSE event every ``pace`` s, or all at once);
    its base URL (``http://127.0.0.1:PORT``) and its process (kill it when done)."""
    ctx = mp.get_context("spawn")
    port_in, port_out = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_serve, args=(port_out, text, pace), daemon=True)
    process.start()
    return f"http://127.0.0.1:{port_in.recv()}", process
