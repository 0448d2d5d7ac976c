"""Heavy third-party modules imported on first use: the one way this project imports late.

An SDK (anthropic ~1.6 s, openai, httpx, mcp), numpy, usearch, Pillow, tokenizers... would make
``import llm_service`` and a server's start slow if a module imported it at its top; a function
that imported it inside hid the dependency. So a module names every heavy module at its top,
and it loads when an attribute is first read::

    if TYPE_CHECKING:
        import httpx
    else:
        httpx = lazy.module("httpx")

    ...
    async with httpx.AsyncClient() as client:  # httpx is imported here, once

A server warms the SDKs in a worker thread (:mod:`llm_service.warmup`); a first use that may
meet that import awaits ``warmed()`` before it reads an attribute.
"""

from __future__ import annotations

import importlib
import types
from typing import Any


class _LazyModule(types.ModuleType):
    """Stands for module ``__name__`` until an attribute is read, then imports it and takes on
    its namespace (later reads cost what a module's do)."""

    def __getattr__(self, name: str) -> Any:
        loaded = importlib.import_module(self.__name__)
        self.__dict__.update(loaded.__dict__)
        return getattr(loaded, name)


def module(name: str) -> types.ModuleType:
    """A stand-in for module ``name`` (``"numpy"``, ``"mcp.server.stdio"``) that imports it on
    the first attribute read; nothing is imported now, nor checked."""
    return _LazyModule(name)
