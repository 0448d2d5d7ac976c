"""The command line: ``serve``, ``mcp``, ``search``, ``chat``, ``setup``, ``config``, ``usage``,
``models``, ``clients`` and ``schema``.

argparse rather than typer: typer costs ~0.16 s to import on this machine, a third of the
start-up budget of ``serve``. Each command imports what it needs when it runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TypeAlias

import plugin_bridge
from llm_service.profiles import PROVIDER_NAMES
from plugin_bridge.cli.serve import ServeOptions, run


class _Version(argparse.Action):
    """``--version``: the installed version, read from the package metadata only when asked."""

    def __init__(
        self, option_strings: list[str], dest: str = argparse.SUPPRESS, **_: object
    ) -> None:
        super().__init__(option_strings, dest=dest, nargs=0, help="show the version and exit")

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        sys.stdout.write(f"{parser.prog} {plugin_bridge.__version__}\n")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="obsidian-ai-bridge",
        description="Your Obsidian vault's AI assistant: server, terminal chat and tools.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # The plugin runs `uvx obsidian-ai-bridge --version` before it trusts uvx to start the server.
    parser.add_argument("--version", action=_Version)
    _serving_commands(commands)
    _vault_commands(commands)
    _settings_commands(commands)
    _spending_commands(commands)
    _clients_command(commands)
    commands.add_parser("schema", help="print the protocol's JSON Schema")
    return parser


_Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What ``add_subparsers`` returns (argparse names it only privately)."""


def _serving_commands(commands: _Commands) -> None:
    """``serve``, and ``mcp`` (which serves too when no server runs)."""
    serve = commands.add_parser("serve", help="run the bridge server for a vault")
    server_arguments(serve)
    mcp = commands.add_parser(
        "mcp",
        help="the vault as an MCP server over stdio (forwards to a running server, or is one)",
    )
    server_arguments(mcp)
    mcp.add_argument(
        "--allow-writes",
        action="store_true",
        help="offer create_note, edit_note and append_to_note (default: read-only)",
    )


def _vault_commands(commands: _Commands) -> None:
    """``search`` and ``chat``: a vault's notes from the terminal."""
    search = commands.add_parser("search", help="index the vault and print search results")
    search.add_argument("query", help='words, "a phrase", prefix*, tag:x, path:folder')
    search.add_argument("--vault", type=Path, required=True)
    search.add_argument("--limit", type=int, default=10)
    search.add_argument("--data-dir", type=Path)

    chat = commands.add_parser("chat", help="chat in the terminal with the running server")
    chat.add_argument("--vault", type=Path, required=True)
    chat.add_argument("--info-file", type=Path, help="the server's info file")
    chat.add_argument(
        "--setup",
        action="store_true",
        help="introduce yourself: the assistant asks about the vault and you, then writes the "
        "context note (Assistant.md) after you review it",
    )


def _settings_commands(commands: _Commands) -> None:
    """``setup`` and ``config``: the settings file."""
    setup = commands.add_parser("setup", help="choose a provider and model, check them, save")
    setup.add_argument("--provider", choices=PROVIDER_NAMES)
    setup.add_argument("--api-key", help="the provider's key (asked for without echo if absent)")
    setup.add_argument("--base-url", help="a local or compatible server instead of a key")
    setup.add_argument("--model", help="the chat model (chosen from the provider's list if absent)")
    setup.add_argument("--telegram-token", help="set up the Telegram bot with this token")
    setup.add_argument("--telegram-user", type=int, help="your Telegram user id (else: /start)")
    setup.add_argument("--telegram-api-url", help="a local Bot API server")
    setup.add_argument("--discord-token", help="set up the Discord bot with this token")
    setup.add_argument("--discord-user", type=int, help="your Discord user id")
    setup.add_argument("--discord-api-url", help="Discord's REST base")

    config = commands.add_parser("config", help="the settings file and the effective settings")
    config.add_argument(
        "action",
        choices=("path", "show"),
        help="path: where the file is; show: every setting in effect, keys masked",
    )


def _spending_commands(commands: _Commands) -> None:
    """``usage`` and ``models``: what the model costs."""
    usage = commands.add_parser("usage", help="what the model cost today and this month")
    usage.add_argument("--vault", type=Path, required=True)
    usage.add_argument("--data-dir", type=Path)

    models = commands.add_parser(
        "models", help="the provider's models: context, output limit, tools, prices"
    )
    models.add_argument("--vault", type=Path, required=True, help="the vault (its data folder)")
    models.add_argument("--data-dir", type=Path)
    models.add_argument("--refresh", action="store_true", help="ask the provider, not the cache")
    models.add_argument("--provider", choices=PROVIDER_NAMES)
    models.add_argument("--base-url", help="provider endpoint, e.g. http://127.0.0.1:1234/v1")


def _clients_command(commands: _Commands) -> None:
    """``clients add|list|revoke``: the keys of MCP clients, scripts and bots."""
    clients = commands.add_parser("clients", help="the client keys of MCP clients, scripts, bots")
    actions = clients.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = actions.add_parser("add", help="make a key (printed once) or import one with --key")
    add.add_argument("name", help="the client's name, e.g. laptop-llm or pi-bot")
    add.add_argument("--scope", choices=("read", "chat", "write"), default="chat")
    add.add_argument("--key", help="import this token (at least 16 characters) instead")
    add.add_argument(
        "--pair",
        action="store_true",
        help="also print the pairing text and its QR code for the plugin on a phone",
    )
    listing = actions.add_parser("list", help="name, scope, created, last used (never a key)")
    revoke = actions.add_parser("revoke", help="remove a key; a running server stops taking it")
    revoke.add_argument("name")
    for action in (add, listing, revoke):
        action.add_argument("--vault", type=Path, required=True, help="the vault folder")
        action.add_argument("--data-dir", type=Path, help="the data folder, as serve takes it")


