"""Hostile files against the server's readers, before and after issue 43, in one run
(``python bench/hostile_files.py``). "Before" is the code the server ran until then, each in a
child process of its own (it may crash or take gigabytes); "after" is the server's code now:

* ``pdf_threads``: six threads reading a small PDF at once (20 reads each), five times
  (PDFium directly, then :func:`plugin_bridge.vault.pdf_worker.extract_pages`): exit codes
  and reads answered;
* ``pdf_bomb``: a 1 MB PDF whose content stream inflates to 1 GiB: time and peak memory of
  the process reading it (after: the caller and its PDF helper);
* ``front_matter``: a prompt note with a YAML alias bomb (eight levels: 9^8 strings) and one
  with 5,000-deep front matter, read as prompts were (``yaml.load`` with CSafeLoader, the name
  as text) and as now;
* ``images``: the event loop's longest stall (what every other client's ``health`` waits)
  while one request's image is prepared: a 100-megapixel PNG and eight 60-megapixel ones,
  scaled on the loop as the providers did, then by :mod:`plugin_bridge.app.turn.images`.

Writes bench/results/hostile_files.json.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from plugin_bridge.app.turn.prompts import BadPrompt, prompt_from_note
from plugin_bridge.vault.pdf_worker import extract_pages
from tests.helpers.images import huge_png
from tests.helpers.notes import alias_bomb
from tests.helpers.pdfs import inflating_pdf

RESULTS = Path(__file__).resolve().parent / "results" / "hostile_files.json"
TIMEOUT = 120.0
RUNS = 5


def _in_child(fn: Callable[[Any], Any], arg: Any) -> dict[str, Any]:
    """``fn(arg)`` in a spawned child: its result, exit code, the time of the call (the
    child's life when it died) and peak RSS."""
    context = mp.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=_child_main, args=(fn, arg, child))
    started = time.monotonic()
    process.start()
    child.close()
    try:
        result = parent.recv() if parent.poll(TIMEOUT) else None
    except EOFError:  # it crashed
        result = None
    process.join(TIMEOUT)
    took = time.monotonic() - started
    if process.exitcode is None:
        process.kill()
        process.join()
    peak = result["peak_mb"] if isinstance(result, dict) else None
    return {
        "exit_code": process.exitcode,
        "seconds": round(took, 2) if result is None else result["seconds"],
        "peak_mb": peak,
        "result": None if result is None else result["value"],
    }


def _child_main(fn: Callable[[Any], Any], arg: Any, conn: Any) -> None:
    started = time.monotonic()
    try:
        value = fn(arg)
    except BaseException as exc:  # the figure is the failure
        value = f"{type(exc).__name__}: {str(exc)[:120]}"
    took = round(time.monotonic() - started, 2)
    conn.send({"value": value, "peak_mb": _peak_mb(), "seconds": took})


def _peak_mb() -> dict[str, float]:
    """The child's own peak resident memory and its children's (the PDF helper's), in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    helpers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"own": round(own / 1024), "helper": round(helpers / 1024)}


# -- PDFs ------------------------------------------------------------------------------------


def _old_pages(raw: bytes) -> list[str]:
    """Main's extract_pages: PDFium in the calling thread."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(raw)
    try:
        pages = []
        for page in document:
            textpage = page.get_textpage()
            pages.append(textpage.get_text_bounded())
            textpage.close()
            page.close()
        return pages
    finally:
        document.close()


def _new_pages(raw: bytes) -> list[str]:
    return extract_pages("bench.pdf", raw).pages


