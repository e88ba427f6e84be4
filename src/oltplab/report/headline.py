"""The headline figures of a run, one line each, for listings such as ``oltplab results list``.

- tpcc: the step with the highest NOPM: "NOPM 32,395 at 4 users (TPM 174,444)";
- fio: the profile with the most IOPS and the one with the most MB/s:
  "49,243 IOPS 4k-70r30w-random; 1,180 MB/s 64k-70r30w-random";
- backup: the cycles and their mean backup and restore MB/s, and whether the checks held;
- neighbours: the mean NOPM per workload instance, and the backups made.

A run without measured steps gives "-".
"""

from __future__ import annotations

from .charts import fmt


def _int(x) -> str:
    return "-" if x is None else f"{round(x):,}"


def headline(run: dict) -> str:
    steps = [s for s in run.get("steps") or [] if isinstance(s, dict)]
    kind = run.get("kind")
    if kind == "tpcc":
        measured = [s for s in steps if s.get("nopm") is not None]
        if not measured:
            return "-"
        best = max(measured, key=lambda s: s["nopm"])
        users = best.get("users")
        part = " (partial step)" if best.get("partial") else ""
        return (f"NOPM {_int(best['nopm'])} at {users} user{'' if users == 1 else 's'} "
                f"(TPM {_int(best.get('tpm'))}){part}")
    if kind == "fio":
        measured = [s for s in steps if s.get("total_iops") is not None]
        if not measured:
            return "-"
        iops = max(measured, key=lambda s: s["total_iops"])
        mbps = max(measured, key=lambda s: s.get("total_mbps") or 0)
        line = f"{_int(iops['total_iops'])} IOPS {iops.get('profile')}"
        if mbps is not iops:
            line += f"; {fmt(mbps.get('total_mbps'))} MB/s {mbps.get('profile')}"
        else:
            line += f" ({fmt(iops.get('total_mbps'))} MB/s)"
        return line
    if kind == "backup":
        return _backup(run.get("cycles") or [])
    if kind == "neighbours":
        return _neighbours(run)
    return "-"


def _neighbours(run: dict) -> str:
    """"NOPM 17,722 per workload instance (2 of 3); 4 backups" """
    avg = run.get("average") or {}
    if not avg.get("instances"):
        return "-"
    n = len(run.get("instances") or [])
    line = f"NOPM {_int(avg.get('nopm'))} per workload instance ({avg['instances']} of {n})"
    made = sum(len(e.get("cycles") or []) for e in run.get("instances") or []
               if isinstance(e, dict) and e.get("role") == "backup")
    return line + (f"; {made} backup{'' if made == 1 else 's'}" if made else "")


def _backup(cycles: list) -> str:
    """"2 cycles; backup 412 MB/s; restore 180 MB/s; checks ok" (the mean rates)."""
    if not cycles:
        return "-"
    parts = [f"{len(cycles)} cycle{'' if len(cycles) == 1 else 's'}"]
    for phase in ("backup", "restore"):
        rates = [c[phase]["mb_per_s"] for c in cycles
                 if isinstance(c.get(phase), dict) and c[phase].get("mb_per_s") is not None]
        if rates:
            parts.append(f"{phase} {fmt(sum(rates) / len(rates))} MB/s")
    checked = [c["restore"].get("check_ok") for c in cycles if isinstance(c.get("restore"), dict)]
    if checked:
        parts.append("checks ok" if all(checked) else "checks FAILED")
    return "; ".join(parts)
