"""Charts and tables of TPC-C-derived runs, per user count, as storage whitepapers draw them.

TPM and NOPM are HammerDB's server-side figures (clause 5.4's tpmC is measured differently:
these results are not comparable with audited TPC-C results). Telemetry figures are those of
``telemetry.derive``: averages over each step's measured window, ramp-up excluded.
"""

from __future__ import annotations

from ..loadgen.sequence import describe
from ..telemetry.derive import label as figure_label, sharing_note
from .charts import bar_chart, count, entries, per_step
from .model import Chart, Table
from .runs import Group, RunData

USERS = "virtual users"


def fig(run: RunData, i: int) -> dict | None:
    return run.figures[i] if i < len(run.figures) else None


def cpu(f: dict | None, name: str):
    if not f:
        return None
    return (f.get("cpu") or {}).get(name, f.get(name))


def device(f: dict | None, dev: str, name: str):
    return (((f or {}).get("devices") or {}).get(dev) or {}).get(name)


def power(f: dict | None, name: str):
    return ((f or {}).get("power") or {}).get(name)


def busy_step_devices(groups: list[Group]) -> list[str]:
    """Devices with any I/O in any step's figures, in first-seen order: of each run, those
    that hold its data when its record knows them."""
    seen: dict[str, None] = {}
    for g in groups:
        for r in g.runs:
            held = r.data_devices
            for f in r.figures:
                for dev, d in ((f or {}).get("devices") or {}).items():
                    if held and dev not in held:
                        continue
                    if d and (d.get("iops") or d.get("read_iops") or d.get("write_iops")):
                        seen[dev] = None
    return list(seen)


def _per_user(s: dict, key: str):
    users = s.get("users")
    return s[key] / users if s.get(key) is not None and users else None


def _tx(s: dict, name: str, key: str):
    return ((s.get("transactions") or {}).get(name) or {}).get(key)


def _interval(groups: list[Group]) -> float:
    return next((r.interval_s for g in groups for r in g.runs if r.timeline), 1.0)


def _no_telemetry(groups: list[Group]) -> str:
    if not any(r.has_telemetry for g in groups for r in g.runs):
        return "no step has telemetry and the run folder has no timeline.json"
    return "the telemetry has no such figure"


def charts(groups: list[Group], section: str = "") -> list[Chart]:
    """The per-user-count charts of one or more groups of TPC-C-derived runs."""
    out = []

    def step_value(key):
        return lambda g: per_step(g, lambda r, i, s: s.get(key))

    def new_order(key):  # the headline's transaction: New-Order
        return lambda g: per_step(g, lambda r, i, s: _tx(s, unit_of(r.record), key))

    out.append(_tpm_nopm(groups, step_value, section))
    out.append(bar_chart(
        "tpm_per_user", "TPM per virtual user", USERS, "TPM per virtual user (per minute)",
        entries(groups, [("TPM per user", lambda g: per_step(
            g, lambda r, i, s: _per_user(s, "tpm")))]),
        why="no step has server TPM", section=section,
        caption="Server TPM divided by the step's user count: how much each added user "
                "still adds."))
    out.append(bar_chart(
        "new_order_latency", "New-Order response time per user count", USERS,
        "response time (ms)",
        entries(groups, [("mean", new_order("mean")),
                         ("p99 of New-Order response times", new_order("p99"))]),
        why="no step has New-Order response times", section=section,
        caption="Client-side response times of committed and rolled-back New-Orders "
                "(HDR histograms, microsecond resolution), measured interval only."))
    out += telemetry_charts(groups, section)
    return out


