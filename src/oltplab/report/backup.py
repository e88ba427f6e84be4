"""A backup run's figures: time to complete per cycle (backup and restore bars), the cycles'
table, and the backup and restore phases shaded on the telemetry charts over time."""

from __future__ import annotations

from .charts import bar_chart, entries, fmt
from .model import Band, Chart, Table
from .runs import Group, RunData

PHASES = ("backup", "restore")


def per_cycle(group: Group, phase: str, key: str = "seconds") -> dict:
    """{cycle: [the phase's ``key`` in each run of the group]}."""
    out: dict = {}
    for r in group.runs:
        for c in r.record.get("cycles") or []:
            value = (c.get(phase) or {}).get(key)
            if value is not None:
                out.setdefault(c.get("cycle"), []).append(value)
    return out


def charts(groups: list[Group]) -> list[Chart]:
    items = entries(groups, [(p, lambda g, p=p: per_cycle(g, p)) for p in PHASES])
    return [bar_chart("backup_cycles", "Time to complete per cycle", "cycle", "seconds", items,
                      why="no cycle finished",
                      caption="Seconds from the start to the end of each cycle's backup and "
                              "restore (copy back plus the replay of the WAL or InnoDB redo "
                              "to consistency, or the load of a dump).")]


def tables(run: RunData) -> list[Table]:
    rows = []
    for c in run.record.get("cycles") or []:
        b, r = c.get("backup") or {}, c.get("restore") or {}
        rows.append((c.get("cycle"), b.get("bytes"), b.get("seconds"), b.get("mb_per_s"),
                     r.get("seconds"), r.get("copy_seconds"), r.get("replay_seconds"),
                     r.get("mb_per_s"), r.get("check_ok")))
    return [Table("cycles", "Backup and restore cycles",
                  ("cycle", "backup bytes", "backup s", "backup MB/s", "restore s", "copy s",
                   "replay s", "restore MB/s", "check ok"), tuple(rows),
                  caption="MB = 10^6 bytes; restore MB/s is the restored copy's size on disk "
                          "over the restore's seconds.")]


def phase_bands(run: RunData, divisor: float) -> tuple[Band, ...]:
    """Each cycle's backup and restore, from the timeline's start and end marks (paired per
    instance where several back up at once: a neighbours run)."""
    tl = run.timeline
    if tl is None or tl.t0_ns is None:
        return ()
    out, open_at = [], {}
    for m in tl.marks:
        phase, _, edge = str(m.get("name")).rpartition("-")
        if phase not in PHASES:
            continue
        key = (phase, m.get("instance"))
        if edge == "start":
            open_at[key] = m
        elif edge == "end" and key in open_at:
            s = open_at.pop(key)
            who = f"{m['instance']} " if m.get("instance") else ""
            out.append(Band(x0=(s["t_ns"] - tl.t0_ns) / 1e9 / divisor,
                            x1=(m["t_ns"] - tl.t0_ns) / 1e9 / divisor,
                            label=f"{who}{phase} {m.get('cycle', '')}".strip()))
    return tuple(out)


def headline(run: dict) -> str:
    """"2 cycles; backup 412 MB/s; restore 180 MB/s; checks ok" (the mean rates)."""
    cycles = run.get("cycles") or []
    if not cycles:
        return "-"
    parts = [f"{len(cycles)} cycle{'' if len(cycles) == 1 else 's'}"]
    for phase in PHASES:
        rates = [c[phase]["mb_per_s"] for c in cycles
                 if isinstance(c.get(phase), dict) and c[phase].get("mb_per_s") is not None]
        if rates:
            parts.append(f"{phase} {fmt(sum(rates) / len(rates))} MB/s")
    checked = [c["restore"].get("check_ok") for c in cycles if isinstance(c.get("restore"), dict)]
    if checked:
        parts.append("checks ok" if all(checked) else "checks FAILED")
    return "; ".join(parts)
