"""The options of the commands that set up a database, a build, a run, a backup, a
neighbours run or a cluster, each described once, in one table per command (fio's habit).

A row (``Option``, the one row type; fio's table in fio/spec.py has rows of it too) says
everything about one option: its flags, its help, its default, how the command line reads it
(``type``, ``choices``, ``is_flag``, ``multiple`` ...) and how its text becomes the spec value
(``parse``), and - when plans take it - the TOML types a plan may give (``toml``) and how such
a value becomes the spec value (``convert``). cli/ makes the click options of a command from
its tables, plans/keys.py the keys a plan may set. A row without flags is a plan key only
(``target``, a backup step's ``restore``); a row without ``toml`` is for the command line only
(``--name``, ``--results-dir``, ``--force``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .cluster.state import DEFAULT_DIR as DEFAULT_CLUSTER
from .config import (DEFAULT_DATA, IO_LATENCY, METRICS_LISTEN, MODES, io_latency_default,
                     parse_duration, parse_host_memory, parse_inject, parse_setting,
                     parse_size, parse_user_option, parse_users)
from .datastores.spec import CHECKSUMS, FILESYSTEMS, PROFILES
from .datastores.spec import DEFAULT_ROOT as DEFAULT_DATASTORES
from .engines import ENGINES
from .engines.common.backup import COMPRESSIONS, METHODS
from .errors import UsageError

DEFAULT_RESULTS = Path("results")  # where runs are saved unless --results-dir says
NUM = (int, float, str)  # a duration: seconds, or a text such as "30s"


@dataclass(frozen=True)
class Option:
    """One option: on the command line (``flags``), in a plan (``toml``), or both.

    ``name`` is the click parameter, the spec field and the plan key. ``part`` is the spec it
    goes into: "db", "build", "run", "backup", "neighbours", "quickstart", "fio", or "plan"
    (the plan's own). ``parse(value, flag)`` makes the spec value of what click read (each
    item of a repeatable option); ``convert(value, where)`` that of a plan's TOML value (by
    default the value as given, checked against ``choices``). Errors are ``UsageError``s naming
    the flag or the plan's key."""

    name: str
    part: str
    help: str | None = None
    flags: tuple[str, ...] = ()
    type: type = str  # what click reads: str, int or Path
    range: tuple[int, int] | None = None  # an int's bounds, checked by click
    choices: tuple[str, ...] = ()
    metavar: str | None = None
    default: Any = None
    show_default: bool = False
    required: bool = False
    is_flag: bool = False
    multiple: bool = False
    envvar: str | None = None
    parse: Callable[[Any, str], Any] | None = None
    toml: tuple[type, ...] = ()  # the TOML types a plan may give; () : the command line only
    convert: Callable[[Any, str], Any] | None = None
    flag_value: str | None = None  # what the flag alone gives (fio's --steady-state)
    explicit: bool = False  # None when not given, whatever the default (fio's table)

    @property
    def flag(self) -> str:
        """The flag that names the option in messages: its long one, else its only one."""
        return next((f for f in self.flags if f.startswith("--")), self.flags[0])

    def from_text(self, value: Any) -> Any:
        """The spec value of what the command line gave (None when it gave nothing)."""
        if value is None or self.parse is None:
            return value
        if self.multiple:
            return tuple(self.parse(v, self.flag) for v in value)
        return self.parse(value, self.flag)

    def from_toml(self, value: Any, where: str) -> Any:
        """The spec value of a plan's value (its TOML type already checked)."""
        if self.convert is not None:
            return self.convert(value, where)
        if self.choices and value not in self.choices:
            raise UsageError(f"{where}: {value!r} is not one of {', '.join(self.choices)}")
        return value


def rows(*tables: tuple[Option, ...], plans: bool = False) -> dict[str, Option]:
    """The rows of ``tables`` by name (the first of a name wins); with ``plans``, only those a
    plan may set."""
    out: dict[str, Option] = {}
    for table in tables:
        for o in table:
            if not plans or o.toml:
                out.setdefault(o.name, o)
    return out


