"""Connecting to MariaDB (PyMySQL), the DSN format, and what a failure means.

A MariaDB DSN is a URI, parsed here and nowhere else:

- ``mariadb://root@localhost/tpcc?unix_socket=/path/mysqld.sock`` through a socket;
- ``mariadb://oltplab@127.0.0.1:3306/tpcc?option_file=/path/data.my.cnf`` over TCP, the
  password read from the ``[client]`` group of the option file (never part of the DSN).

Every session turns ``innodb_snapshot_isolation`` off when the server has it (10.6.18,
10.11.8, 11.4.2 and later), as HammerDB does: with it on, a transaction that read a row a
concurrent one then changed fails with "Record has changed since last read" (error 1020).
Sessions refuse LOAD DATA LOCAL, with which a server may ask for any file of ours; only the
loader's sessions (``local_infile=True``) send the rows it generates that way.
"""

from __future__ import annotations

from urllib.parse import parse_qs, quote, unquote, urlsplit

import pymysql
import pymysql.constants.CLIENT

from ...errors import DatabaseError, UsageError
from ..base import Failure

CONNECT_TIMEOUT_S = 10

#: The client's base exception; dialect modules catch this instead of importing the client.
Error = pymysql.MySQLError

# Server errors a driver retries: the transaction was rolled back (or must be) and the same
# inputs may succeed. 1213 deadlock, 1205 lock wait timeout, 1020 record changed since read
# (snapshot isolation), 1180 and 1637 a commit or too many active transactions.
RETRYABLE_ERRORS = frozenset({1213, 1205, 1020, 1180, 1637})
# Client-side errors of a lost session: 2006 server gone, 2013 lost during query.
CONNECTION_ERRORS = frozenset({2002, 2003, 2006, 2013, 2055})


def socket_dsn(socket_path: str, dbname: str, user: str = "root") -> str:
    return (f"mariadb://{quote(user, safe='')}@localhost/{quote(dbname, safe='')}"
            f"?unix_socket={quote(socket_path, safe='/')}")


def tcp_dsn(host: str, port: int, dbname: str, option_file: str, user: str) -> str:
    host = f"[{host}]" if ":" in host else host
    return (f"mariadb://{quote(user, safe='')}@{host}:{port}/{quote(dbname, safe='')}"
            f"?option_file={quote(option_file, safe='/')}")


def connect_args(dsn: str) -> dict:
    """PyMySQL's keyword arguments for ``dsn``; UsageError for anything else."""
    parts = urlsplit(dsn)
    if parts.scheme not in ("mariadb", "mysql"):
        raise UsageError(f"{dsn!r} is not a MariaDB DSN (mariadb://user@host[:port]/db?...)")
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    unknown = set(query) - {"unix_socket", "option_file"}
    if unknown:
        raise UsageError(f"MariaDB DSN: unknown parameter(s) {', '.join(sorted(unknown))}")
    args = {"user": unquote(parts.username or "root"),
            "database": unquote(parts.path.lstrip("/")) or None,
            "connect_timeout": CONNECT_TIMEOUT_S, "autocommit": True,
            "charset": "utf8mb4",
            "client_flag": pymysql.constants.CLIENT.MULTI_STATEMENTS}
    if parts.password:
        args["password"] = unquote(parts.password)
    if "unix_socket" in query:
        args["unix_socket"] = query["unix_socket"]
    else:
        args["host"] = parts.hostname or "127.0.0.1"
        args["port"] = parts.port or 3306
    if "option_file" in query:
        args["read_default_file"] = query["option_file"]
    return args


def connect(dsn: str, **overrides) -> pymysql.connections.Connection:
    """A session on ``dsn`` (autocommit, utf8mb4, snapshot isolation off when it exists)."""
    args = {**connect_args(dsn), **overrides}
    try:
        conn = pymysql.connect(**args)
    except pymysql.MySQLError as e:
        raise DatabaseError(f"cannot connect to MariaDB: {error_text(e)}") from e
    try:
        with conn.cursor() as cur:
            if cur.execute("SHOW VARIABLES LIKE 'innodb\\_snapshot\\_isolation'"):
                cur.execute("SET SESSION innodb_snapshot_isolation = OFF")
    except pymysql.MySQLError as e:
        conn.close()
        raise DatabaseError(f"cannot set up a MariaDB session: {error_text(e)}") from e
    return conn


def error_text(exc: BaseException) -> str:
    """'message (code)' for a PyMySQL error, else the exception's text."""
    args = getattr(exc, "args", ())
    if len(args) == 2 and isinstance(args[0], int):
        return f"{args[1]} ({args[0]})"
    return str(exc) or type(exc).__name__


def error_code(exc: BaseException) -> int | None:
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


def classify(exc: BaseException) -> Failure:
    """What a driver does with ``exc`` raised by a MariaDB session."""
    code = error_code(exc)
    if code in RETRYABLE_ERRORS:
        return Failure.RETRYABLE
    if code in CONNECTION_ERRORS or isinstance(exc, (ConnectionError, BrokenPipeError)):
        return Failure.CONNECTION
    if isinstance(exc, pymysql.err.InterfaceError):
        return Failure.CONNECTION
    return Failure.FATAL
