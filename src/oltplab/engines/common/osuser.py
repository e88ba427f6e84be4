"""The OS side of a managed server: the user it runs as, its directories, its processes.

PostgreSQL refuses to run as root; when oltplab runs as root the server runs as an unprivileged
system user (``oltplab``, created when missing), or as the owner of an existing cluster.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ...errors import DatabaseError, UsageError

SYSTEM_USER = "oltplab"


@dataclass(frozen=True)
class User:
    """An OS user; ``popen_kwargs`` runs a child as it (when we are root)."""

    name: str
    uid: int
    gid: int
    home: str

    def popen_kwargs(self) -> dict:
        if os.geteuid() != 0 or self.uid == 0:
            return {}
        return {"user": self.uid, "group": self.gid, "extra_groups": []}


def current_user() -> User:
    uid = os.geteuid()
    try:
        pw = pwd.getpwuid(uid)
        return User(pw.pw_name, uid, pw.pw_gid, pw.pw_dir)
    except KeyError:
        return User(str(uid), uid, os.getegid(), "/")


def ensure_system_user(name: str = SYSTEM_USER) -> User:
    """The unprivileged system user that runs the server when we are root."""
    try:
        pw = pwd.getpwnam(name)
    except KeyError:
        useradd = shutil.which("useradd") or "/usr/sbin/useradd"
        shell = "/usr/sbin/nologin" if Path("/usr/sbin/nologin").exists() else "/bin/false"
        cmd = [useradd, "--system", "--user-group", "--no-create-home",
               "--home-dir", "/nonexistent", "--shell", shell, name]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        except OSError as e:
            raise DatabaseError(f"cannot create system user {name!r} to run PostgreSQL: "
                                f"{e}") from e
        try:
            pw = pwd.getpwnam(name)
        except KeyError:
            why = (res.stderr or res.stdout).strip().splitlines()
            raise DatabaseError(f"cannot create system user {name!r} to run PostgreSQL: "
                                f"{why[-1] if why else 'useradd failed'}") from None
    return User(pw.pw_name, pw.pw_uid, pw.pw_gid, pw.pw_dir)


def user_of_uid(uid: int) -> User | None:
    try:
        pw = pwd.getpwuid(uid)
    except KeyError:
        return None
    return User(pw.pw_name, pw.pw_uid, pw.pw_gid, pw.pw_dir)


def grant_traverse(path: Path, user: User) -> None:
    """Add o+x to the directories on the way to ``path`` that ``user`` cannot traverse."""
    if os.geteuid() != 0 or user.uid == 0:
        return
    path = Path(os.path.abspath(path))
    for d in [*reversed(path.parents), path]:
        try:
            st = d.stat()
        except OSError:
            return
        if not stat.S_ISDIR(st.st_mode):
            return
        if st.st_uid == user.uid:
            ok = st.st_mode & stat.S_IXUSR
        elif st.st_gid == user.gid:
            ok = st.st_mode & stat.S_IXGRP
        else:
            ok = st.st_mode & stat.S_IXOTH
        if not ok:
            try:
                os.chmod(d, stat.S_IMODE(st.st_mode) | stat.S_IXOTH)
            except OSError as e:
                raise UsageError(f"cannot let user {user.name!r} reach {path}: "
                                 f"chmod o+x {d} failed ({e.strerror})") from e


def check_dir(path: Path, flag: str) -> None:
    """The directory exists (created if needed), is a directory, and we can write to it."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {path} is a file, not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"{flag} {path}: cannot create it ({e.strerror or e})") from e
    probe = path / f".oltplab-write-test-{os.getpid()}"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise UsageError(f"{flag} {path} is not writable ({e.strerror or e})") from e


def pid_alive(pid: int) -> bool:
    """True for a live process; zombies (not yet reaped by their parent) count as dead."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return state not in (b"Z", b"X")


def is_postgres(pid: int) -> bool:
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0]
    except OSError:
        return pid_alive(pid)
    return os.path.basename(argv0.decode(errors="replace")).startswith("postgres")
