"""Each configured chat-app bot's state, as ``health`` reports it: ``starting``, ``running`` or
``failed`` with one sentence (a bad token, no allowed users, the network down: retried)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

logger = logging.getLogger(__name__)

BotPhase = Literal["starting", "running", "failed"]


@dataclass
class BotState:
    """One bot's state (``telegram``, ``discord``); the bot's runner changes it."""

    name: str
    state: BotPhase = "starting"
    error: str | None = None

    def running(self) -> None:
        if self.state != "running":
            logger.info("%s bot: running", self.name)
        self.state, self.error = "running", None

    def failed(self, sentence: str) -> None:
        if self.error != sentence:
            logger.warning("%s bot: %s", self.name, sentence)
        self.state, self.error = "failed", sentence

    @property
    def shown(self) -> str:
        """``running``, ``starting`` or ``failed: <sentence>``."""
        return f"failed: {self.error}" if self.state == "failed" else self.state
