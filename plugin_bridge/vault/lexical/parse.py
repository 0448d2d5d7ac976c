"""What the index needs from a note: front matter, title, aliases, tags, headings and wikilinks.

Malformed front matter never stops indexing: the body is still indexed and a warning names the
file (never its content); hostile front matter (alias bombs, deep nesting, huge values) is
refused by the one bounded loader, :mod:`plugin_bridge.vault.lexical.front_yaml`. Tags,
headings and links inside code are not tags, headings or links.
"""

from __future__ import annotations

import datetime
import logging
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Final

from llm_service import lazy

if TYPE_CHECKING:
    import yaml

    from plugin_bridge.vault.lexical import front_yaml
else:
    yaml = lazy.module("yaml")
    front_yaml = lazy.module("plugin_bridge.vault.lexical.front_yaml")

logger = logging.getLogger(__name__)

_FRONT_MATTER: Final = re.compile(r"\A---[ \t]*\n(.*?)^---[ \t]*$\n?", re.S | re.M)
# Line-based patterns start with "\n" (the text gets one prepended): a literal first character
# lets the regex engine jump between lines instead of trying "^" at every position.
_FENCED_CODE: Final = re.compile(
    r"\n {0,3}(`{3,}|~{3,})[^\n]*.*?(?:\n {0,3}\1[`~]*[ \t]*(?=\n|\Z)|\Z)", re.S
)
_INLINE_CODE: Final = re.compile(r"``[^\n]*?``|`[^`\n]*`")
_HEADING: Final = re.compile(r"\n {0,3}#{1,6}[ \t]+([^\n]*?)(?:[ \t]+#+)?[ \t]*(?=\n|\Z)")
_WIKILINK: Final = re.compile(r"\[\[([^\[\]\n]+)\]\]")  # embeds ![[…]] too
_LINK_ALIAS: Final = re.compile(r"\\?\|")  # "\|" inside tables
_LINK_ANCHOR: Final = re.compile(r"[#^]")
_TAG_STOP: Final = (
    r"\s!\"#$%&'()*+,.:;<=>?@\[\\\]^`{|}~"  # ASCII punctuation except _ - /
    "\u2000-\u206f"  # general punctuation (… “ ” – —)
    "\u3000-\u3004\u3008-\u303f"  # CJK punctuation (、 。 「 」), not 々 〆 〇
    "\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"  # full-width punctuation
)
_TAG: Final = re.compile(f"#([^{_TAG_STOP}]+)")
REFUSED: Final = "refused by the front matter limits"
"""How a :attr:`ParsedNote.frontmatter_error` starts when the YAML was over the loader's
limits (see :mod:`plugin_bridge.vault.lexical.front_yaml`)."""
_LIST_SPLIT: Final = re.compile(r"[,\s]+")
_ALIAS_SPLIT: Final = re.compile(r"\s*[,\n]\s*")
MAX_PROPERTIES: Final = 100
"""(property, value) rows kept per note for ``[property:value]`` search; values are cut to
:data:`MAX_VALUE_CHARS`."""
MAX_VALUE_CHARS: Final = 200


@dataclass(frozen=True)
class ParsedNote:
    """The searchable parts of one note; ``body`` is the text after the front matter."""

    title: str
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    headings: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    body: str = ""
    frontmatter: dict[str, Any] = field(default_factory=dict)
    frontmatter_error: str | None = None


def parse_note(rel_path: str, text: str, *, warn: bool = True) -> ParsedNote:
    """Parse the ``text`` of the note at ``rel_path`` (used for the title fallback and logs);
    front matter that cannot be read is logged (unless not ``warn``: the caller does) and
    named in ``frontmatter_error``.

    Line endings become ``\\n`` and text is NFC-normalised, so "é" typed on any system matches.
    """
    text = _normalise(text)
    frontmatter: dict[str, Any] = {}
    error = None
    body = text
    match = _FRONT_MATTER.match(text)
    if match:
        body = text[match.end() :]
        frontmatter, error = _load_yaml(match.group(1))
        if error and warn:
            logger.warning(
                "Front matter of %s is %s; its text is used without it.",
                rel_path,
                error if error.startswith(REFUSED) else "not valid YAML",
            )
    prose = _strip_code("\n" + body)
    return ParsedNote(
        title=_scalar(frontmatter.get("title")) or _normalise(PurePosixPath(rel_path).stem),
        aliases=_unique(_items(frontmatter, ("aliases", "alias"), _ALIAS_SPLIT)),
        tags=_unique(_tags(frontmatter, prose), key=str.casefold),
        headings=tuple(h for h in (m.strip() for m in _HEADING.findall(prose)) if h),
        links=_unique(link for link in map(_link_target, _WIKILINK.findall(prose)) if link),
        body=body,
        frontmatter=frontmatter,
        frontmatter_error=error,
    )