def telemetry_charts(groups: list[Group], section: str = "", orders_per_watt: bool = True
                     ) -> list[Chart]:
    """The per-user-count charts of the host's telemetry, whatever the workload: CPU idle,
    disk latency and IOPS, orders per watt (TPC-C's NOPM per watt), data moved per device."""
    interval = _interval(groups)
    per = "per-second" if interval == 1 else f"per-{interval:g} s"
    no_tel = _no_telemetry(groups)
    devs = busy_step_devices(groups)
    out = []
    out.append(bar_chart(
        "cpu_idle", "CPU idle per user count", USERS, "CPU idle (% of all CPUs)",
        entries(groups, [("CPU idle", lambda g: per_step(
            g, lambda r, i, s: cpu(fig(r, i), "cpu_idle_pct")))]),
        why=no_tel, section=section,
        caption=figure_label("cpu_idle_pct") + ", over each step's measured window."))
    lat_metrics, iops_metrics = [], []
    for dev in devs:
        lat_metrics += [
            (f"{dev} average", lambda g, d=dev: per_step(
                g, lambda r, i, s: device(fig(r, i), d, "await_ms"))),
            (f"{dev} p99 of {per} await", lambda g, d=dev: per_step(
                g, lambda r, i, s: device(fig(r, i), d, "await_p99_ms")))]
        iops_metrics += [
            (f"{dev} reads/s", lambda g, d=dev: per_step(
                g, lambda r, i, s: device(fig(r, i), d, "read_iops"))),
            (f"{dev} writes/s", lambda g, d=dev: per_step(
                g, lambda r, i, s: device(fig(r, i), d, "write_iops")))]
    why_dev = no_tel if no_tel.startswith("no step") else "no device did any I/O"
    out.append(bar_chart(
        "disk_latency", "Disk latency per user count: average and 99th percentile", USERS,
        "latency (ms)", entries(groups, lat_metrics), why=why_dev, section=section,
        caption=f"Average: {figure_label('await_ms', interval)}. p99: "
                f"{figure_label('await_p99_ms', interval)}; a percentile of interval "
                "averages, not of single I/Os."))
    out.append(bar_chart(
        "disk_iops", "Disk IOPS per user count", USERS, "I/O operations per second",
        entries(groups, iops_metrics), why=why_dev, section=section,
        caption="Reads and writes per second of each device, averaged over each step's "
                "measured window."))
    if orders_per_watt:
        out.append(bar_chart(
            "orders_per_watt", "Orders per watt per user count", USERS,
            "NOPM per watt (New-Orders per minute / W)",
            entries(groups, [("orders per watt", lambda g: per_step(
                g, lambda r, i, s: power(fig(r, i), "orders_per_watt")))]),
            why=_power_why(groups, no_tel), section=section,
            caption=figure_label("orders_per_watt") + "; watts averaged over the measured "
                    "window."))
    out.append(_device_totals(groups, devs, why_dev, section))
    out.append(_device_highest(groups, devs, why_dev, per, section))
    return out


def _auto_runs(groups: list[Group]) -> list[RunData]:
    return [r for g in groups for r in g.runs if isinstance(r.record.get("users_auto"), dict)]


def best_users_notes(groups: list[Group]) -> list[str]:
    """One sentence per run that searched for the best user count (``--users auto``)."""
    runs = _auto_runs(groups)
    several = len(groups) > 1 or len(runs) > 1
    return [(f"{r.label}: " if several else "") + describe(r.record["users_auto"]) + "."
            for r in runs]


def _tpm_nopm(groups: list[Group], step_value, section: str) -> Chart:
    """TPM and NOPM per user count; with a ``--users auto`` run, also the workload TPM the
    search compared, and (one such run) its peak and knee marked on the user counts."""
    metrics = [("TPM", step_value("tpm")), ("NOPM", step_value("nopm"))]
    engines = {r.engine or "postgres" for g in groups for r in g.runs}
    sources = [s for e, s in (("postgres", "PostgreSQL: pg_stat_database, every database of the "
                               "server"), ("mariadb", "MariaDB: Com_commit + Com_rollback"))
               if e in engines]
    caption = (f"TPM: server commits and rollbacks per minute ({'; '.join(sources)}); NOPM: "
               "New-Orders per minute (sum of d_next_o_id); both over the measured interval, "
               "ramp-up excluded. Client-side counts are in the tables.")
    cat_label = str
    auto = _auto_runs(groups)
    if auto:
        metrics.insert(1, ("TPM (workload)", step_value("workload_tpm")))
        caption += (" TPM (workload): the workload database's own transactions, the figure "
                    "the search for the best user count compared (--users auto).")
    if len(auto) == 1:
        marks: dict = {}
        a = auto[0].record["users_auto"]
        for what in ("peak", "knee"):
            if isinstance(a.get(what), dict):
                marks.setdefault(a[what].get("users"), []).append(what)
        cat_label = (lambda c: f"{c} ({' and '.join(marks[c])})" if c in marks else str(c))
        caption += " The user counts carry the search's peak and knee."
    return bar_chart("tpm_nopm", "TPM and NOPM per user count", USERS,
                     "transactions per minute", entries(groups, metrics),
                     why="no step has server TPM or NOPM", section=section, caption=caption,
                     cat_label=cat_label)