def server_arguments(serve: argparse.ArgumentParser) -> None:
    """The options of a process that serves a vault: ``serve``, and ``mcp`` when none runs."""
    serve.add_argument("--vault", type=Path, required=True, help="the vault folder")

    serve.add_argument("--host", default="127.0.0.1", help="loopback address (default 127.0.0.1)")
    serve.add_argument(
        "--port", type=int, help="port for this run (default: the vault's saved one; 0: free)"
    )
    serve.add_argument(
        "--http-port",
        type=int,
        help="HTTP API port for this run (default: the vault's saved one; 0: a free one)",
    )
    serve.add_argument(
        "--remote",
        "--remote-listen",
        dest="remote_listen",
        metavar="HOST:PORT",
        help="also listen here for other machines (TLS, client keys only), e.g. 0.0.0.0:8443",
    )
    serve.add_argument("--tls-cert", type=Path, metavar="FILE", help="the remote listener's cert")
    serve.add_argument("--tls-key", type=Path, metavar="FILE", help="the remote listener's key")
    serve.add_argument(
        "--remote-insecure-http",
        action="store_const",
        const=True,
        help="plain HTTP on the remote listener (only inside an encrypting tunnel)",
    )
    serve.add_argument("--info-file", type=Path, help="where to write url and token")
    serve.add_argument("--provider", choices=PROVIDER_NAMES, help="model provider")
    serve.add_argument("--model", help="model name (default: the provider's recommended one)")
    serve.add_argument("--base-url", help="provider endpoint, e.g. http://127.0.0.1:1234/v1")
    serve.add_argument("--data-dir", type=Path, help="index and undo data folder")
    serve.add_argument(
        "--daily-budget", type=float, metavar="USD", help="stop chat once a day costs this much"
    )
    serve.add_argument(
        "--monthly-budget", type=float, metavar="USD", help="stop chat once a month costs this"
    )
    serve.add_argument("--max-tokens", type=int, metavar="N", help="most tokens of one answer")
    serve.add_argument("--temperature", type=float, help="sampling temperature, 0 to 2")
    serve.add_argument("--timeout", type=float, metavar="S", help="seconds per provider request")
    serve.add_argument(
        "--embedder",
        metavar="KIND:MODEL",
        help="semantic search with ollama:MODEL, openai:MODEL or model2vec:PATH",
    )
    serve.add_argument("--embedder-base-url", metavar="URL", help="the embedder's server")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    vault = getattr(args, "vault", None)
    if vault is not None and not vault.expanduser().is_dir():
        problem = (
            f"{vault} is a file, not a folder: pass the vault's folder to --vault."
            if vault.expanduser().exists()
            else f"Vault folder {vault} does not exist: pass an existing folder to --vault."
        )
        print(problem, file=sys.stderr)
        return 2
    return _run_command(args)


def _run_command(args: argparse.Namespace) -> int:
    """Runs the parsed command (each imports what it needs only when it runs)."""
    if args.command == "serve":
        return run(serve_options(args))
    if args.command == "mcp":
        from plugin_bridge.cli.mcp import run as run_mcp

        return run_mcp(serve_options(args), allow_writes=args.allow_writes)
    if args.command == "search":
        from plugin_bridge.cli.search import run as run_search

        return run_search(args.vault, args.query, limit=args.limit, data_dir=args.data_dir)
    if args.command == "chat":
        from plugin_bridge.cli.chat import run as run_chat

        return run_chat(args.vault, args.info_file, setup=args.setup)
    if args.command == "setup":
        from plugin_bridge.cli.setup import BotFlags
        from plugin_bridge.cli.setup import run as run_setup

        bots = BotFlags(*(getattr(args, name) for name in BotFlags._fields))
        return run_setup(args.provider, args.api_key, args.base_url, args.model, bots=bots)
    if args.command == "config":
        from plugin_bridge.cli.config import run as run_config

        return run_config(args.action)
    if args.command == "usage":
        from plugin_bridge.cli.usage import run as run_usage

        return run_usage(args.vault, args.data_dir)
    if args.command == "models":
        from plugin_bridge.cli.models import run as run_models

        return run_models(
            args.vault,
            args.data_dir,
            refresh=args.refresh,
            provider=args.provider,
            base_url=args.base_url,
        )
    if args.command == "clients":
        from plugin_bridge.cli.clients import run as run_clients

        return run_clients(
            args.action,
            args.vault,
            args.data_dir,
            name=getattr(args, "name", None),
            scope=getattr(args, "scope", "chat"),
            key=getattr(args, "key", None),
            pair=getattr(args, "pair", False),
        )
    from plugin_bridge.cli.schema import schema_text

    sys.stdout.write(schema_text())
    return 0


def serve_options(args: argparse.Namespace) -> ServeOptions:
    return ServeOptions(
        vault=args.vault,
        host=args.host,
        port=args.port,
        http_port=args.http_port,
        info_file=args.info_file,
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        data_dir=args.data_dir,
        daily_budget_usd=args.daily_budget,
        monthly_budget_usd=args.monthly_budget,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        timeout=args.timeout,
        embedder=args.embedder,
        embedder_base_url=args.embedder_base_url,
        remote_listen=args.remote_listen,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        remote_insecure_http=args.remote_insecure_http,
    )
