"""Noisy neighbours over several hosts (``neighbours run --hosts h1,h2``): the run's instances
dealt over the cluster's hosts, each host running its share as a neighbours run of its own in
a process there (cluster/parts.py), all started together and directed from here; one record
here.

Instance i goes to host number (i - 1) mod H, so the workload and the backup instances spread
as evenly as they can (the papers' 12 VMs on 4 nodes, one backing up on each). Each host keeps
its data under ``root/<host>`` (its template and its instances' data directories: give an
absolute ``--root`` that each host has); its own record (its share, its instances' runs) is
fetched into this run's folder under ``hosts/<host>/`` at the end.

As on one host: each host prepares (builds or copies its template, starts its servers) and
says it is ready; when all are, each is told to go, so the workloads start together; the
backups begin when every workload of the run measures and stop when all of them have ended;
an instance that fails stops every other, on every host, and so does Ctrl-C. A host that dies
or hangs is found within cluster.parts' ``SILENCE_S``: its part fails, its instances keep what
they reported until then, and the others stop.

The timeline is this machine's sampler with every host's (cluster.sampling.HostSamplers)
placed on its clocks, and the backups' instants put on them too.
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from types import SimpleNamespace

from ..errors import UsageError
from ..runs.lifecycle import cluster_here, new_record, recording, spec_dict
from ..workloads import get as get_workload
from ..report.units import headline_unit
from .neighbours import (NeighboursProgress, NeighboursSpec, Share, averages, members,
                         run_neighbours)

HOSTS_DIR = "hosts"  # each host's own record, under the run's folder
_RUNNING = ("pending", "started")
_TICK_KEYS = ("phase", "tpm", "headline", "users", "rate_s")


def deal(instances: int, hosts: tuple[str, ...]) -> dict[str, tuple[int, ...]]:
    """Which instances each host runs: instance i on host (i - 1) mod H."""
    if len(hosts) > instances:
        raise UsageError(f"--hosts: {len(hosts)} hosts for {instances} instances; give at most "
                         "as many hosts as instances")
    return {h: tuple(range(k + 1, instances + 1, len(hosts))) for k, h in enumerate(hosts)}


# --------------------------------------------------------------------------- on each host

class _PartProgress(NeighboursProgress):
    """A host's share tells the coordinator what it does, as events (cluster/partmain)."""

    def __init__(self, link):
        self.link = link
        self.figures: dict = {}

    def preparing(self, what: str) -> None:
        self.link.emit("preparing", what=what)

    def started(self, run_dir: Path) -> None:
        self.link.emit("started", run=run_dir.name)

    def tick(self, elapsed_s, tpm, headline, measuring, workloads, cycles) -> None:
        self.figures = {"measuring": measuring, "workloads": workloads, "cycles": cycles}

    def ticks(self, ticks: list) -> None:
        self.link.emit("tick", **self.figures,
                       ticks=[{k: getattr(t, k, None) for k in _TICK_KEYS} for t in ticks])

    def instance(self, entry: dict) -> None:
        self.link.emit("instance", entry=entry)

    def mark(self, name: str, t_ns: int, **attrs) -> None:
        self.link.emit("mark", name=name, t_ns=t_ns, attrs=attrs)


def part(link, out: Path, spec: NeighboursSpec, host: str, indices: tuple[int, ...]) -> dict:
    """A host's share (cluster/partmain runs it there): its instances as a neighbours run
    of its own, recorded under ``out``; what the coordinator keeps of its record."""
    spec = dataclasses.replace(spec, root=Path(spec.root) / host, results_dir=out,
                               sample_interval=0, power="none", name=f"{spec.name}-{host}")

    def ready() -> None:
        link.emit("ready")
        link.wait_for("go")

    share = Share(tuple(indices), ready)
    link.on("measuring", lambda _: share.measuring.set())
    link.on("ended", lambda _: share.ended.set())
    link.on("stop", lambda why: setattr(share, "stop_why", why or "stopped"))
    run = run_neighbours(spec, _PartProgress(link), share=share,
                         labels={"share": {"host": host, "instances": list(indices)}})
    return {"id": run["id"], "status": run["status"], "error": run.get("error"),
            "schema": run.get("schema"), "stop_errors": run.get("stop_errors")}


# --------------------------------------------------------------------------- here

def run_neighbours_on_hosts(spec: NeighboursSpec, hosts: tuple[str, ...], cluster_dir: Path,
                            progress: NeighboursProgress | None = None,
                            labels: dict | None = None, metrics=None) -> dict:
    """The run over ``hosts`` of the cluster in ``cluster_dir``; the record's data with
    ``_path`` (see the module's text)."""
    from ..cluster.client import open_hosts
    from ..telemetry.openmetrics import endpoint
    shares = deal(spec.instances, hosts)
    spec = dataclasses.replace(spec, root=Path(os.path.abspath(spec.root)),
                               **({"pg_bin": Path(os.path.abspath(spec.pg_bin))}
                                  if spec.pg_bin is not None else {}))
    with open_hosts(hosts, cluster_dir, "--hosts") as (client, specs), \
            endpoint(metrics) as live:
        return _Director(client, spec, shares, specs, progress or NeighboursProgress(),
                         labels, live, cluster_here(cluster_dir)).run()


