"""One vault: its notes, its search index, and where its state lives."""

from __future__ import annotations

from pathlib import Path

from plugin_bridge.vault.datadir import default_data_dir
from plugin_bridge.vault.index import SearchIndex
from plugin_bridge.vault.notes import NoteStore


class Vault:
    """The note store and the live search index of the vault folder at ``root``.

    Writes made through ``notes`` are searchable as soon as they return.
    """

    def __init__(self, root: Path, data_dir: Path | None = None, *, watch: bool = True) -> None:
        if not root.is_dir():
            raise ValueError(f"The vault folder {root} does not exist: give an existing folder.")
        self.root = root.resolve()
        self.data_dir = (data_dir or default_data_dir(self.root)).resolve()
        self.name = self.root.name
        self.index = SearchIndex(
            self.root,
            self.data_dir / "index.sqlite3",
            watch=watch,
            excluded=frozenset({self.data_dir}),
        )
        self.notes = NoteStore(self.root, self.data_dir, on_write=self.index.notify_changed)

    async def start(self) -> None:
        """Open the index; indexing continues in the background."""
        await self.index.start()

    async def close(self) -> None:
        await self.index.close()
