"""The live metrics endpoint (``--metrics-port``): a run's current figures in the OpenMetrics
text format, for Prometheus or anything that scrapes it.

Nothing is computed for it while the run goes: the run hands over what it has already
(``LiveFigures``: the manager's live throughput, about once a second, and each finished
step's latency percentiles), and at scrape time the collector reads those and the sampler's
latest sample (``Sampler.latest``). A figure whose source is absent is absent from the page:
no zeros stand in for what was not measured (a device's latency in a second without I/O, the
power without a meter, the latencies before the first step has ended).

    with endpoint(MetricsSpec(port=9187)) as live:   # config.py; bound before the run
        live.figures.begin(run_id, "nopm", sampler)
        live.figures.tick(tick)                      # the manager's live line, as it goes
        live.figures.step_done(index, step_record)
        live.figures.end()
    # the server is closed here, however the body ended

Every metric carries the labels ``run`` (the run's id, its folder's name), ``step`` (the step
under way, from 1 as the live line counts; empty when none is) and ``host``: a host's one
name, its hosts.toml name in a run on a cluster (this machine's too when it is one of the
cluster's hosts), else this machine's host name. A host sampled both here and by a sampler
of its own (this machine as one of the ``--loadgen`` hosts) is served once, as sampled here.
The server answers GET on any path with the page; it listens on 127.0.0.1 unless told
otherwise.
"""

from __future__ import annotations

import math
import socket
import socketserver
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

from prometheus_client.core import GaugeMetricFamily, StateSetMetricFamily
from prometheus_client.openmetrics.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector, CollectorRegistry

from ..config import MetricsSpec
from ..errors import UsageError

PHASES = ("connecting", "rampup", "measure")
QUANTILES = (("p50", "0.5"), ("p95", "0.95"), ("p99", "0.99"), ("max", "1"))
CPU_MODES = ("user", "system", "idle", "iowait", "steal")
MIB = 1024 * 1024


# --------------------------------------------------------------------------- the figures

class LiveFigures:
    """What the endpoint serves, as the run hands it over; read by the collector at scrape
    time. Each hook stores a reference or a few numbers under a lock: nothing else."""

    def __init__(self, host: str | None = None):
        self.host = host or socket.gethostname()  # this machine's name when a run gives none
        self._here = self.host
        self._lock = threading.Lock()
        self._run: str | None = None
        self._unit: str | None = None
        self._sampler = None
        self._hosts = None  # other hosts' samplers (cluster.sampling.HostSamplers)
        self._tick = None
        self._latencies: tuple[int, dict] | None = None  # (step from 1, its transactions)

    def begin(self, run: str, unit: str | None = None, sampler=None, hosts=None,
              here: str | None = None) -> None:
        """A run starts: its id, its headline unit's key ("nopm", "opm"; None for a run without
        one), its sampler (None: no telemetry), the other hosts' samplers (``hosts``, with
        ``latest() -> {host: (t_ns, columns)}``; None: this host alone) and this machine's
        name for the run (``here``: its hosts.toml name; None: ``host``)."""
        with self._lock:
            self._run, self._unit, self._sampler, self._hosts = run, unit, sampler, hosts
            self._here = here or self.host
            self._tick, self._latencies = None, None

    def end(self) -> None:
        """The run ended: the page is empty until the next one begins."""
        with self._lock:
            self._run = self._unit = self._sampler = self._tick = self._latencies = None
            self._hosts = None

    def tick(self, tick) -> None:
        """The manager's live figures (a ``loadgen.step.Tick`` or a ``Throughput``)."""
        self._tick = tick

    def tick_sum(self, ticks: list) -> None:
        """Several workloads' ticks at once (a neighbours run's instances): their sums, the
        phase they share (none when they differ), a rate only when each has one."""
        phases = {t.phase for t in ticks}
        spans = [getattr(t, "rate_s", None) for t in ticks]
        self._tick = Throughput(phases.pop() if len(phases) == 1 else None,
                                sum(t.tpm for t in ticks), sum(t.headline for t in ticks),
                                sum(t.users for t in ticks),
                                rate_s=min(spans) if spans and all(spans) else None)

    def step_done(self, index: int, step: dict) -> None:
        """A step (``index`` from 0, as the run counts it) ended: its record's latencies."""
        transactions = step.get("transactions")
        if isinstance(transactions, dict):
            with self._lock:
                self._latencies = (index + 1, transactions)

    def snapshot(self) -> dict | None:
        """What the collector reads (None between runs)."""
        with self._lock:
            if self._run is None:
                return None
            sampler, hosts, tick = self._sampler, self._hosts, self._tick
            snap = {"run": self._run, "unit": self._unit, "tick": tick,
                    "latencies": self._latencies, "host": self._here}
        latest = sampler.latest() if sampler is not None else None
        snap["sample"] = latest[1] if latest is not None else {}
        others = hosts.latest() if hosts is not None else {}
        snap["hosts"] = {name: values for name, (_, values) in others.items()
                         if name != snap["host"]}  # this machine: served as sampled here
        return snap


