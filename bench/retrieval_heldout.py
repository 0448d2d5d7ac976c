"""Held-out questions: never used to tune ranking or fusion (issue 41), only to check that what
was tuned on the realistic set (``retrieval_questions.py``) holds on questions nobody tuned for.

Written for issue 41 after the ranking was chosen, in the same four kinds (keyword, natural,
paraphrase, typo) and on every help vault, Japanese included (the realistic set has none).
Each expected note is the help vault's page on exactly that topic. ``bench/retrieval.py
--set heldout`` measures them.
"""

from __future__ import annotations

from typing import Final

HELDOUT: Final[list[tuple[str, str, str, tuple[str, ...]]]] = [
    # -- English -------------------------------------------------------------------------------
    ("en", "keyword", "word count", ("Plugins/Word count.md",)),
    ("en", "keyword", "bookmarks", ("Plugins/Bookmarks.md",)),
    ("en", "keyword", "sync regions", ("Obsidian Sync/Sync regions.md",)),
    ("en", "keyword", "css snippets", ("Extending Obsidian/CSS snippets.md",)),
    ("en", "keyword", "import evernote", ("Import notes/Import from Evernote.md",)),
    (
        "en",
        "natural",
        "How do I use Obsidian on my iPhone?",
        ("Obsidian/Obsidian for iOS and iPadOS.md",),
    ),
    (
        "en",
        "natural",
        "How do I move my notes over from Apple Notes?",
        ("Import notes/Import from Apple Notes.md",),
    ),
    (
        "en",
        "natural",
        "Can I get a discount as a student?",
        ("Licenses and payment/Education and non-profit discount.md",),
    ),
    (
        "en",
        "natural",
        "How do I turn on two-factor authentication?",
        ("Obsidian/2-factor authentication.md",),
    ),
    ("en", "paraphrase", "record my voice as I speak", ("Plugins/Audio recorder.md",)),
    ("en", "paraphrase", "a fresh page for each day of the year", ("Plugins/Daily notes.md",)),
    (
        "en",
        "paraphrase",
        "hover over a link to peek at the page behind it",
        ("Plugins/Page preview.md",),
    ),
    (
        "en",
        "paraphrase",
        "which country my synced data is kept in",
        ("Obsidian Sync/Sync regions.md",),
    ),
    ("en", "paraphrase", "pin favourite pages for quick access", ("Plugins/Bookmarks.md",)),
    ("en", "typo", "bookmrks", ("Plugins/Bookmarks.md",)),
    ("en", "typo", "dialy notes", ("Plugins/Daily notes.md",)),
    ("en", "typo", "custom domian", ("Obsidian Publish/Custom domains.md",)),
    ("en", "typo", "propertes", ("Editing and formatting/Properties.md",)),
    # -- German --------------------------------------------------------------------------------
    ("de", "keyword", "Lesezeichen", ("Erweiterungen/Lesezeichen.md",)),
    ("de", "keyword", "Befehlspalette", ("Erweiterungen/Befehlspalette.md",)),
    (
        "de",
        "natural",
        "Wie öffne ich eine Notiz in einem eigenen Fenster?",
        ("Benutzeroberfläche/Pop-out-Fenster.md",),
    ),
    ("de", "paraphrase", "Sprachaufnahme mit dem Mikrofon", ("Erweiterungen/Audio-Rekorder.md",)),
    ("de", "typo", "Lesezeichn", ("Erweiterungen/Lesezeichen.md",)),
    # -- Russian -------------------------------------------------------------------------------
    ("ru", "keyword", "закладки", ("Плагины/Закладки.md",)),
    ("ru", "keyword", "палитра команд", ("Плагины/Палитра команд.md",)),
    (
        "ru",
        "natural",
        "Как открыть заметку в отдельном окне?",
        ("Интерфейс пользователя/Всплывающие окна.md",),
    ),
    ("ru", "paraphrase", "записать голос с микрофона", ("Плагины/Диктофон.md",)),
    ("ru", "typo", "закладкт", ("Плагины/Закладки.md",)),
    # -- Chinese -------------------------------------------------------------------------------
    ("zh", "keyword", "书签", ("插件/书签.md",)),
    ("zh", "keyword", "命令面板", ("插件/命令面板.md",)),
    ("zh", "natural", "如何折叠标题？", ("编辑与格式化/折叠.md",)),
    ("zh", "paraphrase", "用麦克风录下我的声音", ("插件/录音机.md",)),
    # -- Japanese ------------------------------------------------------------------------------
    ("ja", "keyword", "ブックマーク", ("プラグイン/ブックマーク.md",)),
    ("ja", "keyword", "コマンドパレット", ("プラグイン/コマンドパレット.md",)),
    ("ja", "natural", "見出しを折りたたむには？", ("編集と書式設定/折りたたみ.md",)),
    ("ja", "paraphrase", "マイクで声を録音する", ("プラグイン/オーディオレコーダー.md",)),
    ("ja", "keyword", "ホットキー", ("ユーザーインターフェイス/ホットキー.md",)),
]