def _six_threads(new: bool) -> str:
    import threading

    raw = inflating_pdf(0, pages_before=[f"Page {n} of a small report." for n in range(8)])
    read = _new_pages if new else _old_pages
    done = []

    def reader() -> None:
        for _ in range(20):
            done.append(len(read(raw)))

    threads = [threading.Thread(target=reader) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return f"{len(done)} of 120 reads answered"


def _bomb(new: bool) -> str:
    raw = inflating_pdf(1 << 30)
    try:
        pages = _new_pages(raw) if new else _old_pages(raw)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return f"{len(pages)} page(s), {sum(map(len, pages))} characters"


def pdf_threads() -> dict[str, Any]:
    return {
        "before": [_in_child(_six_threads, False) for _ in range(RUNS)],
        "after": [_in_child(_six_threads, True) for _ in range(RUNS)],
    }


def pdf_bomb() -> dict[str, Any]:
    return {"before": _in_child(_bomb, False), "after": _in_child(_bomb, True)}


# -- front matter ----------------------------------------------------------------------------

DEEP = "---\nname: " + "[" * 5000 + "]" * 5000 + "\n---\nA deep prompt.\n"


def _old_prompt(text: str) -> str:
    """Main's prompts: CSafeLoader, then the name as text (within 6 GB of address space, to
    spare the machine)."""
    import yaml  # imported in every child already (by the prompts module)

    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
    raw = text.split("---\n")[1]
    meta = yaml.load(raw, Loader=yaml.CSafeLoader)
    return f"name of {len(str(meta.get('name')))} characters"


def _new_prompt(text: str) -> str:
    try:
        return prompt_from_note("Assistant/Prompts/x.md", text).name
    except BadPrompt as exc:
        return f"skipped: {exc.reason}"


def front_matter() -> dict[str, Any]:
    bomb = f"---\n{alias_bomb(8)}\n---\nA bomb prompt.\n"  # 9^8 strings: 9^9 needs ~20 GB
    return {
        name: {"before": _in_child(_old_prompt, text), "after": _in_child(_new_prompt, text)}
        for name, text in (("alias bomb", bomb), ("5,000 deep", DEEP))
    }


# -- images ----------------------------------------------------------------------------------


def _png(width: int, height: int) -> bytes:
    """A noisy RGB PNG (hard to compress, as a photo): rows of random bytes, repeated."""
    import io

    from PIL import Image

    tile = Image.frombytes("RGB", (width, 64), os.urandom(width * 64 * 3))
    image = Image.new("RGB", (width, height))
    for top in range(0, height, 64):
        image.paste(tile, (0, top))
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=1)
    return out.getvalue()


def _distinct(data: bytes, count: int) -> list[bytes]:
    """``count`` copies of a PNG that differ (a byte after its end, which decoders ignore), so
    no cache of scaled images serves the second."""
    return [data + bytes([n]) for n in range(count)]


async def _stall(work: Callable[[], Any]) -> float:
    """The event loop's longest gap between 5 ms ticks while ``work()`` is awaited, in ms."""
    gaps = [0.0]
    running = True

    async def tick() -> None:
        last = time.perf_counter()
        while running:
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps.append((now - last) * 1000 - 5)
            last = now

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0.05)
    await work()
    running = False
    await ticker
    return round(max(gaps), 1)


def _images(blocks_data: list[bytes]) -> dict[str, Any]:
    from llm_service.images import OPENAI_IMAGES, fit
    from llm_service.messages import ImageBlock, Message, TextBlock
    from plugin_bridge.app.turn.images import images_within_limits

    blocks = [ImageBlock("image/png", data) for data in blocks_data]

    async def before() -> None:
        for block in blocks:
            try:
                fit(block, OPENAI_IMAGES)
            except Exception:  # the 900-megapixel failure of the turn
                return

    async def after() -> None:
        message = Message("user", (TextBlock("What is this?"), *blocks))
        await images_within_limits([message])

    return {
        "before_stall_ms": asyncio.run(_stall(before)),
        "after_stall_ms": asyncio.run(_stall(after)),
    }


def images() -> dict[str, Any]:
    return {
        "one 100-megapixel PNG": _images([_png(10_000, 10_000)]),
        "eight 60-megapixel PNGs": _images(_distinct(_png(10_000, 6_000), 8)),
        "one 900-megapixel PNG": _images([huge_png(30_000, 30_000)]),
    }


def main() -> None:
    figures: dict[str, Any] = {"load_average": os.getloadavg()}
    for name, run in (
        ("pdf_threads", pdf_threads),
        ("pdf_bomb", pdf_bomb),
        ("front_matter", front_matter),
        ("images", images),
    ):
        if len(sys.argv) > 1 and name not in sys.argv[1:]:
            continue
        figures[name] = run()
        print(name, json.dumps(figures[name], indent=1), flush=True)
    figures["load_average_after"] = os.getloadavg()
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    print(f"load average {figures['load_average']} -> {figures['load_average_after']}")


if __name__ == "__main__":
    main()
