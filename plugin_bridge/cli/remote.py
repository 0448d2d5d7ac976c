"""``serve --remote HOST:PORT``: the remote listener's socket, certificate and rules, and what
``serve`` prints about them; ``clients add --pair``'s pairing text and QR code.

TLS always: the user's certificate (``--tls-cert FILE --tls-key FILE``) or the data folder's
self-signed one (:mod:`plugin_bridge.app.certificate`); plain HTTP only with
``--remote-insecure-http``, with a warning.
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TextIO
from urllib.parse import quote, urlsplit

from plugin_bridge.app.certificate import (
    Certificate,
    CertificateError,
    load,
    machine_names,
    self_signed,
)
from plugin_bridge.app.remote import RemoteGate, parse_listen
from plugin_bridge.wire.security import bind_socket, http_url, is_loopback_host

if TYPE_CHECKING:
    from plugin_bridge.app.settings.config import BridgeSettings

PAIR_SCHEME = "obsidian://ai-bridge-pair"


class RemoteListener(NamedTuple):
    sock: socket.socket
    gate: RemoteGate
    tls: tuple[Path, Path] | None
    url: str
    lines: list[str]
    """What ``serve`` prints at start: the address, the fingerprint and pin, or the warning."""
    fingerprint: str = ""
    """The certificate's SHA-256 (hex); empty over plain HTTP."""


def open_remote(settings: BridgeSettings, data_dir: Path) -> RemoteListener | str:
    """Bind the remote listener of ``settings.remote_listen``, or why it cannot (a sentence)."""
    assert settings.remote_listen is not None
    host, port = parse_listen(settings.remote_listen)
    if (settings.tls_cert is None) != (settings.tls_key is None):
        return "--tls-cert and --tls-key go together: give both files, or neither."
    certificate: Certificate | None = None
    try:
        if settings.tls_cert is not None and settings.tls_key is not None:
            certificate = load(settings.tls_cert.expanduser(), settings.tls_key.expanduser())
        elif not settings.remote_insecure_http:
            certificate = self_signed(data_dir, host)
    except CertificateError as exc:
        return str(exc)
    except OSError as exc:
        return f"Cannot write the TLS certificate ({exc}): pass a writable --data-dir."
    try:
        sock = bind_socket(host, port)
    except OSError as exc:
        return (
            f"Cannot listen on {settings.remote_listen} ({exc.strerror or exc}): pass another "
            "--remote address."
        )
    names = certificate.names if certificate is not None else frozenset(machine_names(host))
    gate = RemoteGate.build(names, port, settings.allowed_origins)
    url = http_url(host, port)
    if certificate is None:
        lines = [f"Remote listener on {url} (client keys only)."]
        if not is_loopback_host(host):
            lines.append(
                "WARNING: the remote listener is plain HTTP (--remote-insecure-http): keys and "
                "notes cross the network unencrypted unless a tunnel (WireGuard, Tailscale) "
                "encrypts them."
            )
        return RemoteListener(sock, gate, None, url, lines)
    url = "https" + url.removeprefix("http")
    lines = [
        f"Remote listener on {url} (client keys only).",
        f"TLS certificate fingerprint (SHA-256): {certificate.fingerprint}",
        f"Public key pin (curl --pinnedpubkey): {certificate.spki_pin}",
    ]
    if certificate.made:
        lines.append("A new certificate was made: clients that pinned another must pin this one.")
    tls = (certificate.cert_file, certificate.key_file)
    return RemoteListener(sock, gate, tls, url, lines, certificate.fingerprint)


def remote_address(settings: BridgeSettings, data_dir: Path) -> tuple[str, str] | str:
    """The address of the remote listener ``settings`` configure as other machines reach it
    (``https://HOST:PORT``) and its certificate's fingerprint (empty over plain HTTP), or why
    there is none (a sentence). A self-signed certificate not made yet is made now, so
    ``serve`` serves the same one."""
    assert settings.remote_listen is not None
    listen_host, port = parse_listen(settings.remote_listen)
    if settings.remote_insecure_http and settings.tls_cert is None:
        return reachable(http_url(listen_host, port)), ""
    try:
        if settings.tls_cert is not None and settings.tls_key is not None:
            certificate = load(settings.tls_cert.expanduser(), settings.tls_key.expanduser())
        else:
            certificate = self_signed(data_dir, listen_host)
    except (CertificateError, OSError) as exc:
        return str(exc)
    return reachable("https" + http_url(listen_host, port).removeprefix("http")), (
        certificate.fingerprint
    )


def reachable(url: str) -> str:
    """``url`` (a listener's ``http(s)://HOST:PORT``) with an unspecified host (``0.0.0.0``,
    ``::``) replaced by an address of this machine other devices can use."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not (_is_address(host) and ipaddress.ip_address(host).is_unspecified):
        return url
    names = machine_names(host)
    address = next((name for name in names if _is_address(name)), socket.gethostname())
    return f"{parts.scheme}://{http_url(address, parts.port or 443).removeprefix('http://')}"


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def pairing_text(address: str, key: str, fingerprint: str) -> str:
    """What the plugin's *Another computer* setting takes: the address, the key and the
    certificate's fingerprint (hex, no colons)."""
    return (
        f"{PAIR_SCHEME}?address={quote(address, safe='')}&key={quote(key, safe='')}"
        f"&fingerprint={fingerprint}"
    )


def print_pairing(text: str, out: TextIO) -> None:
    """The pairing text, then its QR code in the terminal (half-block characters)."""
    import segno  # only for --pair

    out.write(f"{text}\n")
    segno.make(text, error="m").terminal(out=out, compact=True)
