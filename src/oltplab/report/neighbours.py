"""A neighbours run's figures: NOPM (the shop's OPM), TPM and New-Order (order) latency per
instance (a bar per run, so that a baseline and a noisy run stand side by side, instance by
instance, with the average workload instance last), the time of each backup per cycle, and the
instances' and backups' tables. The backups shade the charts over time (``backup.phase_bands``)."""

from __future__ import annotations

from .charts import bar_chart, count, entries
from .model import Chart, Table
from .runs import Group, RunData
from .tpcc import unit_of

AVERAGE = "average"


def order(name) -> tuple:
    """pg1, pg2, ..., pg10, then the average."""
    name = str(name)
    if name == AVERAGE:
        return (1, 0, name)
    digits = name.lstrip("abcdefghijklmnopqrstuvwxyz")
    return (0, int(digits) if digits.isdigit() else 0, name)


def workloads(record: dict) -> list[dict]:
    return [e for e in record.get("instances") or []
            if isinstance(e, dict) and e.get("role") not in (None, "backup")]


def unit(record: dict) -> tuple[str, str]:
    """(the entries' key of the headline, its name): ("nopm", "NOPM"), ("opm", "OPM"),
    ("trps", "trps")."""
    from .. import workloads as registry
    from .units import headline_unit
    return headline_unit(registry.of_record(record).name)


def units(groups: list[Group]) -> tuple[str, str]:
    found = {unit(r.record) for g in groups for r in g.runs}
    return sorted(found)[0] if len(found) == 1 else ("nopm", "NOPM")


def per_instance(group: Group, key: str, average: bool = True) -> dict:
    """{instance name: [its ``key`` in each run]}, and the runs' mean per workload instance."""
    out: dict = {}
    for r in group.runs:
        for e in workloads(r.record):
            if e.get(key) is not None:
                out.setdefault(e["name"], []).append(e[key])
        avg = (r.record.get("average") or {}).get(key)
        if average and avg is not None:
            out.setdefault(AVERAGE, []).append(avg)
    return out


def _latency(group: Group, pct: str = "p95") -> dict:
    out: dict = {}
    for r in group.runs:
        for e in workloads(r.record):
            v = ((e.get("transactions") or {}).get(unit_of(r.record)) or {}).get(pct)
            if v is not None:
                out.setdefault(e["name"], []).append(v)
    return out


def backups(record: dict) -> list[tuple[str, dict]]:
    """(instance name, cycle) of every backup the run made."""
    return [(e.get("name"), c) for e in record.get("instances") or []
            if isinstance(e, dict) and e.get("role") == "backup"
            for c in e.get("cycles") or [] if isinstance(c, dict)]


def _backup_seconds(group: Group) -> dict:
    out: dict = {}
    for r in group.runs:
        for _, c in backups(r.record):
            secs = (c.get("backup") or {}).get("seconds")
            if secs is not None:
                out.setdefault(c.get("cycle"), []).append(secs)
    return out


def at(point) -> str:
    return "the average workload instance" if point == AVERAGE else str(point)


def headline(run: dict) -> str:
    """"NOPM 17,722 per workload instance (2 of 3); 4 backups" """
    avg = run.get("average") or {}
    if not avg.get("instances"):
        return "-"
    n = len(run.get("instances") or [])
    key, name = unit(run)
    value = f"{avg[key]:,.2f}" if key == "trps" and avg.get(key) is not None else \
        count(avg.get(key))
    line = f"{name} {value} per workload instance ({avg['instances']} of {n})"
    made = sum(len(e.get("cycles") or []) for e in run.get("instances") or []
               if isinstance(e, dict) and e.get("role") == "backup")
    return line + (f"; {made} backup{'' if made == 1 else 's'}" if made else "")


def charts(groups: list[Group]) -> list[Chart]:
    def bars(key, title, y_label, values, caption):
        return bar_chart(key, title, "instance", y_label, entries(groups, [(y_label, values)]),
                         why="no workload instance measured", caption=caption, order=order)

    key, name = units(groups)
    what = {"nopm": "New orders per minute of each workload instance (server-side, HammerDB's "
                    "method)",
            "trps": "Trade results per second of each workload instance (server-side: its "
                    "brokers' trade counts)"}.get(key, "Orders per minute of each workload "
                                                  "instance (server-side: the orders it "
                                                  "committed)")
    tx = {"nopm": "New-Order", "trps": "Trade-Result"}.get(key, "order")
    return [
        bars(f"neighbours_{key}", f"{name} per instance", name,
             lambda g: per_instance(g, key), f"{what}, and their mean over the instances "
             "that measured."),
        bars("neighbours_tpm", "TPM per instance", "TPM", lambda g: per_instance(g, "tpm"),
             "Transactions per minute of each workload instance, and their mean."),
        bars("neighbours_latency", f"{tx} latency per instance (p95)", "p95 (ms)", _latency,
             f"95th percentile of the {tx} response time of each workload instance, "
             "measured by its driver."),
        bar_chart("neighbours_backup", "Backup time per cycle", "cycle", "seconds",
                  entries(groups, [("backup", _backup_seconds)]),
                  why="no backup instance finished a cycle",
                  caption="Seconds of each cycle's pg_basebackup; several backup instances (or "
                          "repeats) give their mean, the error bar spans the lowest and "
                          "highest."),
    ]


def tables(run: RunData) -> list[Table]:
    key, name = unit(run.record)
    tx = "New-Order" if key == "nopm" else "order"
    rows = []
    for e in run.record.get("instances") or []:
        no = (e.get("transactions") or {}).get(unit_of(run.record)) or {}
        cycles = e.get("cycles") or []
        secs = [c["backup"]["seconds"] for c in cycles if (c.get("backup") or {}).get("seconds")]
        rows.append((e.get("name"), e.get("role"), e.get("status"), e.get("tpm"), e.get(key),
                     no.get("p50"), no.get("p95"), no.get("p99"),
                     len(cycles) if e.get("role") == "backup" else None,
                     sum(secs) / len(secs) if secs else None, e.get("error")))
    avg = run.record.get("average") or {}
    if avg.get("instances"):
        rows.append((AVERAGE, f"{avg['instances']} workloads", None, avg.get("tpm"),
                     avg.get(key), None, None, None, None, None, None))
    cols = ("instance", "role", "status", "TPM", name, f"{tx} p50 ms", f"{tx} p95 ms",
            f"{tx} p99 ms", "backups", "mean backup s", "error")
    caption = "Each instance's own run is in the run folder's instances/ folder."
    hosts = [e.get("host") for e in run.record.get("instances") or []]
    if any(hosts):  # a run over several hosts: where each ran, and each host's own record
        cols = (cols[0], "host", *cols[1:])
        rows = [(r[0], hosts[i] if i < len(hosts) else None, *r[1:])
                for i, r in enumerate(rows)]
        caption = ("Each host's share is a run of its own, with its instances' runs, in the "
                   "run folder's hosts/<host>/ folder.")
    out = [Table("instances", "Instances", cols, tuple(rows), caption=caption)]
    rows = [(name, c.get("cycle"), c.get("started_at"), (c.get("backup") or {}).get("bytes"),
             (c.get("backup") or {}).get("seconds"), (c.get("backup") or {}).get("mb_per_s"))
            for name, c in backups(run.record)]
    if rows:
        out.append(Table("backups", "Backups", ("instance", "cycle", "started", "bytes",
                                                "seconds", "MB/s"), tuple(rows),
                         caption="MB = 10^6 bytes."))
    return out