# --------------------------------------------------------------------------- converters

def a_path(value, what):
    return Path(value)


def a_size(value, what):
    return parse_size(str(value), what)


def a_duration(value, what):
    return parse_duration(str(value), what)


def host_memory(value, what):
    """A size, or 'none' (no limit)."""
    try:
        return parse_host_memory(str(value))
    except UsageError as e:
        raise UsageError(f"{what}: {str(e).removeprefix('--host-memory: ')}") from None


def user_counts(value, what):
    """RunSpec's user fields: a list, a number, "1,2,4" or "auto[:MAX]"."""
    if isinstance(value, list):
        if not value or not all(isinstance(u, int) and not isinstance(u, bool) for u in value):
            raise UsageError(f"{what}: give a list of whole numbers, such as [1, 2, 4]")
        value = ",".join(str(u) for u in value)
    try:
        return parse_user_option(str(value))
    except UsageError as e:
        raise UsageError(f"{what}: {str(e).removeprefix('--users: ')}") from None


def positive(value, what):
    if value < 1:
        raise UsageError(f"{what}: must be at least 1 (got {value})")
    return value


def at_least_one(value, flag):
    if value < 1:
        raise UsageError(f"{flag} must be at least 1 (got {value})")
    return value


def a_dvds_size(value, what):
    from .workloads.dvds.sizes import parse_size
    try:
        return parse_size(str(value))
    except UsageError as e:
        raise UsageError(f"{what}: {e}") from None


def a_setting(text, flag):
    return parse_setting(text)


def settings_table(value, what):
    """A plan's ``settings``: a table of names and strings, numbers or booleans."""
    out = []
    for name, v in value.items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name):
            raise UsageError(f"{what}: {name!r} is not a setting name")
        if isinstance(v, (dict, list)):
            raise UsageError(f"{what}.{name}: give a string, number or boolean")
        out.append((name, ("on" if v else "off") if isinstance(v, bool) else str(v)))
    return tuple(out)


def an_event(text, flag):
    return parse_inject(text)


def events(value, what):
    """A list of EVENT strings (or one), as tpcc run --inject takes them."""
    items = [value] if isinstance(value, str) else value
    if not all(isinstance(v, str) for v in items):
        raise UsageError(f"{what}: give a list of events, such as [\"at=20s,kill-server\"]")
    try:
        return tuple(parse_inject(v) for v in items)
    except UsageError as e:
        raise UsageError(f"{what}: {e}") from None


def one_user_count(value, what):
    """A neighbours run's users: one count (``[n]`` and ``"n"`` as well)."""
    users = user_counts(value, what)
    if users.get("users_auto") or len(users["users"]) != 1:
        raise UsageError(f"{what}: a neighbours step runs one user count per workload instance; "
                         "give one whole number")
    return users["users"][0]


def a_sequence(text, flag):
    return parse_users(text)


# --------------------------------------------------------------------------- the tables

def _duration(name: str, part: str, default: str, help: str | None, toml: bool = True) -> Option:
    return Option(name, part, help, (f"--{name.replace('_', '-')}",), default=default,
                  show_default=True, parse=a_duration, toml=NUM if toml else (),
                  convert=a_duration if toml else None)


def _name(part: str, default: str) -> Option:
    return Option("name", part, "Label of the run.", ("--name",), default=default,
                  show_default=True)


def _results_dir(part: str) -> Option:
    return Option("results_dir", part, None, ("--results-dir",), type=Path,
                  default=DEFAULT_RESULTS, show_default=True)


PG_BIN = "PostgreSQL binaries to use instead of the embedded ones."
MODE = "Server-side functions, or client-side SQL."