def _power_why(groups: list[Group], no_tel: str) -> str:
    for g in groups:
        for r in g.runs:
            for f in r.figures:
                reason = power(f, "reason")
                if reason:
                    return f"no power readings: {reason}"
    return no_tel


def _device_values(g: Group, devs: list[str], name: str, how) -> dict:
    """{device: [per run: ``how`` of the figure over the run's steps]}."""
    out: dict = {}
    for r in g.runs:
        for dev in devs:
            vals = [device(f, dev, name) for f in r.figures if f]
            vals = [v for v in vals if v is not None]
            if vals:
                out.setdefault(dev, []).append(how(vals))
    return out


def _device_totals(groups, devs, why, section) -> Chart:
    return bar_chart(
        "device_gb", "Data read and written per device", "device", "GiB (GiB = 2^30 bytes)",
        entries(groups, [("read", lambda g: _device_values(g, devs, "read_gb", sum)),
                         ("written", lambda g: _device_values(g, devs, "written_gb", sum))]),
        why=why, section=section,
        caption="Summed over the measured windows of all steps (ramp-ups excluded).")


def _device_highest(groups, devs, why, per, section) -> Chart:
    return bar_chart(
        "device_max_latency", "Highest latency per device", "device", "latency (ms)",
        entries(groups, [(f"highest {per} r_await",
                          lambda g: _device_values(g, devs, "r_await_max_ms", max)),
                         (f"highest {per} w_await",
                          lambda g: _device_values(g, devs, "w_await_max_ms", max))]),
        why=why, section=section,
        caption=f"The highest {per} average read (write) latency in any step's measured "
                "window: an interval average, not a single I/O.")


# -- tables ------------------------------------------------------------------------------------
def steps_table(run: RunData) -> Table:
    rows = []
    for s in run.steps:
        tx = s.get("transactions") or {}
        rows.append((s.get("users"), s.get("tpm"), s.get("workload_tpm"), s.get("nopm"),
                     s.get("client_tpm"), s.get("client_nopm"), _per_user(s, "tpm"),
                     _per_user(s, "nopm"),
                     s.get("measured_s"), sum((v or {}).get("errors") or 0 for v in tx.values()),
                     sum((v or {}).get("retries") or 0 for v in tx.values()),
                     bool(s.get("partial"))))
    return Table("steps", "Steps", ("users", "TPM (instance)", "TPM (workload)", "NOPM",
                                    "client TPM", "client NOPM", "TPM per user",
                                    "NOPM per user", "measured (s)", "errors", "retries",
                                    "partial"), tuple(rows),
                 caption="TPM (instance) and NOPM: server counters (HammerDB's method; TPM "
                         "counts every database of the server, the telemetry sampler "
                         "included); TPM (workload): the workload's database alone, the "
                         "sampler and oltplab's own statistics flushes excluded; client: "
                         "transactions completed in the measured interval.")


INPUT_SHARES = (("remote order lines", "remote_order_lines"),
                ("remote payments", "remote_payments"),
                ("payments by last name", "payments_by_last_name"),
                ("order-status by last name", "order_status_by_last_name"),
                ("rolled-back New-Orders", "rolled_back_new_orders"),
                ("skipped deliveries", "skipped_deliveries"))


def inputs_table(run: RunData) -> Table:
    rows = []
    for s in run.steps:
        shares = s.get("inputs") or {}
        thr = s.get("throughput") or {}
        rows.append((s.get("users"), *(shares.get(k) for _, k in INPUT_SHARES),
                     shares.get("order_lines_per_order"), thr.get("cv"),
                     len(thr.get("completed") or ()), len(s.get("warnings") or ())))
    return Table("inputs", "Input variability and stability per step",
                 ("users", *(c for c, _ in INPUT_SHARES), "order lines per order",
                  "CV of completions per 10 s", "10 s intervals", "warnings"), tuple(rows),
                 caption="Fractions 0..1 measured over each step's window (TPC-C clause 5.5: "
                         "remote order lines 0.95-1.05%, remote payments 14-16%, by last "
                         "name 57-63%, rolled-back New-Orders 0.9-1.1%, order lines per "
                         "order 9.5-10.5; clause 5.4.5: skipped deliveries at most 1%); "
                         "empty where no such transaction completed.")


def warnings_table(run: RunData) -> Table:
    rows = tuple((s.get("users"), w) for s in run.steps for w in s.get("warnings") or ())
    return Table("warnings", "Warnings", ("users", "warning"), rows,
                 caption="Figures outside their bounds; none means every check held.")


