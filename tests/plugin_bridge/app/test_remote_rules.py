"""The remote listener's rules (Host, Origin, failed authentications per address), its
certificate, the pairing text, and a write key's undo of its own writes only."""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from plugin_bridge.app.certificate import self_signed
from plugin_bridge.app.clients import Caller, ForbiddenScope, check_undo
from plugin_bridge.app.remote import MOBILE_ORIGINS, AuthFailures, RemoteGate, parse_listen
from plugin_bridge.app.settings.config import BridgeSettings
from plugin_bridge.cli import main
from plugin_bridge.cli.remote import open_remote, pairing_text


class Headers:
    def __init__(self, **values: str) -> None:
        self.values = {k.lower(): v for k, v in values.items()}

    def get_all(self, key: str) -> list[str]:
        value = self.values.get(key.lower())
        return [] if value is None else [value]


def test_failures_block_an_address_for_the_rest_of_the_minute() -> None:
    now = [1000.0]
    failures = AuthFailures(limit=3, window=60, clock=lambda: now[0])
    for _ in range(3):
        assert failures.retry_after("10.0.0.2") is None
        failures.failed("10.0.0.2")
    assert failures.retry_after("10.0.0.2") == 60
    assert failures.retry_after("10.0.0.3") is None
    now[0] += 59.5
    assert failures.retry_after("10.0.0.2") == 1
    now[0] += 1
    assert failures.retry_after("10.0.0.2") is None


def test_host_and_origin_rules() -> None:
    gate = RemoteGate.build(["10.0.0.1", "mac.tail.ts.net", "*.example.com"], 8443, ["app://x"])
    assert gate.refusal(Headers(Host="10.0.0.1:8443")) is None
    assert gate.refusal(Headers(Host="MAC.tail.ts.net")) is None
    assert gate.refusal(Headers(Host="a.example.com:8443")) is None
    for host in ("evil.com:8443", "10.0.0.1:9999", "a.b.example.com", "10.0.0.1:x", ""):
        assert gate.refusal(Headers(Host=host)) is not None, host
    for origin in (*MOBILE_ORIGINS, "app://x"):
        assert gate.refusal(Headers(Host="10.0.0.1", Origin=origin)) is None
    assert "Origin" in (gate.refusal(Headers(Host="10.0.0.1", Origin="https://evil")) or "")


@pytest.mark.parametrize("value", ["8443", "host", "host:0", "host:70000", ":8443", "[::1]"])
def test_a_listen_address_needs_host_and_port(value: str) -> None:
    with pytest.raises(ValueError, match="HOST:PORT"):
        parse_listen(value)
    assert parse_listen("[::]:8443") == ("::", 8443)


def test_the_certificate_is_kept_and_names_the_listen_address(tmp_path: Path) -> None:
    made = self_signed(tmp_path, "10.9.8.7")
    assert (
        made.made
        and made.covers("10.9.8.7")
        and (tmp_path / "remote-key.pem").stat().st_mode & 0o777 == 0o600
    )
    again = self_signed(tmp_path, "10.9.8.7")
    assert not again.made and again.fingerprint == made.fingerprint
    moved = self_signed(tmp_path, "10.9.8.6")
    assert moved.made and moved.fingerprint != made.fingerprint


def test_plain_http_warns_off_loopback(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("0.0.0.0", 0))
        port = probe.getsockname()[1]
    settings = BridgeSettings.model_construct(
        remote_listen=f"0.0.0.0:{port}",
        remote_insecure_http=True,
        tls_cert=None,
        tls_key=None,
        allowed_origins=(),
    )
    opened = open_remote(settings, tmp_path)
    assert not isinstance(opened, str)
    opened.sock.close()
    assert opened.tls is None and any("WARNING" in line for line in opened.lines)
    half = BridgeSettings.model_construct(
        remote_listen="127.0.0.1:8443",
        tls_cert=tmp_path / "c.pem",
        tls_key=None,
        remote_insecure_http=False,
        allowed_origins=(),
    )
    assert "go together" in str(open_remote(half, tmp_path))


def test_pairing_text_and_its_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = pairing_text("https://10.0.0.1:8443", "oab_k", "ab" * 32)
    parts = urlsplit(text)
    assert (parts.scheme, parts.netloc, parts.path) == ("obsidian", "ai-bridge-pair", "")
    assert parse_qs(parts.query) == {
        "address": ["https://10.0.0.1:8443"],
        "key": ["oab_k"],
        "fingerprint": ["ab" * 32],
    }
    vault = tmp_path / "v"
    vault.mkdir()
    where = ["--vault", str(vault), "--data-dir", str(tmp_path / "d")]
    assert main(["clients", "add", "phone", "--pair", *where]) == 2
    assert "remote_listen" in capsys.readouterr().err
    monkeypatch.setenv("AI_BRIDGE_REMOTE_LISTEN", "10.0.0.1:8443")
    assert main(["clients", "add", "phone", "--pair", *where]) == 0
    out = capsys.readouterr()
    key, pairing = out.out.splitlines()[:2]
    fingerprint = self_signed(tmp_path / "d", "10.0.0.1").fingerprint
    assert pairing == pairing_text("https://10.0.0.1:8443", key, fingerprint)
    assert fingerprint in out.err and "█" in out.out


def test_a_write_key_undoes_only_its_own_writes() -> None:
    mine, other = Caller("phone", "write"), Caller("bot", "write")
    entries = [  # newest first
        {"path": "A.md", "action": "undo", "origin": "user (key:phone)"},
        {"path": "A.md", "action": "edit", "origin": "model (key:phone)"},
        {"path": "A.md", "action": "edit", "origin": "model (key:bot)"},
        {"path": "B.md", "action": "edit", "origin": "model (key:phone)"},
    ]
    check_undo(mine, "B.md", entries)
    check_undo(other, "A.md", entries)  # the phone's edit is undone: the bot's is next
    with pytest.raises(ForbiddenScope, match="only its own writes"):
        check_undo(mine, "A.md", entries)
    with pytest.raises(ForbiddenScope, match="scope write"):
        check_undo(Caller("reader", "chat"), "B.md", entries)
