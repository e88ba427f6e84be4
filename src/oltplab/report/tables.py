"""The tables of a run: its kind's result tables, then configuration, host, database and
telemetry, flattened to name/value rows. Passwords in connection strings are masked."""

from __future__ import annotations

import re

from .model import Table
from .runs import RunData

_URI_PASSWORD = re.compile(r"(://[^:/@\s]*:)[^@/\s]+@")
_KV_PASSWORD = re.compile(r"(password\s*=\s*)\S+", re.I)
_SECRET_KEY = re.compile(r"pass(word)?|secret|token", re.I)


def redact(value):
    """A value with any password in a connection string replaced by ***."""
    if not isinstance(value, str):
        return value
    return _KV_PASSWORD.sub(r"\1***", _URI_PASSWORD.sub(r"\1***@", value))


def flatten(data, prefix: str = "") -> list[tuple[str, object]]:
    """[(dotted name, scalar)] of a nested dict; lists of scalars are joined with commas."""
    out: list[tuple[str, object]] = []
    if isinstance(data, dict):
        for k, v in data.items():
            name = f"{prefix}.{k}" if prefix else str(k)
            if _SECRET_KEY.search(str(k)) and isinstance(v, str) and v:
                out.append((name, "***"))
            else:
                out.extend(flatten(v, name))
    elif isinstance(data, list):
        if all(not isinstance(v, (dict, list)) for v in data):
            out.append((prefix, ", ".join(str(redact(v)) for v in data)))
        else:
            for i, v in enumerate(data):
                out.extend(flatten(v, f"{prefix}[{i}]"))
    else:
        out.append((prefix, redact(data)))
    return out


def kv_table(key: str, title: str, data, caption: str = "") -> Table:
    return Table(key, title, ("name", "value"), tuple(flatten(data)), caption=caption)


def run_table(run: RunData) -> Table:
    r = run.record
    rows = [("id", run.id), ("label", r.get("name")), ("kind", run.kind),
            ("engine", run.engine_name), ("status", r.get("status")), ("error", r.get("error")),
            ("started", r.get("started_at")), ("ended", r.get("ended_at")),
            ("oltplab version", r.get("oltplab_version")),
            ("command", " ".join(str(redact(a)) for a in r.get("command") or [])),
            ("folder", r.get("_path")), ("telemetry from", run.telemetry_from)]
    return Table("run", "Run", ("name", "value"), tuple(rows))


def configuration(run: RunData) -> Table:
    r = run.record
    data = {"config": r.get("config") or {}}
    for extra in ("driver", "constants", "schema", "target", "fio", "plan", "precondition"):
        if r.get(extra) is not None:
            data[extra] = r[extra]
    return kv_table("configuration", "Configuration", data)


def database(run: RunData) -> list[Table]:
    db = run.record.get("database")
    if not isinstance(db, dict):
        return []
    settings = db.get("settings") or {}
    out = [kv_table("database", "Database", {k: v for k, v in db.items() if k != "settings"})]
    if settings:
        out.append(Table("database_settings", "Database settings", ("setting", "value"),
                         tuple((k, redact(v)) for k, v in sorted(settings.items()))))
    return out


def telemetry(run: RunData) -> Table | None:
    tl = run.timeline
    if tl is None:
        return None
    data = {"interval_s": tl.interval_s, "samples": len(tl),
            "devices": tl.devices, "roles": tl.roles, "interfaces": tl.interfaces,
            "power": tl.power, "database": tl.database, "overhead": tl.overhead}
    t = kv_table("telemetry", "Telemetry", data,
                 caption="What the sampler measured and how; sources that failed are in the "
                         "errors table.")
    return t


def telemetry_errors(run: RunData) -> Table | None:
    tl = run.timeline
    if tl is None or not tl.errors:
        return None
    return Table("telemetry_errors", "Telemetry errors", ("source", "error", "repeats"),
                 tuple((e.get("source"), e.get("error"), e.get("repeats", 0))
                       for e in tl.errors))


def run_tables(run: RunData) -> list[Table]:
    """Every table of one run: results first, then what it ran on."""
    from .. import kinds
    kind = kinds.find(run.kind)
    own = kind.tables(run) if kind is not None else []
    out = [run_table(run), *own, configuration(run),
           kv_table("host", "Host", run.record.get("host") or {}), *database(run)]
    out += [t for t in (telemetry(run), telemetry_errors(run)) if t is not None]
    return out
