"""One chat turn: what the user points at, the vault's context note and prompts, tool
confirmation."""
