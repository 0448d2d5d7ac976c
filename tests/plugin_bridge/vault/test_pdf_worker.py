"""PDFs are read by one helper process, one at a time, within time and memory: threads that
read at once all get their text (PDFium in two threads at once crashes a process), and a PDF
whose content inflates past the limits is read as far as it goes, with a sentence saying so."""

from __future__ import annotations

import threading
import time

import pytest

from plugin_bridge.vault import pdf_worker
from plugin_bridge.vault.pdf import PdfUnreadable
from plugin_bridge.vault.pdf_worker import _InTurn, extract_pages
from tests.helpers.pdfs import inflating_pdf, make_pdf


def test_six_threads_reading_pdfs_at_once_all_get_their_text() -> None:
    pages = [[f"Thread {n} page one.", f"Thread {n} page two."] for n in range(6)]
    pdfs = [inflating_pdf(0, pages_before=texts) for texts in pages]  # fast to build
    results: dict[int, list[list[str]]] = {n: [] for n in range(6)}

    def read(n: int) -> None:
        for _ in range(5):
            results[n].append(extract_pages(f"{n}.pdf", pdfs[n]).pages)

    threads = [threading.Thread(target=read, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    for n in range(6):
        assert len(results[n]) == 5
        for read in results[n]:
            assert [page.strip() for page in read] == [*pages[n], "Past the bomb"]


def test_a_page_over_the_time_limit_stops_the_read_there_with_a_sentence() -> None:
    raw = inflating_pdf(128 << 20, pages_before=["The first page is fine."])
    read = extract_pages("Bomb.pdf", raw, page_seconds=0.2)
    assert [page.strip() for page in read.pages] == ["The first page is fine.", ""]
    assert read.stopped is not None
    assert "Only pages 1-1 of the 2 of 'Bomb.pdf' could be read" in read.stopped
    after = extract_pages("Fine.pdf", inflating_pdf(0, pages_before=["Read by a new helper."]))
    assert after.stopped is None and after.pages[0].strip() == "Read by a new helper."


def test_a_pdf_over_the_memory_limit_is_unreadable_and_the_next_one_is_read() -> None:
    raw = inflating_pdf(384 << 20)
    with pytest.raises(PdfUnreadable) as caught:
        extract_pages("Bomb.pdf", raw, memory=256 << 20, page_seconds=30)
    assert caught.value.reason == "too_costly"
    assert "'Bomb.pdf' could not be read" in str(caught.value)
    after = extract_pages("Fine.pdf", inflating_pdf(0, pages_before=["Still reading PDFs."]))
    assert after.pages[0].strip() == "Still reading PDFs."


def test_encrypted_and_damaged_pdfs_keep_their_reasons() -> None:
    with pytest.raises(PdfUnreadable) as locked:
        extract_pages("Locked.pdf", make_pdf(["secret"], password="pw"))
    assert locked.value.reason == "encrypted"
    with pytest.raises(PdfUnreadable) as broken:
        extract_pages("Broken.pdf", b"%PDF-1.7\nnot a PDF\n")
    assert broken.value.reason == "damaged"


def test_threads_waiting_for_the_reader_get_it_in_the_order_they_came() -> None:
    """A thread that reads PDF after PDF (the indexer) cannot starve a waiting note/read."""
    turns = _InTurn()
    order: list[str] = []
    queued = threading.Semaphore(0)

    def wait_turn(name: str) -> None:
        queued.release()
        with turns:
            order.append(name)

    with turns:
        waiters = []
        for name in ("first", "second"):
            waiter = threading.Thread(target=wait_turn, args=(name,))
            waiter.start()
            queued.acquire()
            while len(turns._queue) < len(waiters) + 2:  # it is in the line
                time.sleep(0.001)
            waiters.append(waiter)
    with turns:  # the holder again, straight after: behind both
        order.append("holder again")
    for waiter in waiters:
        waiter.join(timeout=10)
    assert order == ["first", "second", "holder again"]


def test_one_helper_reads_pdf_after_pdf_even_in_a_large_server() -> None:
    """The helper is kept between PDFs (it starts in about 0.3 s); only one still holding
    much memory after its PDF is replaced. A child's peak memory starts at its parent's, so
    the helper is judged by what it holds now."""
    if pdf_worker._helper is not None:  # a helper started now, from a large process
        pdf_worker._helper.stop()
        pdf_worker._helper = None
    ballast = b"\x01" * (300 << 20)
    raw = inflating_pdf(0, pages_before=["Kept."])
    extract_pages("a.pdf", raw)
    del ballast
    helper = pdf_worker._helper
    extract_pages("b.pdf", raw)
    assert helper is not None and pdf_worker._helper is helper
