"""Who may connect to a managed server: a private unix socket, and TCP only with a password.

The server listens on a unix socket in a directory that only its OS user can enter (mode 0700):
that directory is the gate, so local socket connections stay ``trust``. The directory sits beside
the data directory (``<datadir>.sock``) when the socket path fits the kernel's 107-byte limit,
else under /tmp, named after a hash of the data directory's path. Both are found again by any
later process: from ``postmaster.pid`` (its fifth line) while the server runs, and from the data
directory's path otherwise.

TCP is off unless ``--listen`` names addresses (PostgreSQL's ``listen_addresses``); every TCP
connection must then authenticate with scram-sha-256 as ``postgres``. The password is generated
(``secrets``) and kept in ``<datadir>.pgpass``, a libpq password file of mode 0600; a TCP DSN
names that file (``passfile=``) and never holds the password itself.
"""

from __future__ import annotations

import base64
import errno
import hashlib
import hmac
import os
import secrets
import socket
import stat
import tempfile
from pathlib import Path

from ...errors import UsageError

SOCKET_PATH_MAX = 107  # sizeof(sockaddr_un.sun_path) - 1 on Linux
SOCKET_FILE = ".s.PGSQL.65535"  # the longest name a port gives
FALLBACK_ROOT = "/tmp"
SCRAM_ITERATIONS = 4096

HBA_TEXT = """\
# Written by oltplab at each start; edits are overwritten.
# Unix socket: the socket directory (mode 0700, owned by the server's OS user) is the gate.
local   all          all                 trust
local   replication  all                 trust
# TCP (--listen): the password in the libpq password file beside the data directory.
host    all          all   all           scram-sha-256
host    replication  all   all           scram-sha-256
"""


def socket_dir(datadir: Path) -> Path:
    """The private socket directory of the cluster in ``datadir`` (an absolute path)."""
    beside = Path(f"{datadir}.sock")
    if len(f"{beside}/{SOCKET_FILE}".encode()) <= SOCKET_PATH_MAX:
        return beside
    digest = hashlib.sha256(str(datadir).encode()).hexdigest()[:16]
    return Path(FALLBACK_ROOT) / f"oltplab-{digest}"


def password_file(datadir: Path) -> Path:
    return Path(f"{datadir}.pgpass")


def make_private_dir(path: Path, uid: int, gid: int) -> None:
    """Create ``path`` with mode 0700 owned by ``uid``, or accept it when it already is such a
    directory; refuse a symlink, a file, or a directory that someone else owns."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as e:
        raise UsageError(f"cannot create the socket directory {path}: {e.strerror or e}") from e
    else:
        if os.geteuid() == 0 and uid != 0:
            os.chown(path, uid, gid)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"the socket directory {path} exists and is not a directory; remove it")
    if st.st_uid != uid:
        raise UsageError(f"the socket directory {path} is owned by uid {st.st_uid}, not by the "
                         f"server's user (uid {uid}); remove it")
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)


def write_owned(target: Path, text: str, mode: int, uid: int, gid: int) -> None:
    """Replace ``target`` with a file holding ``text``, of ``mode`` and owned by ``uid`` (when
    we are root). The text goes first into a new file of a random name beside ``target``,
    created exclusively, so that a link planted there is never followed, then renamed."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w") as f:
            os.fchmod(f.fileno(), mode)
            if os.geteuid() == 0 and uid != 0:
                os.fchown(f.fileno(), uid, gid)
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise


def ensure_password(path: Path, uid: int, gid: int) -> str:
    """The password in the libpq password file ``path``; generated (mode 0600, owned by
    ``uid``) when missing. A file that someone else owns or may read is refused."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise UsageError(f"cannot read the password file {path}: {e.strerror or e}") from e
    if st is not None:
        if (not stat.S_ISREG(st.st_mode) or st.st_uid not in (uid, os.geteuid())
                or st.st_mode & 0o077):
            raise UsageError(f"the password file {path} is not a file of mode 0600 owned by the "
                             "server's user; remove it")
        for line in path.read_text().splitlines():
            fields = line.split(":")
            if len(fields) == 5 and fields[3] == "postgres" and fields[4]:
                return fields[4]
    password = secrets.token_urlsafe(32)  # letters, digits, '-' and '_': nothing to escape
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # mode 0600
        with os.fdopen(fd, "w") as f:
            f.write(f"*:*:*:postgres:{password}\n")
            f.flush()
            os.fsync(f.fileno())
        if os.geteuid() == 0 and uid != 0:
            os.chown(tmp, uid, gid)
        os.replace(tmp, path)
    except OSError as e:
        raise UsageError(f"cannot write the password file {path}: {e.strerror or e}") from e
    return password


def scram_verifier(password: str, salt: bytes | None = None,
                   iterations: int = SCRAM_ITERATIONS) -> str:
    """The SCRAM-SHA-256 verifier PostgreSQL stores for ``password`` (RFC 5802/7677), so that
    ALTER ROLE never carries the password itself."""
    salt = secrets.token_bytes(16) if salt is None else salt
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    server_key = hmac.new(salted, b"Server Key", "sha256").digest()
    stored_key = hashlib.sha256(client_key).digest()
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    return f"SCRAM-SHA-256${iterations}:{b64(salt)}${b64(stored_key)}:{b64(server_key)}"


def listen_hosts(listen: str) -> list[str]:
    """The entries of a listen_addresses value ('' = no TCP)."""
    return [h.strip() for h in listen.split(",") if h.strip()]


def client_host(listen: str) -> str | None:
    """An address a local TCP client reaches the server on, or None without TCP."""
    hosts = listen_hosts(listen)
    if not hosts:
        return None
    first = hosts[0]
    return {"*": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(first, first)


def tcp_in_use(port: int, listen: str) -> str | None:
    """The first listen address on which something already listens on ``port``, else None."""
    for host in listen_hosts(listen):
        try:
            infos = socket.getaddrinfo(None if host == "*" else host, port,
                                       type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        except socket.gaierror as e:
            raise UsageError(f"--listen {listen}: cannot resolve {host!r} ({e.strerror})") from e
        for family, kind, proto, _, addr in infos:
            with socket.socket(family, kind, proto) as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    s.bind(addr)
                except OSError as e:
                    if e.errno in (errno.EADDRINUSE, errno.EACCES):
                        return host
    return None
