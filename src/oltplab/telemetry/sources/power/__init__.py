"""Power in watts, from whichever meter the host has; none -> unavailable, never invented.

Plugins, tried in the order given (``auto`` = RAPL, then IPMI DCMI):

- ``rapl[:ROOT]``: the energy counters of /sys/class/powercap (intel-rapl zones; AMD CPUs
  use the same driver). Watts = Δenergy / interval, exact over the interval. A counter runs
  from 0 to ``max_energy_range_uj`` and wraps. Covered: the CPU packages and their DRAM
  domains, or the whole platform where a ``psys`` zone exists (it contains the others, so
  it is used alone). Disks, fans and power supplies are outside RAPL's view. Usually
  absent in virtual machines; ``energy_uj`` is readable by root only since Linux 5.10.
- ``ipmi``: ``ipmitool dcmi power reading`` (the BMC's instantaneous reading, whole server).
- ``redfish:URL`` (power/redfish.py): a chassis, e.g. ``https://bmc/redfish/v1/Chassis/1``:
  ``Power`` -> ``PowerControl[0].PowerConsumedWatts``; newer services:
  ``EnvironmentMetrics`` -> ``PowerWatts.Reading``, or ``PowerSubsystem`` -> the power
  supplies' ``Metrics`` -> ``InputPowerWatts.Reading``, summed. Credentials come from
  OLTPLAB_REDFISH_USER and OLTPLAB_REDFISH_PASSWORD (never from the command line);
  OLTPLAB_REDFISH_INSECURE=1 accepts a BMC's self-signed certificate.
- ``cmd:COMMAND``: any command that prints watts (the first number of its output). It runs
  without a shell; use ``sh -c '...'`` for a pipeline.

Meters that answer slowly (ipmi, redfish, cmd) are polled by their own thread once per
interval; a sample holds the mean of the readings that completed within it, or null.
"""

from __future__ import annotations

import os
import threading
import time

from ....errors import UsageError
from .. import NAN, Source
from .base import COLUMN, PowerPlugin, PowerUnavailable
from .cmd import CommandPower, IpmiPower
from .rapl import RaplPower
from .redfish import RedfishPower

__all__ = ["COLUMN", "CommandPower", "IpmiPower", "PowerPlugin", "PowerSource", "PowerUnavailable",
           "RaplPower", "RedfishPower", "parse_power_spec"]


def parse_power_spec(spec) -> list[PowerPlugin]:
    """``auto`` | ``none`` | ``rapl[:ROOT]`` | ``ipmi`` | ``redfish:URL`` | ``cmd:COMMAND``,
    or plugins / a list of them; the list is tried in order."""
    if spec is None:
        return []
    if isinstance(spec, PowerPlugin):
        return [spec]
    if isinstance(spec, (list, tuple)):
        return [p for item in spec for p in parse_power_spec(item)]
    text = str(spec).strip()
    kind, sep, arg = text.partition(":")
    kind = kind.lower()
    if kind == "auto" and not sep:
        return [RaplPower(), IpmiPower()]
    if kind in ("none", "off") and not sep:
        return []
    if kind == "rapl":
        return [RaplPower(arg) if arg else RaplPower()]
    if kind == "ipmi" and not sep:
        return [IpmiPower()]
    if kind == "redfish" and arg:
        return [RedfishPower(arg, os.environ.get("OLTPLAB_REDFISH_USER"),
                             os.environ.get("OLTPLAB_REDFISH_PASSWORD"),
                             verify_tls=os.environ.get("OLTPLAB_REDFISH_INSECURE") != "1")]
    if kind in ("cmd", "command") and arg.strip():
        return [CommandPower(arg)]
    raise UsageError(f"--power: {text!r} is not one of auto, none, rapl, ipmi, redfish:URL, "
                     "cmd:COMMAND")


# -- the sampler's source ------------------------------------------------------------------------
class _Poller:
    """Reads a slow meter once per interval in its own thread; keeps (t_ns, watts)."""

    def __init__(self, plugin: PowerPlugin, interval_s: float, errors: list[str]):
        self.plugin, self.interval_s, self.errors = plugin, interval_s, errors
        self.readings: list[tuple[int, float]] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="oltplab-power", daemon=True)

    def _run(self) -> None:
        while not self.stopping.is_set():
            started = time.monotonic()
            try:
                watts = self.plugin.read_watts()
                with self.lock:
                    self.readings.append((time.monotonic_ns(), watts))
            except Exception as e:  # never raise from the thread
                with self.lock:
                    self.errors.append(f"{self.plugin.kind}: {e}")
            self.stopping.wait(max(0.0, self.interval_s - (time.monotonic() - started)))

    def take(self, until_ns: int) -> list[float]:
        with self.lock:
            done = [w for t, w in self.readings if t <= until_ns]
            self.readings = [(t, w) for t, w in self.readings if t > until_ns]
        return done


class PowerSource(Source):
    """The first available plugin of ``spec``; ``info`` says which, or why none."""

    name = "power"

    def __init__(self, spec="auto", interval_s: float = 1.0):
        super().__init__()
        self.plugins = parse_power_spec(spec)
        self.interval_s = interval_s
        self.plugin: PowerPlugin | None = None
        self.info: dict = {"available": False, "source": None,
                           "reason": "power measurement turned off", "tried": []}
        self._poller: _Poller | None = None
        self._prev: list[int] | None = None
        self._prev_t = 0

    def open(self) -> None:
        tried = []
        for plugin in self.plugins:
            try:
                details = plugin.probe()
            except Exception as e:  # PowerUnavailable, or a meter that fails oddly
                tried.append({"source": plugin.kind, "reason": str(e)})
                continue
            self.plugin = plugin
            self.info = {"available": True, "source": plugin.kind, "reason": None,
                         "tried": tried, **details}
            break
        else:
            if self.plugins:
                self.info = {"available": False, "source": None,
                             "reason": "; ".join(t["reason"] for t in tried), "tried": tried}
            return
        self.columns = [COLUMN]
        self.units = {COLUMN: "W"}
        if self.plugin.polled:
            self._poller = _Poller(self.plugin, self.interval_s, self.errors)
            self._poller.thread.start()

    def read(self, t_ns: int) -> list[float]:
        if self.plugin is None:
            return []
        if self._poller is not None:
            done = self._poller.take(t_ns)
            return [sum(done) / len(done) if done else NAN]
        cur = self.plugin.read_energy()
        prev, prev_t = self._prev, self._prev_t
        self._prev, self._prev_t = cur, t_ns
        if prev is None:
            return [NAN]
        return [self.plugin.watts(prev, cur, (t_ns - prev_t) / 1e9)]

    def describe(self) -> dict:
        return dict(self.info)

    def close(self) -> None:
        if self._poller is not None:
            self._poller.stopping.set()
            self._poller.thread.join(timeout=1.0)
