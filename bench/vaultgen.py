"""Build an N-note vault for benchmarks from the Obsidian help vaults in ../shared/vaults.

The real notes of every language present (en, de, ja, ru, zh, ...) are interleaved, so any size
mixes languages, and cycled under varied folders and names; each copy gets two inline tags
(``#bench/<lang>`` and ``#set<n>``) for ``tag:`` queries. Without ../shared, seeded synthetic
notes in English, German, Russian, Japanese and Chinese stand in. ``BENCH_HELP_VAULTS`` names
the help vaults' folder when the checkout is elsewhere (a git worktree).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path, PurePosixPath

SHARED = Path(
    os.environ.get("BENCH_HELP_VAULTS")
    or Path(__file__).resolve().parents[2] / "shared" / "vaults" / "obsidian-help"
)
VOCABULARY = {
    "en": "sync plugin canvas graph note link vault search template publish folder",
    "de": "Einstellungen Übersicht Notizen Verknüpfung Ordner Vorlage Größe prüfen",
    "ru": "заметки синхронизация настройки ссылка папка шаблон поиск граф",
    "ja": "同期 プラグイン ノート 設定 検索 リンク テンプレート フォルダ",
    "zh": "同步 插件 笔记 设置 搜索 链接 模板 文件夹",
}


@dataclass(frozen=True)
class SourceNote:
    lang: str
    path: PurePosixPath
    text: str


@dataclass(frozen=True)
class GeneratedVault:
    root: Path
    notes: int
    bytes: int
    source: str
    paths: list[str]


def source_notes(shared: Path = SHARED) -> list[SourceNote]:
    """The shared notes, languages interleaved; empty when ``shared`` is absent."""
    if not shared.is_dir():
        return []
    by_lang = [
        [
            SourceNote(lang.name, PurePosixPath(note.relative_to(lang).as_posix()), _read(note))
            for note in sorted(lang.rglob("*.md"))
        ]
        for lang in sorted(p for p in shared.iterdir() if p.is_dir())
    ]
    return [note for group in zip_longest(*by_lang) for note in group if note is not None]


def synthetic_notes(count: int = 500, seed: int = 7) -> list[SourceNote]:
    """Seeded stand-ins: a few hundred words per note in five languages."""
    rng = random.Random(seed)
    notes = []
    for i in range(count):
        lang = list(VOCABULARY)[i % len(VOCABULARY)]
        sep = "" if lang in ("ja", "zh") else " "
        words = VOCABULARY[lang].split() + [f"w{rng.randrange(4000)}" for _ in range(40)]
        body = "\n\n".join(
            sep.join(rng.choice(words) for _ in range(60)) + ("。" if not sep else ".")
            for _ in range(6)
        )
        title = f"{rng.choice(VOCABULARY[lang].split())} {i}"
        notes.append(SourceNote(lang, PurePosixPath(f"topic{i % 9}/{title}.md"), body))
    return notes


def generate_vault(dest: Path, notes: int, shared: Path = SHARED) -> GeneratedVault:
    """Write ``notes`` notes under ``dest`` (created)."""
    sources = source_notes(shared)
    kind = "obsidian-help" if sources else "synthetic"
    sources = sources or synthetic_notes()
    total = 0
    paths = []
    for i in range(notes):
        source = sources[i % len(sources)]
        copy = i // len(sources)
        name = source.path.stem + (f" {copy}" if copy else "") + source.path.suffix
        rel = PurePosixPath(source.lang, f"set{copy:02d}", source.path.parent, name)
        text = f"{source.text.rstrip()}\n\n#bench/{source.lang} #set{copy}\n"
        target = dest.joinpath(*rel.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        target.write_bytes(data)
        total += len(data)
        paths.append(rel.as_posix())
    return GeneratedVault(dest, notes, total, kind, paths)


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace")
