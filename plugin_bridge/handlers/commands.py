"""Commands: command/createNote (the note as a typed ``save_note`` value), command/searchSummarize
and command/rewrite (a selection rewritten, or text written at the cursor, streamed). Every
model call is the assistant's (:mod:`plugin_bridge.app.assistant`): route, budget, limits and
usage are decided there."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Final

from llm_service import LLMError, LLMResponse, Message
from plugin_bridge.app.ask_options import AskOptions
from plugin_bridge.app.conversations.transcripts import save_unique
from plugin_bridge.app.tool_args import SaveNoteArgs
from plugin_bridge.handlers.context import AppRouter, Context, caller_of
from plugin_bridge.handlers.relay import budget_warnings, relay
from plugin_bridge.vault.attachments import read_pdf
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.vault import NoteHit
from plugin_bridge.wire.models import (
    COMMAND_CREATE_NOTE,
    COMMAND_REWRITE,
    COMMAND_SEARCH_SUMMARIZE,
    CreateNoteParams,
    NoteWriteResult,
    RewriteParams,
    RewriteResult,
    SearchSummarizeParams,
    SearchSummarizeResult,
    UsageModel,
)

if TYPE_CHECKING:
    from plugin_bridge.app.settings.providers import Purpose
    from plugin_bridge.vault.notes.store import NoteStore

SAVE_NOTE_DESCRIPTION: Final = (
    "Save the note you wrote. title: a short title; it becomes the file name, so no extension "
    "and no folder. content: the note's Markdown body, without the title as a heading."
)
MAX_TITLE_CHARS: Final = 100
"""A created note's title (its file name) is cut to this many characters."""
SUMMARY_BUDGET_TOKENS: Final = 6000
CHARS_PER_TOKEN: Final = 4
SUMMARY_MAX_TOKENS: Final = 1024
CHUNKS_PER_SOURCE: Final = 3
"""A note found by vectors is given to the model as at most this many of its best chunks."""
_WIKILINK = re.compile(r"\[\[([^\]|#^\n]+)")
REWRITE_CONTEXT_CHARS: Final = 3000
"""How much of the text around the selection or cursor the model sees, each side."""
REWRITE_SYSTEM: Final = (
    "You edit text in the user's Obsidian note. Answer with the new text only: no preamble, no "
    "quotes, no code fence, no comment. Keep the Markdown, the language and the tone of the "
    "note unless the instruction says otherwise."
)


async def create_note(ctx: Context, params: CreateNoteParams) -> NoteWriteResult:
    """Have the model write a note for the prompt and save it under folder (never overwriting)."""
    app = ctx.app
    options = _options(
        ctx,
        "chat",
        f"You write notes for the user's Obsidian vault named “{app.vault.name}”. Write the note "
        "the user asks for in Markdown and save it with the save_note tool.",
    )
    async with budget_warnings(ctx):
        note, reply = await app.assistant.ask_for(
            "note", [Message.user(params.prompt)], SaveNoteArgs, SAVE_NOTE_DESCRIPTION, options
        )
    found = note_from_response(note, reply)
    if found is None:
        raise LLMError(
            "The model returned no note: try again or rephrase the prompt.",
            code="invalid_response",
            provider=app.route("chat", ctx.client).provider.name,
        )
    title, body = found
    written = await app.vault.notes.execute(
        lambda notes: save_unique(notes, params.folder, title, body)
    )
    return NoteWriteResult(path=written.path, hash=written.hash)


def _options(
    ctx: Context, route: Purpose, system: str, max_tokens: int | None = None
) -> AskOptions:
    """A command's call: its route and system prompt, who asks; the answer length the
    settings give (``max_tokens`` for a summary, which is short by design)."""
    return AskOptions(
        route=route,
        system=system,
        max_tokens=max_tokens,
        caller=caller_of(ctx),
        client=ctx.client,
    )


def note_from_response(note: SaveNoteArgs | None, reply: LLMResponse) -> tuple[str, str] | None:
    """Title and body from the save_note value, else from the text (first line = title);
    None when the reply has neither."""
    if note is not None and note.title.strip():
        return note.title.strip()[:MAX_TITLE_CHARS], note.content
    text = reply.text.strip()
    if not text:
        return None
    first, _, rest = text.partition("\n")
    title = first.strip().lstrip("#").strip() or "Untitled"
    return title[:MAX_TITLE_CHARS], rest.strip() + "\n"


@dataclass(frozen=True, slots=True)
class GivenNote:
    """A note as given to the model: its path and (possibly truncated) text."""

    path: str
    text: str
    page: int | None = None
    """A PDF's page the search found it on (its link opens there)."""

    @property
    def link(self) -> str:
        return self.path.removesuffix(".md") + (f"#page={self.page}" if self.page else "")


