"""Labelled questions for the shared English help vault (../shared/vaults/obsidian-help/en).

Each question asks what a user remembers in their own words, never with the title words of the
notes it expects (``check_questions`` enforces that), so lexical search cannot simply match the
title: this measures finding notes by what they mean.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
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