# where the database lives, or --dsn for an existing server (then nothing is managed)
DB: tuple[Option, ...] = (
    Option("engine", "db", "Database engine [default: postgres, or what --dsn names].",
           ("--engine",), choices=ENGINES, toml=(str,)),
    Option("datadir", "db", "Data directory of the managed server: the datastore under test "
           f"[default: {DEFAULT_DATA}/ENGINE].", ("--datadir",), type=Path, toml=(str,),
           convert=a_path),
    Option("waldir", "db", "Put the WAL (MariaDB: the redo log) on another path.", ("--waldir",),
           type=Path, toml=(str,), convert=a_path),
    Option("port", "db", "Port of the managed server (names PostgreSQL's unix socket; TCP with "
           "--listen) [default: 5432, MariaDB 3306].", ("--port",), type=int,
           range=(1, 65535), toml=(int,)),
    Option("listen", "db", "Also accept TCP on these addresses (listen_addresses, e.g. "
           "127.0.0.1 or '*'); TCP clients need the password in <datadir>.pgpass.",
           ("--listen",), metavar="ADDRESSES", default="", toml=(str,)),
    Option("db_memory", "db", "shared_buffers and derived settings: the DRAM knob.",
           ("--db-memory",), default="1GiB", show_default=True, parse=a_size,
           toml=(int, str), convert=a_size),
    Option("host_memory", "db", "Run the managed server in a memory control group with this "
           "limit, page cache included: the host's DRAM.", ("--host-memory",),
           metavar="SIZE|none", default="none", show_default=True, parse=host_memory,
           toml=(int, str), convert=host_memory),
    Option("pg_bin", "db", PG_BIN, ("--pg-bin",), type=Path, toml=(str,), convert=a_path),
    Option("settings", "db", "A server setting override (repeatable), as postgres -c takes it.",
           ("-c",), metavar="NAME=VALUE", multiple=True, parse=a_setting, toml=(dict,),
           convert=settings_table),
    Option("dsn", "db", "Use this existing server instead of a managed one: postgresql://... "
           "or mariadb://... (the engine follows the scheme).", ("--dsn",),
           envvar="OLTPLAB_DSN", toml=(str,)),
    Option("dbname", "db", "Database that holds the schema.", ("--dbname",), default="tpcc",
           show_default=True, toml=(str,)),
)

# tpcc build
BUILD: tuple[Option, ...] = (
    Option("warehouses", "build", "Number of warehouses (scale).", ("--warehouses", "-w"),
           type=int, required=True, parse=at_least_one, toml=(int,), convert=positive),
    Option("build_users", "build", "Parallel loaders [default: CPU count].", ("--build-users",),
           type=int, parse=at_least_one, toml=(int,), convert=positive),
    Option("force", "build", "Drop and rebuild an existing schema.", ("--force",), is_flag=True),
    Option("seed", "build", "Seed for reproducible data.", ("--seed",), type=int),
)

# --inject: each fault kind of the registry (faults/__init__.py) as an event names it, in one
# text for every command that runs a workload
INJECT_FORMS = (
    ("kill-server", "kill-server"), ("kill-backend", "kill-backend"),
    ("throttle", "for=TIME,throttle=LIMIT:RATE (LIMIT read or write in bytes/s, read-iops or "
     "write-iops in IO/s)"),
    ("remove-device", "remove-device=N"), ("replace-device", "replace-device=N (onto the first "
                                          "spare)"),
    ("fail-device", "fail-device=N (for=TIME optional)"), ("convert", "convert=PROFILE"),
    ("scrub", "scrub"))
INJECT_HELP = ("A fault during the run (repeatable): at=TIME, from the start of the measured "
               "window, then one of " + "; ".join(form for _, form in INJECT_FORMS) + ". The "
               "device faults, convert and scrub act on the btrfs datastore under the data "
               "directory (N: its Nth device, or the device's path). E.g. at=60s,kill-server; "
               "at=30s,for=60s,throttle=write:10MiB/s; at=20s,remove-device=1.")

