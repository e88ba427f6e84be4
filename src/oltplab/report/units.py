"""The headline figure of a workload as the experiments print it (neighbours' instances, a
plan's policy table): the key of a step's (or an instance's) value and its name. TPC-C's and
the shop's are per minute (NOPM, OPM, the workload's own unit); the brokerage's is per second,
trps (trade results per second), as the paper and TPC-E report it."""

from __future__ import annotations

#: Workloads whose headline is not their per-minute unit: name -> (key, name).
PER_SECOND = {"brokerage": ("trps", "trps")}


def headline_unit(workload: str) -> tuple[str, str]:
    """("nopm", "NOPM"), ("opm", "OPM"), ("trps", "trps"); UsageError for an unknown name."""
    if workload in PER_SECOND:
        return PER_SECOND[workload]
    from .. import workloads
    wl = workloads.get(workload)
    return wl.unit_key, wl.unit
