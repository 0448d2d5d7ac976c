"""README's "From a phone or another computer", run as written: its commands are read from the
README itself and run in a shell (``~/Notes`` a copy of examples/vault under a HOME of the
test's own); only the port 8443 becomes a free one. ``serve --remote`` on the command line is
what ``clients add --pair`` pairs with: the settings file has no ``remote_listen``."""

from __future__ import annotations

import asyncio
import hashlib
import http.client
import json
import os
import re
import shlex
import shutil
import signal
import socket
import ssl
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from tests.conftest import REPO_ROOT
from tests.helpers.bridge import EXAMPLE_VAULT
from tests.helpers.serve import START_WAIT, cli_env

SECTION = "## From a phone or another computer"


def readme_commands() -> list[str]:
    """The ``obsidian-ai-bridge`` commands of the section's shell block, comments removed."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None, "the section has a ```sh block"
    return [
        line.split("#", 1)[0].strip()
        for line in block.group(1).splitlines()
        if line.startswith("obsidian-ai-bridge ")
    ]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _get_health(port: int, host: str, key: str) -> tuple[int, bytes, bytes]:
    """``GET /health`` at 127.0.0.1:``port`` over TLS, naming ``host`` as a paired device
    would (the remote listener checks Host); the status, body and certificate (DER)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # pinned below, by the pairing's fingerprint
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    try:
        connection.request(
            "GET", "/health", headers={"Host": host, "Authorization": f"Bearer {key}"}
        )
        response = connection.getresponse()
        assert connection.sock is not None
        der = connection.sock.getpeercert(binary_form=True)
        assert der is not None
        return response.status, response.read(), der
    finally:
        connection.close()


async def test_the_readme_pairing_steps_work_as_written(tmp_path: Path) -> None:
    serve_line, pair_line = readme_commands()
    assert "--remote 0.0.0.0:8443" in serve_line and "--pair" in pair_line
    port = _free_port()
    home = tmp_path / "home"
    shutil.copytree(EXAMPLE_VAULT, home / "Notes")
    env = cli_env(tmp_path) | {
        "HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    serve = await asyncio.create_subprocess_exec(
        "sh",
        "-c",
        "exec " + serve_line.replace("8443", str(port)),
        cwd=tmp_path,
        env=env,
        stderr=asyncio.subprocess.PIPE,
    )
    assert serve.stderr is not None
    try:
        said: list[str] = []
        async with asyncio.timeout(START_WAIT):
            while not said or not said[-1].startswith("Public key pin"):
                line = (await serve.stderr.readline()).decode()
                assert line, f"serve stopped: {''.join(said)}"
                said.append(line.strip())
        printed = next(line for line in said if "fingerprint (SHA-256)" in line)
        fingerprint = printed.rsplit(" ", 1)[1]

        pair = await asyncio.create_subprocess_exec(
            "sh",
            "-c",
            pair_line,
            cwd=tmp_path,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        async with asyncio.timeout(START_WAIT):
            out, err = await pair.communicate()
        assert pair.returncode == 0, err.decode()
        key, pairing = out.decode().splitlines()[:2]
        assert "█" in out.decode() or "▀" in out.decode(), "a QR code follows the pairing text"
        assert f"serve --remote https://0.0.0.0:{port}" in err.decode()  # says which it used

        query = parse_qs(urlsplit(pairing).query)
        address = urlsplit(query["address"][0])
        assert query["key"] == [key] and query["fingerprint"] == [fingerprint]
        assert address.scheme == "https" and address.port == port
        assert address.hostname not in ("0.0.0.0", None)  # an address other devices reach

        status, body, der = await asyncio.to_thread(_get_health, port, address.netloc, key)
        assert hashlib.sha256(der).hexdigest() == fingerprint
        assert status == 200 and json.loads(body)["status"] == "ok"
        wrong = await asyncio.to_thread(_get_health, port, address.netloc, "oab_" + "x" * 43)
        assert wrong[0] == 401 and json.loads(wrong[1])["error"] == "auth_failed"
        assert "missing or wrong client key" in json.loads(wrong[1])["message"]
        assert b"info file" not in wrong[1]
    finally:
        if serve.returncode is None:
            serve.send_signal(signal.SIGTERM)
            async with asyncio.timeout(START_WAIT):
                await serve.wait()


def test_the_readme_section_holds_the_two_commands() -> None:
    commands = readme_commands()
    assert len(commands) == 2
    assert shlex.split(commands[1])[:4] == ["obsidian-ai-bridge", "clients", "add", "phone"]
