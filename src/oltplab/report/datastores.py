"""The storage policies side by side: for each group whose runs record a datastore under
their data directory, what it is made of, the best step's headline (NOPM, or the shop's OPM) with
the IOPS the database issued there (front end) beside those every device of the datastore served
(back end) and their ratio (the write amplification of the policy), latency and CPU there, and the
space its files take after the runs (allocated, data ratio, compression ratio) with the percentage
saved against the baseline group (none between groups on the same datastore), as the vSAN papers
print them; and a bar chart of the space used and held."""

from __future__ import annotations

from .answer import baseline_group
from .charts import bar_chart
from .model import Section, Table
from .runs import Group
from ..runs.timeline import issued
from ..telemetry.derive import bytes_amplification, io_figures
from .stats import mean

MiB = 1024**2


def _store(run) -> dict | None:
    return (run.record.get("datastores") or {}).get("datadir")


def policy(store: dict) -> str:
    if store.get("fs") != "btrfs":
        return store.get("fs") or "?"
    parts = [f"data {store.get('raid')}", f"metadata {store.get('metadata')}",
             f"checksum {store.get('checksum')}"]
    if store.get("compress") not in (None, "none"):
        parts.append(f"compress {store['compress']}")
    if store.get("dedupe"):
        parts.append("dedupe")
    return "btrfs " + ", ".join(parts)


def _unit(run) -> tuple[str, str]:
    """(the step's key of the run's headline, its name): ("nopm", "NOPM"), ("opm", "OPM"),
    ("trps", "trps")."""
    from .. import workloads
    from .units import headline_unit
    return headline_unit(workloads.of_record(run.record).name)


def _best_step(run) -> tuple[dict | None, dict | None]:
    """The step with the highest headline figure (or the first) and its telemetry figures."""
    steps = list(run.steps)
    if not steps:
        return None, None
    key = _unit(run)[0]
    i = max(range(len(steps)), key=lambda k: steps[k].get(key) or 0)
    return steps[i], run.figures[i] if i < len(run.figures) else None


def _sum(*values):
    return None if any(v is None for v in values) else sum(values)


def _at_best(run, store: dict) -> dict:
    """At the step with the best headline: the headline, the front-end IOPS (the database's),
    the back-end IOPS (every member device of the datastore: the step's ``datastore``
    figures; a record without them, over the record's devices found in the step's figures),
    the write amplification, the await ms over all their I/Os, CPU busy % and the per-IO
    p99 ms."""
    step, f = _best_step(run)
    f = f or {}
    whole = f.get("datastore")
    devices = (whole or {}).get("devices") or [d.get("name") for d in store.get("devices") or ()
                                               if d.get("name")]
    io = io_figures(f, issued(step or {}))
    if whole:
        back, wait = _sum(io["back_read_iops"], io["back_write_iops"]), whole.get("await_ms")
    else:
        figures = [x for x in ((f.get("devices") or {}).get(d) for d in devices) if x]
        iops = [(x.get("read_iops") or 0) + (x.get("write_iops") or 0) for x in figures]
        back = sum(iops) if iops else None
        wait = mean([x["await_ms"] for x in figures if x.get("await_ms") is not None])
    idle = (f.get("cpu") or {}).get("cpu_idle_pct")
    per_io = [op.get("p99_us") for d in devices
              for op in ((f.get("io_latency") or {}).get(d) or {}).values()
              if isinstance(op, dict) and op.get("p99_us") is not None]
    return {"headline": (step or {}).get(_unit(run)[0]),
            "front": _sum(io["front_read_iops"], io["front_write_iops"]), "back": back,
            "amplification": io["amplification"], "bytes": bytes_amplification(f, issued(step or {})),
            "await": wait,
            "cpu": None if idle is None else 100 - idle,
            "p99": max(per_io) / 1000 if per_io else None}


def same_datastore(a: dict, b: dict) -> bool:
    """Whether two runs' datastore records are the same datastore: the same name, mount
    and policy (the space between them differs by the workload, not by the policy)."""
    return (a.get("name"), a.get("mount"), policy(a)) == (b.get("name"), b.get("mount"),
                                                          policy(b))


def _ratio(x: float | None) -> str | None:
    """A space ratio with two decimals, whatever its value: 1.00 beside 1.84."""
    return None if x is None else f"{x:.2f}"


