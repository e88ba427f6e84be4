"""hosts.toml: the hosts of a cluster, how to reach each, and what each offers.

```toml
[scheduler]                  # optional: where the scheduler listens on this machine
address = "127.0.0.1"        # default 127.0.0.1 (only this machine reaches it)
port = 8786                  # default 0: a free port

[[hosts]]
name = "h1"                  # the worker's name: what work is placed on
address = "127.0.0.1"        # the address its worker listens on; no [ssh]: started here
datastores = ["fast"]        # each a Dask resource datastore-<name>=1
devices = ["nvme0n1"]        # each a Dask resource device-<name>=1

[[hosts]]
name = "h2"
address = "10.0.0.2"
python = "/opt/oltplab/.venv/bin/python"  # default: the python that runs oltplab here
dir = "oltplab-worker"       # its folder there (under the SSH user's home when relative)
ssh = { user = "bench", key = "~/.ssh/oltplab", port = 22, known_hosts = "~/.ssh/known_hosts" }
```

``load_hosts`` reads and checks the whole file and raises one UsageError line that names the
file and the key; the result is a frozen ``ClusterSpec``.

A host's name here is its one identity: placement, records, timelines and the live endpoint's
``host`` label all use it. This machine has one too when a host's worker runs here (no
[ssh]): ``here`` gives it (the first such by name, for a cluster of "hosts" on one machine).
"""

from __future__ import annotations

import ipaddress
import re
import socket
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..config import read_toml
from ..errors import UsageError

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}")
HOSTNAME = re.compile(r"(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)"
                      r"(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*")
DEFAULT_SCHEDULER = "127.0.0.1"

TOP_KEYS = ("scheduler", "hosts")
SCHEDULER_KEYS = ("address", "port")
HOST_KEYS = ("name", "address", "datastores", "devices", "python", "dir", "ssh")
SSH_KEYS = ("address", "user", "key", "port", "known_hosts")


@dataclass(frozen=True)
class SshSpec:
    """How the coordinator reaches a host: ``ssh -i key -p port user@address``."""

    address: str
    user: str | None = None
    key: str | None = None  # absolute path of the private key on this machine
    port: int = 22
    known_hosts: str | None = None  # absolute path; None: ssh's own files

    @property
    def target(self) -> str:
        return f"{self.user}@{self.address}" if self.user else self.address


@dataclass(frozen=True)
class HostSpec:
    name: str
    address: str  # where its worker listens, and the scheduler connects to it
    datastores: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    python: str = sys.executable  # the interpreter that runs the worker there
    dir: str | None = None  # its folder there; None: the cluster's folder (local) or a default
    ssh: SshSpec | None = None

    @property
    def resources(self) -> dict[str, int]:
        """The Dask worker resources it offers: itself, its datastores, its devices."""
        return {f"host-{self.name}": 1, **{f"datastore-{d}": 1 for d in self.datastores},
                **{f"device-{d}": 1 for d in self.devices}}

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> HostSpec:
        ssh = SshSpec(**d["ssh"]) if d.get("ssh") else None
        return cls(**{**d, "datastores": tuple(d["datastores"]), "devices": tuple(d["devices"]),
                      "ssh": ssh})


@dataclass(frozen=True)
class ClusterSpec:
    path: Path
    scheduler_address: str = DEFAULT_SCHEDULER
    scheduler_port: int = 0
    hosts: tuple[HostSpec, ...] = ()

    def host(self, name: str) -> HostSpec:
        for h in self.hosts:
            if h.name == name:
                return h
        raise UsageError(f"no host named {name!r} in {self.path}")


def here(hosts) -> str | None:
    """This machine's name among ``hosts`` (HostSpecs): the host whose worker is started here
    (no [ssh]), the first by name where several are; None when each is reached over ssh."""
    return min((h.name for h in hosts if h.ssh is None), default=None)


# --------------------------------------------------------------------------- loading

def load_hosts(path: Path) -> ClusterSpec:
    """Read and check ``path``; raise one UsageError line naming the file and the key."""
    path = Path(path)
    doc = read_toml(path, "hosts")
    try:
        return parse_hosts(doc, path)
    except UsageError as e:
        raise UsageError(f"{path}: {e}") from None


