"""What ``oltplab neighbours run`` does (``NeighboursSpec``), checked when it is made: its
instances, the workload they run and its scale, their servers and the template's build."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import DbSpec, format_size, io_latency_default
from ..engines.base import MIN_DB_MEMORY
from ..errors import UsageError


@dataclass(frozen=True)
class NeighboursSpec:
    """What ``oltplab neighbours run`` does (fields named as its long options)."""

    instances: int = 2
    backup: int = 0                  # the last K instances back up; K = 0 is the baseline
    workload: str = "tpcc"           # what the workload instances run: tpcc or dvds
    warehouses: int = 1              # tpcc: of each instance's schema
    size: Any = None                 # dvds: each instance's shop (workloads.dvds.sizes.Size)
    customers: int | None = None     # brokerage: customers of each instance's brokerage
    days: int = 300                  # brokerage: its days of initial trading
    users: int = 1                   # virtual users of each workload instance
    rampup: float = 30.0
    duration: float = 120.0
    backup_interval: float = 100.0   # seconds between the starts of a backup instance's cycles
    backup_cycles: int = 10
    root: Path = Path("oltplab-data/neighbours")
    db_memory: int = 1024**3         # shared_buffers of all instances together, split evenly
    port: int = 5440                 # the template's; instance i gets port + i
    pg_bin: Path | None = None
    settings: tuple[tuple[str, str], ...] = ()
    mode: str = "procedures"
    seed: int | None = None
    name: str = "neighbours"
    results_dir: Path = Path("results")
    sample_interval: float = 1.0
    power: str = "auto"
    io_latency: str = field(default_factory=io_latency_default)

    def __post_init__(self):
        n, k = self.instances, self.backup
        if n < 1:
            raise UsageError(f"--instances must be at least 1 (got {n})")
        if not 0 <= k < n:
            raise UsageError(f"--backup {k}: give 0 to {n - 1} backup instances; at least one "
                             f"of the {n} instances runs the workload")
        for what, v in (("--warehouses", self.warehouses), ("--users", self.users),
                        ("--backup-cycles", self.backup_cycles)):
            if v < 1:
                raise UsageError(f"{what} must be at least 1 (got {v})")
        if self.workload == "dvds" and self.size is None:
            raise UsageError("--workload dvds needs --size (such as --size 10MB)")
        if self.workload != "dvds" and self.size is not None:
            raise UsageError("--size is the dvds workload's; give --workload dvds")
        if self.workload == "brokerage":
            if self.customers is None:
                raise UsageError("--workload brokerage needs --customers (such as --customers "
                                 "1000)")
            from ..workloads.brokerage.scale import parse_scale
            parse_scale(self.customers, self.days)  # not in load units: refused here
            if self.mode != "procedures":
                raise UsageError(f"--mode {self.mode}: the brokerage runs its transactions as "
                                 "the server's functions only (--mode procedures)")
        elif self.customers is not None:
            raise UsageError("--customers is the brokerage workload's; give --workload "
                             "brokerage")
        if self.duration <= 0:
            raise UsageError("--duration must be longer than zero")
        if self.rampup < 0 or self.backup_interval < 0:
            raise UsageError("--rampup and --backup-interval must not be negative")
        if self.instance_memory < MIN_DB_MEMORY:
            raise UsageError(f"--db-memory {format_size(self.db_memory)} gives each of the {n} "
                             f"instances less than 16MiB; give at least {16 * n}MiB")
        if not 1 <= self.port <= 65535 - n:
            raise UsageError(f"--port {self.port}: ports {self.port}..{self.port + n} must be "
                             "TCP ports (1-65535)")
        if not re.fullmatch(r"[A-Za-z0-9_.\-]{1,64}", self.name):
            raise UsageError(f"--name: {self.name!r} may hold letters, digits, '.', '_' and "
                             "'-' only")
        if self.root.exists() and not self.root.is_dir():
            raise UsageError(f"--root {self.root} is a file; give a directory")

    @property
    def instance_memory(self) -> int:
        """shared_buffers of one instance: an even share, whole MiB."""
        return self.db_memory // self.instances // 1024**2 * 1024**2

    def db(self, datadir: Path, port: int) -> DbSpec:
        return DbSpec(datadir=datadir, port=port, db_memory=self.instance_memory,
                      pg_bin=self.pg_bin, settings=self.settings,
                      **({"dbname": self.workload} if self.workload != "tpcc" else {}))

    @property
    def scale(self):
        """The brokerage's Scale (workloads.brokerage.scale), None for another workload."""
        if self.workload != "brokerage":
            return None
        from ..workloads.brokerage.scale import parse_scale
        return parse_scale(self.customers, self.days)

    @property
    def schema(self) -> dict:
        """What each instance's schema is: {"warehouses": W}, {"workload": "dvds", "size"} or
        {"workload": "brokerage", "customers", "days"}."""
        if self.workload == "dvds":
            return {"workload": "dvds", "size": self.size.name}
        if self.workload == "brokerage":
            return {"workload": "brokerage", "customers": self.customers, "days": self.days}
        return {"warehouses": self.warehouses}

    @property
    def schema_name(self) -> str:
        """What each instance's schema holds, as the progress names it."""
        if self.workload == "dvds":
            return f"the {self.size.name} shop"
        if self.workload == "brokerage":
            return (f"the brokerage of {self.customers:,} customers x {self.days} "
                    f"day{'s' if self.days != 1 else ''}")
        return f"{self.warehouses} warehouses"

    @property
    def connections(self) -> int:
        """The server connections a workload instance needs (the users', the brokerage's
        market emulator's, the monitor's)."""
        from ..config import RunSpec
        from ..runs.lifecycle import connections_needed
        return connections_needed(RunSpec(users=(self.users,), workload=self.workload))

    def build_spec(self):
        """The template's build."""
        users = min(4, os.cpu_count() or 1)
        if self.workload == "dvds":
            from ..workloads.dvds.build import DvdsBuildSpec
            return DvdsBuildSpec(size=self.size, build_users=users, seed=self.seed)
        if self.workload == "brokerage":
            from ..workloads.brokerage.build import BrokerageBuildSpec
            return BrokerageBuildSpec(scale=self.scale, build_users=users, seed=self.seed)
        from ..config import BuildSpec
        return BuildSpec(warehouses=self.warehouses, build_users=users, seed=self.seed)
