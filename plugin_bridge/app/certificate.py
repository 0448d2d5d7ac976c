"""The remote listener's TLS certificate: the user's own, or one made here on first use.

The self-signed one (an EC P-256 key, valid 825 days) is kept in the vault's data folder
(``remote-cert.pem``, ``remote-key.pem``, mode 0600) and reused, so a client pins it once. Its
names are the listen address, the machine's host name and its non-loopback addresses; it is
made again (a new fingerprint, said at start) only when it expires or the listen address is not
among its names. The names are also the ``Host`` values the remote listener accepts.

A client pins it by its fingerprint (the SHA-256 of the certificate's DER, in hex) or by the
SHA-256 of its public key (``sha256//BASE64``, what curl's ``--pinnedpubkey`` takes).
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import hashlib
import ipaddress
import socket
from pathlib import Path
from typing import Final

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from plugin_bridge.app.remote import covered
from plugin_bridge.vault.notes.atomic import write_atomic

CERT_FILE: Final = "remote-cert.pem"
KEY_FILE: Final = "remote-key.pem"
VALID_DAYS: Final = 825
"""The longest validity Apple's platforms accept for a server certificate."""
RENEW_BEFORE: Final = datetime.timedelta(days=1)


class CertificateError(ValueError):
    """A certificate or key that cannot be used; ``str()`` is the user's sentence."""


@dataclasses.dataclass(frozen=True, slots=True)
class Certificate:
    """A certificate the remote listener serves, with what clients pin it by."""

    cert_file: Path
    key_file: Path
    names: frozenset[str]
    """Its DNS names and IP addresses (lower case; a wildcard as ``*.example.com``)."""
    fingerprint: str
    """SHA-256 of the certificate's DER, lower-case hex without colons."""
    spki_pin: str
    """``sha256//BASE64`` of its public key (curl's ``--pinnedpubkey``)."""
    made: bool = False
    """True when this start made it (a new fingerprint to give clients)."""

    @property
    def fingerprint_colons(self) -> str:
        return ":".join(self.fingerprint[i : i + 2] for i in range(0, 64, 2)).upper()

    def covers(self, host: str) -> bool:
        """True when ``host`` (a name without a port) is one of its names."""
        return covered(self.names, host.strip("[]").lower().rstrip("."))


def machine_names(listen_host: str) -> list[str]:
    """The names a certificate made here gets: the listen address (unless a wildcard one),
    the host name and the host name's non-loopback addresses."""
    names: list[str] = []
    host = listen_host.strip("[]")
    if host and not _is_unspecified(host):
        names.append(host)
    hostname = socket.gethostname()
    names.append(hostname)
    try:
        infos = socket.getaddrinfo(hostname, None, proto=socket.IPPROTO_TCP)
    except OSError:
        infos = []
    for info in infos:
        address = str(info[4][0]).split("%")[0]
        if not ipaddress.ip_address(address).is_loopback:
            names.append(address)
    return list(dict.fromkeys(name.lower() for name in names))


def _is_unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def self_signed(data_dir: Path, listen_host: str) -> Certificate:
    """The data folder's self-signed certificate, made when missing, expiring, or without
    the listen address among its names."""
    cert_file, key_file = data_dir / CERT_FILE, data_dir / KEY_FILE
    wanted = listen_host.strip("[]").lower()
    if cert_file.exists() and key_file.exists():
        try:
            found = load(cert_file, key_file)
        except CertificateError:
            found = None
        if found is not None and (_is_unspecified(wanted) or found.covers(wanted)):
            expires = x509.load_pem_x509_certificate(cert_file.read_bytes()).not_valid_after_utc
            if expires - RENEW_BEFORE > datetime.datetime.now(datetime.UTC):
                return found
    _make(cert_file, key_file, machine_names(listen_host))
    made = load(cert_file, key_file)
    return dataclasses.replace(made, made=True)


def _make(cert_file: Path, key_file: Path, names: list[str]) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "obsidian-ai-bridge")])
    alternatives: list[x509.GeneralName] = []
    for name in names:
        try:
            alternatives.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            alternatives.append(x509.DNSName(name))
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    write_atomic(key_file, key_pem, mode=0o600)
    write_atomic(cert_file, cert.public_bytes(serialization.Encoding.PEM), mode=0o600)


def load(cert_file: Path, key_file: Path) -> Certificate:
    """The certificate in ``cert_file`` (PEM; the first of a chain is the server's) with its
    names and pins; :class:`CertificateError` when a file cannot be read or parsed."""
    try:
        pem = cert_file.read_bytes()
        cert = x509.load_pem_x509_certificate(pem)
        if not key_file.is_file():
            raise CertificateError(f"The TLS key {key_file} is not a file: pass --tls-key FILE.")
    except OSError as exc:
        raise CertificateError(
            f"Cannot read the TLS certificate ({exc}): check --tls-cert."
        ) from None
    except ValueError as exc:
        raise CertificateError(
            f"{cert_file} is not a PEM certificate ({exc}): pass the certificate's .pem or .crt."
        ) from exc
    return Certificate(cert_file, key_file, _names(cert), *pins(cert))


def pins(cert: x509.Certificate) -> tuple[str, str]:
    """The certificate's fingerprint (hex) and its public key's pin (``sha256//BASE64``)."""
    fingerprint = cert.fingerprint(hashes.SHA256()).hex()
    spki = cert.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return fingerprint, "sha256//" + base64.b64encode(hashlib.sha256(spki).digest()).decode()


def fingerprint_of(data_dir: Path) -> str | None:
    """The fingerprint of the data folder's self-signed certificate, None when none was made."""
    try:
        return pins(x509.load_pem_x509_certificate((data_dir / CERT_FILE).read_bytes()))[0]
    except (OSError, ValueError):
        return None


def _names(cert: x509.Certificate) -> frozenset[str]:
    try:
        extension = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except x509.ExtensionNotFound:
        common = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        return frozenset(str(item.value).lower() for item in common)
    dns = extension.value.get_values_for_type(x509.DNSName)
    addresses = extension.value.get_values_for_type(x509.IPAddress)
    return frozenset([*(name.lower() for name in dns), *(str(ip) for ip in addresses)])
