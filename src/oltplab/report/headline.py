"""The headline figures of a run, one line each, for listings such as ``oltplab results list``.

- tpcc: the step with the highest NOPM: "NOPM 32,395 at 4 users (TPM 174,444)";
- fio: the profile with the most IOPS and the one with the most MB/s:
  "49,243 IOPS 4k-70r30w-random; 1,180 MB/s 64k-70r30w-random".

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
    return "-"