# tpcc run (the telemetry rows follow)
RUN: tuple[Option, ...] = (
    Option("users", "run", "User sequence, e.g. 1,2,4,8: one step per user count; or "
           "auto[:MAX]: 1, 2, 4 ... until the workload database's transactions per minute "
           "(TPM) grow less than 5% (MAX default 64); the best count is named with the "
           "workload's own figure (NOPM, the shop's OPM).",
           ("--users", "-u"), default="1", show_default=True, parse=user_counts,
           toml=(int, str, list), convert=user_counts),
    _duration("rampup", "run", "30s", "Ramp-up per step (not measured)."),
    _duration("duration", "run", "2m", "Measured time per step."),
    Option("mode", "run", MODE, ("--mode",), choices=MODES, default="procedures",
           show_default=True, toml=(str,)),
    Option("keying_thinking", "run", "Spec keying and think times.", ("--keying-thinking",),
           is_flag=True, toml=(bool,)),
    Option("all_warehouses", "run", "Spread each user over all warehouses.",
           ("--all-warehouses",), is_flag=True, toml=(bool,)),
    Option("warehouses", "run", "Drive warehouses 1..N [default: all in the schema].",
           ("--warehouses", "-w"), type=int, parse=at_least_one),
    Option("workers", "run", "Driver processes [default: one per CPU, half of them with a "
           "local server; a local MariaDB's users one each while they fit the CPUs].",
           ("--workers",),
           type=int, parse=at_least_one, toml=(int,), convert=positive),
    Option("seed", "run", "Seed for the drivers' random inputs.", ("--seed",), type=int,
           toml=(int,)),
    _name("run", "tpcc"),
    Option("check", "run", "Run the consistency checks after the last step.", ("--check",),
           is_flag=True, toml=(bool,)),
    Option("cold", "run", "Drop the page cache before each step (root only).", ("--cold",),
           is_flag=True, toml=(bool,)),
    Option("inject", "run", INJECT_HELP, ("--inject",), metavar="EVENT", multiple=True,
           parse=an_event, toml=(list, str), convert=events),
    _results_dir("run"),
)

# dvds: the DVD-Store-derived shop's database (its own database beside tpcc's)
DVDS_DB: tuple[Option, ...] = tuple(
    Option(**{**o.__dict__, "default": "dvds"}) if o.name == "dbname" else o for o in DB)


def a_percentage(value, what):
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"{what}: {value!r} is not a number") from None
    if not 0 <= x <= 100:
        raise UsageError(f"{what}: {x:g} is not within 0..100")
    return x


# dvds build
DVDS_BUILD: tuple[Option, ...] = (
    Option("size", "dvds_build", "Database size: n MB or n GB, e.g. 10MB, 1GB, 20GB, 100GB (the "
           "shop's rows scale with it).", ("--size",), required=True, parse=a_dvds_size,
           toml=(str,), convert=a_dvds_size),
    Option("build_users", "dvds_build", "Parallel loaders [default: CPU count].",
           ("--build-users",), type=int, parse=at_least_one, toml=(int,), convert=positive),
    Option("force", "dvds_build", "Drop and rebuild an existing schema.", ("--force",),
           is_flag=True),
    Option("seed", "dvds_build", "Seed for reproducible data.", ("--seed",), type=int),
    Option("ds3", "dvds_build", "Build DVD Store 3's parts too: MEMBERSHIP, REVIEWS, "
           "REVIEWS_HELPFULNESS and PRODUCTS' membership_item.", ("--ds3",), is_flag=True),
)

