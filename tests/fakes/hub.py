"""A fake Hugging Face hub: a model's files at ``/{repo}/resolve/{revision}/{file}``, as the hub
serves them (the weights through a redirect, as the hub sends large files to its CDN).

``hub_route(repo, folder)`` is a :attr:`FakeHTTPServer.route`. ``refuse`` answers every file
with that status and the hub's JSON error; ``stop_after`` sends that many bytes of the weights,
then ``stop`` (RESET drops the connection, HANG waits until the client goes). Point the
downloader at it with ``HF_ENDPOINT``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from llm_service.embedders.tiny_model import write_tiny_model
from tests.fakes.http import RESET, Recorded, Reply

REPO = "minishlab/potion-base-8M"
WEIGHTS = "model.safetensors"


def tiny_model_folder(folder: Path) -> Path:
    """A tiny model2vec model's files (the real format, a few words)."""
    return write_tiny_model(folder, ["kafka", "garden", "sourdough", "sleep"], dims=8)


def hub_route(
    repo: str,
    folder: Path,
    *,
    refuse: int | None = None,
    stop_after: int | None = None,
    stop: object = RESET,
) -> Callable[[Recorded], Reply]:
    prefix = f"/{repo}/resolve/main/"

    def route(request: Recorded) -> Reply:
        if refuse is not None:
            return Reply.json({"error": "Repository not found"}, status=refuse)
        if request.path.startswith("/cdn/"):
            data = (folder / request.path.removeprefix("/cdn/")).read_bytes()
            if stop_after is not None:
                return Reply.stream([data[:stop_after], stop], "application/octet-stream")
            return Reply(200, {"content-type": "application/octet-stream"}, data)
        name = request.path.removeprefix(prefix)
        if not request.path.startswith(prefix) or not (folder / name).is_file():
            return Reply.json({"error": "Entry not found"}, status=404)
        if name == WEIGHTS:
            return Reply(302, {"location": f"/cdn/{name}"})
        return Reply(200, {"content-type": "application/json"}, (folder / name).read_bytes())

    return route
