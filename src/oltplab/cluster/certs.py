"""The cluster's own certificate authority and the certificates of its nodes.

``cluster up`` makes them in ``<cluster dir>/certs`` the first time and reuses them after: a CA
(its key never leaves this machine), one certificate for the scheduler, one for the client
that oltplab connects with (client use only; no worker has it), and one per host for its
worker (a host gets only its own key and the CA's certificate). Every node asks its peer for a
certificate signed by this CA (Dask's TLS: ``verify_mode = CERT_REQUIRED``), so a process
without one is refused. Keys are EC P-256, written 0600; certificates last a year and are made
afresh when they near their end.

What this proves is membership, not a role: Dask's TLS checks that a peer's certificate is
the CA's, and a worker's certificate (server and client use, as Dask's workers need) connects
to the scheduler as a client as well as the coordinator's does. So whoever holds a host's key
can submit code to every worker of the cluster: each host of a cluster trusts every other one
as much as the machine that runs ``cluster up``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from ..results.store import atomic_write

VALID = dt.timedelta(days=365)
RENEW_BEFORE = dt.timedelta(days=7)  # a certificate that ends sooner is made again
SERVER_AND_CLIENT = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]


@dataclass(frozen=True)
class Pair:
    """A certificate and its key, as files."""

    cert: Path
    key: Path


@dataclass(frozen=True)
class Certs:
    folder: Path

    @property
    def ca(self) -> Path:
        return self.folder / "ca.pem"

    @property
    def ca_key(self) -> Path:
        return self.folder / "ca-key.pem"

    def pair(self, role: str) -> Pair:
        """``scheduler``, ``client`` or ``worker-<host>``."""
        return Pair(self.folder / f"{role}.pem", self.folder / f"{role}-key.pem")

    def cluster_id(self) -> str:
        """Eight hex digits that name this cluster (its CA): folders on hosts carry it."""
        der = x509.load_pem_x509_certificate(self.ca.read_bytes()).public_bytes(
            serialization.Encoding.DER)
        return hashlib.sha256(der).hexdigest()[:8]


def ensure_certs(folder: Path, scheduler_address: str, hosts: dict[str, str],
                 now: dt.datetime | None = None) -> Certs:
    """The certificates in ``folder``: the CA, the scheduler's, the client's and one per host
    (``hosts``: name -> address), each made where missing, not signed by the CA or near its
    end. A new CA makes every certificate again."""
    now = now or dt.datetime.now(dt.timezone.utc)
    certs = Certs(Path(folder))
    certs.folder.mkdir(parents=True, exist_ok=True)
    os.chmod(certs.folder, 0o700)
    if not _fresh(certs.ca, now) or not certs.ca_key.is_file():
        _write_ca(certs, now)
    ca_cert = x509.load_pem_x509_certificate(certs.ca.read_bytes())
    ca_key = serialization.load_pem_private_key(certs.ca_key.read_bytes(), password=None)
    wanted = {"scheduler": (scheduler_address, SERVER_AND_CLIENT),
              "client": (None, [ExtendedKeyUsageOID.CLIENT_AUTH]),
              **{f"worker-{name}": (address, SERVER_AND_CLIENT)
                 for name, address in hosts.items()}}
    for role, (address, usages) in wanted.items():
        pair = certs.pair(role)
        if not (_fresh(pair.cert, now, ca_cert) and pair.key.is_file()):
            _write_leaf(pair, role, address, usages, ca_cert, ca_key, now)
    return certs


def _fresh(path: Path, now: dt.datetime, issuer: x509.Certificate | None = None) -> bool:
    """Whether ``path`` holds a certificate valid for longer than RENEW_BEFORE (signed by
    ``issuer`` when given)."""
    try:
        cert = x509.load_pem_x509_certificate(path.read_bytes())
    except (OSError, ValueError):
        return False
    if cert.not_valid_after_utc - RENEW_BEFORE < now:
        return False
    if issuer is not None:
        try:
            cert.verify_directly_issued_by(issuer)
        except (ValueError, TypeError, InvalidSignature):
            return False
    return True


def _write_ca(certs: Certs, now: dt.datetime) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "oltplab cluster CA")])
    cert = (_builder(name, name, key.public_key(), now)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, key_cert_sign=True, crl_sign=True,
                                         encipher_only=False, decipher_only=False),
                           critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                           critical=False)
            .sign(key, hashes.SHA256()))
    _write_pair(Pair(certs.ca, certs.ca_key), cert, key)


def _write_leaf(pair: Pair, role: str, address: str | None, usages: list,
                ca_cert: x509.Certificate, ca_key, now: dt.datetime) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"oltplab {role}")])
    builder = (_builder(subject, ca_cert.subject, key.public_key(), now)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                   ca_cert.public_key()), critical=False))
    if address is not None:
        try:
            alt: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(address))
        except ValueError:
            alt = x509.DNSName(address)
        builder = builder.add_extension(x509.SubjectAlternativeName([alt]), critical=False)
    _write_pair(pair, builder.sign(ca_key, hashes.SHA256()), key)


def _builder(subject: x509.Name, issuer: x509.Name, public_key, now: dt.datetime):
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
            .public_key(public_key).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + VALID))


def _write_pair(pair: Pair, cert: x509.Certificate, key) -> None:
    """The key first, 0600 (atomic_write's temporary file is made so), then the certificate."""
    atomic_write(pair.key, key.private_bytes(serialization.Encoding.PEM,
                                             serialization.PrivateFormat.PKCS8,
                                             serialization.NoEncryption()))
    atomic_write(pair.cert, cert.public_bytes(serialization.Encoding.PEM))
    os.chmod(pair.cert, 0o644)