# dvds run: the shop driver's parameters (the telemetry rows follow)
DVDS_RUN: tuple[Option, ...] = (
    *(o for o in RUN if o.name in ("users", "rampup", "duration", "mode")),
    _duration("think_time", "dvds_run", "0s", "Think time after each order: uniform 0..2x "
              "(0: none)."),
    Option("pct_new_customers", "dvds_run", "Percent of orders begun by a new customer.",
           ("--pct-new-customers",), default="20", show_default=True, parse=a_percentage,
           toml=(int, float), convert=a_percentage),
    Option("searches", "dvds_run", "Mean browses per order (uniform 1..2n-1).", ("--searches",),
           type=int, default=3, show_default=True, parse=at_least_one, toml=(int,),
           convert=positive),
    Option("search_batch", "dvds_run", "Mean rows per browse (uniform 1..2n-1).",
           ("--search-batch",), type=int, default=5, show_default=True, parse=at_least_one,
           toml=(int,), convert=positive),
    Option("line_items", "dvds_run", "Mean items per cart (uniform 1..2n-1, at most 10).",
           ("--line-items",), type=int, default=5, show_default=True, parse=at_least_one,
           toml=(int,), convert=positive),
    Option("ds3", "dvds_run", "Add DVD Store 3's steps to each order (review searches, new "
           "reviews, helpfulness ratings, memberships): needs a DS3 build, on which a run "
           "adds them anyway.", ("--ds3",), is_flag=True),
    Option("pct_new_members", "dvds_run", "DS3: percent of orders whose customer becomes a "
           "member.", ("--pct-new-members",), default="1", show_default=True,
           parse=a_percentage, toml=(int, float), convert=a_percentage),
    Option("reviews", "dvds_run", "DS3: mean review searches per order (uniform 1..2n-1).",
           ("--reviews",), type=int, default=3, show_default=True, parse=at_least_one,
           toml=(int,), convert=positive),
    Option("pct_new_reviews", "dvds_run", "DS3: percent of orders that write a review.",
           ("--pct-new-reviews",), default="5", show_default=True, parse=a_percentage,
           toml=(int, float), convert=a_percentage),
    Option("pct_new_helpfulness", "dvds_run", "DS3: percent of orders that rate a review's "
           "helpfulness.", ("--pct-new-helpfulness",), default="10", show_default=True,
           parse=a_percentage, toml=(int, float), convert=a_percentage),
    *(o for o in RUN if o.name in ("workers", "seed")),
    _name("run", "dvds"),
    *(o for o in RUN if o.name in ("check", "cold", "inject", "results_dir")),
)

# brokerage: the TPC-E-derived brokerage's database (its own) and build
BROKERAGE_DB: tuple[Option, ...] = tuple(
    Option(**{**o.__dict__, "default": "brokerage"}) if o.name == "dbname" else o for o in DB)
BROKERAGE_BUILD: tuple[Option, ...] = (
    Option("customers", "brokerage_build", "Customers: a multiple of 1,000 (load units).",
           ("--customers",), type=int, required=True, toml=(int,), convert=positive),
    Option("days", "brokerage_build", "Days of initial trading (Trade-Lookup's time windows "
           "need 5 or more).", ("--days",), type=int, default=300, show_default=True,
           toml=(int,), convert=positive),
    *(Option(**{**o.__dict__, "part": "brokerage_build"}) for o in DVDS_BUILD
      if o.name in ("build_users", "force", "seed")),
    Option("page_kib", "brokerage_build", "MariaDB: InnoDB's page size, 8k (the paper's) or "
           "16k, for a new data directory [default: the server's].", ("--innodb-page-size",),
           metavar="8k|16k"),
)

BROKERAGE_RUN: tuple[Option, ...] = (
    *(o for o in RUN if o.name in ("users", "rampup", "duration", "workers", "seed")),
    _name("run", "brokerage"),
    *(o for o in RUN if o.name in ("check", "cold", "inject", "results_dir")),
)


# the sampler that records CPU, disks, memory, network, database and power (every command
# that saves a run); a plan's cell takes them for all its steps
TELEMETRY: tuple[Option, ...] = (
    _duration("sample_interval", "run", "1s",
              "Telemetry sampling interval (0 turns the sampler off)."),
    Option("power", "run", "Power meter: auto, none, rapl[:DIR], ipmi, redfish:URL or "
           "cmd:COMMAND.", ("--power",), default="auto", show_default=True, toml=(str,)),
    Option("io_latency", "run", "Every IO's latency per device from the block layer "
           "(bpftrace): auto (where it can run), on (refuse where it cannot), off.",
           ("--io-latency",), choices=IO_LATENCY, default=io_latency_default(),
           show_default=True, envvar="OLTPLAB_IO_LATENCY", toml=(str,)),
)

