"""Download a model2vec model from the Hugging Face hub, once, when the user has agreed to.

``await download_model("minishlab/potion-base-8M", folder)`` fetches the model's three files
(``config.json``, ``tokenizer.json``, ``model.safetensors``) from the hub's documented file URLs
(``{endpoint}/{repo}/resolve/{revision}/{file}``; ``HF_ENDPOINT`` names another endpoint, a
mirror or a test's fake hub) into a temporary folder beside ``folder``, checks that the result
loads as a model2vec model, and only then renames it into place. A refused request, a cut
connection, a failed check or a cancellation removes the temporary folder: nothing half-written
is ever left where a model is looked for. ``on_progress(done, total)`` follows the bytes.

Whatever answers as the hub is not trusted: one download runs at a time (a second is refused),
the files together may hold at most ``max_bytes`` (:data:`MAX_DOWNLOAD_BYTES`), checked against
their Content-Length before anything is written and again while reading (bytes past a file's
Content-Length are not read: the check then refuses the cut file), and the free space of the
folder's disk must hold the announced size plus :data:`SPARE_DISK_BYTES`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from llm_service import lazy
from llm_service.embedders.model2vec import Model2VecEmbedder
from llm_service.errors import ErrorCode, LLMError
from llm_service.warmup import warmed

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy.module("httpx")

DEFAULT_EMBEDDER_MODEL: Final = "minishlab/potion-base-8M"
DEFAULT_ENDPOINT: Final = "https://huggingface.co"
MODEL_FILES: Final = ("config.json", "tokenizer.json", "model.safetensors")
REPO_PATTERN: Final = r"^[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}$"
"""A hub repository id, ``owner/name`` (no path tricks)."""
HUB_CONNECT_SECONDS: Final = 10.0
HUB_READ_SECONDS: Final = 60.0
"""How long one read of the download may wait for bytes."""
CHUNK_BYTES: Final = 1 << 16
PROGRESS_STEPS: Final = 100
"""At most about this many progress reports per download."""
MAX_DOWNLOAD_BYTES: Final = 1 << 30
"""A model2vec model's files together (potion-base-8M: 30 MB; the largest published: ~500 MB)."""
SPARE_DISK_BYTES: Final = 256 << 20
"""Disk space a download must leave free."""
_running: set[Path] = set()
"""The downloads under way (at most one)."""

ProgressCallback = Callable[[int, int], Awaitable[None]]


