"""The runs of a report: their records, telemetry, display labels and groups of repeats.

Telemetry of a step comes from the step's own ``telemetry`` entry (written by the driver); a
step without one gets it from the run folder's ``timeline.json`` through
``telemetry.derive.derive_steps``; a run with neither has no telemetry, and the charts that need
it say so.

Runs are repeats of each other when they have the same kind, the same label and the same
workload configuration (the configuration without its name, results folder and seed).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import OltplabError
from ..telemetry.derive import derive_steps
from ..telemetry.sampler import Timeline
from .model import PALETTE

TIMELINE_FILE = "timeline.json"
_NOT_WORKLOAD = {"name", "results_dir", "seed", "check"}
ENGINE_NAMES = {"postgres": "PostgreSQL", "mariadb": "MariaDB"}
_DATABASE_ENGINES = {"postgresql": "postgres", "postgres": "postgres", "mariadb": "mariadb"}


def engine_of(record: dict) -> str | None:
    """The database engine a run ran on ("postgres", "mariadb"), None for a run without a
    database (fio): the record's ``engine``, else its configuration's, else its database
    entry's (results.store's upgrader names the engine of records older than these fields)."""
    if record.get("engine"):
        return str(record["engine"])
    db_config = (record.get("config") or {}).get("db")
    if isinstance(db_config, dict) and db_config.get("engine"):
        return str(db_config["engine"])
    database = record.get("database")
    if isinstance(database, dict) and database.get("engine"):
        return _DATABASE_ENGINES.get(str(database["engine"]).lower(), str(database["engine"]))
    return None


@dataclass
class RunData:
    record: dict
    label: str = ""
    color: str = PALETTE[0]
    timeline: Timeline | None = None
    figures: list = field(default_factory=list)  # per step: telemetry figures or None
    telemetry_from: str = "none"
    problems: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return self.record.get("kind", "?")

    @property
    def id(self) -> str:
        return self.record.get("id", "?")

    @property
    def name(self) -> str:
        return self.record.get("name") or self.id

    @property
    def engine(self) -> str | None:
        return engine_of(self.record)

    @property
    def engine_name(self) -> str | None:
        """The engine as people write it (PostgreSQL, MariaDB); None without a database."""
        return ENGINE_NAMES.get(self.engine, self.engine) if self.engine else None

    @property
    def steps(self) -> list[dict]:
        return self.record.get("steps") or []

    @property
    def has_telemetry(self) -> bool:
        return any(f is not None for f in self.figures)

    @property
    def data_devices(self) -> set[str]:
        """The disks under the run's recorded paths (data directory, WAL ...) and the disks
        they are made of (device-mapper, md); empty when none is known."""
        out: set[str] = set()
        for where in ((self.record.get("host") or {}).get("paths") or {}).values():
            device = (where or {}).get("device") if isinstance(where, dict) else None
            if isinstance(device, dict) and device.get("name"):
                out.add(str(device["name"]))
                out.update(str(s) for s in device.get("slaves") or ())
        for store in (self.record.get("datastores") or {}).values():  # every member of it
            out.update(str(d["name"]) for d in store.get("devices") or () if d.get("name"))
        return out

    @property
    def interval_s(self) -> float:
        return self.timeline.interval_s if self.timeline is not None else 1.0


def load_timeline(path: Path) -> Timeline | None:
    f = Path(path) / TIMELINE_FILE
    if not f.is_file():
        return None
    try:
        return Timeline.from_dict(json.loads(f.read_text()))
    except (OSError, ValueError) as e:
        raise OltplabError(f"cannot read {f}: {e}") from None


def prepare(record: dict) -> RunData:
    """A run's data for the report: its timeline (if any) and every step's telemetry."""
    data = RunData(record=record)
    path = record.get("_path")
    if path:
        try:
            data.timeline = load_timeline(Path(path))
        except OltplabError as e:
            data.problems.append(str(e))
    steps = data.steps
    figures: list = [s.get("telemetry") for s in steps]
    if any(f is not None for f in figures):
        data.telemetry_from = "run.json"
    if data.timeline is not None and any(f is None for f in figures):
        derived = derive_steps(data.timeline, steps)
        for d in derived:
            k = d.get("step")
            if isinstance(k, int) and 0 <= k < len(figures) and figures[k] is None:
                figures[k] = d
        if not steps:  # a run without step records: the marked windows stand alone
            figures = derived
        data.telemetry_from = ("run.json and timeline.json" if data.telemetry_from == "run.json"
                               else "timeline.json")
    data.figures = figures
    return data


def group_key(record: dict) -> tuple:
    """Runs with equal keys are repeats of one another (module doc)."""
    config = record.get("config") or {}
    workload = {}
    for part, values in sorted(config.items()):
        if isinstance(values, dict):
            workload[part] = {k: v for k, v in sorted(values.items()) if k not in _NOT_WORKLOAD}
    return (record.get("kind"), record.get("name"), json.dumps(workload, sort_keys=True,
                                                                default=str))


def fault_names(records: list[dict]) -> list[str]:
    """"remove-device at 3 s" for each fault injected in any of ``records`` (each once, in
    order), at the time it was asked for; events that never fired do not count."""
    out: dict[str, None] = {}
    for rec in records:
        for e in rec.get("events") or ():
            if isinstance(e, dict) and e.get("at_s") is not None:
                at = e.get("requested_at_s")
                at = e["at_s"] if at is None else at
                out[f"{e.get('kind') or 'fault'} at {round(float(at), 1):g} s"] = None
    return list(out)


_WITH = re.compile(r" \(with [^()]*\)$")


def with_faults(label: str, records: list[dict]) -> str:
    """``label`` followed by the faults injected in ``records``: "B (with remove-device at
    3 s)"; ``label`` alone when there were none."""
    names = fault_names(records)
    return f"{label} (with {', '.join(names)})" if names else label


def without_faults(label: str) -> str:
    """A label less what ``with_faults`` added."""
    return _WITH.sub("", label)


@dataclass
class Group:
    label: str
    runs: list[RunData]
    color: str

    @property
    def faults(self) -> list[str]:
        """The faults injected in the group's runs (``fault_names``)."""
        return fault_names([r.record for r in self.runs])


def label_runs(runs: list[RunData]) -> list[Group]:
    """Give each run a short unique label and colour, and group repeats (first seen first).
    When the runs ran on more than one engine, each label names its engine; a group whose runs
    had faults injected names them ("B (with kill-backend at 3 s)")."""
    groups: dict[tuple, list[RunData]] = {}
    for r in runs:
        groups.setdefault(group_key(r.record), []).append(r)
    mixed = len({r.engine for r in runs if r.engine}) > 1
    bases = []
    for key, members in groups.items():
        name = key[1] or "?"
        engine = members[0].engine_name
        base = f"{name} ({engine})" if mixed and engine else name
        bases.append(with_faults(base, [r.record for r in members]))
    out = []
    for i, ((key, members), base) in enumerate(zip(groups.items(), bases)):
        color = PALETTE[i % len(PALETTE)]
        glabel = base if bases.count(base) == 1 else f"{base} ({key[0]} config {i + 1})"
        for k, r in enumerate(members):
            r.color = color
            r.label = glabel if len(members) == 1 else f"{glabel} #{k + 1}"
        out.append(Group(label=glabel, runs=members, color=color))
    return out