@dataclass(frozen=True)
class Throughput:
    """Live figures that are not one step's (a neighbours run sums its instances')."""

    phase: str | None
    tpm: int
    headline: int  # the workload's headline unit per minute (NOPM, the shop's OPM)
    users: int | None = None
    step: int | None = None  # from 0
    rate_s: float | None = None  # the seconds the rates span (None: no rate yet)


# --------------------------------------------------------------------------- the collector

def _value(x) -> float | None:
    """A sample's value, or None where nothing was measured (NaN, None)."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x


class FiguresCollector(Collector):
    """The OpenMetrics families of a ``LiveFigures``: every one labelled run, step, host."""

    def __init__(self, figures: LiveFigures):
        self.figures = figures

    def collect(self) -> Iterator:
        snap = self.figures.snapshot()
        if snap is None:
            return
        tick = snap["tick"]
        step = "" if tick is None or tick.step is None else str(tick.step + 1)
        base = [snap["run"], step, snap["host"]]
        names = ["run", "step", "host"]
        yield from _run_families(names, base, tick, snap["unit"])
        yield from _latency_families(names, snap, snap["host"])
        samples = [(base, snap["sample"])]
        samples += [([snap["run"], step, name], values)
                     for name, values in snap.get("hosts", {}).items()]
        yield from _sample_families(names, samples)


def _gauge(name: str, doc: str, names: list[str], extra: tuple[str, ...] = (),
           unit: str = "") -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, labels=[*names, *extra], unit=unit)


def _run_families(names, base, tick, unit):
    if tick is None:
        return
    if tick.phase in PHASES:
        phase = StateSetMetricFamily("oltplab_run_phase", "The phase of the step under way.",
                                     labels=names)
        phase.add_metric(base, {p: p == tick.phase for p in PHASES})
        yield phase
    if tick.users is not None:
        users = _gauge("oltplab_users", "Virtual users of the step under way.", names)
        users.add_metric(base, tick.users)
        yield users
    if getattr(tick, "rate_s", None):  # a rate over the last seconds, not a first tick's 0
        g = _gauge("oltplab_throughput_per_minute", "Client-side throughput over the last "
                   "few seconds: transactions (tpm) and the workload's headline unit (nopm, "
                   "opm) per minute.", names, ("kind",))
        g.add_metric([*base, "tpm"], tick.tpm)
        if unit:
            g.add_metric([*base, unit], tick.headline)
        yield g


def _latency_families(names, snap, host):
    if snap["latencies"] is None:
        return
    index, transactions = snap["latencies"]
    g = _gauge("oltplab_transaction_latency_seconds", "Response time percentiles of each "
               "transaction type over the last finished step's measured window (quantile 1 "
               "is the longest).", names, ("transaction", "quantile"), unit="seconds")
    for name, entry in transactions.items():
        for key, q in QUANTILES:
            ms = _value(entry.get(key)) if isinstance(entry, dict) else None
            if ms is not None:
                g.add_metric([snap["run"], str(index), host, name, q], round(ms / 1000.0, 9))
    if g.samples:
        yield g


def _sample_families(names, samples: list[tuple[list, dict]]):
    """The host figures of each (labels, sample) pair: this host's and each other host's, in
    one family per metric."""
    cpu = _gauge("oltplab_cpu_ratio", "Share of the host's CPU time by mode over the last "
                 "sample.", names, ("mode",), unit="ratio")
    busy = _gauge("oltplab_cpu_busy_ratio", "Share of the host's CPU time busy (user and "
                  "system) over the last sample.", names, unit="ratio")
    mem = _gauge("oltplab_memory_bytes", "Host memory: used, page cache, dirty.", names,
                 ("kind",), unit="bytes")
    power = _gauge("oltplab_power_watts", "Power drawn, from the run's power meter.",
                   names, unit="watts")
    for base, sample in samples:
        for mode in CPU_MODES:
            v = _value(sample.get(f"cpu.{mode}"))
            if v is not None:
                cpu.add_metric([*base, mode], v / 100.0)
        user, system = _value(sample.get("cpu.user")), _value(sample.get("cpu.system"))
        if user is not None and system is not None:  # a second with no idle tick sums to
            busy.add_metric(base, min(1.0, (user + system) / 100.0))  # 1 + 2e-16 in floats
        for kind in ("used", "cached", "dirty"):
            v = _value(sample.get(f"mem.{kind}_bytes"))
            if v is not None:
                mem.add_metric([*base, kind], v)
        watts = _value(sample.get("power.watts"))
        if watts is not None:
            power.add_metric(base, watts)
    for family in (cpu, busy):
        if family.samples:
            yield family
    yield from _device_families(names, samples)
    for family in (mem, power):
        if family.samples:
            yield family


def _devices(sample: dict) -> list[str]:
    """The devices of the sample's ``disk.<device>.<metric>`` columns, in their order."""
    seen: dict[str, None] = {}
    for column in sample:
        if column.startswith("disk."):
            seen.setdefault(column[5:].rsplit(".", 1)[0], None)
    return list(seen)


