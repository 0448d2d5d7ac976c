"""Hostile PDFs cannot crash or exhaust the server: threads and WebSocket clients reading PDFs
at once are all answered (PDFium is not thread-safe: two reads at once used to kill the
process), and a PDF whose content inflates far past its size is read as far as the limits
allow, with a sentence, or counted as unreadable. The full sizes (a minute of reads, a 1 GiB
bomb against a real ``serve`` under 800 MB) are the ``soak`` tests at the end."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from plugin_bridge.vault import pdf_worker
from plugin_bridge.vault.pdf_worker import extract_pages
from tests.helpers.bridge import Bridge, Wire, init_params, running_bridge
from tests.helpers.pdfs import inflating_pdf
from tests.helpers.serve import start_serve

PAGES = [f"Page {n} of the report on herons." for n in range(1, 4)]


def _pdf_vault(tmp_path: Path, bomb: int = 0) -> Path:
    root = tmp_path / "vault"
    (root / "Papers").mkdir(parents=True)
    (root / "Note.md").write_text("# Note\n\nAbout herons.\n", encoding="utf-8")
    for n in range(4):
        (root / "Papers" / f"report-{n}.pdf").write_bytes(inflating_pdf(0, pages_before=PAGES))
    if bomb:
        (root / "Papers" / "bomb.pdf").write_bytes(inflating_pdf(bomb))
        (root / "Papers" / "partial.pdf").write_bytes(
            inflating_pdf(bomb, pages_before=["The introduction reads fine."])
        )
    return root


async def _read_pdfs_at_once(bridge: Bridge, seconds: float) -> tuple[int, int]:
    """Six threads extracting PDFs and two WebSocket clients reading them with note/read, for
    ``seconds``: the reads done by the threads and by the clients (each checked)."""
    raw = inflating_pdf(0, pages_before=PAGES)
    deadline = time.monotonic() + seconds

    def thread_reads() -> int:
        done = 0
        while time.monotonic() < deadline:
            assert extract_pages("x.pdf", raw).pages[0].strip() == PAGES[0]
            done += 1
        return done

    async def client_reads(wire: Wire, n: int) -> int:
        done = 0
        while time.monotonic() < deadline:
            read = await wire.result("note/read", {"path": f"Papers/report-{n}.pdf"})
            assert read["pageCount"] == 4 and PAGES[2] in read["content"]
            done += 1
        return done

    wires = [await bridge.wire() for _ in range(2)]
    threads = [asyncio.to_thread(thread_reads) for _ in range(6)]
    clients = [client_reads(wire, n) for n, wire in enumerate(wires)]
    counts = await asyncio.gather(*threads, *clients)
    return sum(counts[:6]), sum(counts[6:])


async def test_six_threads_and_two_clients_reading_pdfs_at_once_are_all_answered(
    tmp_path: Path,
) -> None:
    async with running_bridge(tmp_path, vault_root=_pdf_vault(tmp_path)) as bridge:
        threads, clients = await _read_pdfs_at_once(bridge, 1.5)
        assert threads >= 6 and clients >= 2
        assert (await (await bridge.wire()).result("health"))["status"] == "ok"


async def test_an_inflating_pdf_is_read_as_far_as_it_goes_and_counted_when_nothing_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 512 MB bomb takes PDFium past a page's time (0.3 s here) or the helper's memory, even
    on a quiet machine (128 MB decoded within 0.3 s there): the helper is stopped, the pages
    before it are read with a sentence, and a PDF of nothing else is counted as unreadable."""
    monkeypatch.setattr(pdf_worker, "PAGE_SECONDS", 0.3)
    async with running_bridge(tmp_path, vault_root=_pdf_vault(tmp_path, 512 << 20)) as bridge:
        wire = await bridge.wire()
        assert (await wire.result("health"))["index"]["unreadablePdfs"] == 1
        partial = await wire.result("note/read", {"path": "Papers/partial.pdf"})
        assert "The introduction reads fine." in partial["content"]
        assert (
            "Only pages 1-1 of the 2 of 'Papers/partial.pdf' could be read" in (partial["content"])
        )
        fine = await wire.result("note/read", {"path": "Papers/report-0.pdf"})
        assert fine["pageCount"] == 4


@pytest.mark.soak
async def test_soak_a_minute_of_six_threads_and_two_clients_reading_pdfs(tmp_path: Path) -> None:
    async with running_bridge(tmp_path, vault_root=_pdf_vault(tmp_path)) as bridge:
        threads, clients = await _read_pdfs_at_once(bridge, 60)
        print(f"a minute of PDF reads: {threads} by six threads, {clients} by two clients")
        assert threads >= 60 and clients >= 20
        assert (await (await bridge.wire()).result("health"))["status"] == "ok"


@pytest.mark.soak
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc for the RSS")
async def test_soak_a_1_gib_bomb_is_read_in_10_s_with_the_server_under_800_mb(
    tmp_path: Path,
) -> None:
    """note/read of a 1 MB PDF inflating to 1 GiB against a real ``serve``: answered within
    10 s while the server and its helpers together stay under 800 MB resident."""
    vault = _pdf_vault(tmp_path, 1 << 30)
    info = str(tmp_path / "info.json")
    served = await start_serve(
        tmp_path, "--info-file", info, vault=vault, stderr=asyncio.subprocess.DEVNULL
    )
    from websockets.asyncio.client import connect

    try:
        wire = Wire(await connect(str(served.info["url"]), max_size=None))
        await wire.result("initialize", init_params(str(served.info["token"])))
        for _ in range(300):  # the index reads the bombs first (at most a minute)
            if (await wire.result("health"))["index"]["unreadablePdfs"] >= 1:
                break
            await asyncio.sleep(0.2)
        peak = 0.0
        sampling = True

        async def sample() -> None:
            nonlocal peak
            while sampling:
                peak = max(peak, _tree_rss_mb(served.process.pid))
                await asyncio.sleep(0.02)

        sampler = asyncio.create_task(sample())
        took = []
        started = time.monotonic()
        await wire.error("note/read", {"path": "Papers/bomb.pdf"})
        took.append(time.monotonic() - started)
        started = time.monotonic()
        partial = await wire.result("note/read", {"path": "Papers/partial.pdf"})
        took.append(time.monotonic() - started)
        sampling = False
        await sampler
    finally:
        served.process.kill()
        await served.process.wait()
    print(f"bomb reads {took[0]:.1f} s and {took[1]:.1f} s, peak {peak:.0f} MB")
    assert "could be read" in partial["content"]
    assert max(took) < 10, f"a bomb's note/read took {max(took):.1f} s"
    assert peak < 800, f"server and helpers peaked at {peak:.0f} MB"


def _tree_rss_mb(pid: int) -> float:
    """The resident set of ``pid`` and its children now, in MB (Linux)."""
    total = 0.0
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    for one in pids:
        try:
            with open(f"/proc/{one}/statm") as statm:
                total += int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
        except OSError:
            continue
    return total
