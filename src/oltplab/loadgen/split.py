"""A step split over hosts (``--loadgen``): which host runs which worker process, each
host's clock, and each host's part of the record. Pure: plans, pings and messages in,
placements and records out.

The step deals its users over worker processes as a step on one machine does (step.py:
the same terminals and seeds, user i to worker i mod n), then the worker processes over
the hosts (worker k to host k mod h), so worker indices are unique across hosts and the
step merges every worker's counts and histograms as it always does.

Clocks: each host's monotonic clock has its own origin. ``offset`` is the host's clock
minus the coordinator's, measured by pings through cluster.clocks.measure (the one
estimator: the midpoint of the shortest round trip, its error at most half of it). Start's
boundaries go to a host as ``t + offset``; a host's instants (Progress, the users' crossing
times) come back as ``t - offset``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from .messages import Final, Progress, Start

if TYPE_CHECKING:
    from ..cluster.clocks import Offset


def host_names(text: str) -> tuple[str, ...]:
    """``h1,h2`` -> ('h1', 'h2'); ValueError for an empty list or a name given twice."""
    names = tuple(n.strip() for n in str(text).split(","))
    if not names or any(not n for n in names):
        raise ValueError(f"{text!r} is not a list of host names, such as h1,h2")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"{text!r} names {', '.join(twice)} twice")
    return names


def workers_for(users: int, default: int, hosts: int) -> int:
    """Worker processes of a split step: what one machine would run, at least one per host,
    at most one per user."""
    return max(1, min(users, max(default, hosts)))


def split(plans: list, hosts: tuple[str, ...]) -> dict[str, list]:
    """Worker plans by host: worker k to host k mod h (a host gets none when there are
    fewer workers than hosts)."""
    out: dict[str, list] = {h: [] for h in hosts}
    for plan in plans:
        out[hosts[plan.worker % len(hosts)]].append(plan)
    return out


def to_host(msg, offset_ns: int):
    """A coordinator's message as the host's clock reads it."""
    if isinstance(msg, Start):
        return dataclasses.replace(msg, ramp_end_ns=msg.ramp_end_ns + offset_ns,
                                   measure_end_ns=msg.measure_end_ns + offset_ns)
    return msg


def from_host(msg, offset_ns: int):
    """A worker's message with its instants on the coordinator's clock."""
    if isinstance(msg, Progress):
        return dataclasses.replace(msg, t_ns=msg.t_ns - offset_ns)
    if isinstance(msg, Final):
        return dataclasses.replace(msg, crossings=tuple(
            tuple(t - offset_ns for t in side) for side in msg.crossings))
    return msg


def host_part(host: str, plans: list, finals: dict[int, Final], progress: dict,
              workload, clock_: Offset | None, error: str | None) -> dict:
    """One host's part of a step's record: its users and worker processes, the window's
    completed transactions (the workload's calls, as the step's ``client_tpm`` counts them)
    and units of its workers' Finals, their CPU, its clock, and how it ended. A host whose
    Finals are missing (it failed) still says what its workers had completed at their last
    Progress (``completed_so_far``, ramp-up included)."""
    mine = [finals[p.worker] for p in plans if p.worker in finals]
    names = workload.transactions
    calls = set(workload.calls)
    unit = names.index(workload.unit_transaction)
    part = {
        "host": host,
        "users": sum(len(p.users) for p in plans),
        "workers": len(plans),
        "completed": sum(c.count for f in mine for n, c in zip(names, f.counts) if n in calls),
        "units": sum(f.counts[unit].committed for f in mine),
        "cpu_s": round(sum(f.cpu_s for f in mine), 3),
        "reported": len(mine),
        "clock_offset_ms": round(clock_.mono_offset_ns / 1e6, 3) if clock_ else None,
        "round_trip_ms": round(clock_.rtt_ns / 1e6, 3) if clock_ else None,
        "status": "failed" if error else "completed",
    }
    if error:
        part["error"] = error
        part["completed_so_far"] = sum(progress.get(p.worker, (0, 0))[0] for p in plans)
    return part
