"""Wire models of the custom prompts: prompts/list.

Same rules as :mod:`plugin_bridge.wire.models.base`: camelCase on the wire, params strict.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from plugin_bridge.wire.models.base import ClientRequest, Empty, WireModel


class PromptModel(WireModel):
    id: str = Field(description="The prompt note's path: pass it as chat/send promptId.")
    name: str
    description: str
    insert: Literal["selection", "note", "none"] = Field(
        description="What the client should send as context with it."
    )
    purpose: Literal["chat", "fast", "deep"] | None = Field(
        description="The model that runs it (front matter purpose); null: the one asked for."
    )


class PromptsListResult(WireModel):
    prompts: list[PromptModel]


PROMPTS_LIST: Final = ClientRequest("prompts/list", Empty, PromptsListResult)