def parse_hosts(doc: dict, path: Path) -> ClusterSpec:
    """The ClusterSpec of a parsed hosts file; relative key paths are the file's folder's."""
    _known(doc, TOP_KEYS, "")
    sched = doc.get("scheduler", {})
    if not isinstance(sched, dict):
        raise UsageError("scheduler: give a table ([scheduler])")
    _known(sched, SCHEDULER_KEYS, "scheduler.")
    address = _address(sched.get("address", DEFAULT_SCHEDULER), "scheduler.address")
    port = _port(sched.get("port", 0), "scheduler.port", zero=True)
    tables = doc.get("hosts")
    if not isinstance(tables, list) or not tables or not all(isinstance(t, dict) for t in tables):
        raise UsageError("name at least one host, each a [[hosts]] table")
    hosts: list[HostSpec] = []
    for i, table in enumerate(tables, 1):
        host = _host(table, f"hosts[{i}]", Path(path).parent)
        if any(h.name == host.name for h in hosts):
            raise UsageError(f"hosts[{i}].name: {host.name!r} names two hosts")
        hosts.append(host)
    owners: dict[str, str] = {}
    for h in hosts:
        for d in h.datastores:
            if d in owners:
                raise UsageError(f"datastore {d!r} is on {owners[d]} and {h.name}: a datastore "
                                 "belongs to one host")
            owners[d] = h.name
        if h.ssh is not None and _loopback(address) and not _loopback(h.ssh.address):
            raise UsageError(f"{h.name} is reached over ssh at {h.ssh.address}, but the "
                             f"scheduler listens on {address} only: set [scheduler] address "
                             f"to an address of this machine that {h.name} reaches")
    return ClusterSpec(Path(path), address, port, tuple(hosts))


def _host(table: dict, where: str, base: Path) -> HostSpec:
    _known(table, HOST_KEYS, f"{where}.")
    name = table.get("name")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise UsageError(f"{where}.name: give a name of letters, digits, '.', '_' or '-' "
                         f"(got {name!r})")
    where = f"hosts.{name}"
    if "address" not in table:
        raise UsageError(f"{where}.address: missing (the address its worker listens on)")
    address = _address(table["address"], f"{where}.address")
    lists = {k: _names(table.get(k, []), f"{where}.{k}") for k in ("datastores", "devices")}
    python = table.get("python", sys.executable)
    if not isinstance(python, str) or not python:
        raise UsageError(f"{where}.python: give the path of a python that has oltplab")
    folder = table.get("dir")
    if folder is not None and (not isinstance(folder, str) or not folder.strip()):
        raise UsageError(f"{where}.dir: give a folder")
    ssh = table.get("ssh")
    if ssh is None:
        if not _local(address):
            raise UsageError(f"{where}.address: {address} is not an address of this machine; "
                             "a host elsewhere needs an ssh table")
        if folder is not None:
            folder = str((base / Path(folder).expanduser()).resolve())
        return HostSpec(name, address, python=python, dir=folder, **lists)
    if not isinstance(ssh, dict):
        raise UsageError(f"{where}.ssh: give a table, such as {{ user = \"bench\" }}")
    return HostSpec(name, address, python=python, dir=folder, ssh=_ssh(ssh, address, where, base),
                    **lists)


def _ssh(table: dict, address: str, where: str, base: Path) -> SshSpec:
    _known(table, SSH_KEYS, f"{where}.ssh.")
    user = table.get("user")
    if user is not None and (not isinstance(user, str) or not USER.fullmatch(user)):
        raise UsageError(f"{where}.ssh.user: {user!r} is not a user name")
    paths = {}
    for key in ("key", "known_hosts"):
        value = table.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value:
            raise UsageError(f"{where}.ssh.{key}: give a path")
        p = (base / Path(value).expanduser()).resolve()
        if not p.is_file():
            raise UsageError(f"{where}.ssh.{key}: {value}: no such file")
        paths[key] = str(p)
    return SshSpec(_address(table.get("address", address), f"{where}.ssh.address"), user,
                   port=_port(table.get("port", 22), f"{where}.ssh.port"), **paths)


# --------------------------------------------------------------------------- checks

def _known(table: dict, keys: tuple[str, ...], prefix: str) -> None:
    for k in table:
        if k not in keys:
            raise UsageError(f"{prefix}{k}: unknown key (known: {', '.join(keys)})")


def _names(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and NAME.fullmatch(v)
                                              for v in value):
        raise UsageError(f"{where}: give a list of names, such as [\"fast\"]")
    if len(set(value)) != len(value):
        raise UsageError(f"{where}: a name given twice")
    return tuple(value)


def _port(value: Any, where: str, zero: bool = False) -> int:
    low = 0 if zero else 1
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= 65535:
        raise UsageError(f"{where}: give a port from {low} to 65535 (got {value!r})")
    return value


def _address(value: Any, where: str) -> str:
    """An IP address or a host name; never one that means every interface."""
    if not isinstance(value, str):
        raise UsageError(f"{where}: give an IP address or a host name (got {value!r})")
    try:
        ip = ipaddress.ip_address(value)
    except ValueError:
        if not HOSTNAME.fullmatch(value) or value.replace(".", "").isdigit():
            raise UsageError(f"{where}: {value!r} is not an IP address or a host name") from None
        return value
    if ip.is_unspecified or ip.is_multicast:
        raise UsageError(f"{where}: {value} is not one host's address (it would listen on every "
                         "interface); give the host's own address")
    return str(ip)


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return address == "localhost"


def _local(address: str) -> bool:
    """Whether a worker started on this machine can listen on ``address``."""
    if _loopback(address):
        return True
    import psutil
    mine = {a.address.split("%")[0] for addrs in psutil.net_if_addrs().values() for a in addrs}
    try:
        resolved = {i[4][0] for i in socket.getaddrinfo(address, None)}
    except OSError:
        return False
    return bool(resolved & mine)
