"""Typed, frozen specs built once at the edge (the CLI) and passed down unchanged.

Values are parsed and validated here; every error is a one-line ``UsageError``.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import UsageError

_SIZE_UNITS = {
    "": 1, "b": 1,
    "k": 1024, "kb": 1000, "kib": 1024,
    "m": 1024**2, "mb": 1000**2, "mib": 1024**2,
    "g": 1024**3, "gb": 1000**3, "gib": 1024**3,
    "t": 1024**4, "tb": 1000**4, "tib": 1024**4,
}
_DURATION_UNITS = {"": 1.0, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "ms": 0.001}


def read_toml(path: Path, kind: str) -> dict:
    """The document of the TOML file ``path`` (a ``kind`` file: "plan", "hosts"); a missing,
    unreadable or invalid file is one UsageError line."""
    import tomllib
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such {kind} file") from None
    except OSError as e:
        raise UsageError(f"{path}: cannot read it: {e.strerror}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{path}: not valid TOML: {e}") from None


def parse_size(text: str, what: str = "size") -> int:
    """'2GiB' -> 2147483648. Binary units for k/m/g/t and KiB.., decimal for kB/MB/GB/TB."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _SIZE_UNITS:
        raise UsageError(f"{what}: {text!r} is not a size (examples: 512MiB, 2GiB, 4G)")
    value = int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])
    if value <= 0:
        raise UsageError(f"{what}: {text!r} must be larger than zero")
    return value


def parse_duration(text: str, what: str = "duration", allow_zero: bool = True) -> float:
    """'30s', '2m', '1h', '90' (seconds) -> seconds as float. Negative values are refused."""
    s = str(text).strip()
    if s.startswith("-"):
        raise UsageError(f"{what}: {text!r} is negative; give a duration such as 30s or 2m")
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-zA-Z]*)", s)
    if not m or m.group(2).lower() not in _DURATION_UNITS:
        raise UsageError(f"{what}: {text!r} is not a duration (examples: 30s, 2m, 1h)")
    value = float(m.group(1)) * _DURATION_UNITS[m.group(2).lower()]
    if value == 0 and not allow_zero:
        raise UsageError(f"{what}: {text!r} must be longer than zero")
    return value


HOST_MEMORY_HEADROOM = 64 * 1024**2  # the server's processes beside shared_buffers


def parse_host_memory(text: str) -> int | None:
    """'256MiB' -> bytes; 'none' -> None (no memory control group)."""
    if str(text).strip().lower() == "none":
        return None
    return parse_size(text, "--host-memory")


def parse_users(text: str) -> tuple[int, ...]:
    """'1,2,4,8' -> (1, 2, 4, 8): HammerDB's autopilot user sequence."""
    parts = [p.strip() for p in str(text).split(",")]
    if any(p.lower().startswith("auto") for p in parts):
        raise UsageError(f"--users: {text!r}: auto stands alone (auto or auto:MAX), "
                         "without other user counts")
    users = []
    for p in parts:
        if not p.isdigit() or int(p) < 1:
            raise UsageError(f"--users: {p!r} in {text!r} is not a whole number of at least 1")
        users.append(int(p))
    return tuple(users)


AUTO_MAX_USERS = 64  # the bound of --users auto without :MAX
AUTO_MAX_LIMIT = 4096  # the largest MAX accepted (each user is a server connection)


def auto_users(max_users: int) -> tuple[int, ...]:
    """The steps ``auto:MAX`` may run: 1, 2, 4 ... up to MAX."""
    out, n = [], 1
    while n <= max_users:
        out.append(n)
        n *= 2
    return tuple(out)


def parse_user_option(text: str) -> dict:
    """--users as RunSpec fields: a sequence ('1,2,4') or 'auto[:MAX]' (the best user count:
    doubling until TPM stops growing, loadgen/sequence.py)."""
    s = str(text).strip()
    if s.lower() == "auto" or s.lower().startswith("auto:"):
        bound = s[5:].strip() if ":" in s else str(AUTO_MAX_USERS)
        if not bound.isdigit() or not 1 <= int(bound) <= AUTO_MAX_LIMIT:
            raise UsageError(f"--users: {text!r}: MAX in auto:MAX must be a whole number from 1 "
                             f"to {AUTO_MAX_LIMIT}")
        return {"users": auto_users(int(bound)), "users_auto": int(bound)}
    return {"users": parse_users(s), "users_auto": None}