def transactions_table(run: RunData) -> Table:
    from .. import workloads
    rows = []
    for s in run.steps:
        for name in workloads.of_record(run.record).transactions:
            x = (s.get("transactions") or {}).get(name)
            if x is None:
                continue
            rows.append((s.get("users"), name, x.get("count"), x.get("committed"),
                         x.get("rolled_back"), x.get("errors"), x.get("retries"), x.get("mean"),
                         x.get("p50"), x.get("p95"), x.get("p99"), x.get("max")))
    return Table("transactions", "Response times per transaction (ms)",
                 ("users", "transaction", "count", "committed", "rolled back", "errors",
                  "retries", "mean", "p50", "p95", "p99", "max"), tuple(rows),
                 caption="Client-side response times in ms, measured interval only.")


def host_steps_table(run: RunData) -> Table:
    rows = []
    for i, s in enumerate(run.steps):
        f = fig(run, i)
        if f is None:
            continue
        mem = f.get("memory") or {}
        db = f.get("db") or {}
        rows.append((s.get("users"), cpu(f, "cpu_idle_pct"), cpu(f, "cpu_iowait_pct"),
                     cpu(f, "cpu_user_pct"), cpu(f, "cpu_system_pct"), cpu(f, "cpu_steal_pct"),
                     _gib(mem.get("used_bytes")), db.get("commits_s"), db.get("hit_ratio"),
                     power(f, "watts"), power(f, "orders_per_watt")))
    innodb = run.engine == "mariadb"
    return Table("host_per_step", "Host per step",
                 ("users", "CPU idle %", "iowait %", "user %", "system %", "steal %",
                  "memory used (GiB)", "server commits/s",
                  "InnoDB buffer pool hit ratio" if innodb else "buffer hit ratio", "watts",
                  "orders per watt"), tuple(rows),
                 caption="Averages over each step's measured window." + (
                     " Server commits are Com_commit; the hit ratio is InnoDB's buffer pool "
                     "read requests answered without a read from disk." if innodb else ""))


def _gib(x):
    return x / 2**30 if x is not None else None


def devices_table(run: RunData) -> Table:
    interval = run.interval_s
    per = "per-second" if interval == 1 else f"per-{interval:g} s"
    rows = []
    for i, s in enumerate(run.steps):
        f = fig(run, i)
        for dev, d in ((f or {}).get("devices") or {}).items():
            d = d or {}
            rows.append((s.get("users"), dev, d.get("read_iops"), d.get("write_iops"),
                         d.get("read_mb_s"), d.get("write_mb_s"), d.get("await_ms"),
                         d.get("r_await_ms"), d.get("w_await_ms"), d.get("await_p99_ms"),
                         d.get("await_max_ms"), d.get("read_gb"), d.get("written_gb"),
                         d.get("util_pct")))
    # devices that serve more than the data: said where their figures are
    note = sharing_note(run.figures)
    return Table("devices_per_step", "Devices per step",
                 ("users", "device", "reads/s", "writes/s", "read MiB/s", "write MiB/s",
                  "latency avg (ms)", "r_await (ms)", "w_await (ms)",
                  f"p99 of {per} await (ms)", f"highest {per} await (ms)", "GiB read",
                  "GiB written", "%util"), tuple(rows),
                 caption="iostat's figures over each step's measured window; MiB and GiB are "
                         "2^20 and 2^30 bytes." + (f" {note}" if note else ""))


def io_latency_table(run: RunData) -> Table | None:
    """Every IO's latency per step, device and direction (telemetry/iolatency.py); None when
    no step has it (the steps that could not measure it say why in their telemetry)."""
    rows = []
    for i, s in enumerate(run.steps):
        for dev, ops in ((fig(run, i) or {}).get("io_latency") or {}).items():
            if not isinstance(ops, dict):
                continue
            for op in ("read", "write"):
                d = ops.get(op)
                if d:
                    rows.append((s.get("users"), dev, op, d["ios"], d["p50_us"] / 1000,
                                 d["p99_us"] / 1000, d["p999_us"] / 1000, d["max_us"] / 1000))
    if not rows:
        return None
    return Table("io_latency_per_step", "Per-IO latency per step (block layer)",
                 ("users", "device", "op", "IOs", "p50 (ms)", "p99 (ms)", "p99.9 (ms)",
                  "max (ms)"), tuple(rows),
                 caption="Every request from issue to completion at the block layer "
                         "(bpftrace on block_rq_issue/complete), over each step's measured "
                         "window to within 0.25 s; percentiles of all IOs, not of per-second "
                         "averages.")