def hub_endpoint() -> str:
    """``HF_ENDPOINT`` (as huggingface_hub reads it), else the public hub."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


async def download_model(
    repo: str,
    folder: Path,
    *,
    revision: str = "main",
    endpoint: str | None = None,
    on_progress: ProgressCallback | None = None,
    max_bytes: int = MAX_DOWNLOAD_BYTES,
) -> Path:
    """Download model2vec model ``repo`` into ``folder`` (replacing what is there once the new
    copy is complete and loads); ``folder``. Raises LLMError (auth_error for 401/403,
    invalid_request for a missing model or file, a model over ``max_bytes`` or a download
    already under way, network_error for an unreachable hub or a cut connection,
    invalid_response for files that are not a model2vec model or longer than announced)."""
    if not re.match(REPO_PATTERN, repo):
        raise _error(f"'{repo}' is not a Hugging Face model id (owner/name).", "invalid_request")
    if _running:
        raise _error(
            "A model download is already under way: wait for it to finish.", "invalid_request"
        )
    _running.add(folder)
    try:
        return await _download(repo, folder, revision, endpoint, on_progress, max_bytes)
    finally:
        _running.discard(folder)


async def _download(
    repo: str,
    folder: Path,
    revision: str,
    endpoint: str | None,
    on_progress: ProgressCallback | None,
    max_bytes: int,
) -> Path:
    await warmed()  # httpx may be being imported by a server's warm-up thread

    base = f"{endpoint or hub_endpoint()}/{repo}/resolve/{revision}"
    folder.parent.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.download-", dir=folder.parent))
    try:
        limits = httpx.Timeout(HUB_READ_SECONDS, connect=HUB_CONNECT_SECONDS)
        async with (
            httpx.AsyncClient(
                timeout=limits, follow_redirects=True, headers={"accept-encoding": "identity"}
            ) as client,
            contextlib.AsyncExitStack() as stack,
        ):
            responses = [
                await stack.enter_async_context(_opened(client, f"{base}/{name}", repo, name))
                for name in MODEL_FILES
            ]
            sizes = [_length(r, repo) for r in responses]
            total = sum(sizes)
            if total > max_bytes:
                raise _too_large(repo, max_bytes)
            _check_disk(folder.parent, total)
            done = 0
            step = max(total // PROGRESS_STEPS, CHUNK_BYTES)
            reported = 0
            for name, response, size in zip(MODEL_FILES, responses, sizes, strict=True):
                written = 0
                with (temp / name).open("wb") as out:
                    async for chunk in _body(response, repo):
                        written += len(chunk)
                        done += len(chunk)
                        if done > max_bytes:
                            raise _too_large(repo, max_bytes)
                        out.write(chunk)
                        if on_progress is not None and done - reported >= step:
                            reported = done
                            await on_progress(done, max(total, done))
                if size and written != size:
                    raise _cut_off(repo)
            if on_progress is not None:
                await on_progress(done, max(total, done))
        await asyncio.to_thread(_install, temp, repo, folder)
    except httpx.HTTPError:  # closing a connection the hub broke (one sent too much, say)
        raise _cut_off(repo) from None
    finally:
        shutil.rmtree(temp, ignore_errors=True)  # gone already when it was moved into place
    return folder


@contextlib.asynccontextmanager
async def _opened(
    client: httpx.AsyncClient, url: str, repo: str, name: str
) -> AsyncIterator[httpx.Response]:
    """The streamed answer for one file, refused with a sentence unless it is a 200."""
    try:
        async with client.stream("GET", url) as response:
            if response.status_code in (401, 403):
                raise _error(
                    f"The Hugging Face hub refused to send {repo} ({response.status_code}): it "
                    "is private or gated; choose a public model.",
                    "auth_error",
                )
            if response.status_code == 404:
                raise _error(
                    f"The Hugging Face hub has no {name} for {repo}: check the model id (a "
                    "model2vec model, e.g. minishlab/potion-base-8M).",
                    "invalid_request",
                )
            if response.status_code != 200:
                raise _error(
                    f"The Hugging Face hub answered {response.status_code} for {repo}/{name}; "
                    "try again later.",
                    "server_error",
                )
            yield response
    except httpx.HTTPError as exc:
        raise _unreachable(exc) from None


async def _body(response: httpx.Response, repo: str) -> AsyncIterator[bytes]:
    try:
        async for chunk in response.aiter_raw(CHUNK_BYTES):
            yield chunk
    except httpx.HTTPError:
        raise _cut_off(repo) from None


def _length(response: httpx.Response, repo: str) -> int:
    """The answer's Content-Length (0 when it gives none); a bad one is invalid_response."""
    given = response.headers.get("content-length", "0")
    if not (given.isascii() and given.isdigit()):
        raise _error(
            f"The hub sent {repo} with a Content-Length that is not a number.", "invalid_response"
        )
    return int(given)


def _check_disk(folder: Path, size: int) -> None:
    """Refuse a download the disk of ``folder`` cannot hold (leaving SPARE_DISK_BYTES)."""
    free = shutil.disk_usage(folder).free
    if free < size + SPARE_DISK_BYTES:
        raise _error(
            f"The model needs {size / 1e6:.0f} MB and the disk of {folder} has "
            f"{free / 1e6:.0f} MB free: free some space and try again.",
            "invalid_request",
        )


def _too_large(repo: str, limit: int) -> LLMError:
    return _error(
        f"{repo} is larger than {limit / 1e6:.0f} MB, more than a model2vec model holds: choose "
        "a smaller model.",
        "invalid_request",
    )


def _install(temp: Path, repo: str, folder: Path) -> None:
    """Check the download in ``temp`` (see :func:`_check`), then move it to ``folder``."""
    _check(temp, repo)
    _move_into_place(temp, folder)


def _check(folder: Path, repo: str) -> None:
    """The downloaded files load as a model2vec model (else invalid_response: whatever the
    loaders raise on files that are cut short or are something else)."""
    try:
        Model2VecEmbedder(str(folder)).load()
    except LLMError as exc:
        raise _error(f"{repo} is not a model2vec model: {exc}", "invalid_response") from None
    except Exception as exc:
        raise _error(
            f"The files the hub sent for {repo} do not load as a model2vec model "
            f"({type(exc).__name__}); nothing was kept: try again.",
            "invalid_response",
        ) from None


def _move_into_place(temp: Path, folder: Path) -> None:
    """``temp`` becomes ``folder``; an older copy there is removed only after the rename."""
    old = None
    if folder.exists():
        old = folder.with_name(f".{folder.name}.old-{os.getpid()}")
        shutil.rmtree(old, ignore_errors=True)
        folder.rename(old)
    temp.rename(folder)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _unreachable(exc: Exception) -> LLMError:
    return _error(
        f"Cannot reach the Hugging Face hub at {hub_endpoint()} ({type(exc).__name__}): check "
        "the connection (or HF_ENDPOINT) and try again.",
        "network_error",
    )


def _cut_off(repo: str) -> LLMError:
    return _error(
        f"The download of {repo} was cut off; nothing was kept: try again.", "network_error"
    )


def _error(message: str, code: ErrorCode) -> LLMError:
    return LLMError(message, code=code, provider="huggingface")
