"""Hostile notes made for tests and benchmarks (no tests here)."""

from __future__ import annotations

import itertools


def alias_bomb(depth: int = 9) -> str:
    """A YAML "billion laughs" of ``depth`` levels of nine aliases: 9^depth strings once built
    (350 bytes at 9; the issue's was 406 bytes)."""
    names = "abcdefghi"[:depth]
    levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in itertools.pairwise(names):
        levels.append(f"{name}: &{name} [{','.join([f'*{prev}'] * 9)}]")
    return "\n".join(levels) + f"\nname: *{names[-1]}"


def hostile_prompts() -> dict[str, str]:
    """Prompt notes by file name: 5,000-deep front matter and an alias bomb."""
    deep = "[" * 5000 + "]" * 5000
    return {
        "Deep.md": f"---\nname: {deep}\n---\nA deep prompt.\n",
        "Bomb.md": f"---\n{alias_bomb()}\n---\nA bomb prompt.\n",
    }