def parse_setting(text: str) -> tuple[str, str]:
    """'-c name=value' as PostgreSQL's own command line takes it."""
    name, sep, value = str(text).partition("=")
    if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name.strip()):
        raise UsageError(f"-c: {text!r} is not name=value")
    return name.strip(), value.strip()


def format_size(n: int) -> str:
    for unit in ("TiB", "GiB", "MiB", "KiB"):
        div = _SIZE_UNITS[unit.lower()]
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return f"{n}B"


INJECT_KINDS = ("kill-server", "kill-backend", "throttle")
THROTTLE_LIMITS = ("read", "write", "read-iops", "write-iops")  # bytes/s, bytes/s, IO/s, IO/s


@dataclass(frozen=True)
class InjectEvent:
    """One fault injected during a run (``--inject``): at ``at_s`` seconds from the start of
    the measured window, ``kind``; a throttle lasts ``for_s`` seconds and limits ``limit``
    (read, write: bytes/s; read-iops, write-iops: IO/s) to ``value``."""

    kind: str
    at_s: float
    for_s: float | None = None
    limit: str | None = None
    value: int | None = None
    text: str = ""  # as the user wrote it
    arg: str | None = None  # remove-device's device, convert's profile


ACTIONS = ("kill-server", "kill-backend", "throttle=", "remove-device=", "replace-device=",
           "fail-device=", "convert=", "scrub")


def parse_inject(text: str) -> InjectEvent:
    """'at=60s,kill-server', 'at=30s,for=60s,throttle=write:10MiB/s',
    'at=30s,for=20s,throttle=read-iops:200' -> InjectEvent; UsageError naming the EVENT."""
    def bad(why: str) -> UsageError:
        return UsageError(f"--inject {text!r}: {why} (examples: at=60s,kill-server; "
                          "at=30s,for=60s,throttle=write:10MiB/s)")

    at = for_ = kind = limit = value = arg = None
    for item in (p.strip() for p in str(text).split(",")):
        key, sep, val = item.partition("=")
        key = key.strip().lower()
        if not sep and key in ("kill-server", "kill-backend", "scrub"):
            if kind is not None:
                raise bad("give one action")
            kind = key
        elif sep and key in ("at", "for"):
            if (at if key == "at" else for_) is not None:
                raise bad(f"{key}= is given twice")
            try:
                seconds = parse_duration(val, f"{key}=", allow_zero=key == "at")
            except UsageError as e:
                raise bad(str(e)) from None
            at, for_ = (seconds, for_) if key == "at" else (at, seconds)
        elif sep and key == "throttle":
            if kind is not None:
                raise bad("give one action")
            kind = "throttle"
            limit, _, amount = val.strip().lower().partition(":")
            if limit not in THROTTLE_LIMITS:
                raise bad(f"throttle {limit!r} is not one of {', '.join(THROTTLE_LIMITS)}")
            if limit.endswith("-iops"):
                if not amount.strip().isdigit() or int(amount) < 1:
                    raise bad(f"{limit} needs a whole number of IO/s of at least 1")
                value = int(amount)
            else:
                try:
                    value = parse_size(amount.strip().removesuffix("/s"), f"{limit} rate")
                except UsageError as e:
                    raise bad(str(e)) from None
        elif sep and key in ("remove-device", "replace-device", "fail-device", "convert"):
            if kind is not None:
                raise bad("give one action")
            kind, arg = key, val.strip()
            if not re.fullmatch(r"[\w/.:-]+", arg):
                what = "a device (1, 2 ... or its path)" if key != "convert" else \
                    "a btrfs profile (raid1, raid5 ...)"
                raise bad(f"{key}= needs {what}")
        else:
            raise bad(f"{item!r} is not at=, for=, {', '.join(ACTIONS)}")
    if kind is None:
        raise bad(f"give an action: {', '.join(ACTIONS)}")
    if at is None:
        raise bad("give at= (seconds from the start of the measured window)")
    if kind == "throttle" and not for_:
        raise bad("a throttle needs for= (how long the limit holds)")
    if kind not in ("throttle", "fail-device") and for_ is not None:
        raise bad(f"{kind} takes no for=")
    return InjectEvent(kind, at, for_, limit, value, str(text), arg)