# the live metrics endpoint of tpcc run, dvds run, neighbours run and plan run: the command
# line only (where it listens belongs to the host running the command, not to the experiment)
METRICS: tuple[Option, ...] = (
    Option("metrics_port", "metrics", "Serve the run's current figures (throughput, latency "
           "percentiles, CPU, devices, power) in the OpenMetrics text format on this TCP "
           "port while it runs.", ("--metrics-port",), type=int, range=(1, 65535),
           metavar="PORT"),
    Option("metrics_listen", "metrics", "Address the metrics endpoint listens on (0.0.0.0: "
           "every interface).", ("--metrics-listen",), metavar="ADDR", default=METRICS_LISTEN,
           show_default=True),
)

# backup run; a plan's backup step
BACKUP: tuple[Option, ...] = (
    Option("cycles", "backup", "Backup/restore cycles.", ("--cycles",), type=int, default=3,
           show_default=True, toml=(int,), convert=positive),
    Option("method", "backup", "pg_basebackup, or pg_dump -Fd with pg_restore.", ("--method",),
           choices=METHODS, default="basebackup", show_default=True, toml=(str,)),
    Option("to", "backup", "Folder for the backups [default: <datadir>-backup]; the newest is "
           "kept.", ("--to",), type=Path, toml=(str,), convert=a_path),
    _duration("interval", "backup", "0s", "Time between cycle starts (0: back to back)."),
    Option("compress", "backup", "pg_basebackup -F t -Z METHOD (the build must have it).",
           ("--compress",), choices=COMPRESSIONS, default="none", show_default=True,
           toml=(str,)),
    Option("max_rate", "backup", "pg_basebackup -r: bytes per second, e.g. 50MiB.",
           ("--max-rate",), metavar="RATE", parse=a_size, toml=(int, str), convert=a_size),
    Option("no_restore", "backup", "Only back up.", ("--no-restore",), is_flag=True),
    Option("restore", "backup", "Restore and check each backup [default: true].", toml=(bool,)),
    Option("jobs", "backup", "pg_dump / pg_restore parallel jobs.", ("--jobs", "-j"), type=int,
           default=2, show_default=True, toml=(int,), convert=positive),
    _name("backup", "backup"),
    _results_dir("backup"),
)