async def search_summarize(ctx: Context, params: SearchSummarizeParams) -> SearchSummarizeResult:
    """Search, then stream a summary of the top notes citing them (chat/delta notifications)."""
    app = ctx.app
    found = await app.vault.search(params.query, params.limit)
    budget = SUMMARY_BUDGET_TOKENS * CHARS_PER_TOKEN
    notes = await app.vault.notes.execute(
        lambda notes: read_within_budget(notes, found.hits, budget)
    )
    if not notes:
        return SearchSummarizeResult(summary=f"No notes match “{params.query}”.", sources=[])
    options = _options(  # a summary is a small job: the fast model when configured
        ctx,
        "fast",
        "You summarise notes from the user's Obsidian vault. Use only what the notes say and "
        "cite each note you use as a [[wikilink]] exactly as written in its header.",
        SUMMARY_MAX_TOKENS,
    )
    messages = [Message.user(summary_prompt(params.query, notes))]
    async with budget_warnings(ctx):
        reply = await relay(ctx, app.assistant.ask_events("summary", messages, options))
    return SearchSummarizeResult(summary=reply.text, sources=cited_sources(reply.text, notes))


def read_within_budget(
    notes: NoteStore, hits: Sequence[NoteHit], budget_chars: int
) -> list[GivenNote]:
    """The sources of ``hits`` in order, sharing ``budget_chars`` (unused shares roll over):
    a hit found by vectors gives its best chunks, a lexical one its whole note."""
    given: list[GivenNote] = []
    remaining = budget_chars
    for index, hit in enumerate(hits):
        path = hit.path
        share = remaining // (len(hits) - index)
        if hit.chunks:
            content = "\n\n".join(
                f"### {c.heading}\n{c.text}" if c.heading else c.text
                for c in hit.chunks[:CHUNKS_PER_SOURCE]
            )
        else:
            try:
                content = _whole(notes, hit)
            except VaultError:
                continue
        remaining -= min(len(content), share)
        if len(content) > share:
            cut = len(content) - share
            content = f"{content[:share]}\n[… {cut} more characters not shown]"
        given.append(GivenNote(path, content, hit.page))
    return given


def _whole(notes: NoteStore, hit: NoteHit) -> str:
    """A lexical hit's text: the note, or the PDF's page the words were found on."""
    if hit.page is None:
        return notes.read(hit.path).content
    return read_pdf(notes, hit.path, str(hit.page)).content


def summary_prompt(query: str, notes: list[GivenNote]) -> str:
    sections = "\n\n".join(f"## [[{note.link}]]\n{note.text}" for note in notes)
    return f"Summarise what these notes say about “{query}”.\n\n{sections}"


def cited_sources(summary: str, notes: list[GivenNote]) -> list[str]:
    """Paths of the given notes the summary links to; all of them if it links to none."""
    targets = {target.strip().lower().removesuffix(".md") for target in _WIKILINK.findall(summary)}
    cited = [
        note.path
        for note in notes
        if {note.link.lower(), PurePosixPath(note.link).name.lower()} & targets
        or note.path.lower() in targets
    ]
    return cited or [note.path for note in notes]


async def rewrite(ctx: Context, params: RewriteParams) -> RewriteResult:
    """Rewrite ``text`` as instructed (or, with no text, write what goes at the cursor),
    streaming chat/delta; the fast model when one is set."""
    options = _options(ctx, "fast", REWRITE_SYSTEM)
    messages = [Message.user(rewrite_prompt(params))]
    async with budget_warnings(ctx):
        reply = await relay(ctx, ctx.app.assistant.ask_events("rewrite", messages, options))
    return RewriteResult(
        text=reply.text,
        usage=UsageModel.model_validate(reply.usage, from_attributes=True),
        cost_usd=reply.cost_usd,
    )


def rewrite_prompt(params: RewriteParams) -> str:
    """The one user message of a rewrite: the text around, the selection, the instruction."""
    parts = []
    if params.before:
        parts.append(f"<before>\n{params.before[-REWRITE_CONTEXT_CHARS:]}\n</before>")
    if params.text:
        parts.append(f"<selection>\n{params.text}\n</selection>")
    if params.after:
        parts.append(f"<after>\n{params.after[:REWRITE_CONTEXT_CHARS]}\n</after>")
    if params.text:
        task = f"Rewrite the selection: {params.instruction}. Answer with the new selection."
    else:
        task = (
            f"{params.instruction}: write the text that goes at the cursor, between before "
            "and after. Answer with that text."
        )
    return "\n\n".join([*parts, task])


def register(router: AppRouter) -> None:
    router.register(COMMAND_CREATE_NOTE, create_note)
    router.register(COMMAND_SEARCH_SUMMARIZE, search_summarize)
    router.register(COMMAND_REWRITE, rewrite)
