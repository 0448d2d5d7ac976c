"""PDFs: text extraction (pypdfium2 against pypdf), indexing speed, retrieval, build cost.

``extract`` (the default):

Speed in pages per second over a 200-page PDF of prose, and text quality as the similarity of
the extracted words to the text that was set (difflib's ratio over word sequences, 1.0 = the
same words in the same order) for: one column of English, two columns (the left column must
come first), German with umlauts, and Chinese (compared by characters). The PDFs are made here
with fpdf2 (tests/helpers/pdfs.py). Writes bench/results/pdf.json.

``index``: a vault of PDFs (``--pdfs``, 5 pages each) whose every page states one made-up
fact ("The amber otter of Lyon weighs 41 kilograms."): indexing time per page (pages/s), and
retrieval on one question per page ("How heavy is the amber otter of Lyon?"), lexical and
semantic (a tiny model2vec model built from the PDFs' words, bench/semantic.py): the share of
questions whose first result is the right PDF, and of those, on the right page. Then the build
of a 10,000-note vault (bench/vaultgen.py) without and with 500 of those PDFs, in the same
run. Writes bench/results/pdf_index.json.

    nice .venv/bin/python bench/pdf.py extract    # needs the bench group for pypdf
    nice .venv/bin/python bench/pdf.py index --pdfs 100 --notes 10000 --with-pdfs 500
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import io
import json
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.semantic import CountingModel2Vec, build_model
from bench.vaultgen import generate_vault
from plugin_bridge.vault.vault import Vault
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
    from plugin_bridge.vault.pdf_worker import extract_pages

    return extract_pages("bench.pdf", raw).pages


def pypdf_text(raw: bytes) -> list[str]:
    from pypdf import PdfReader

    return [page.extract_text() or "" for page in PdfReader(io.BytesIO(raw)).pages]


def prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)) + "."


def similarity(expected: str, got: str, *, chars: bool = False) -> float:
    a = list("".join(expected.split())) if chars else expected.split()
    b = list("".join(got.split())) if chars else got.split()
    return round(difflib.SequenceMatcher(None, a, b, autojunk=False).ratio(), 3)


def extract() -> None:
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
    _write("pdf.json", report)


COLOURS = [
    "amber",
    "azure",
    "crimson",
    "golden",
    "ivory",
    "jade",
    "olive",
    "scarlet",
    "silver",
    "violet",
]
ANIMALS = [
    "otter",
    "heron",
    "badger",
    "falcon",
    "lynx",
    "marten",
    "osprey",
    "stoat",
    "weasel",
    "wren",
]
PLACES = [
    "Lyon",
    "Bergen",
    "Cordoba",
    "Dundee",
    "Esbjerg",
    "Gdansk",
    "Haarlem",
    "Izmir",
    "Kassel",
    "Leuven",
]
PAGES_PER_PDF = 5


def fact_pdfs(root: Path, count: int, seed: int = 11) -> list[tuple[str, int, str]]:
    """``count`` PDFs of 5 pages under root/Papers, each page one unique fact among filler
    prose: (path, page, question) per page."""
    rng = random.Random(seed)
    combos = [(c, a, p) for c in COLOURS for a in ANIMALS for p in PLACES]
    rng.shuffle(combos)
    questions = []
    (root / "Papers").mkdir(parents=True, exist_ok=True)
    for number in range(count):
        pages = []
        rel = f"Papers/report {number:04d}.pdf"
        for page in range(PAGES_PER_PDF):
            colour, animal, place = combos[(number * PAGES_PER_PDF + page) % len(combos)]
            fact = f"The {colour} {animal} of {place} weighs {rng.randint(2, 90)} kilograms."
            pages.append(f"{prose(rng, 120)} {fact} {prose(rng, 120)}")
            questions.append((rel, page + 1, f"How heavy is the {colour} {animal} of {place}?"))
        (root / rel).write_bytes(make_pdf(pages))
    return questions


async def retrieval(
    vault: Vault, questions: list[tuple[str, int, str]], mode: str
) -> dict[str, float]:
    right_file = right_page = 0
    for rel, page, question in questions:
        found = await vault.search(question, 5, mode)  # type: ignore[arg-type]
        if found.hits and found.hits[0].path == rel:
            right_file += 1
            right_page += found.hits[0].page == page
    n = len(questions)
    return {"file_at_1": round(right_file / n, 3), "page_at_1": round(right_page / n, 3)}


async def build_seconds(root: Path, data: Path) -> float:
    vault = Vault(root, data, watch=False)
    started = time.perf_counter()
    await vault.start()
    await vault.index.wait_until_idle(3600)
    took = time.perf_counter() - started
    await vault.close()
    return round(took, 2)


async def index(pdfs: int, notes: int, with_pdfs: int) -> None:
    report: dict[str, object] = {}
    if pdfs:
        await pdf_vault(pdfs, report)
    if notes:
        await build_cost(notes, with_pdfs, report)
    _write("pdf_index.json", report)


async def pdf_vault(pdfs: int, report: dict[str, object]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        root = base / "pdfs"
        questions = fact_pdfs(root, pdfs)
        pages = pdfs * PAGES_PER_PDF
        took = await build_seconds(root, base / "data-pdfs")
        report["pdf_vault"] = {
            "pdfs": pdfs,
            "pages": pages,
            "index_s": took,
            "pages_per_s": round(pages / took, 1),
            "ms_per_page": round(took * 1000 / pages, 2),
        }
        words = base / "words"
        words.mkdir()
        (words / "all.md").write_text(" ".join(q for _, _, q in questions) + " " + " ".join(WORDS))
        model = build_model(words, base / "model")
        vault = Vault(root, base / "data-pdfs", watch=False)
        vault.use_embedder(CountingModel2Vec(str(model)))
        await vault.start()
        await vault.index.wait_until_idle(3600)
        assert vault.semantic is not None
        await vault.semantic.wait_until_idle(3600)
        report["retrieval"] = {
            mode: await retrieval(vault, questions, mode)
            for mode in ("lexical", "semantic", "hybrid")
        }
        await vault.close()
    print(json.dumps(report, indent=2), flush=True)


async def build_cost(notes: int, with_pdfs: int, report: dict[str, object]) -> None:
    """A vault of ``notes`` notes built without, then with ``with_pdfs`` PDFs (same run)."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        plain = base / "plain"
        generate_vault(plain, notes)
        mixed = base / "mixed"
        generate_vault(mixed, notes)
        fact_pdfs(mixed, with_pdfs, seed=12)
        without = await build_seconds(plain, base / "data-plain")
        withpdf = await build_seconds(mixed, base / "data-mixed")
        pages = with_pdfs * PAGES_PER_PDF
        report["build"] = {
            "notes": notes,
            "pdfs": with_pdfs,
            "pdf_pages": pages,
            "without_pdfs_s": without,
            "with_pdfs_s": withpdf,
            "ratio": round(withpdf / without, 2),
            "pdf_pages_per_s_in_build": round(pages / max(withpdf - without, 1e-3), 1),
        }
    print(json.dumps(report["build"], indent=2), flush=True)


def _write(name: str, report: object) -> None:
    out = Path(__file__).parent / "results" / name
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", nargs="?", choices=("extract", "index"), default="extract")
    parser.add_argument("--pdfs", type=int, default=100)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--with-pdfs", type=int, default=500)
    args = parser.parse_args()
    if args.what == "extract":
        extract()
    else:
        asyncio.run(index(args.pdfs, args.notes, args.with_pdfs))


if __name__ == "__main__":
    main()
