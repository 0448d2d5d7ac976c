"""Labelled questions for the shared English help vault (../shared/vaults/obsidian-help/en).

Each question asks what a user remembers in their own words, never with the title words of the
notes it expects (``check_questions`` enforces that), so lexical search cannot simply match the
title: this measures finding notes by what they mean.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Final

QUESTIONS: Final[list[tuple[str, tuple[str, ...]]]] = [
    ("Can I get my money back after buying a license?", ("Licenses and payment/Refund policy.md",)),
    (
        "restore an older copy of a page I accidentally deleted",
        ("Plugins/File recovery.md", "Obsidian Sync/Version history.md"),
    ),
    ("assign a keyboard combination to an action", ("User interface/Hotkeys.md",)),
    ("colored boxes for warnings and tips inside my text", ("Editing and formatting/Callouts.md",)),
    (
        "change how the app looks with a visual style made by other users",
        ("Extending Obsidian/Themes.md", "User interface/Appearance.md"),
    ),
    ("custom stylesheets to tweak the interface", ("Extending Obsidian/CSS snippets.md",)),
    (
        "is my data encrypted end to end when it travels between phone and laptop",
        ("Obsidian Sync/Security and privacy.md",),
    ),
    (
        "make my notes available to everyone as a public website",
        (
            "Obsidian Publish/Introduction to Obsidian Publish.md",
            "Obsidian Publish/Publish your content.md",
        ),
    ),
    ("use my own web address for the online site", ("Obsidian Publish/Custom domains.md",)),
    (
        "bring my notebooks over from the green elephant app with an .enex export",
        ("Import notes/Import from Evernote.md",),
    ),
    (
        "how long is my essay, number of characters shown at the bottom",
        ("Plugins/Word count.md",),
    ),
    ("a journal page created automatically for today's date", ("Plugins/Daily notes.md",)),
    ("open several files side by side and switch between them", ("User interface/Tabs.md",)),
    ("visualise the connections between my pages as a network", ("Plugins/Graph view.md",)),
    ("which other pages mention the one I have open", ("Plugins/Backlinks.md",)),
    ("reuse boilerplate text when creating a page", ("Plugins/Templates.md",)),
    ("save the arrangement of my panes and restore it later", ("Plugins/Workspaces.md",)),
    ("give a presentation from a markdown file", ("Plugins/Slides.md",)),
    ("capture voice memos with the microphone", ("Plugins/Audio recorder.md",)),
    (
        "give a page alternative names so links to those names find it",
        ("Linking notes and files/Aliases.md",),
    ),
    (
        "add metadata such as dates and lists at the top of a file in YAML",
        ("Editing and formatting/Properties.md",),
    ),
    ("collapse a heading's section to hide it", ("Editing and formatting/Folding.md",)),
    (
        "type in several places at once with more than one caret",
        ("Editing and formatting/Multiple cursors.md",),
    ),
    (
        "where does the app keep its settings and plugin data on disk",
        ("Files and folders/Configuration folder.md",),
    ),
    (
        "cheaper price for students, teachers and charities",
        ("Licenses and payment/Education and non-profit discount.md",),
    ),
    ("why was VAT added to my purchase price", ("Licenses and payment/Sales tax.md",)),
    (
        "require a one-time code from a phone app when signing in to my account",
        ("Obsidian/2-factor authentication.md",),
    ),
    (
        "choose the data center location where my remote vault is stored",
        ("Obsidian Sync/Sync regions.md",),
    ),
    (
        "exclude some folders and file types from being copied to my other devices",
        ("Obsidian Sync/Sync settings and selective syncing.md",),
    ),
    (
        "restore a previous revision of a file kept on the remote server",
        ("Obsidian Sync/Version history.md",),
    ),
    (
        "invite a colleague so we can both edit the same remote notes",
        ("Obsidian Sync/Collaborate on a shared vault.md",),
    ),
    (
        "save an article from my browser as markdown with an extension",
        (
            "Obsidian Web Clipper/Introduction to Obsidian Web Clipper.md",
            "Obsidian Web Clipper/Clip web pages.md",
        ),
    ),
    (
        "mark passages on an online article and keep the marked text",
        ("Obsidian Web Clipper/Highlighter.md",),
    ),
    (
        "install add-ons written by third-party developers and turn off restricted mode",
        ("Extending Obsidian/Community plugins.md",),
    ),
    (
        "open a specific file from another app using a custom link scheme",
        ("Extending Obsidian/Obsidian URI.md",),
    ),
    ("find text across all files using operators such as path: and tag:", ("Plugins/Search.md",)),
    ("jump to a file by typing part of its name", ("Plugins/Quick switcher.md",)),
    ("run any action by typing its name in a popup list", ("Plugins/Command palette.md",)),
    ("keep favourite files and searches pinned for fast access", ("Plugins/Bookmarks.md",)),
    (
        "merge two files together or extract a selection into a new file",
        ("Plugins/Note composer.md",),
    ),
    (
        "show a YouTube video or an external site inside my document with an iframe",
        ("Editing and formatting/Embed web pages.md",),
    ),
    (
        "show files as rows and columns like a database spreadsheet with filters",
        ("Bases/Introduction to Bases.md", "Bases/Create a base.md", "Bases/Layouts/Table view.md"),
    ),
    (
        "set up the desktop app on Linux with AppImage, Flatpak or Snap",
        ("Getting started/Download and install Obsidian.md",),
    ),
    (
        "protect against data loss by keeping copies of my vault on another drive",
        ("Getting started/Back up your Obsidian files.md",),
    ),
    ("definitions of terms used throughout the help", ("Getting started/Glossary.md",)),
    (
        "display the menus in German or Japanese instead of English",
        ("User interface/Language settings.md",),
    ),
    (
        "where are pasted images and PDFs saved when I add them to a page",
        ("Editing and formatting/Attachments.md",),
    ),
    (
        "label files with # keywords and nest them like parent/child",
        ("Editing and formatting/Tags.md",),
    ),
    (
        "point to a specific heading or block inside another file",
        ("Linking notes and files/Internal links.md",),
    ),
    (
        "switch between raw markup and the rendered reading display",
        ("Editing and formatting/Views and editing mode.md",),
    ),
]

STOPWORDS: Final = frozenset(
    {"a", "an", "and", "the", "to", "of", "in", "on", "for", "from", "with", "your", "my", "is"}
)
_WORD: Final = re.compile(r"\w+")


def title_words(path: str) -> set[str]:
    """The words of a note's title (its file name), case-folded, without stopwords."""
    return {w for w in _WORD.findall(PurePosixPath(path).stem.casefold()) if w not in STOPWORDS}


