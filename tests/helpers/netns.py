"""Another device for the remote listener's tests: a network namespace joined to this one by a
veth pair (needs root and iproute2's ``ip``; without them the test skips and says why)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

import pytest


@dataclass
class Device:
    namespace: str
    host: str
    """This machine's address on the veth pair (the remote listener binds it)."""
    addresses: tuple[str, str]
    """The other device's two addresses."""


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


@pytest.fixture
def another_device() -> Iterator[Device]:
    """A network namespace with a veth pair: 10.200.N.1 here, .2 and .3 there."""
    if shutil.which("ip") is None:
        pytest.skip("another device needs iproute2's 'ip' to create a network namespace")
    if os.geteuid() != 0:
        pytest.skip("another device needs root to create a network namespace (ip netns)")
    tag = os.getpid() % 100_000
    namespace, here, there = f"oab{tag}", f"oabh{tag}", f"oabd{tag}"
    subnet = f"10.200.{tag % 250 + 1}"
    try:
        _ip("netns", "add", namespace)
        _ip("link", "add", here, "type", "veth", "peer", "name", there)
        _ip("link", "set", there, "netns", namespace)
        _ip("addr", "add", f"{subnet}.1/29", "dev", here)
        _ip("link", "set", here, "up")
        inside = ("netns", "exec", namespace, "ip")
        _ip(*inside, "addr", "add", f"{subnet}.2/29", "dev", there)
        _ip(*inside, "addr", "add", f"{subnet}.3/29", "dev", there)
        _ip(*inside, "link", "set", there, "up")
        _ip(*inside, "link", "set", "lo", "up")
    except subprocess.CalledProcessError as exc:
        _remove(namespace, here)
        pytest.skip(f"cannot create a network namespace: {exc.stderr.decode().strip()}")
    try:
        yield Device(namespace, f"{subnet}.1", (f"{subnet}.2", f"{subnet}.3"))
    finally:
        _remove(namespace, here)


def _remove(namespace: str, link: str) -> None:
    for args in (("link", "del", link), ("netns", "del", namespace)):
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            _ip(*args)
