"""The model's Markdown as the chat apps take it: split into messages within each app's limit
(at paragraph, then line, then word boundaries; nothing lost or repeated), and converted to
Telegram's MarkdownV2 by the Bot API's escaping rules (Discord takes the model's Markdown)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final
from urllib.parse import quote

TELEGRAM_LIMIT: Final = 4096
DISCORD_LIMIT: Final = 2000

RESERVED: Final = "_*[]()~`>#+-=|{}.!\\"
"""Characters MarkdownV2 wants escaped outside entities (the backslash too)."""
_ESCAPE: Final = re.compile("([" + re.escape(RESERVED) + "])")
_INLINE: Final = re.compile(
    r"(?P<code>`[^`\n]+`)"
    r"|(?P<link>\[(?P<ltext>[^\]\n]+)\]\((?P<lurl>[^)\s]+)\))"
    r"|\*\*(?P<bold>.+?)\*\*"
    r"|(?<!\w)__(?P<bold2>.+?)__(?!\w)"
    r"|~~(?P<strike>.+?)~~"
    r"|(?<![\w*])\*(?P<ital>[^*\s](?:(?:\*\*[^*\n]+?\*\*|[^*\n])*?[^*\s])?)\*(?![\w*])"
    r"|(?<![\w_])_(?P<ital2>[^_\s](?:[^_\n]*?[^_\s])?)_(?![\w_])"
)
_FENCE: Final = re.compile(r"^\s*```")
_HEADING: Final = re.compile(r"^#{1,6}\s+(.*)$")
_BULLET: Final = re.compile(r"^(\s*)[-*+]\s+(.*)$")


def sources_markdown(vault: str, paths: Sequence[str]) -> str:
    """An answer's sources as Markdown: each note's name, then its ``obsidian://open`` URL as
    inline code. Neither app makes that scheme a link (Telegram refuses a link whose scheme is
    not http(s) or tg, Discord shows only http(s) links), so the URL is there to copy."""
    lines = ["Sources:"]
    for path in paths:
        note = path.removesuffix(".md")
        url = f"obsidian://open?vault={quote(vault, safe='')}&file={quote(note, safe='')}"
        lines.append(f"- {note.rpartition('/')[2]}: `{url}`")
    return "\n".join(lines)


def escape(text: str) -> str:
    """``text`` as literal MarkdownV2: every reserved character escaped."""
    return _ESCAPE.sub(r"\\\1", text)


def _escape_code(text: str) -> str:
    """Inside code and pre entities only ` and \\ are escaped."""
    return text.replace("\\", "\\\\").replace("`", "\\`")


def _escape_url(url: str) -> str:
    """Inside a link's (...) only ) and \\ are escaped."""
    return url.replace("\\", "\\\\").replace(")", "\\)")


def _inline(text: str) -> str:
    out: list[str] = []
    at = 0
    for match in _INLINE.finditer(text):
        out.append(escape(text[at : match.start()]))
        at = match.end()
        groups = match.groupdict()
        if groups["code"] is not None:
            out.append(f"`{_escape_code(groups['code'][1:-1])}`")
        elif groups["link"] is not None:
            out.append(f"[{_inline(groups['ltext'])}]({_escape_url(groups['lurl'])})")
        elif groups["bold"] is not None or groups["bold2"] is not None:
            out.append(f"*{_inline(groups['bold'] or groups['bold2'])}*")
        elif groups["strike"] is not None:
            out.append(f"~{_inline(groups['strike'])}~")
        else:
            out.append(f"_{_inline(groups['ital'] or groups['ital2'])}_")
    out.append(escape(text[at:]))
    return "".join(out)


def telegram_markdown(text: str) -> str:
    """The model's Markdown as MarkdownV2: code blocks and inline code kept (only ` and \\
    escaped inside), links, bold, italic (nested too) and strikethrough kept, headings bold,
    bullets as •, and every other reserved character escaped. An unclosed code block is
    closed at the end."""
    lines = text.split("\n")
    out: list[str] = []
    fence: str | None = None
    for line in lines:
        if _FENCE.match(line):
            if fence is None:
                fence = line.strip()[3:].strip()
                language = re.sub(r"[^\w+-]", "", fence)
                out.append(f"```{language}")
            else:
                fence = None
                out.append("```")
            continue
        if fence is not None:
            out.append(_escape_code(line))
            continue
        heading = _HEADING.match(line)
        bullet = _BULLET.match(line)
        if heading is not None:
            out.append(f"*{_inline(heading.group(1))}*")
        elif bullet is not None and not line.lstrip().startswith("**"):
            out.append(f"{bullet.group(1)}• {_inline(bullet.group(2))}")
        else:
            out.append(_inline(line))
    if fence is not None:
        out.append("```")
    return "\n".join(out)


def split_text(text: str, limit: int) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters whose concatenation is ``text``:
    each cut after a blank line when one is in the last half of the piece, else after a line
    break, else after a space, else at the limit."""
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        window = rest[:limit]
        cut = 0
        for separator in ("\n\n", "\n", " "):
            found = window.rfind(separator)
            if found > 0 and (separator != "\n\n" or found >= limit // 2):
                cut = found + len(separator)
                break
        if cut <= 0:
            cut = limit
        pieces.append(rest[:cut])
        rest = rest[cut:]
    if rest or not pieces:
        pieces.append(rest)
    return pieces


def open_fence(text: str) -> bool:
    """Whether ``text`` ends inside a code block (an odd number of fence lines)."""
    return sum(1 for line in text.split("\n") if _FENCE.match(line)) % 2 == 1


def telegram_pieces(text: str, limit: int = TELEGRAM_LIMIT) -> list[tuple[str, str]]:
    """``text`` as messages of at most ``limit`` characters each, as (MarkdownV2, plain) pairs:
    a code block cut in two is closed and opened again, and a piece whose escaped form is too
    long is cut smaller."""
    out: list[tuple[str, str]] = []
    inside = False
    for piece in split_text(text, limit - 8):
        source = f"```\n{piece}" if inside else piece
        inside = open_fence(source)
        formatted = telegram_markdown(source)
        if len(formatted) <= limit:
            out.append((formatted, piece))
            continue
        smaller = max(64, limit * len(source) // len(formatted) - 16)
        for part in split_text(piece, smaller):
            out.extend(telegram_pieces(part, limit))
    return out
