"""Who may connect to a managed MariaDB: the same rules as the managed PostgreSQL.

- The unix socket (``mysqld.sock``) lives in the private socket directory of the common
  rules (``<datadir>.sock``, mode 0700, owned by the server's OS user, or a hashed directory
  under /tmp when the path is too long): that directory is the gate, and ``root@localhost``
  needs no password there.
- TCP is off (``skip-networking``) unless --listen names an address. The server runs with
  ``skip-name-resolve``, so a TCP client is never 'localhost' and only the account
  ``oltplab@'%'`` can log in over TCP, with the generated password. The password is kept in
  ``<datadir>.my.cnf``, a client option file of mode 0600 (``[client] user, password``); a TCP
  DSN names that file and never holds the password itself.
- The accounts are set at every start by the server's init file (run before it accepts any
  connection), which carries the password's hash only: other root accounts that
  mariadb-install-db made (``root@127.0.0.1``, ``root@::1``, ``root@<hostname>``) are dropped.
"""

from __future__ import annotations

import configparser
import hashlib
import os
import secrets
import stat
from pathlib import Path

from ...errors import UsageError
from ..common.access import socket_dir  # noqa: F401  (the same directory rule)

SOCKET_FILE = "mysqld.sock"
TCP_USER = "oltplab"


def option_file(datadir: Path) -> Path:
    return Path(f"{datadir}.my.cnf")


def native_password_hash(password: str) -> str:
    """What mysql_native_password stores: '*' and SHA1(SHA1(password)) in upper-case hex."""
    inner = hashlib.sha1(password.encode()).digest()
    return "*" + hashlib.sha1(inner).hexdigest().upper()


def stored_password(path: Path, uid: int) -> str | None:
    """The password of the client option file ``path``, None when there is none yet. A file
    that is not a regular file of mode 0600 owned by ``uid`` (or by us) is refused."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise UsageError(f"cannot read the password file {path}: {e.strerror or e}") from e
    private = stat.S_ISREG(st.st_mode) and not st.st_mode & 0o077
    if not private or st.st_uid not in (uid, os.geteuid()):
        raise UsageError(f"the password file {path} is not a file of mode 0600 owned by the "
                         "server's user; remove it")
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path)
    except configparser.Error as e:
        raise UsageError(f"the password file {path} is not an option file; remove it") from e
    return parser.get("client", "password", fallback=None) or None


def option_file_text(password: str) -> str:
    """A new client option file: the TCP account and a generated password."""
    return f"[client]\nuser={TCP_USER}\npassword={password}\n"


def new_password() -> str:
    return secrets.token_urlsafe(32)  # letters, digits, '-' and '_': nothing to quote


def init_sql(password: str) -> str:
    """The init file's statements (one per line, as the server reads them): root only on the
    socket, oltplab@'%' with the password's hash for TCP."""
    digest = native_password_hash(password)
    return "\n".join((
        "DELETE FROM mysql.global_priv WHERE User = 'root' AND Host <> 'localhost';",
        "DELETE FROM mysql.global_priv WHERE User = '';",
        "FLUSH PRIVILEGES;",
        f"CREATE USER IF NOT EXISTS '{TCP_USER}'@'%' IDENTIFIED BY PASSWORD '{digest}';",
        f"ALTER USER '{TCP_USER}'@'%' IDENTIFIED BY PASSWORD '{digest}';",
        f"GRANT ALL PRIVILEGES ON *.* TO '{TCP_USER}'@'%' WITH GRANT OPTION;",
        "",
    ))


def bind_address(listen: str) -> str | None:
    """The one address MariaDB listens on for --listen ('' = no TCP); '*' is every address."""
    hosts = [h.strip() for h in listen.split(",") if h.strip()]
    if not hosts:
        return None
    if len(hosts) > 1:
        raise UsageError(f"--listen {listen}: MariaDB listens on one address; give one "
                         "(or '*' for all)")
    return hosts[0]