def body_start(text: str) -> int:
    """Where the text after the front matter starts in ``text`` (0 without front matter)."""
    match = _FRONT_MATTER.match(text)
    return match.end() if match else 0


def properties(frontmatter: dict[str, Any]) -> list[tuple[str, str | None]]:
    """(name, value) of each front matter property, names and values case-folded: one row per
    item of a list, ``None`` for an empty value; nested maps count as present, without a
    value. At most :data:`MAX_PROPERTIES` rows."""
    rows: list[tuple[str, str | None]] = []
    for name, value in frontmatter.items():
        key = name.strip().casefold()
        items = value if isinstance(value, list) else [value]
        texts = [_property_text(item) for item in items]
        rows += [(key, text) for text in dict.fromkeys(t for t in texts if t)] or [(key, None)]
    return rows[:MAX_PROPERTIES]


def _property_text(value: Any) -> str:
    """A property value as search compares it ("" for none, a map or a list)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (str, int, float)):
        return str(value).strip().casefold()[:MAX_VALUE_CHARS]
    if isinstance(value, datetime.date):  # YAML dates (and times)
        return value.isoformat()[:MAX_VALUE_CHARS]
    return ""


def link_key(target: str) -> str:
    """How a link target or a note path (without ``.md``) is compared: NFC, case-folded."""
    return _normalise(target).casefold()


def link_forms(rel_path: str) -> set[str]:
    """Every stored link target that resolves to the note at ``rel_path``: its name, or any
    tail of its path (without ``.md``)."""
    stem = rel_path[:-3] if rel_path.lower().endswith(".md") else rel_path
    parts = link_key(stem).split("/")
    return {"/".join(parts[i:]) for i in range(len(parts))}


def _normalise(text: str) -> str:
    text = text.removeprefix("\ufeff")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def _load_yaml(raw: str) -> tuple[dict[str, Any], str | None]:
    """The front matter as a mapping, or ``({}, reason)``; the reason never quotes the text."""
    try:
        value = front_yaml.load(raw)
    except front_yaml.Refused as exc:
        return {}, f"{REFUSED}: {exc.reason}"
    except yaml.MarkedYAMLError as exc:
        line = f" at line {exc.problem_mark.line + 2}" if exc.problem_mark else ""
        return {}, f"invalid YAML{line}: {exc.problem or 'syntax error'}"
    except Exception as exc:  # an untrusted file: bad dates, unhashable keys, deep nesting
        return {}, f"invalid YAML: {type(exc).__name__}"
    if value is None:
        return {}, None
    if not isinstance(value, dict):
        return {}, "front matter is not a list of properties"
    return {str(key): item for key, item in value.items()}, None


def _tags(frontmatter: dict[str, Any], prose: str) -> Iterable[str]:
    for tag in _items(frontmatter, ("tags", "tag"), _LIST_SPLIT):
        if clean := tag.lstrip("#").strip("/"):
            yield clean
    for match in _TAG.finditer(prose):
        if match.start() and not prose[match.start() - 1].isspace():
            continue  # "a#b", "[[Note#Heading]]": a tag starts a word
        clean = match.group(1).strip("/")
        if clean and not clean.replace("/", "").isdecimal():  # "#2024" is not a tag
            yield clean


def _items(frontmatter: dict[str, Any], keys: tuple[str, ...], split: re.Pattern[str]) -> list[str]:
    """Scalar items of list properties, or the parts of a string property split by ``split``."""
    found: list[str] = []
    for key in keys:
        value = frontmatter.get(key)
        values = value if isinstance(value, list) else [value]
        for item in values:
            if isinstance(item, str):
                found += [part for part in split.split(item) if part.strip()]
            elif text := _scalar(item):
                found.append(text)
    return [item.strip() for item in found]


def _scalar(value: Any) -> str:
    """A string or number property as text; anything else (lists, maps, booleans) as ""."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return ""
    return str(value).strip()


def _strip_code(body: str) -> str:
    if "```" in body or "~~~" in body:
        body = _FENCED_CODE.sub("\n", body)
    return _INLINE_CODE.sub(" ", body) if "`" in body else body


def _link_target(inner: str) -> str:
    """``folder/Note`` from ``folder/Note.md#Heading^block|alias``."""
    target = _LINK_ALIAS.split(inner, maxsplit=1)[0]
    target = _LINK_ANCHOR.split(target, maxsplit=1)[0].strip().replace("\\", "/")
    target = target.removeprefix("./").lstrip("/")
    return target[:-3] if target.lower().endswith(".md") else target


def _unique(items: Iterable[str], key: Callable[[str], str] | None = None) -> tuple[str, ...]:
    """``items`` without repeats (compared by ``key``), in first-seen order."""
    seen: dict[str, str] = {}
    for item in items:
        seen.setdefault(key(item) if key else item, item)
    return tuple(seen.values())