def host_memory_table(run: RunData) -> Table | None:
    """--host-memory: the limit and peak per step beside what was read from the devices, which
    shows whether the step ran in memory or from the device."""
    rows = []
    for i, s in enumerate(run.steps):
        hm = s.get("host_memory")
        if not hm:
            continue
        f = fig(run, i) or {}
        reads = [d.get("read_mb_s") for d in (f.get("devices") or {}).values()
                 if d and d.get("read_mb_s") is not None]
        rows.append((s.get("users"), _mib(hm.get("limit_bytes")), _mib(hm.get("peak_bytes")),
                     hm.get("peak_scope"), sum(reads) if reads else None,
                     (f.get("db") or {}).get("blks_read_s")))
    if not rows:
        return None
    return Table("host_memory_per_step", "Host memory per step",
                 ("users", "limit (MiB)", "peak (MiB)", "peak of", "device read MiB/s",
                  "InnoDB pages read/s" if run.engine == "mariadb" else "blocks read/s"),
                 tuple(rows),
                 caption="The server's memory control group (page cache included); device "
                         "reads over the measured window, summed over the run's devices.")


def _mib(x):
    return x / 2**20 if x is not None else None


def best_users_table(run: RunData) -> Table | None:
    """--users auto: each step of the search with the TPM it compared, its gain over the step
    before, and which step is the peak and which the knee."""
    auto = run.record.get("users_auto")
    if not isinstance(auto, dict) or not auto.get("steps"):
        return None
    marks = {what: (auto.get(what) or {}).get("users") for what in ("peak", "knee")}
    rows = tuple((s.get("users"), s.get("tpm"), s.get("gain_pct"),
                  " and ".join(w for w, u in marks.items() if u == s.get("users")) or None)
                 for s in auto["steps"])
    return Table("best_users", "Best user count (--users auto)",
                 ("users", "TPM (workload)", "gain over the step before (%)", "step is"), rows,
                 caption=f"The search stops after the first step that gains less than "
                         f"{auto.get('threshold_pct')}%, or at {auto.get('max')} users; "
                         f"it stopped: {auto.get('stopped_because')}.")


def tables(run: RunData) -> list[Table]:
    memory, best, io = host_memory_table(run), best_users_table(run), io_latency_table(run)
    return [steps_table(run), *([best] if best else []), inputs_table(run),
            warnings_table(run), transactions_table(run), host_steps_table(run),
            *([memory] if memory else []), devices_table(run), *([io] if io else [])]


def headline(run: dict) -> str:
    """The step with the highest NOPM: "NOPM 32,395 at 4 users (TPM 174,444)"."""
    return best_step_line(run, "nopm", "NOPM", lambda s: f" (TPM {count(s.get('tpm'))})")


def best_step_line(run: dict, key: str, name: str, more=lambda step: "") -> str:
    """The step with the highest ``key``: "NAME 32,395 at 4 users<more(step)>" ("-" when no
    step has it)."""
    measured = [s for s in run.get("steps") or [] if isinstance(s, dict)
                and s.get(key) is not None]
    if not measured:
        return "-"
    best = max(measured, key=lambda s: s[key])
    users = best.get("users")
    part = " (partial step)" if best.get("partial") else ""
    return (f"{name} {count(best[key])} at {users} user{'' if users == 1 else 's'}"
            f"{more(best)}{part}")


def step_values(g: Group, key: str) -> dict:
    """{users: [the step's ``key`` in each run of the group]}."""
    out: dict = {}
    for r in g.runs:
        for s in r.steps:
            if s.get("users") is not None and s.get(key) is not None:
                out.setdefault(s["users"], []).append(s[key])
    return out


def users_at(n) -> str:
    return f"{n} user" if n == 1 else f"{n} users"


def engine_notes(groups: list[Group]) -> list[str]:
    """Runs on different engines are compared by their workload's headline, NOPM or the
    shop's OPM (``compare.ENGINES_TEXT`` says why)."""
    from .. import workloads
    from .compare import ENGINES_TEXT
    runs = [r for g in groups for r in g.runs]
    if len({r.engine for r in runs}) < 2:
        return []
    units = sorted({workloads.of_record(r.record).unit for r in runs})
    return [ENGINES_TEXT.format(unit=" or ".join(units))]


def unit_of(record: dict) -> str:
    """The transaction type whose commits are the record's headline (TPC-C's New-Order)."""
    from .. import workloads
    return workloads.of_record(record).unit_transaction