# neighbours run; a plan's neighbours step (the telemetry rows follow)
NEIGHBOURS: tuple[Option, ...] = (
    Option("instances", "neighbours", "Managed PostgreSQL instances, each with its own data "
           "directory.", ("--instances", "-n"), type=int, required=True, toml=(int,),
           convert=positive),
    Option("backup", "neighbours", "Of them, how many back up instead of running the workload "
           "(0: baseline).", ("--backup", "-k"), type=int, default=0, show_default=True,
           toml=(int,)),
    Option("workload", "neighbours", "What the workload instances run: tpcc, dvds (the shop, "
           "of --size) or brokerage (of --customers, --days).", ("--workload",),
           choices=("tpcc", "dvds", "brokerage"), default="tpcc", show_default=True, toml=(str,)),
    Option("warehouses", "neighbours", "Warehouses of each instance's schema (tpcc).",
           ("--warehouses", "-w"), type=int, default=1, show_default=True, toml=(int,),
           convert=positive),
    Option("size", "neighbours", "Size of each instance's shop (dvds), e.g. 10MB, 1GB.",
           ("--size",), parse=a_dvds_size, toml=(str,), convert=a_dvds_size),
    *(Option(**dict(o.__dict__, part="neighbours", required=False)) for o in BROKERAGE_BUILD[:2]),
    Option("users", "neighbours", "Virtual users of each workload instance.", ("--users", "-u"),
           type=int, default=1, show_default=True, toml=(int, str, list),
           convert=one_user_count),
    _duration("rampup", "neighbours", "30s", "Ramp-up of the workloads (not measured)."),
    _duration("duration", "neighbours", "2m", "Measured time of the workloads."),
    _duration("backup_interval", "neighbours", "100s",
              "Time between the starts of a backup instance's cycles."),
    Option("backup_cycles", "neighbours", "Most backups per backup instance; backups end with "
           "the workloads.", ("--backup-cycles",), type=int, default=10, show_default=True,
           toml=(int,), convert=positive),
    Option("root", "neighbours", "Folder of the template and the instances' data directories: "
           "the datastore under test.", ("--root",), type=Path,
           default=DEFAULT_DATA / "neighbours", show_default=True, toml=(str,),
           convert=a_path),
    Option("db_memory", "neighbours", "shared_buffers of all instances together, split evenly.",
           ("--db-memory",), default="1GiB", show_default=True, parse=a_size, toml=(int, str),
           convert=a_size),
    Option("port", "neighbours", "Port of the template; instance i gets PORT + i (names its "
           "unix socket).", ("--port",), type=int, range=(1, 65535), default=5440,
           show_default=True, toml=(int,)),
    Option("pg_bin", "neighbours", PG_BIN, ("--pg-bin",), type=Path, toml=(str,), convert=a_path),
    Option("settings", "neighbours", "A server setting override for every instance "
           "(repeatable).", ("-c",), metavar="NAME=VALUE", multiple=True, parse=a_setting,
           toml=(dict,), convert=settings_table),
    Option("mode", "neighbours", MODE, ("--mode",), choices=MODES, default="procedures",
           show_default=True, toml=(str,)),
    Option("seed", "neighbours", "Seed of the build and the drivers.", ("--seed",), type=int,
           toml=(int,)),
    _name("neighbours", "neighbours"),
    _results_dir("neighbours"),
)

# quickstart (the command line only)
QUICKSTART: tuple[Option, ...] = (
    Option("warehouses", "quickstart", None, ("--warehouses", "-w"), type=int, default=4,
           show_default=True),
    Option("users", "quickstart", None, ("--users", "-u"), default="1,2,4", show_default=True,
           parse=a_sequence),
    _duration("rampup", "quickstart", "10s", None, toml=False),
    _duration("duration", "quickstart", "30s", None, toml=False),
    _results_dir("quickstart"),
)

# a plan's own keys, that no command takes
PLAN: tuple[Option, ...] = (
    Option("target", "plan", "A target named under [targets].", toml=(str,)),
    Option("workload", "plan", "The workload the cell builds and runs: tpcc (default), dvds (the "
           "shop: its size and run options apply) or brokerage (its customers and days apply).",
           toml=(str,), choices=("tpcc", "dvds", "brokerage")),
    Option("datastore", "plan", "A datastore named under [datastores]: the data directory "
           "goes in its mount.", toml=(str,)),
)