def _space(run, store: dict) -> dict:
    return store.get("space_after") or store.get("space_before") or {}


def datastore_section(groups: list[Group], baseline: str | None = None) -> Section | None:
    """None when no run records a datastore."""
    measured = [(g, [(r, _store(r)) for r in g.runs if _store(r)]) for g in groups]
    measured = [(g, pairs) for g, pairs in measured if pairs]
    if not measured:
        return None
    base = baseline_group([g for g, _ in measured], baseline)
    allocated = {g.label: mean([_space(r, s).get("allocated_bytes") for r, s in pairs])
                 for g, pairs in measured}
    base_alloc = allocated.get(base.label)
    base_store = next(pairs[-1][1] for g, pairs in measured if g is base)
    units = sorted({_unit(r)[1] for g, pairs in measured for r, _ in pairs})
    unit = "/".join(units)
    rows = []
    for g, pairs in measured:
        store = pairs[-1][1]
        at = [_at_best(r, s) for r, s in pairs]
        spaces = [_space(r, s) for r, s in pairs]
        alloc = allocated[g.label]
        if g is base:
            saved = "baseline"
        elif same_datastore(store, base_store):
            saved = "same datastore"
        else:
            saved = (round(100 * (1 - alloc / base_alloc), 1) if alloc is not None and base_alloc
                     else None)
        rows.append((g.label, store.get("name"), policy(store), len(store.get("devices") or ()),
                     *(mean([a[k] for a in at]) for k in ("headline", "front", "back",
                                                          "amplification", "bytes", "await",
                                                          "p99", "cpu")),
                     None if alloc is None else round(alloc / MiB, 1),
                     _ratio(mean([x.get("data_ratio") for x in spaces])),
                     _ratio(mean([x.get("compression_ratio") for x in spaces])), saved))
    table = Table("datastores", f"Storage policies: performance and space, against {base.label}",
                  ("group", "datastore", "policy", "devices", f"{unit} (best step)",
                   "front-end IOPS there", "disk IOPS there (back end, every device)",
                   "write amplification there (IOs)", "write amplification there (bytes)",
                   "disk await ms there", "per-IO p99 ms there",
                   "CPU busy % there",
                   "space used MiB", "data ratio", "compression ratio", "% saved"),
                  tuple(rows),
                  caption="Space used is what the file system allocated on its devices for the "
                          "runs' files after the last run, every copy and parity included, "
                          "less what it used empty; the data ratio sets it against the data "
                          "the files hold, the compression ratio is uncompressed / on-disk "
                          "bytes of their extents; % saved is against the baseline's space "
                          "used (not shown for a group on the baseline's own datastore). "
                          "Front-end IOPS are the reads and writes the database issued "
                          "(PostgreSQL's pg_stat_io, InnoDB's data reads and writes); disk "
                          "IOPS are those every device of the datastore served; the "
                          "write amplification is their writes / the database's writes, in "
                          "I/Os and in bytes (a mirror doubles the bytes; the file system's "
                          "metadata, journal and flushes add I/Os, merging removes some). Disk "
                          "IOPS, await and the per-IO p99 (the highest of its devices' "
                          "reads and writes, where --io-latency measured it) are over all the "
                          f"datastore's devices at the step with the highest {unit}; means over "
                          "repeated runs.")
    chart = bar_chart(
        "datastore_space", "Space used per datastore", "datastore", "MiB",
        [("space used (allocated)", "#4c72b0", 0,
          {g.label: [_space(r, s).get("allocated_bytes") and
                     _space(r, s)["allocated_bytes"] / MiB for r, s in pairs]
           for g, pairs in measured}),
         ("data held (logical)", "#dd8452", 1,
          {g.label: [_space(r, s).get("logical_bytes") and
                     _space(r, s)["logical_bytes"] / MiB for r, s in pairs]
           for g, pairs in measured})],
        why="no run recorded the space of its datastore", section="Datastores",
        order=lambda label: [g.label for g, _ in measured].index(label),
        caption="Per datastore: what the file system allocated for the files (every copy and "
                "parity) beside the data they hold.")
    return Section("Datastores", charts=(chart,), tables=(table,))
