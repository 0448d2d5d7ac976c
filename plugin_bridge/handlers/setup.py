"""What the plugin's setup card uses: runtimes/detect (the local model runtimes on this machine)
and embedder/download (a small model2vec model for semantic search, once the user agrees)."""

from __future__ import annotations

from llm_service.embedders.hub import download_model
from llm_service.runtimes import detect_runtimes as detect
from plugin_bridge.app.live_settings import update_settings
from plugin_bridge.handlers.context import AppRouter, Context
from plugin_bridge.wire.models import (
    EMBEDDER_DOWNLOAD,
    RUNTIMES_DETECT,
    EmbedderDownloadParams,
    EmbedderDownloadProgress,
    EmbedderDownloadResult,
    Empty,
    RuntimeInfo,
    RuntimeModelInfo,
    RuntimesDetectResult,
)

MODELS_FOLDER = "models"
"""Downloaded models live in ``<data folder>/models/<owner>/<name>``."""


async def detect_runtimes(ctx: Context, params: Empty) -> RuntimesDetectResult:
    """Ollama and LM Studio on this machine (OLLAMA_HOST / LMSTUDIO_HOST), probed at once, with
    their models; no key is sent anywhere."""
    return RuntimesDetectResult(
        runtimes=[
            RuntimeInfo(
                kind=runtime.kind,
                base_url=runtime.base_url,
                reachable=runtime.reachable,
                models=[
                    RuntimeModelInfo.model_validate(model, from_attributes=True)
                    for model in runtime.models
                ],
            )
            for runtime in await detect()
        ]
    )


async def download_embedder(ctx: Context, params: EmbedderDownloadParams) -> EmbedderDownloadResult:
    """Download a model2vec model from the Hugging Face hub (HF_ENDPOINT honoured) into the
    data folder, sending embedder/downloadProgress, then use it as settings/update {embedder}
    does (saved); a failed or cancelled download leaves nothing behind."""

    async def progress(done: int, total: int) -> None:
        await ctx.notify(
            EmbedderDownloadProgress(request_id=ctx.request_id, done=done, total=total)
        )

    folder = ctx.app.vault.data_dir / MODELS_FOLDER / params.model
    await download_model(params.model, folder, on_progress=progress)
    updated = await update_settings(
        ctx.app, ctx.app.vault.notes, {"embedder": f"model2vec:{folder}"}
    )
    assert updated.embedder is not None
    return EmbedderDownloadResult(embedder=updated.embedder)


def register(router: AppRouter) -> None:
    router.register(RUNTIMES_DETECT, detect_runtimes)
    router.register(EMBEDDER_DOWNLOAD, download_embedder)
