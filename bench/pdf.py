"""PDF text extraction: pypdfium2 (what the index uses) against pypdf, on the same PDFs.

Speed in pages per second over a 200-page PDF of prose, and text quality as the similarity of
the extracted words to the text that was set (difflib's ratio over word sequences, 1.0 = the
same words in the same order) for: one column of English, two columns (the left column must
come first), German with umlauts, and Chinese (compared by characters). The PDFs are made here
with fpdf2 (tests/helpers/pdfs.py). Prints a table, writes bench/results/pdf.json.

    nice .venv/bin/python bench/pdf.py           # needs the bench group for pypdf
"""

from __future__ import annotations

import difflib
import io
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers.pdfs import cjk_font, make_pdf

WORDS = [
    "index",
    "vault",
    "note",
    "search",
    "query",
    "latency",
    "embed",
    "chunk",
    "page",
    "model",
    "token",
    "server",
    "plugin",
    "graph",
    "backlink",
    "heading",
    "paragraph",
    "column",
    "reader",
    "answer",
    "context",
    "image",
    "document",
]
Extractor = Callable[[bytes], list[str]]


def pdfium(raw: bytes) -> list[str]:
    from plugin_bridge.vault.pdf import extract_pages

    return extract_pages("bench.pdf", raw)


def pypdf_text(raw: bytes) -> list[str]:
    from pypdf import PdfReader

    return [page.extract_text() or "" for page in PdfReader(io.BytesIO(raw)).pages]


def prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)) + "."


def similarity(expected: str, got: str, *, chars: bool = False) -> float:
    a = list("".join(expected.split())) if chars else expected.split()
    b = list("".join(got.split())) if chars else got.split()
    return round(difflib.SequenceMatcher(None, a, b, autojunk=False).ratio(), 3)


def main() -> None:
    rng = random.Random(7)
    long_pdf = make_pdf([prose(rng, 450) for _ in range(200)])
    left, right = prose(rng, 180), prose(rng, 180)
    german = "Die Größe der Bäume in München überrascht Jürgen jeden Frühling aufs Neue. " * 8
    chinese = "北京的秋天很美，我们在图书馆里读书，然后一起去吃烤鸭。" * 6
    quality_sets: list[tuple[str, bytes, str, bool]] = [
        ("English, one column", make_pdf([left]), left, False),
        ("two columns", make_pdf([(left, right)]), f"{left} {right}", False),
        ("German", make_pdf([german]), german, False),
    ]
    font = cjk_font()
    if font is not None:
        quality_sets.append(("Chinese", make_pdf([chinese], font=font), chinese, True))
    report: dict[str, dict[str, float]] = {}
    for name, extract in (("pypdfium2", pdfium), ("pypdf", pypdf_text)):
        started = time.perf_counter()
        pages = extract(long_pdf)
        took = time.perf_counter() - started
        row = {"pages_per_s": round(len(pages) / took, 1)}
        for label, raw, text, chars in quality_sets:
            row[label] = similarity(text, "\n".join(extract(raw)), chars=chars)
        report[name] = row
    labels = list(next(iter(report.values())))
    print("| library | " + " | ".join(labels) + " |")
    print("|---" * (len(labels) + 1) + "|")
    for name, row in report.items():
        print(f"| {name} | " + " | ".join(str(row[k]) for k in labels) + " |")
    out = Path(__file__).parent / "results" / "pdf.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
