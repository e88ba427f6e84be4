"""A managed MariaDB server from Debian's packages: install, settings, start, stop, status.

``mariadb-install-db --no-defaults`` creates the data directory; ``--waldir`` places InnoDB's
redo log on another device (``innodb_log_group_home_dir``). Each start writes the options to
``oltplab.cnf`` in the data directory and runs ``mariadbd --defaults-file=<that file>``, so no
other option file is read and the file shows what the running server was given: derived from
--db-memory (settings.py), then the ``-c name=value`` overrides; ``innodb_page_size`` is the
data directory's own once it exists (pages.py).

Run as root, the server runs as the unprivileged ``oltplab`` OS user (engines/postgres/osuser.py,
shared), or as the owner of an existing data directory. Access rules are in access.py. Stop is
the SQL ``SHUTDOWN`` over the socket (Debian's client-core package has no mariadb-admin), then
SIGTERM, then SIGKILL, each given STOP_TIMEOUT_S.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import psutil

from ...config import DbSpec
from ...errors import DatabaseError, UsageError
from ..base import settings_to_change
from ..common.access import make_private_dir, tcp_in_use, write_owned
from ..common.osuser import (User, check_dir, current_user, ensure_system_user, grant_traverse,
                             pid_alive, user_of_uid)
from . import access, client
from .pages import checked_page_size
from .settings import derive_settings, option_line, read_settings

SETTINGS_FILE = "oltplab.cnf"
INIT_FILE = "oltplab-init.sql"
PID_FILE = "mariadbd.pid"
LOG_FILE = "server.log"
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 30.0
#: Where Debian installs them; /usr/sbin is not on an ordinary user's PATH.
BIN_DIRS = ("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin")
#: A table of the system database that mariadb-install-db creates.
_INITIALIZED_MARK = Path("mysql") / "global_priv.frm"

_MiB = 1024**2


def find_binary(name: str) -> str | None:
    """``name`` on PATH or in the directories Debian installs to."""
    found = shutil.which(name)
    if found:
        return found
    for d in BIN_DIRS:
        path = Path(d) / name
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def _is_mariadbd(pid: int) -> bool:
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0]
    except OSError:
        return pid_alive(pid)
    return os.path.basename(argv0.decode(errors="replace")) in ("mariadbd", "mysqld")


def _terminate(pid: int, first_wait: float) -> None:
    """Wait ``first_wait`` seconds for ``pid`` to end, then SIGTERM, then SIGKILL, each given
    STOP_TIMEOUT_S (a killed server recovers from its redo log at the next start)."""
    try:
        proc = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    for sig, wait in ((None, first_wait), (signal.SIGTERM, STOP_TIMEOUT_S),
                      (signal.SIGKILL, STOP_TIMEOUT_S)):
        try:
            if sig is not None:
                proc.send_signal(sig)
            proc.wait(wait)
            return
        except psutil.NoSuchProcess:
            return
        except psutil.TimeoutExpired:
            continue
        except psutil.AccessDenied as e:
            raise DatabaseError(f"cannot stop MariaDB (pid {pid}): permission denied; "
                                "run as the server's owner or root") from e
    raise DatabaseError(f"MariaDB (pid {pid}) did not stop")


def _children_running(args: list[str]) -> list[int]:
    """This process's children whose command line is ``args``."""
    found = []
    for child in psutil.Process().children():
        try:
            if child.cmdline() == args:
                found.append(child.pid)
        except psutil.Error:
            pass
    return found


