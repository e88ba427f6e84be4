"""Access rules every managed engine follows: a private socket directory (mode 0700, owned by
the server's OS user) beside the data directory or, when that path is too long for a socket,
under /tmp named after a hash of the data directory's path; TCP only on the addresses asked for.
"""

from __future__ import annotations

import errno
import hashlib
import os
import socket
import stat
import tempfile
from pathlib import Path

from ...errors import UsageError

SOCKET_PATH_MAX = 107  # sizeof(sockaddr_un.sun_path) - 1 on Linux
# The longest socket file name of any engine (PostgreSQL's for port 65535): one directory rule
# fits them all.
SOCKET_FILE = ".s.PGSQL.65535"
FALLBACK_ROOT = "/tmp"


def socket_dir(datadir: Path) -> Path:
    """The private socket directory of the cluster in ``datadir`` (an absolute path)."""
    beside = Path(f"{datadir}.sock")
    if len(f"{beside}/{SOCKET_FILE}".encode()) <= SOCKET_PATH_MAX:
        return beside
    digest = hashlib.sha256(str(datadir).encode()).hexdigest()[:16]
    return Path(FALLBACK_ROOT) / f"oltplab-{digest}"


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