IO_LATENCY = ("auto", "on", "off")


def io_latency_default() -> str:
    """--io-latency's default: OLTPLAB_IO_LATENCY where set (to one of IO_LATENCY), else auto."""
    value = os.environ.get("OLTPLAB_IO_LATENCY", "auto")
    return value if value in IO_LATENCY else "auto"


DEFAULT_DATA = Path("oltplab-data")  # the managed server's data directory: <this>/<engine>


@dataclass(frozen=True)
class DbSpec:
    """Where and how the database runs.

    With ``dsn`` set, oltplab targets an existing server and manages nothing. A managed server
    listens on a private unix socket; ``listen`` adds TCP, where a password is required.
    """

    datadir: Path = Path("oltplab-data/postgres")
    waldir: Path | None = None
    port: int = 5432
    db_memory: int = 1024**3  # bytes of shared_buffers
    pg_bin: Path | None = None
    settings: tuple[tuple[str, str], ...] = ()  # -c overrides, in order
    dsn: str | None = None
    dbname: str = "tpcc"
    listen: str = ""  # listen_addresses of the managed server; '' = unix socket only
    host_memory: int | None = None  # limit of the server's memory control group; None = none
    engine: str = "postgres"  # engines.ENGINES; with dsn, the engine its scheme names

    def __post_init__(self):
        from . import engines
        if engines.resolve(self.engine, self.dsn) != self.engine:
            raise UsageError(f"--engine {self.engine} does not match --dsn")
        if self.pg_bin is not None and self.engine != "postgres":
            raise UsageError(f"--pg-bin names PostgreSQL binaries; it does not go with "
                             f"--engine {self.engine}")
        if self.dsn and self.listen:
            raise UsageError("--listen configures a managed server; it does not go with --dsn")
        if self.dsn and self.host_memory is not None:
            raise UsageError("--host-memory limits a managed server; it does not go with --dsn")
        room = self.db_memory + HOST_MEMORY_HEADROOM
        if self.host_memory is not None and self.host_memory < room:
            raise UsageError(f"--host-memory {format_size(self.host_memory)} leaves no room "
                             f"beside --db-memory {format_size(self.db_memory)}: give at least "
                             f"{format_size(room)} or a smaller "
                             "--db-memory")
        if not re.fullmatch(r"[A-Za-z0-9.:*%\-]*(\s*,\s*[A-Za-z0-9.:*%\-]+)*", self.listen):
            raise UsageError(f"--listen: {self.listen!r} is not a list of addresses "
                             "(examples: 127.0.0.1, '*', 10.0.0.5,::1)")

    @classmethod
    def of(cls, engine: str | None = None, dsn: str | None = None, datadir=None,
           port: int | None = None, flag: str = "--", **values) -> "DbSpec":
        """The spec of a command or a plan's cell: the engine the DSN names or ``engine`` (else
        PostgreSQL), its data directory (``DEFAULT_DATA/<engine>``) and port by default.
        ``flag`` prefixes option names in messages."""
        from . import engines
        engine = engines.resolve(engine, dsn, flag=flag)
        return cls(engine=engine, dsn=dsn,
                   datadir=Path(datadir) if datadir is not None else DEFAULT_DATA / engine,
                   port=port if port is not None else engines.get(engine).default_port,
                   **values)

    @property
    def managed(self) -> bool:
        return self.dsn is None

    def with_(self, **changes) -> "DbSpec":
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class BuildSpec:
    warehouses: int
    build_users: int = field(default_factory=lambda: max(1, os.cpu_count() or 1))
    force: bool = False
    seed: int | None = None


