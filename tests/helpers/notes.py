"""Hostile notes made for tests and benchmarks (no tests here)."""

from __future__ import annotations


def alias_bomb() -> str:
    """A 350-byte YAML "billion laughs": nine levels of nine aliases, 9^9 strings once built
    (the issue's was 406 bytes)."""
    levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{name}: &{name} [{','.join([f'*{prev}'] * 9)}]")
    return "\n".join(levels) + "\nname: *i"


def hostile_prompts() -> dict[str, str]:
    """Prompt notes by file name: 5,000-deep front matter and an alias bomb."""
    deep = "[" * 5000 + "]" * 5000
    return {
        "Deep.md": f"---\nname: {deep}\n---\nA deep prompt.\n",
        "Bomb.md": f"---\n{alias_bomb()}\n---\nA bomb prompt.\n",
    }