# datastore create: the storage under test (datastores/spec.py checks them together)
DATASTORE: tuple[Option, ...] = (
    Option("fs", "datastore", "File system: btrfs (with the policies below), or xfs or ext4 "
           "on one device as a baseline.", ("--fs",), choices=FILESYSTEMS, default="btrfs",
           show_default=True, toml=(str,)),
    Option("raid", "datastore", "btrfs data profile (mkfs.btrfs -d); mkfs' default where not "
           "given.", ("--raid",), choices=tuple(PROFILES), toml=(str,)),
    Option("metadata", "datastore", "btrfs metadata profile (mkfs.btrfs -m).", ("--metadata",),
           choices=tuple(PROFILES), toml=(str,)),
    Option("checksum", "datastore", "btrfs checksum; off mounts with nodatasum (metadata keeps "
           "crc32c).", ("--checksum",), choices=CHECKSUMS, toml=(str,)),
    Option("compress", "datastore", "btrfs compression: zstd[:1-15], zlib[:1-9], lzo or none.",
           ("--compress",), metavar="ALGO[:LEVEL]", toml=(str,)),
    Option("devices", "datastore", "Block devices to make it on (overwritten).", ("--devices",),
           metavar="DEV[,DEV...]", toml=(str,)),
    Option("loop", "datastore", "Loop devices over new backing files beside the datastore "
           "instead, e.g. 4x8GiB.", ("--loop",), metavar="COUNTxSIZE", toml=(str,)),
    Option("mount_options", "datastore", "More mount options, comma-separated.", ("-o",),
           metavar="OPTS", toml=(str,)),
    Option("force", "datastore", "Overwrite devices that carry a file system or partition "
           "table.", ("--force",), is_flag=True),
    Option("spares", "datastore", "Devices kept out of the file system for --inject "
           "replace-device; with --loop, a number of spare loop devices.", ("--spares",),
           metavar="N|DEV[,DEV...]", toml=(str, int), convert=lambda v, w: str(v)),
    Option("dedupe", "datastore", "Run duperemove over it after each build (timed and "
           "recorded); btrfs or xfs.", ("--dedupe",), is_flag=True, toml=(bool,)),
    Option("keep", "datastore", "A plan's datastore stays after the plan's last cell on it.",
           toml=(bool,)),
)

# every datastore command: where the datastores live
DATASTORE_ROOT: tuple[Option, ...] = (
    Option("root", "datastore", "Folder of the datastores (each in ROOT/NAME: its record, its "
           "mount point mnt/, its loop devices' files).", ("--root",), type=Path,
           default=DEFAULT_DATASTORES, show_default=True),
)


# cluster up, status and down (the command line only): where a cluster's files live
def a_timeout(value, what):
    return parse_duration(str(value), what, allow_zero=False)


CLUSTER: tuple[Option, ...] = (
    Option("cluster_dir", "cluster", "Folder of the cluster's certificates, state file and "
           "logs.", ("--dir",), type=Path, default=DEFAULT_CLUSTER, show_default=True,
           envvar="OLTPLAB_CLUSTER_DIR"),
)


def a_host_list(value, what):
    from .loadgen.split import host_names
    try:
        return host_names(value)
    except ValueError as e:
        raise UsageError(f"{what}: {e}") from None


# tpcc run and dvds run over the cluster's hosts (the command line only: a plan's cells run
# here)
LOADGEN: tuple[Option, ...] = (
    Option("loadgen", "loadgen", "Run the virtual users on these hosts of the cluster "
           "(h1,h2: oltplab cluster up starts it), split over their C loops; the database "
           "is reached over TCP (a managed server needs --listen).", ("--loadgen",),
           metavar="HOSTS", parse=a_host_list),
    Option("cluster_dir", "loadgen", "Folder of the cluster --loadgen uses.",
           ("--cluster-dir",), type=Path, default=DEFAULT_CLUSTER, show_default=True,
           envvar="OLTPLAB_CLUSTER_DIR"),
)

# neighbours run over the cluster's hosts (the command line only)
NEIGHBOURS_HOSTS: tuple[Option, ...] = (
    Option("hosts", "neighbours-hosts", "Deal the instances over these hosts of the cluster "
           "(h1,h2: oltplab cluster up starts it); each keeps its share under ROOT/<host>.",
           ("--hosts",), metavar="HOSTS", parse=a_host_list),
    Option("cluster_dir", "neighbours-hosts", "Folder of the cluster --hosts uses.",
           ("--cluster-dir",), type=Path, default=DEFAULT_CLUSTER, show_default=True,
           envvar="OLTPLAB_CLUSTER_DIR"),
)

CLUSTER_UP: tuple[Option, ...] = (
    Option("timeout", "cluster", "How long the scheduler and the workers may take to start.",
           ("--timeout",), default="60s", show_default=True, parse=a_timeout),
)
