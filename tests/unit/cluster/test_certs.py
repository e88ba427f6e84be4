"""The cluster's CA and certificates: made once, reused, keys 0600, each node's certificate
signed by the CA and for the use it has."""

from __future__ import annotations

import datetime as dt
import ssl
import stat

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from oltplab.cluster.certs import ensure_certs

HOSTS = {"h1": "127.0.0.1", "far": "bench.example"}


def _cert(path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_every_node_gets_a_certificate_signed_by_the_cluster_ca(tmp_path):
    certs = ensure_certs(tmp_path / "certs", "127.0.0.1", HOSTS)
    ca = _cert(certs.ca)
    for role in ("scheduler", "client", "worker-h1", "worker-far"):
        pair = certs.pair(role)
        _cert(pair.cert).verify_directly_issued_by(ca)
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(certs.ca))
        ctx.load_cert_chain(pair.cert, pair.key)  # the key matches the certificate
    usage = _cert(certs.pair("client").cert).extensions.get_extension_for_class(
        x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    alt = _cert(certs.pair("worker-far").cert).extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value
    assert alt.get_values_for_type(x509.DNSName) == ["bench.example"]


def test_keys_are_0600_and_the_folder_0700(tmp_path):
    certs = ensure_certs(tmp_path / "certs", "127.0.0.1", HOSTS)
    keys = sorted(certs.folder.glob("*-key.pem"))
    assert len(keys) == 5
    assert all(stat.S_IMODE(k.stat().st_mode) == 0o600 for k in keys)
    assert stat.S_IMODE(certs.folder.stat().st_mode) == 0o700


def test_a_second_up_reuses_them_and_adds_a_new_host(tmp_path):
    certs = ensure_certs(tmp_path / "certs", "127.0.0.1", HOSTS)
    before = {p.name: p.read_bytes() for p in certs.folder.iterdir()}
    again = ensure_certs(tmp_path / "certs", "127.0.0.1", {**HOSTS, "h3": "127.0.0.3"})
    after = {p.name: p.read_bytes() for p in again.folder.iterdir()}
    assert {k: after[k] for k in before} == before
    assert {"worker-h3.pem", "worker-h3-key.pem"} == set(after) - set(before)
    assert again.cluster_id() == certs.cluster_id() and len(certs.cluster_id()) == 8


def test_certificates_near_their_end_are_made_again(tmp_path):
    old = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=400)
    certs = ensure_certs(tmp_path / "certs", "127.0.0.1", HOSTS, now=old)
    first = certs.cluster_id()
    renewed = ensure_certs(tmp_path / "certs", "127.0.0.1", HOSTS)
    assert renewed.cluster_id() != first
    _cert(renewed.pair("worker-h1").cert).verify_directly_issued_by(_cert(renewed.ca))