class MariaDBInstance:
    """One MariaDB server in ``spec.datadir``, run by oltplab (see engines/base.py)."""

    def __init__(self, spec: DbSpec):
        if spec.host_memory is not None:
            raise UsageError("--host-memory is not supported with MariaDB yet")
        self.spec = spec
        self.datadir = Path(os.path.abspath(spec.datadir))
        self.waldir = Path(os.path.abspath(spec.waldir)) if spec.waldir else None
        self.log_path = self.datadir / LOG_FILE
        self.restarted: dict[str, list] = {}  # what start() restarted a running server for

    # ----- binaries and state on disk

    def _bin(self, name: str) -> str:
        path = find_binary(name)
        if path is None:
            raise UsageError(f"{name} is not installed: install Debian's mariadb-server-core "
                             "and mariadb-client-core (make install does)")
        return path

    def bin_version(self) -> str:
        """'10.11.19-MariaDB-0+deb12u1' from ``mariadbd --version``."""
        out = self._run(current_user(), [self._bin("mariadbd"), "--version"], 30)[1]
        words = out.split()
        return words[words.index("Ver") + 1] if "Ver" in words[:-1] else out.strip()

    def initialized(self) -> bool:
        return (self.datadir / _INITIALIZED_MARK).is_file()

    def _pid(self) -> int | None:
        try:
            text = (self.datadir / PID_FILE).read_text().strip()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except PermissionError as e:
            raise UsageError(f"--datadir {self.datadir}: cannot read {PID_FILE} ({e.strerror});"
                             " run as the server's owner or root") from e
        if not text.isdigit():
            return None
        pid = int(text)
        return pid if pid_alive(pid) and _is_mariadbd(pid) else None

    def is_running(self) -> bool:
        return self._pid() is not None

    def redo_location(self) -> Path:
        return self.waldir or self.datadir

    @property
    def socket_path(self) -> Path:
        return access.socket_dir(self.datadir) / access.SOCKET_FILE

    def _private_dir(self, user: User) -> Path:
        """The server's private folder (its socket and tmpdir), made for ``user``."""
        folder = self.socket_path.parent
        make_private_dir(folder, user.uid, user.gid)
        return folder

    @property
    def password_file(self) -> Path:
        return access.option_file(self.datadir)

    # ----- who runs the server

    def _server_user(self) -> User:
        if os.geteuid() != 0:
            return current_user()
        if self.datadir.is_dir():
            owner = self.datadir.stat().st_uid
            user = user_of_uid(owner) if owner != 0 else None
            if user is not None:
                return user
        return ensure_system_user()

    def _run(self, user: User, args: list[str], timeout: float) -> tuple[int, str]:
        env = {"LC_ALL": "C", "LANG": "C", "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "HOME": user.home if Path(user.home).is_dir() else "/"}
        try:
            res = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                 timeout=timeout, env=env, cwd="/", **user.popen_kwargs())
        except subprocess.TimeoutExpired:
            return -1, f"{os.path.basename(args[0])} did not finish within {timeout:.0f} s"
        except OSError as e:
            raise UsageError(f"cannot run {args[0]}: {e.strerror or e}") from e
        return res.returncode, res.stdout + res.stderr

    def _own(self, path: Path, user: User) -> None:
        if os.geteuid() == 0 and user.uid != 0:
            os.chown(path, user.uid, user.gid)

    def _write_owned(self, target: Path, text: str, user: User, mode: int) -> None:
        write_owned(target, text, mode, user.uid, user.gid)

    # ----- init

    def _check_inputs(self) -> None:
        check_dir(self.datadir, "--datadir")
        if not self.initialized() and any(self.datadir.iterdir()):
            raise UsageError(f"--datadir {self.datadir} is not empty and holds no MariaDB "
                             "server; give an empty or new directory")
        if self.waldir is None:
            return
        check_dir(self.waldir, "--waldir")
        if self.initialized() and not (self.waldir / "ib_logfile0").exists():
            raise UsageError(f"--waldir {self.waldir} holds no redo log of the server in "
                             f"{self.datadir}; moving the redo log is not supported")
        if not self.initialized() and any(self.waldir.iterdir()):
            raise UsageError(f"--waldir {self.waldir} is not empty; "
                             "give an empty or new directory")

    def _prepare_user(self, user: User) -> None:
        if os.geteuid() != 0 or user.uid == 0:
            return
        for d in (self.datadir, self.waldir, access.socket_dir(self.datadir)):
            if d is not None:
                grant_traverse(d.parent, user)

    def init(self) -> None:
        """mariadb-install-db into the data directory (and --waldir); a no-op when it already
        holds a server."""
        self._check_inputs()
        if self.initialized():
            return
        user = self._server_user()
        self._prepare_user(user)
        self._own(self.datadir, user)
        # the bootstrap's temporary tables in the server's private folder too: a server
        # starting with /tmp as its tmpdir deletes every #sql file there, and took those of
        # another install running beside it (1 install in 9 failed with three at once)
        args = [self._bin("mariadb-install-db"), "--no-defaults", f"--datadir={self.datadir}",
                "--auth-root-authentication-method=normal", "--skip-test-db",
                "--skip-name-resolve", f"--tmpdir={self._private_dir(user)}"]
        redo = self.settings()
        args.append(f"--innodb-log-file-size={redo['innodb_log_file_size']}")
        if "innodb_page_size" in redo:  # fixed from now on (pages.py)
            args.append(f"--innodb-page-size={redo['innodb_page_size']}")
        if self.waldir is not None:
            self._own(self.waldir, user)
            args.append(f"--innodb-log-group-home-dir={self.waldir}")
        code, out = self._run(user, args, timeout=600)
        if code != 0 or not self.initialized():
            lines = [ln for ln in out.splitlines() if ln.strip()]
            errors = [ln for ln in lines if "ERROR" in ln or "[ERROR]" in ln]
            why = (errors or lines or [f"exit {code}"])[0].strip()
            raise DatabaseError(f"mariadb-install-db of {self.datadir} failed: {why}")

    # ----- settings

    def settings(self, need_connections: int = 100) -> dict[str, str]:
        """Every option of oltplab.cnf: files and endpoint, derived settings, -c overrides."""
        derived = derive_settings(self.spec.db_memory, need_connections, self.spec.settings)
        page = checked_page_size(self.datadir, self.initialized(),
                                 derived.pop("innodb_page_size", None),
                                 (self._running_settings() or {}).get("innodb_page_size"))
        if page is not None:
            derived["innodb_page_size"] = page
        base = {"datadir": str(self.datadir), "socket": str(self.socket_path),
                "pid_file": str(self.datadir / PID_FILE), "log_error": str(self.log_path),
                "init_file": str(self.datadir / INIT_FILE), "skip_name_resolve": "ON",
                # temporary tables and sort files in the server's private folder beside its
                # data (its default, /tmp, is every user's, and another server's cleanup there
                # took a running query's files); -c tmpdir=... may move them
                "tmpdir": str(self.socket_path.parent)}
        bind = access.bind_address(self.spec.listen)
        if bind is None:
            base["skip_networking"] = "ON"
        else:
            base.update(bind_address=bind, port=str(self.spec.port))
        if self.waldir is not None:
            base["innodb_log_group_home_dir"] = str(self.waldir)
        fixed = set(base) - {"skip_name_resolve", "tmpdir"}
        changed = sorted(fixed & {k for k, _ in self.spec.settings})
        if changed:
            raise UsageError(f"-c {changed[0]}: set by oltplab from --datadir, --waldir, --port "
                             "and --listen")
        return {**base, **derived}

    def _running_settings(self) -> dict[str, str] | None:
        """The options the running server was started with (its oltplab.cnf)."""
        try:
            lines = (self.datadir / SETTINGS_FILE).read_text().splitlines()
        except OSError:
            return None
        found = {}
        for line in lines:
            key, sep, value = line.partition(" = ")
            if sep:
                found[key.strip().replace("-", "_")] = value.strip()
        return found

    # ----- start / stop

    def _check_port(self, settings: dict[str, str]) -> None:
        if "bind_address" not in settings:
            return
        port = self.spec.port
        if not 1 <= port <= 65535:
            raise UsageError(f"--port {port} is not a TCP port (1-65535)")
        host = tcp_in_use(port, settings["bind_address"])
        if host:
            raise UsageError(f"--port {port} is already in use on {host} by another program; "
                             "choose another --port")

    def start(self, need_connections: int = 100) -> None:
        """Start the server (installing first when needed) and wait until it answers on its
        socket. A server already running on this data directory is restarted when oltplab
        started it with other settings than the spec's (``restarted`` tells which), refused
        when oltplab did not start it, and else left as it is."""
        if self.is_running():
            self.restarted = settings_to_change(self._running_settings(),
                                                self.settings(need_connections),
                                                self.spec.settings, self.datadir)
            if self.restarted:
                self.stop()
        if self.is_running():
            self._check_connections_of_running(need_connections)
            return
        settings = self.settings(need_connections)  # bad --db-memory or -c fails first
        self._check_inputs()
        self._check_port(settings)
        total = psutil.virtual_memory().total
        if self.spec.db_memory > total:
            raise UsageError(f"--db-memory {self.spec.db_memory // _MiB}MiB is more than this "
                             f"host's memory ({total // _MiB}MiB)")
        self.init()
        user = self._server_user()
        self._prepare_user(user)
        self._private_dir(user)
        password = access.stored_password(self.password_file, user.uid)
        if password is None:
            password = access.new_password()
            self._write_owned(self.password_file, access.option_file_text(password), user, 0o600)
        self._write_owned(self.datadir / INIT_FILE, access.init_sql(password), user, 0o600)
        text = "\n".join(["# Written by oltplab at each start; edits are overwritten.",
                          "# Change these with --db-memory and -c name=value instead.",
                          "[mariadbd]", *(option_line(k, v) for k, v in settings.items()), ""])
        self._write_owned(self.datadir / SETTINGS_FILE, text, user, 0o644)
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        args = [self._bin("mariadbd"), f"--defaults-file={self.datadir / SETTINGS_FILE}"]
        proc = None
        try:
            try:
                with open(os.devnull, "rb") as null_in, open(os.devnull, "wb") as null_out:
                    proc = subprocess.Popen(args, stdin=null_in, stdout=null_out,
                                            stderr=null_out, cwd="/", start_new_session=True,
                                            **user.popen_kwargs())
            except OSError as e:
                raise UsageError(f"cannot run {args[0]}: {e.strerror or e}") from e
            deadline = time.monotonic() + START_TIMEOUT_S
            while proc.poll() is None and time.monotonic() < deadline:
                if self._answers():
                    return
                time.sleep(0.05)
        except BaseException:  # an error or Ctrl-C, maybe before its pid file exists, maybe
            # before Popen returned the server it had already started
            for pid in [proc.pid] if proc is not None else _children_running(args):
                _terminate(pid, first_wait=0.0)
            raise
        if proc.poll() is None:  # no answer in time: do not leave a half-started server
            _terminate(proc.pid, first_wait=0.0)
        raise DatabaseError(f"MariaDB in {self.datadir} failed to start: "
                            f"{self._log_since(offset) or 'no message'} (log: {self.log_path})")

    def _check_connections_of_running(self, need_connections: int) -> None:
        conn = client.connect(self.dsn(""))
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT @@max_connections")
                allowed = int(cur.fetchone()[0])
        except client.Error as e:
            raise DatabaseError(f"the server in {self.datadir} runs but does not answer: "
                                f"{client.error_text(e)}") from e
        finally:
            conn.close()
        if need_connections > allowed:
            raise DatabaseError(f"the server in {self.datadir} is already running and allows "
                                f"{allowed} connections, fewer than the {need_connections} "
                                "needed; stop it so that it restarts with more")

    def _answers(self) -> bool:
        if not self.socket_path.exists():
            return False
        try:
            client.connect(self.dsn(""), connect_timeout=2).close()
        except DatabaseError:
            return False
        return True

    def _log_since(self, offset: int) -> str | None:
        try:
            with self.log_path.open("rb") as f:
                f.seek(offset)
                lines = f.read().decode(errors="replace").splitlines()
        except OSError:
            return None
        errors = [ln.split("[ERROR]", 1)[1].strip() for ln in lines if "[ERROR]" in ln]
        return errors[0] if errors else (lines[-1].strip() if lines else None)

    def stop(self) -> None:
        """SHUTDOWN over the socket, then SIGTERM, then SIGKILL; a no-op when not running."""
        pid = self._pid()
        if pid is None:
            return
        try:
            conn = client.connect(self.dsn(""), connect_timeout=5)
            try:
                with conn.cursor() as cur:
                    cur.execute("SHUTDOWN")
            finally:
                conn.close()
        except Exception:  # noqa: BLE001 - the signals below stop it all the same
            pass
        _terminate(pid, first_wait=STOP_TIMEOUT_S)

    # ----- endpoints and status

    def _listen(self) -> tuple[str | None, int]:
        """(bind address or None, port): the running server's, else the spec's."""
        running = self._running_settings() if self.is_running() else None
        if running is not None:
            return running.get("bind_address"), int(running.get("port", self.spec.port))
        return access.bind_address(self.spec.listen), self.spec.port

    def dsn(self, dbname: str | None = None) -> str:
        """The DSN of ``dbname`` (default spec.dbname; '' for none) through the socket."""
        return client.socket_dsn(str(self.socket_path),
                                 self.spec.dbname if dbname is None else dbname)

    def tcp_dsn(self, dbname: str | None = None) -> str | None:
        """The TCP DSN naming the password file, or None when the server does not listen."""
        bind, port = self._listen()
        if bind is None:
            return None
        host = {"*": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(bind, bind)
        return client.tcp_dsn(host, port, self.spec.dbname if dbname is None else dbname,
                              str(self.password_file), access.TCP_USER)

    def remote_dsn(self, dbname: str | None = None) -> str | None:
        """The TCP DSN with the password in it, for other hosts, which lack the option file
        (``--loadgen``'s worker processes get it over the cluster's TLS, never on a command
        line or in a record); None when the server does not listen on TCP."""
        from urllib.parse import quote
        tcp = self.tcp_dsn(dbname)
        if tcp is None:
            return None
        password = access.stored_password(self.password_file, self._server_user().uid)
        if password is None:
            raise DatabaseError(f"the password file {self.password_file} holds no password")
        head, _, rest = tcp.partition("@")
        return f"{head}:{quote(password, safe='')}@{rest.split('?', 1)[0]}"

    def status(self) -> dict:
        pid = self._pid() if self.datadir.is_dir() else None
        bind, port = self._listen()
        try:
            version = self.bin_version()
        except UsageError:
            version = None
        return {"running": pid is not None, "pid": pid, "port": port if bind else None,
                "datadir": str(self.datadir), "waldir": str(self.redo_location()),
                "initialized": self.initialized(), "version": version,
                "socket_dir": str(self.socket_path.parent), "listen": bind or "",
                "dsn": self.dsn(), "tcp_dsn": self.tcp_dsn(), "log": str(self.log_path)}

    def ensure_database(self, name: str) -> bool:
        """Create database ``name`` (latin1, as HammerDB's) when missing; True when created."""
        ident = "`" + name.replace("`", "``") + "`"
        conn = client.connect(self.dsn(""))
        try:
            with conn.cursor() as cur:
                if cur.execute("SELECT 1 FROM information_schema.schemata"
                               " WHERE schema_name = %s", (name,)):
                    return False
                cur.execute(f"CREATE DATABASE IF NOT EXISTS {ident} CHARACTER SET latin1"
                            " COLLATE latin1_bin")
                return True
        except client.pymysql.MySQLError as e:
            raise DatabaseError(f"cannot create database {name!r}: {client.error_text(e)}") from e
        finally:
            conn.close()

    def settings_for_record(self) -> dict:
        """Options not at their defaults (and the always-recorded ones), and the version."""
        if not self.is_running():
            raise DatabaseError(f"MariaDB in {self.datadir} is not running")
        conn = client.connect(self.dsn(""))
        try:
            return read_settings(conn)
        except client.pymysql.MySQLError as e:
            raise DatabaseError(f"cannot read server settings: {client.error_text(e)}") from e
        finally:
            conn.close()
