"""prompts/list: the custom prompts in the vault's prompts folder, read now."""

from __future__ import annotations

from plugin_bridge.app.turn.prompts import list_prompts
from plugin_bridge.handlers.context import AppRouter, Context
from plugin_bridge.wire.models import PROMPTS_LIST, Empty, PromptModel, PromptsListResult


async def prompts(ctx: Context, params: Empty) -> PromptsListResult:
    """The custom prompts (notes in the prompts folder), by name; edits show at once."""
    vault, folder = ctx.app.vault, ctx.app.config.prompts_folder
    found = await vault.notes.execute(lambda _: list_prompts(vault, folder))
    return PromptsListResult(
        prompts=[
            PromptModel(
                id=p.id, name=p.name, description=p.description, insert=p.insert, purpose=p.purpose
            )
            for p in found
        ]
    )


def register(router: AppRouter) -> None:
    router.register(PROMPTS_LIST, prompts)