class _Director:
    """One run over several hosts: the record, the parts, what they say, what they are told."""

    def __init__(self, client, spec: NeighboursSpec, shares: dict, specs: list, progress,
                 labels: dict | None, live, here: str | None = None):
        from ..cluster.sampling import HostSamplers
        from ..runs.timeline import make_sampler
        self.client, self.spec, self.shares, self.progress, self.live, self.here = (
            client, spec, shares, progress, live, here)
        self.hosts = tuple(shares)
        placed = sorted(((m, h) for h, ixs in shares.items() for m in members(
            dataclasses.replace(spec, root=spec.root / h), ixs)), key=lambda p: p[0].index)
        self.entries = [{"name": m.name, "role": m.role, "host": h,
                         "datadir": str(m.db.datadir), "port": m.db.port,
                         "db_memory": m.db.db_memory, "status": "pending", "error": None}
                        for m, h in placed]
        self.parts_record = [{"host": h, "instances": [f"pg{i}" for i in shares[h]],
                              "status": "pending", "error": None} for h in self.hosts]
        self.sampler = make_sampler(spec.sample_interval, {}, spec.power,
                                    io_latency=spec.io_latency)
        self.samplers = (HostSamplers(client, self.hosts, spec.sample_interval, spec.power)
                         if self.sampler is not None else None)
        self.record = new_record(
            spec.results_dir, "neighbours", spec.name, {},
            config={"neighbours": spec_dict(spec),
                    "hosts": {"hosts": list(self.hosts),
                              "addresses": {s.name: s.address for s in specs}}},
            workload=spec.workload, instances=self.entries, hosts=self.parts_record,
            **(labels or {}))
        self.parts = None
        self.runs: dict[str, str] = {}  # host -> the id of its own record
        self.ticks: dict[str, dict] = {}
        self.ready: set[str] = set()
        self.told: set[str] = set()  # "go", "measuring", "ended" once each
        self.failure: str | None = None
        self.t0 = time.monotonic()

    def run(self) -> dict:
        from ..cluster.parts import Parts
        self.progress.started(self.record.path)
        unit = get_workload(self.spec.workload).unit_key
        parts = {h: (part, {"spec": self.spec, "host": h, "indices": ix})
                 for h, ix in self.shares.items()}
        self.parts = Parts(self.client, parts, keep_as=f"neighbours-{self.record.path.name}")
        try:
            with recording(self.record, self.sampler, self.progress, after=self._after,
                           metrics=self.live, unit=unit, hosts=self.samplers,
                           here=self.here) as end:
                self.progress.preparing(f"starting the parts on {', '.join(self.hosts)}")
                self.parts.start()
                while self.parts.running:
                    for host, event in self.parts.events(1.0):
                        self._event(host, event)
                    self._direct()
                end.status, end.error = self._outcome()
        finally:
            if self.parts is not None:
                self.parts.close()
        return {**self.record.data, "_path": str(self.record.path)}

    # -- what the parts say ----------------------------------------------------------------
    def _event(self, host: str, ev: dict) -> None:
        kind = ev.get("event")
        part = self._part(host)
        if kind == "preparing":
            self.progress.preparing(f"{host}: {ev.get('what')}")
        elif kind == "started":
            self.runs[host] = str(ev.get("run"))
        elif kind == "ready":
            self.ready.add(host)
            part["status"] = "ready"
        elif kind == "tick":
            self.ticks[host] = ev
        elif kind == "instance":
            self._instance(host, dict(ev.get("entry") or {}))
        elif kind == "mark":
            self._mark(host, ev)
        elif kind == "end":
            result = ev.get("result") or {}
            part["status"] = result.get("status") or ev.get("status") or "failed"
            part["error"] = result.get("error") or ev.get("error")
            for k in ("schema", "stop_errors"):
                if result.get(k):
                    part[k] = result[k]
            if part["status"] == "failed":  # (told to stop, it fails too: already told)
                self._fail(f"host {host}", f"host {host}: {part['error']}")
            self.record.save()
        elif kind == "failed":
            part.update(status="failed", error=ev.get("error"))
            for e in self.entries:
                if e["host"] == host and e["status"] in _RUNNING:
                    e.update(status="failed", error=ev.get("error"))
                    self.progress.instance(e)
            self._fail(f"host {host}", str(ev.get("error")))
            self.record.save()

    def _part(self, host: str) -> dict:
        return next(p for p in self.parts_record if p["host"] == host)

    def _instance(self, host: str, entry: dict) -> None:
        i = next(k for k, e in enumerate(self.entries) if e["name"] == entry.get("name"))
        if entry.get("run") and host in self.runs:
            entry["run"] = f"{HOSTS_DIR}/{host}/{self.runs[host]}/{entry['run']}"
        entry["host"] = host
        self.entries[i].update(entry)
        self.progress.instance(self.entries[i])
        if self.entries[i]["status"] in ("failed", "check-failed"):
            self._fail(str(entry.get("name")), f"{entry.get('name')}: {entry.get('error')}")
        self.record.save()

    def _mark(self, host: str, ev: dict) -> None:
        if self.sampler is None:
            return
        off = self.samplers.offsets.get(host) if self.samplers is not None else None
        t = off.to_coordinator(int(ev["t_ns"])) if off is not None else time.monotonic_ns()
        self.sampler.mark(str(ev.get("name")), t_ns=t, host=host, **(ev.get("attrs") or {}))

    def _fail(self, who: str, why: str) -> None:
        """The first failure (of ``who``: an instance, a host) stops every part."""
        if self.failure is None:
            self.failure = why
            self.parts.send_all(f"stop stopped after {who} failed")
            if "go" not in self.told:  # still preparing: nothing to measure
                self.parts.send_all("cancel")

    # -- what they are told ----------------------------------------------------------------
    def _direct(self) -> None:
        running = set(self.parts.running)
        if "go" not in self.told and running and running <= self.ready \
                and self.failure is None:
            self._tell("go")
            for p in self.parts_record:
                if p["host"] in running:
                    p["status"] = "running"
            self.record.save()
        workloads = [e for e in self.entries if e["role"] != "backup"]
        measuring = sum(t.get("measuring") or 0 for t in self.ticks.values())
        if "go" in self.told and (measuring >= len(workloads)
                                  or any(e["status"] not in _RUNNING for e in workloads)):
            self._tell("measuring")
        if all(e["status"] not in _RUNNING for e in workloads):
            self._tell("ended")
        ticks = [SimpleNamespace(**t) for h, ev in self.ticks.items() if h in running
                 for t in ev.get("ticks") or ()]
        self.progress.tick(time.monotonic() - self.t0, sum(t.tpm or 0 for t in ticks),
                           sum(t.headline or 0 for t in ticks), measuring, len(workloads),
                           sum(ev.get("cycles") or 0 for ev in self.ticks.values()))
        if self.live is not None and ticks:
            self.live.figures.tick_sum(ticks)

    def _tell(self, order: str) -> None:
        if order not in self.told:
            self.told.add(order)
            self.parts.send_all(order)

    # -- the end ---------------------------------------------------------------------------
    def _outcome(self) -> tuple[str, str | None]:
        if self.failure:
            return "failed", self.failure
        bad = [e for e in self.entries if e["status"] != "completed"]
        if bad:
            return "failed", "; ".join(f"{e['name']} {e['status']}: {e.get('error')}"
                                       for e in bad)
        return "completed", None

    def _after(self) -> None:
        """However the run ended: every part stopped and waited for, its late events taken,
        its files fetched, and the averages."""
        from ..cluster.parts import unpack
        if self.parts is not None and self.parts.started:
            self.parts.send_all("cancel")
            results = self.parts.finish()
            for host, event in self.parts.events(0):
                self._event(host, event)
            for h, res in results.items():
                part = self._part(h)
                if res["status"] == "failed" and part["status"] not in ("failed",):
                    part.update(status="failed", error=res["error"])
                try:
                    unpack(res.get("files"), self.record.path / HOSTS_DIR / h)
                    self.parts.release(h)  # here now: the host's copy goes
                except Exception as e:  # noqa: BLE001 - the record says what was lost
                    part["files_error"] = f"cannot unpack its files: {e}"
                if res["status"] == "failed":  # what it measured stays on the host
                    part["kept"] = f"{h}:{self.parts.kept_path(h)}"
                if h in self.runs and (self.record.path / HOSTS_DIR / h / self.runs[h]).is_dir():
                    part["run"] = f"{HOSTS_DIR}/{h}/{self.runs[h]}"
        for e in self.entries:
            if e["status"] in _RUNNING:
                e["status"] = "not run"
            if e.get("run") and not (self.record.path / e["run"]).exists():
                e.pop("run")
        self.record.data["average"] = averages(self.entries,
                                               headline_unit(self.spec.workload)[0])
        errors = [f"{p['host']}: {x}" for p in self.parts_record for x in p.get("stop_errors")
                  or ()]
        if errors:
            self.record.data["stop_errors"] = errors