MODES = ("procedures", "sql")


@dataclass(frozen=True)
class RunSpec:
    users: tuple[int, ...] = (1,)  # with users_auto: the steps the search may run
    users_auto: int | None = None  # --users auto:MAX; None for a fixed sequence
    rampup: float = 30.0  # seconds
    duration: float = 120.0  # seconds
    mode: str = "procedures"
    keying_thinking: bool = False
    all_warehouses: bool = False
    warehouses: int | None = None  # warehouses driven (1..N); None = every warehouse in the schema
    name: str = "tpcc"
    check: bool = False
    workers: int | None = None  # driver processes; None = one per core, at most one per user
    seed: int | None = None
    results_dir: Path = Path("results")
    sample_interval: float = 1.0  # telemetry sampling, seconds; 0 turns the sampler off
    power: str = "auto"  # power meter: auto | none | rapl[:DIR] | ipmi | redfish:URL | cmd:COMMAND
    # per-IO block-layer latency (telemetry/iolatency.py): auto | on | off
    io_latency: str = field(default_factory=io_latency_default)  # noqa: E731
    cold: bool = False  # drop the page cache before each step
    inject: tuple[InjectEvent, ...] = ()  # faults during the run (--inject)
    workload: str = "tpcc"  # whose transactions the users run (workloads/)
    params: Any = None  # the workload's own run parameters (the shop's DvdsParams); None: defaults

    def __post_init__(self):
        from .workloads import WORKLOADS
        if self.workload not in WORKLOADS:
            raise UsageError(f"workload {self.workload!r} is not one of {', '.join(WORKLOADS)}")
        if self.mode not in MODES:
            raise UsageError(f"--mode: {self.mode!r} is not one of {', '.join(MODES)}")
        if not self.users:
            raise UsageError("--users: give at least one user count")
        if self.users_auto is not None and self.users != auto_users(self.users_auto):
            raise UsageError(f"--users auto:{self.users_auto} runs "
                             f"{','.join(map(str, auto_users(self.users_auto)))} at most, "
                             f"not {','.join(map(str, self.users))}")
        if self.duration <= 0:
            raise UsageError("--duration must be longer than zero")
        if self.rampup < 0:
            raise UsageError("--rampup must not be negative")
        if not re.fullmatch(r"[A-Za-z0-9_.\-]{1,64}", self.name):
            raise UsageError(f"--name: {self.name!r} may hold letters, digits, '.', '_' "
                             "and '-' only")


@dataclass(frozen=True)
class LoadgenSpec:
    """--loadgen: the cluster's hosts that run the virtual users, and the cluster's folder."""

    hosts: tuple[str, ...]
    cluster_dir: Path


def loadgen_spec(hosts: tuple[str, ...] | None, cluster_dir: Path) -> LoadgenSpec | None:
    return LoadgenSpec(tuple(hosts), Path(cluster_dir)) if hosts else None


METRICS_LISTEN = "127.0.0.1"  # the live metrics endpoint: loopback unless told otherwise


@dataclass(frozen=True)
class MetricsSpec:
    """Where a command's live metrics endpoint listens (--metrics-port, --metrics-listen);
    telemetry/openmetrics.py serves it."""

    port: int
    listen: str = METRICS_LISTEN

    def __post_init__(self):
        if isinstance(self.port, bool) or not isinstance(self.port, int) \
                or not 0 <= self.port <= 65535:
            raise UsageError(f"--metrics-port: {self.port!r} is not a port (0..65535)")
        if not self.listen.strip():
            raise UsageError("--metrics-listen: give an address, such as 127.0.0.1")


def metrics_spec(port: int | None, listen: str | None = None) -> MetricsSpec | None:
    """The endpoint's spec from the two options; None without a port."""
    if port is None:
        if listen not in (None, METRICS_LISTEN):
            raise UsageError("--metrics-listen needs --metrics-port")
        return None
    return MetricsSpec(port, listen or METRICS_LISTEN)
