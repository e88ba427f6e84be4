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
import hashlib
import hmac
import os
import secrets
import stat
import tempfile
from pathlib import Path

from ...errors import UsageError
# the rules every managed engine shares, used here as this module's own
from ..common.access import (client_host, listen_hosts, make_private_dir,  # noqa: F401
                             socket_dir, tcp_in_use, write_owned)

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


def password_file(datadir: Path) -> Path:
    return Path(f"{datadir}.pgpass")


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
