"""PDF text extraction in one helper process, one PDF at a time, within time and memory.

PDFium (``pypdfium2``) is not thread-safe: two threads in it at once crash the process. And a
PDF is a file someone else may have made: a 1 MB PDF whose content stream inflates to 1 GiB
took 18 s and 2.9 GB in the server itself. So every PDF the server reads (``note/read``, a
turn's context, the index) is read by one helper process, started on first use and kept:

* a lock lets one PDF at a time in, in the order they came (the helper is the only PDFium of
  the server);
* the helper may use at most :data:`MEMORY_BYTES` of address space (Linux; PDFium aborts past
  it), each page at most :data:`PAGE_SECONDS` and each PDF :data:`PDF_SECONDS`;
* a helper over either is stopped (its memory returns to the system) and the PDF is read as far
  as it went, with a sentence saying where it stopped; the next PDF starts a new helper.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Final

from plugin_bridge.vault import pdf

logger = logging.getLogger(__name__)

PAGE_SECONDS = 5.0
"""The time one page may take to read."""
PDF_SECONDS: Final = 60.0
"""The time one PDF may take to read, all its pages."""
MEMORY_BYTES: Final = 512 * 1024 * 1024
"""The helper's address-space limit (where the system limits address space: Linux; the time
limits hold everywhere)."""
RECYCLE_BYTES: Final = 256 * 1024 * 1024
"""A helper still holding this much after its PDF is stopped, so the memory returns."""


@dataclass(frozen=True)
class PdfPages:
    """A PDF's pages; ``stopped`` is a sentence when only the first of them could be read
    (the others are empty), else None."""

    pages: list[str]
    stopped: str | None = None


class _Helper:
    def __init__(self, memory: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(
            target=_serve, args=(child, memory), name="pdf-reader", daemon=True
        )
        self.process.start()
        child.close()

    def receive(self, seconds: float) -> tuple[object, ...] | None:
        """The helper's next message, or None when it took over ``seconds`` or died."""
        try:
            if not self.conn.poll(seconds):
                return None
            message = self.conn.recv()
        except (EOFError, OSError):
            return None
        assert isinstance(message, tuple)
        return message

    def stop(self) -> None:
        self.conn.close()
        self.process.kill()
        self.process.join()


class _InTurn:
    """A lock that lets waiting threads in in the order they came: with a plain lock a thread
    reading PDFs one after another (the indexer) takes it again before a waiting
    ``note/read`` wakes, for as long as it has PDFs."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._queue: deque[threading.Event] = deque()

    def __enter__(self) -> None:
        turn = threading.Event()
        with self._guard:
            self._queue.append(turn)
            if len(self._queue) == 1:
                turn.set()
        turn.wait()

    def __exit__(self, *exc: object) -> None:
        with self._guard:
            self._queue.popleft()
            if self._queue:
                self._queue[0].set()


_lock = _InTurn()
_helper: _Helper | None = None


def extract_pages(
    rel: str, raw: bytes, *, page_seconds: float | None = None, memory: int | None = None
) -> PdfPages:
    """The text of each page of the PDF ``raw`` (blocking: call it off the event loop);
    :class:`~plugin_bridge.vault.pdf.PdfUnreadable` when it is encrypted, damaged, or not
    one page of it could be read within the limits (default :data:`PAGE_SECONDS` a page,
    :data:`PDF_SECONDS` in all and :data:`MEMORY_BYTES`; a helper already running keeps the
    memory limit it started with)."""
    global _helper
    page_seconds = PAGE_SECONDS if page_seconds is None else page_seconds
    memory = MEMORY_BYTES if memory is None else memory
    with _lock:
        if _helper is None or not _helper.process.is_alive():  # not started, or killed
            _helper = _Helper(memory)
        helper = _helper
        pages, count, last = _read(helper, raw, page_seconds)
        if last is not None and last[0] == "error":
            raise pdf.unreadable(rel, str(last[1]))
        if last is None or int(str(last[1])) > RECYCLE_BYTES:
            helper.stop()  # over a limit, or its memory is worth returning
            _helper = None
        if last is not None:
            return PdfPages(pages)
    limits = f"{page_seconds:g} s a page, {PDF_SECONDS:g} s a PDF, {memory // (1 << 20)} MB"
    logger.warning("Stopped reading %s at page %d of %d (%s).", rel, len(pages) + 1, count, limits)
    if not pages:
        raise pdf.PdfUnreadable(
            rel,
            "too_costly",
            f"'{rel}' could not be read within the PDF reader's limits ({limits}): it may be "
            "damaged, or made to exhaust the reader.",
        )
    sentence = (
        f"[Only pages 1-{len(pages)} of the {count} of '{rel}' could be read: page "
        f"{len(pages) + 1} is past the PDF reader's limits ({limits}).]"
    )
    return PdfPages(pages + [""] * (count - len(pages)), sentence)


def _read(
    helper: _Helper, raw: bytes, page_seconds: float
) -> tuple[list[str], int, tuple[object, ...] | None]:
    """The pages the helper read of ``raw``, their count, and its last message: ("done",
    resident bytes), ("error", reason), or None when it went past a limit or died."""
    deadline = time.monotonic() + PDF_SECONDS
    try:
        helper.conn.send_bytes(raw)
    except OSError:
        return [], 0, None
    pages: list[str] = []
    count = 0
    wait = page_seconds + 10.0  # the first answer: the helper's start, then opening the PDF
    while message := helper.receive(max(0.0, min(wait, deadline - time.monotonic()))):
        if message[0] == "count":
            count = int(str(message[1]))
        elif message[0] == "page":
            pages.append(str(message[1]))
        else:
            return pages, count, message
        wait = page_seconds
    return pages, count, None


def _serve(conn: Connection, memory: int) -> None:
    """The helper: read each PDF sent, answering ("count", n), ("page", text)... then
    ("done", resident bytes), or ("error", reason)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the server, which stops us
    if sys.platform != "win32":  # Windows: the time limits still hold
        import resource

        try:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        except (ValueError, OSError):  # a system that does not limit address space
            logger.info("The PDF reader's memory limit is not supported here.")
    while True:
        try:
            raw = conn.recv_bytes()
        except EOFError:
            return
        try:
            for kind, value in pdf.pdfium_pages(raw):
                conn.send((kind, value))
        except pdf.PdfiumFailure as exc:
            conn.send(("error", exc.reason))
            continue
        conn.send(("done", _resident_bytes()))


def _resident_bytes() -> int:
    """The helper's resident memory now (Linux; 0 elsewhere). Not its peak: a child's peak
    starts from its parent's at the fork, so a large server would recycle every helper."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0