def check_questions() -> list[str]:
    """Questions that use a title word of a note they expect (should be none)."""
    problems = []
    for question, expected in QUESTIONS:
        words = set(_WORD.findall(question.casefold()))
        for path in expected:
            shared = words & title_words(path)
            if shared:
                problems.append(f"{question!r} uses {sorted(shared)} of {path}")
    return problems


# -- The realistic set: how people type into a search box, in five languages ------------------
#
# Four kinds, on each language's help vault (../shared/vaults/obsidian-help/LANG):
# - keyword: a few words, often the note's own (what a search box mostly gets);
# - natural: a whole question with its "how do I" (stop words a note rarely has);
# - paraphrase: the need in other words (no title word, as in QUESTIONS above);
# - typo: keywords with one slip (a letter missing, doubled, swapped or wrong).
# Every expected note was checked by reading it: it answers the question (a heading or a
# paragraph on exactly that); where two notes both answer, both are listed.

Kind = str
REALISTIC: Final[list[tuple[str, Kind, str, tuple[str, ...]]]] = [
    # -- English -------------------------------------------------------------------------------
    ("en", "keyword", "embed image", ("Linking notes and files/Embed files.md",)),
    ("en", "keyword", "task list checkbox", ("Editing and formatting/Basic formatting syntax.md",)),
    (
        "en",
        "keyword",
        "exclude folder sync",
        ("Obsidian Sync/Sync settings and selective syncing.md",),
    ),
    ("en", "keyword", "publish custom domain", ("Obsidian Publish/Custom domains.md",)),
    ("en", "keyword", "set hotkey", ("User interface/Hotkeys.md",)),
    (
        "en",
        "keyword",
        "restore deleted file",
        ("Obsidian Sync/Version history.md", "Plugins/File recovery.md"),
    ),
    ("en", "keyword", "nested tags", ("Editing and formatting/Tags.md",)),
    ("en", "keyword", "canvas connect cards", ("Plugins/Canvas.md",)),
    ("en", "keyword", "template variables date", ("Plugins/Templates.md",)),
    ("en", "keyword", "math latex", ("Editing and formatting/Advanced formatting syntax.md",)),
    ("en", "keyword", "refund", ("Licenses and payment/Refund policy.md",)),
    ("en", "keyword", "sync conflict", ("Obsidian Sync/Troubleshoot Obsidian Sync.md",)),
    (
        "en",
        "natural",
        "How do I embed an image in a note?",
        ("Linking notes and files/Embed files.md",),
    ),
    (
        "en",
        "natural",
        "How do I make a task list with checkboxes?",
        ("Editing and formatting/Basic formatting syntax.md",),
    ),
    (
        "en",
        "natural",
        "How do I link to a specific heading in another note?",
        ("Linking notes and files/Internal links.md",),
    ),
    (
        "en",
        "natural",
        "How can I see which notes link to the note I'm reading?",
        ("Plugins/Backlinks.md",),
    ),
    (
        "en",
        "natural",
        "How do I install a community plugin?",
        ("Extending Obsidian/Community plugins.md",),
    ),
    (
        "en",
        "natural",
        "How do I change the theme?",
        ("Extending Obsidian/Themes.md", "User interface/Appearance.md"),
    ),
    (
        "en",
        "natural",
        "Can I use my own domain name for my Publish site?",
        ("Obsidian Publish/Custom domains.md",),
    ),
    (
        "en",
        "natural",
        "How do I create a table in a note?",
        ("Editing and formatting/Advanced formatting syntax.md",),
    ),
    (
        "en",
        "natural",
        "What happens when I edit the same note on two devices before they sync?",
        (
            "Obsidian Sync/Troubleshoot Obsidian Sync.md",
            "Obsidian Sync/Sync settings and selective syncing.md",
        ),
    ),
    (
        "en",
        "natural",
        "How do I move my pages over from Notion?",
        ("Import notes/Import from Notion.md",),
    ),
    (
        "en",
        "natural",
        "Where does Obsidian keep my notes on my computer?",
        ("Files and folders/How Obsidian stores data.md",),
    ),
    (
        "en",
        "natural",
        "How do I open a note in a separate window?",
        ("User interface/Pop-out windows.md",),
    ),
    (
        "en",
        "natural",
        "How do I create a daily note from a template?",
        ("Plugins/Daily notes.md",),
    ),
    (
        "en",
        "natural",
        "How do I make a callout that can be collapsed?",
        ("Editing and formatting/Callouts.md",),
    ),
    (
        "en",
        "paraphrase",
        "put a picture inside my page",
        ("Linking notes and files/Embed files.md",),
    ),
    (
        "en",
        "paraphrase",
        "to-do items I can tick off",
        ("Editing and formatting/Basic formatting syntax.md",),
    ),
    (
        "en",
        "paraphrase",
        "keep certain directories off my phone",
        ("Obsidian Sync/Sync settings and selective syncing.md",),
    ),
    (
        "en",
        "paraphrase",
        "get back what a page said last week",
        ("Plugins/File recovery.md", "Obsidian Sync/Version history.md"),
    ),
    ("en", "paraphrase", "see all my pages as a web of dots", ("Plugins/Graph view.md",)),
    (
        "en",
        "paraphrase",
        "endless board to lay out ideas spatially",
        ("Plugins/Canvas.md",),
    ),
    (
        "en",
        "paraphrase",
        "another name for a page so links to that name work",
        ("Linking notes and files/Aliases.md",),
    ),
    ("en", "paraphrase", "key combination to run a command", ("User interface/Hotkeys.md",)),
    (
        "en",
        "paraphrase",
        "write equations and formulas",
        ("Editing and formatting/Advanced formatting syntax.md",),
    ),
    ("en", "paraphrase", "money back", ("Licenses and payment/Refund policy.md",)),
    ("en", "paraphrase", "open a file by typing its name", ("Plugins/Quick switcher.md",)),
    ("en", "paraphrase", "organize pages with hashtags", ("Editing and formatting/Tags.md",)),
    (
        "en",
        "typo",
        "obsidain sync exclude foldr",
        ("Obsidian Sync/Sync settings and selective syncing.md",),
    ),
    ("en", "typo", "backlnks", ("Plugins/Backlinks.md",)),
    ("en", "typo", "embedd imgae", ("Linking notes and files/Embed files.md",)),
    ("en", "typo", "comunity plugins instal", ("Extending Obsidian/Community plugins.md",)),
    ("en", "typo", "graph veiw filters", ("Plugins/Graph view.md",)),
    ("en", "typo", "hotkyes", ("User interface/Hotkeys.md",)),
    ("en", "typo", "calouts", ("Editing and formatting/Callouts.md",)),
    ("en", "typo", "tempaltes folder", ("Plugins/Templates.md",)),
    # -- German --------------------------------------------------------------------------------
    ("de", "keyword", "Bild einbetten", ("Notizen und Dateien verknüpfen/Dateien einbetten.md",)),
    (
        "de",
        "keyword",
        "Ordner Synchronisierung ausschließen",
        ("Obsidian Sync/Sync-Einstellungen und selektive Synchronisierung.md",),
    ),
    ("de", "keyword", "verschachtelte Tags", ("Bearbeitung und Formatierung/Tags.md",)),
    ("de", "keyword", "Rückerstattung", ("Lizenzen und Zahlung/Erstattungsrichtlinie.md",)),
    (
        "de",
        "natural",
        "Wie erstelle ich eine Aufgabenliste?",
        ("Bearbeitung und Formatierung/Grundlegende Formatierungssyntax.md",),
    ),
    (
        "de",
        "natural",
        "Wie installiere ich eine Community-Erweiterung?",
        ("Obsidian erweitern/Community-Erweiterungen.md",),
    ),
    (
        "de",
        "natural",
        "Wie kann ich eine Tabelle in einer Notiz erstellen?",
        ("Bearbeitung und Formatierung/Erweiterte Formatierungssyntax.md",),
    ),
    (
        "de",
        "paraphrase",
        "ein Foto in meine Seite einfügen",
        ("Notizen und Dateien verknüpfen/Dateien einbetten.md",),
    ),
    (
        "de",
        "paraphrase",
        "mathematische Formeln schreiben",
        ("Bearbeitung und Formatierung/Erweiterte Formatierungssyntax.md",),
    ),
    (
        "de",
        "paraphrase",
        "versehentlich gelöschte Notiz zurückholen",
        ("Erweiterungen/Datenwiederherstellung.md", "Obsidian Sync/Versionsgeschichte.md"),
    ),
    ("de", "typo", "Tastenkürzl festlegen", ("Benutzeroberfläche/Tastenkürzel.md",)),
    ("de", "typo", "Vorlgen einfügen", ("Erweiterungen/Vorlagen.md",)),
    # -- Russian -------------------------------------------------------------------------------
    (
        "ru",
        "keyword",
        "встраивание изображения",
        ("Ссылки на заметки и файлы/Встраивание файлов.md",),
    ),
    (
        "ru",
        "keyword",
        "исключить папку синхронизация",
        ("Obsidian Sync/Настройки синхронизации и выборочная синхронизация.md",),
    ),
    ("ru", "keyword", "вложенные теги", ("Редактирование и форматирование/Теги.md",)),
    ("ru", "keyword", "возврат средств", ("Лицензии и оплата/Политика возврата средств.md",)),
    (
        "ru",
        "natural",
        "Как создать список задач?",
        ("Редактирование и форматирование/Основной синтаксис форматирования.md",),
    ),
    (
        "ru",
        "natural",
        "Как увидеть, какие заметки ссылаются на текущую?",
        ("Плагины/Обратные ссылки.md",),
    ),
    (
        "ru",
        "natural",
        "Как сделать таблицу в заметке?",
        ("Редактирование и форматирование/Расширенный синтаксис форматирования.md",),
    ),
    (
        "ru",
        "paraphrase",
        "вставить картинку в страницу",
        ("Ссылки на заметки и файлы/Встраивание файлов.md",),
    ),
    (
        "ru",
        "paraphrase",
        "назначить сочетание клавиш для команды",
        ("Интерфейс пользователя/Горячие клавиши.md",),
    ),
    (
        "ru",
        "paraphrase",
        "вернуть удалённую заметку",
        ("Плагины/Восстановление файлов.md", "Obsidian Sync/История версий.md"),
    ),
    ("ru", "typo", "горячие клавищи", ("Интерфейс пользователя/Горячие клавиши.md",)),
    ("ru", "typo", "обратные сылки", ("Плагины/Обратные ссылки.md",)),
    # -- Chinese -------------------------------------------------------------------------------
    ("zh", "keyword", "插入图片", ("链接笔记与文件/插入文件.md",)),
    ("zh", "keyword", "排除文件夹 同步", ("Obsidian Sync/同步文件和设置.md",)),
    ("zh", "keyword", "嵌套标签", ("编辑与格式化/标签.md",)),
    ("zh", "keyword", "退款", ("许可证与支付/退款政策.md",)),
    ("zh", "keyword", "快捷键", ("用户界面/快捷键.md",)),
    ("zh", "natural", "如何创建任务列表？", ("编辑与格式化/基本格式语法.md",)),
    ("zh", "natural", "怎么在笔记中插入图片？", ("链接笔记与文件/插入文件.md",)),
    ("zh", "natural", "如何创建表格", ("编辑与格式化/高级格式语法.md",)),
    ("zh", "natural", "如何查看哪些笔记链接到当前笔记", ("插件/反向链接.md",)),
    ("zh", "paraphrase", "恢复被误删的笔记", ("插件/文件恢复.md", "Obsidian Sync/版本历史.md")),
    ("zh", "paraphrase", "给命令设置键盘组合", ("用户界面/快捷键.md",)),
    ("zh", "paraphrase", "用数学公式", ("编辑与格式化/高级格式语法.md",)),
]
KINDS: Final = ("keyword", "natural", "paraphrase", "typo")


def check_realistic(
    vaults: Path, asked: Sequence[tuple[str, Kind, str, tuple[str, ...]]] = REALISTIC
) -> list[str]:
    """Expected notes of the realistic set (or of ``asked``) that do not exist in their vault
    (should be none)."""
    return [
        f"{language}: {path}"
        for language, _, _, expected in asked
        for path in expected
        if not (vaults / language / path).is_file()
    ]