def _device_families(names, samples: list[tuple[list, dict]]):
    extra = ("device", "direction")
    iops = _gauge("oltplab_device_iops", "Completed I/O per second of a block device.", names,
                  extra)
    rate = _gauge("oltplab_device_throughput_bytes_per_second", "Bytes per second read or "
                  "written by a block device.", names, extra, unit="bytes_per_second")
    lat = _gauge("oltplab_device_latency_seconds", "Mean time an I/O of a block device took "
                 "(iostat's await); absent in a second without I/O.", names, extra,
                 unit="seconds")
    util = _gauge("oltplab_device_busy_ratio", "Share of time a block device had I/O in "
                  "flight (iostat's %util).", names, ("device",), unit="ratio")
    for base, sample in samples:
        for dev in _devices(sample):
            for direction, d in (("read", "r"), ("write", "w")):
                labels = [*base, dev, direction]
                for family, column, scale in ((iops, f"{d}_s", 1.0), (rate, f"{d}MB_s", MIB),
                                              (lat, f"{d}_await", 1e-3)):
                    v = _value(sample.get(f"disk.{dev}.{column}"))
                    if v is not None:
                        family.add_metric(labels, v * scale)
            v = _value(sample.get(f"disk.{dev}.util"))
            if v is not None:
                util.add_metric([*base, dev], v / 100.0)
    for family in (iops, rate, lat, util):
        if family.samples:
            yield family


def exposition(figures: LiveFigures) -> bytes:
    """The OpenMetrics page of ``figures`` (a registry of its own, never the global one)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FiguresCollector(figures))
    return generate_latest(registry)


# --------------------------------------------------------------------------- the server

class _Handler(BaseHTTPRequestHandler):
    server: "_Server"

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        try:
            body = exposition(self.server.figures)
        except Exception as e:  # noqa: BLE001 - the scraper hears it, the run goes on
            # the reason phrase is fixed (a status line is latin-1); the cause goes in the body
            self.send_error(500, "Internal Server Error",
                            f"{type(e).__name__}: {e}".encode("ascii", "replace").decode())
            return
        self.send_response(200)
        self.send_header("Content-Type", CONTENT_TYPE_LATEST)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args) -> None:  # noqa: A002 - the run's output stays ours
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    figures: LiveFigures

    def handle_error(self, request, client_address) -> None:
        """A scraper that went away mid-answer (a broken pipe, a reset) is its own business:
        the run's output gets no traceback (socketserver prints one by default)."""

    def server_bind(self) -> None:
        """Bind without HTTPServer's reverse lookup of the address (socket.getfqdn), which
        can wait on a resolver for seconds."""
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), \
            int(self.server_address[1])


class Endpoint:
    """The HTTP server of one command's runs (a plan's too): ``start`` binds it or raises
    UsageError in one line, ``stop`` closes it."""

    def __init__(self, spec: MetricsSpec, figures: LiveFigures | None = None):
        self.spec = spec
        self.figures = figures or LiveFigures()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> "Endpoint":
        where = f"--metrics-listen {self.spec.listen} --metrics-port {self.spec.port}"
        try:
            infos = socket.getaddrinfo(self.spec.listen, self.spec.port, type=socket.SOCK_STREAM,
                                       flags=socket.AI_PASSIVE)
        except (socket.gaierror, UnicodeError) as e:
            raise UsageError(f"{where}: not an address of this host ({e})") from None
        family = infos[0][0]
        server_class = type("_Server6" if family == socket.AF_INET6 else "_Server4", (_Server,),
                            {"address_family": family})
        try:
            self._server = server_class(infos[0][4], _Handler)
        except OSError as e:
            raise UsageError(f"{where}: cannot listen there: {e.strerror or e}") from None
        self._server.figures = self.figures
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={
            "poll_interval": 0.2}, name="oltplab-metrics", daemon=True)
        self._thread.start()
        return self

    @property
    def address(self) -> tuple[str, int]:
        """Where it listens (the port the kernel gave, for port 0)."""
        host, port = self._server.server_address[:2] if self._server else (self.spec.listen,
                                                                            self.spec.port)
        return str(host), int(port)

    def record(self) -> dict:
        """run.json's ``metrics``: where the endpoint listened."""
        host, port = self.address
        return {"address": host, "port": port, "format": "openmetrics"}

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(5.0)
        self._server = self._thread = None


@contextmanager
def endpoint(metrics: "MetricsSpec | Endpoint | None") -> Iterator["Endpoint | None"]:
    """The endpoint for a run: None without one; a running one as it is (its owner stops
    it); one started from a spec here and stopped however the body ends."""
    if metrics is None or isinstance(metrics, Endpoint):
        yield metrics
        return
    ep = Endpoint(metrics).start()
    try:
        yield ep
    finally:
        ep.stop()
