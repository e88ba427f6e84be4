"""A plan over the cluster's hosts (``[hosts]``): each cell placed on one host, the hosts'
cells run in parallel, each host's in plan order.

    [hosts]
    names = ["h1", "h2"]              # hosts of the cluster (oltplab cluster up)
    cluster_dir = "oltplab-cluster"   # its folder (this default)

Placement: a cell whose data lives on one of the plan's datastores runs on the host that
offers that datastore (hosts.toml's ``datastores``) and nowhere else; any other cell goes to
the hosts in turn (cell i to host i mod H). Each host runs its cells as a part of its own
(cluster/parts.py: a process there, which loads the same plan file with the same ``--set``
and runs them as ``plan run`` does: servers, schemas, datastores, steps, repeats); its runs
come back into this results folder at the end, each with ``plan.host``. Relative paths in the
plan are taken from this command's folder, which each host must have (the part refuses to
run otherwise). The live metrics endpoint serves nothing for runs on other hosts.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import Interrupted, UsageError
from .model import Plan


def placement(plan: Plan, offered: dict[str, str]) -> dict[int, str]:
    """Cell index -> host; ``offered``: datastore name -> the host that offers it."""
    names = plan.hosts.names
    out, k = {}, 0
    for cell in plan.cells:
        store = cell.datastore.name if cell.datastore is not None else None
        if store is not None:
            host = offered.get(store)
            if host is None or host not in names:
                raise UsageError(f"{plan.path}: cell {cell.name}: no host of hosts.names "
                                 f"({', '.join(names)}) offers datastore {store!r} (hosts.toml's "
                                 "datastores)")
            out[cell.index] = host
        else:
            out[cell.index] = names[k % len(names)]
            k += 1
    return out


# --------------------------------------------------------------------------- on each host

class PartProgress:
    """What a host's share of the plan tells the coordinator, as events."""

    def __init__(self, link):
        self.link = link

    @staticmethod
    def _key(item) -> dict:
        return {"cell": item.cell.index, "step": item.step.index, "item": item.name}

    def item(self, item, todo, of) -> None:
        self.link.emit("item", **self._key(item), todo=list(todo), of=of)

    def building(self, cell, warehouses):
        self.link.emit("building", cell=cell.index, warehouses=warehouses)
        return None

    def run_progress(self, item, repeat):
        return None

    def run_done(self, item, run: dict) -> None:
        self.link.emit("run_done", **self._key(item), run={k: v for k, v in run.items()
                                                          if k != "_path"},
                       folder=Path(run["_path"]).name)

    def item_failed(self, item, error: str) -> None:
        self.link.emit("item_failed", **self._key(item), error=error)

    def datastore(self, name: str, what: str) -> None:
        self.link.emit("datastore", name=name, what=what)


# --------------------------------------------------------------------------- here

def run_on_hosts(plan: Plan, states: list, results_dir: Path, progress, part, settle) -> None:
    """Run ``states`` (the plan's items with repeats to do) on the plan's hosts, in
    parallel, each host's share by ``part`` (plans.run.host_share); each host's runs are
    fetched into ``results_dir``, and ``settle(item, run)`` is called for each that completed
    once it is here (plans.run.supersede). Ctrl-C stops every host and raises Interrupted once
    what they measured is fetched."""
    from ..cluster import load_state
    from ..cluster.client import open_hosts
    from ..cluster.parts import Parts, unpack
    names = plan.hosts.names
    cluster_dir = plan.hosts.cluster_dir
    state = load_state(cluster_dir)
    offered = {d: w.name for w in state.workers for d in w.host.datastores}
    where = placement(plan, offered)
    items = {(s.item.cell.index, s.item.step.index): s.item for s in states}
    shares = {}
    for h in names:
        cells = tuple(i for i, x in where.items() if x == h)
        todo = {f"{s.item.cell.index}/{s.item.step.index}": list(s.todo) for s in states
                if where[s.item.cell.index] == h}
        if todo:
            shares[h] = (part, {"text": Path(plan.path).read_text(), "path": str(plan.path),
                                "overrides": tuple(plan.overrides), "cwd": os.getcwd(),
                                "host": h, "cells": cells, "todo": todo})
    if not shares:
        return
    interrupted, completed = None, []
    with open_hosts(tuple(shares), cluster_dir, "[hosts]") as (client, _):
        parts = Parts(client, shares, keep_as=kept_prefix(plan, results_dir))
        try:
            parts.start()
            while parts.running:
                for host, ev in parts.events(1.0):
                    _event(plan, items, host, ev, results_dir, progress, completed)
        except KeyboardInterrupt:
            interrupted = f"plan {plan.name} interrupted; --resume goes on from there"
            parts.send_all("cancel")
        finally:
            results = parts.finish()
            for host, ev in parts.events(0):
                _event(plan, items, host, ev, results_dir, progress, completed)
            parts.close()
        for host, res in results.items():
            unpack(res.get("files"), Path(results_dir))
            parts.release(host)  # its runs are here: the host's copy goes
            end = parts.ended.get(host) or {}
            error = res["error"] if res["status"] == "failed" else (
                end.get("error") if end.get("status") == "failed" else None)
            if res["status"] == "failed":
                error += (f"; what it measured stays there in {parts.kept_path(host)} until "
                          "plan run --resume fetches it")
            if error:
                progress.item_failed(_first(items, where, host), f"on {host}: {error}")
    for item, run in completed:
        settle(item, run)
    if interrupted:
        raise Interrupted(interrupted)


def kept_prefix(plan: Plan, results_dir: Path) -> str:
    """The name under which the hosts keep this plan's parts' output for this results
    folder (cluster.parts.KEEP_ROOT)."""
    import hashlib
    where = hashlib.sha256(str(Path(results_dir).absolute()).encode()).hexdigest()[:10]
    return f"plan-{plan.name}-{where}"


def fetch_kept_runs(plan: Plan, results_dir: Path, progress) -> None:
    """Bring back into ``results_dir`` what the plan's hosts kept of parts that failed (a host
    marked failed while its part went on, or whose output never came), before ``--resume``
    decides what is left to run."""
    from ..cluster.client import open_hosts
    from ..cluster.parts import fetch_kept
    with open_hosts(tuple(plan.hosts.names), plan.hosts.cluster_dir, "[hosts]") as (client, _):
        got = fetch_kept(client, plan.hosts.names, kept_prefix(plan, results_dir),
                         Path(results_dir))
    for host, folders in got.items():
        for folder, names in folders:
            progress.fetched(host, folder, names)


def _first(items: dict, where: dict, host: str):
    return next(it for (c, _), it in sorted(items.items()) if where[c] == host)


def _event(plan: Plan, items: dict, host: str, ev: dict, results_dir: Path, progress,
           completed: list) -> None:
    kind = ev.get("event")
    item = items.get((ev.get("cell"), ev.get("step")))
    if kind == "item" and item is not None:
        progress.item(item, tuple(ev.get("todo") or ()), ev.get("of"))
    elif kind == "run_done" and item is not None:
        run = {**(ev.get("run") or {}), "_path": str(Path(results_dir) / str(ev.get("folder")))}
        progress.run_done(item, run)
        if run.get("status") == "completed":
            completed.append((item, run))
    elif kind == "item_failed" and item is not None:
        progress.item_failed(item, f"on {host}: {ev.get('error')}")
    elif kind == "datastore":
        progress.datastore(str(ev.get("name")), f"on {host}: {ev.get('what')}")
    elif kind == "building":
        cell = next((c for c in plan.cells if c.index == ev.get("cell")), None)
        if cell is not None:
            progress.building(cell, ev.get("warehouses"))
