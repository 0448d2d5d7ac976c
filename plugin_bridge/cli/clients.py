"""``clients add | list | revoke``: the vault's client keys (:mod:`plugin_bridge.app.clients`).

The data folder is resolved as ``serve`` resolves it (without ``--data-dir``, the running
server's own, which the vault's lock records), so the CLI and a running server read the same
keys; a revoked key stops working on the running server at its next request.

``clients add --pair`` pairs with the remote listener the settings configure
(``remote_listen``), else with the one the running server opened (``serve --remote``, recorded
in its info file), and says which.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from plugin_bridge.app.clients import ClientKeyError, ClientKeys, as_scope
from plugin_bridge.cli.lock import holder, process_alive, running_info_file
from plugin_bridge.vault.datadir import INFO_FILE_NAME, data_dir_for
from plugin_bridge.wire.infofile import InfoFileError, read_info_file

if TYPE_CHECKING:
    from plugin_bridge.app.clients import ClientKeys


def run(
    action: str,
    vault: Path,
    data_dir: Path | None,
    *,
    name: str | None = None,
    scope: str = "chat",
    key: str | None = None,
    pair: bool = False,
    out: TextIO | None = None,
) -> int:
    out = out or sys.stdout
    running = holder(vault.expanduser())
    if data_dir is None and running is not None and running.data_dir is not None:
        data_dir = Path(running.data_dir)
    folder = data_dir_for(vault.expanduser(), data_dir)
    keys = ClientKeys(folder)
    remote = _remote(vault, folder, required=pair) if action == "add" else None
    if isinstance(remote, str):
        print(remote, file=sys.stderr)
        return 2
    try:
        if action == "list":
            return _list(keys, out)
        assert name is not None
        if action == "revoke":
            keys.revoke(name)
            out.write(f"Revoked the key of '{name}': it no longer works.\n")
            return 0
        made = keys.add(name, as_scope(scope), key, owner_token=_owner_token(vault, folder))
    except ClientKeyError as exc:
        print(exc, file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"Cannot write the client keys ({exc}): pass a writable --data-dir.", file=sys.stderr)
        return 1
    if key is None:
        out.write(f"{made}\n")
        print(
            f"The key of '{name}' (scope {scope}) is shown once: copy it into the client now.",
            file=sys.stderr,
        )
    else:
        out.write(f"Imported the key of '{name}' (scope {scope}).\n")
    if remote is not None:
        address, fingerprint, source = remote
        if pair:
            print(f"Pairing with the remote listener {address} ({source}).", file=sys.stderr)
        if fingerprint:
            print(
                f"Remote listener {address}, certificate fingerprint (SHA-256): {fingerprint}",
                file=sys.stderr,
            )
        if pair:
            from plugin_bridge.cli.remote import pairing_text, print_pairing

            print_pairing(pairing_text(address, made, fingerprint), out)
    return 0


def _remote(vault: Path, data_dir: Path, *, required: bool) -> tuple[str, str, str] | str | None:
    """The remote listener's address, fingerprint and where they came from, for ``clients
    add``: the settings' ``remote_listen``, else the running server's (``serve --remote``);
    a sentence when ``--pair`` needs one and there is none; without either, the fingerprint of
    the certificate ``serve --remote`` made, else None."""
    from plugin_bridge.app.settings.config import SettingsError, load_settings

    try:
        settings = load_settings(vault=vault)
    except SettingsError as exc:
        return str(exc) if required else None
    if settings.remote_listen is not None:
        from plugin_bridge.cli.remote import remote_address  # cryptography: only when needed

        found = remote_address(settings, data_dir)
        return found if isinstance(found, str) else (*found, "remote_listen in the settings")
    running = _running_remote(vault)
    if running is not None:
        return running
    if required:
        return (
            "No remote listener: no server for this vault runs with --remote and the settings "
            "have no remote_listen: start one with 'serve --remote HOST:PORT' (or set "
            "remote_listen = \"HOST:PORT\" in the settings file, see 'config'), then pair again."
        )
    from plugin_bridge.app.certificate import fingerprint_of  # cryptography: only here

    fingerprint = fingerprint_of(data_dir)
    return None if fingerprint is None else ("(serve --remote)", fingerprint, "")


def _running_remote(vault: Path) -> tuple[str, str, str] | None:
    """The remote listener of the server running for ``vault`` (its info file's), if any."""
    try:
        info = read_info_file(running_info_file(vault.expanduser()))
    except InfoFileError:
        return None
    if info.remote_url is None or not process_alive(info.pid):
        return None
    from plugin_bridge.cli.remote import reachable  # cryptography: only when needed

    source = f"the running server's, pid {info.pid}, serve --remote {info.remote_url}"
    return reachable(info.remote_url), info.remote_fingerprint, source


def _owner_token(vault: Path, data_dir: Path) -> str:
    """The running (or last) server's token, from its info file; "" when there is none."""
    running = holder(vault.expanduser())
    paths = [Path(running.info_file)] if running and running.info_file else []
    for path in [*paths, data_dir / INFO_FILE_NAME]:
        try:
            return read_info_file(path).token
        except InfoFileError:
            continue
    return ""


def _list(keys: ClientKeys, out: TextIO) -> int:
    records = keys.list()
    if not records:
        out.write("No client keys: add one with 'clients add NAME --vault V'.\n")
        return 0
    out.write(f"{'NAME':<24} {'SCOPE':<6} {'CREATED':<17} LAST USED\n")
    for record in records:
        used = _when(record.last_used) if record.last_used is not None else "never"
        out.write(f"{record.name:<24} {record.scope:<6} {_when(record.created):<17} {used}\n")
    return 0


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))
