"""Images and PDFs in a message's context: the files themselves for a model that sees.

An image in the context (``{note: "Images/diagram.png"}``) goes to the model as an image, a
PDF as a document with its extracted text (:class:`llm_service.DocumentBlock`: Anthropic reads
the PDF, the others its text). The images a context note embeds (``![[diagram.png]]``,
``![](diagram.png)``) follow it, one level deep, within the same limits: at most
:data:`MAX_IMAGES` images per message, each under the vault's image size limit. Blocking: call
it off the event loop.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Final

from llm_service.messages import DocumentBlock, ImageBlock, MediaBlock
from plugin_bridge.app.turn.images import blocks_within_limits
from plugin_bridge.vault.attachments import (
    is_attachment_name,
    is_image_name,
    read_attachment,
    read_pdf,
)
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.paths import is_hidden, to_posix

if TYPE_CHECKING:
    from llm_service.providers.base import Provider
    from plugin_bridge.vault.vault import Vault

MAX_IMAGES: Final = 8
"""Images sent with one message (given and embedded)."""
_EMBED: Final = re.compile(
    r"!\[\[([^\]|#^]+?)(?:[|#^][^\]]*)?\]\]|!\[[^\]]*\]\(<?([^)>]+?)>?(?:\s+\"[^\"]*\")?\)"
)


class Media:
    """The images and documents gathered for one message, in order, within the limits."""

    def __init__(self) -> None:
        self.blocks: list[MediaBlock] = []
        self.left_out: list[str] = []
        """Images past :data:`MAX_IMAGES`, not sent."""

    @property
    def images(self) -> int:
        return sum(isinstance(block, ImageBlock) for block in self.blocks)

    def add_file(self, vault: Vault, path: str, text_budget: int) -> str:
        """Add the image or PDF at ``path``; its vault path. VaultError when it cannot be
        read (a PDF's text is cut to ``text_budget`` characters)."""
        if is_image_name(path):
            if self.images >= MAX_IMAGES:
                self.left_out.append(path)
                return to_posix(path)
            found = read_attachment(vault.notes, path)
            self.blocks.append(ImageBlock(found.media_type, found.data, found.path))
            return found.path
        pdf = read_pdf(vault.notes, path)
        text = pdf.content
        if len(text) > text_budget:
            text = f"{text[:text_budget]}\n[… {len(text) - text_budget} more characters not shown]"
        data = read_attachment(vault.notes, pdf.path).data
        self.blocks.append(DocumentBlock("application/pdf", data, pdf.path, text))
        return pdf.path

    def add_embeds(self, vault: Vault, note_path: str, text: str) -> list[str]:
        """Add the images ``text`` (the note at ``note_path``) embeds; their vault paths.
        Embeds that name no readable image in the vault are left alone."""
        added = []
        for target in embedded_images(text):
            rel = find_in_vault(vault, note_path, target)
            if rel is None:
                continue
            try:
                added.append(self.add_file(vault, rel, 0))
            except VaultError:
                continue
        return added


def embedded_images(text: str) -> Iterator[str]:
    """The image targets of ``![[…]]`` and ``![…](…)`` embeds in ``text``, in order, once."""
    seen = set()
    for match in _EMBED.finditer(text):
        target = (match.group(1) or match.group(2) or "").strip()
        target = re.sub(r"%20", " ", target)
        if is_image_name(target) and target not in seen and "://" not in target:
            seen.add(target)
            yield target


def find_in_vault(vault: Vault, note_path: str, target: str) -> str | None:
    """Where Obsidian finds an embed's ``target``: the path as written (from the vault root,
    then from the note's folder), else the first file of that name in the vault."""
    root = vault.root
    clean = to_posix(target).lstrip("/")
    for candidate in (
        clean,
        posixpath.normpath(posixpath.join(posixpath.dirname(note_path), clean)),
    ):
        if not candidate.startswith("..") and (root / candidate).is_file():
            return candidate
    name = posixpath.basename(clean)
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if name in files:
            rel = to_posix(os.path.relpath(os.path.join(folder, name), root))
            return None if is_hidden(rel) else rel
    return None


def is_media_context(path: str) -> bool:
    """Whether a context item's path is an image or a PDF rather than a note."""
    return is_attachment_name(path.strip())


async def sendable_media(
    media: Media | None, provider: Provider, model: str | None
) -> tuple[list[MediaBlock], list[str]]:
    """What of ``media`` goes to ``model``, and a one-sentence notice for each thing left out:
    images to a model that cannot see them (its documents still go, as text where it takes no
    documents), images too large for any model, images past the count."""
    if media is None:
        return [], []
    blocks, warnings = list(media.blocks), []
    images = [block.name for block in blocks if isinstance(block, ImageBlock)]
    if images and not await provider.sees_images(model or provider.model or ""):
        blocks = [block for block in blocks if not isinstance(block, ImageBlock)]
        warnings.append(
            f"{model or 'This model'} cannot see images, so {_names(images)} "
            f"{'was' if len(images) == 1 else 'were'} not sent: choose a model that accepts "
            "images to ask about them."
        )
    blocks, too_large = await blocks_within_limits(blocks)  # off the loop, bombs left out
    warnings += too_large
    if media.left_out:
        warnings.append(
            f"Only {MAX_IMAGES} images go with one message, so {_names(media.left_out)} "
            f"{'was' if len(media.left_out) == 1 else 'were'} not sent."
        )
    return blocks, warnings


def _names(paths: list[str]) -> str:
    shown = ", ".join(paths[:3])
    return shown + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
