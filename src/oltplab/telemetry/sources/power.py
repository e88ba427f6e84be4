"""Power in watts, from whichever meter the host has; none -> unavailable, never invented.

Plugins, tried in the order given (``auto`` = RAPL, then IPMI DCMI):

- ``rapl[:ROOT]``: the energy counters of /sys/class/powercap (intel-rapl zones; AMD CPUs
  use the same driver). Watts = Δenergy / interval, exact over the interval. A counter runs
  from 0 to ``max_energy_range_uj`` and wraps. Covered: the CPU packages and their DRAM
  domains, or the whole platform where a ``psys`` zone exists (it contains the others, so
  it is used alone). Disks, fans and power supplies are outside RAPL's view. Usually
  absent in virtual machines; ``energy_uj`` is readable by root only since Linux 5.10.
- ``ipmi``: ``ipmitool dcmi power reading`` (the BMC's instantaneous reading, whole server).
- ``redfish:URL`` (sources/redfish.py): a chassis, e.g. ``https://bmc/redfish/v1/Chassis/1``:
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

import math
import os
import re
import shlex
import shutil
import subprocess
import threading
import time
from pathlib import Path

from ...errors import UsageError
from . import NAN, Source

COLUMN = "power.watts"
_NUMBER = re.compile(rb"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_DCMI = re.compile(r"Instantaneous power reading\s*:\s*([0-9.]+)\s*Watts", re.I)
_DCMI_STATE = re.compile(r"Power reading state is\s*:\s*(\w+)", re.I)


class PowerUnavailable(Exception):
    """This meter is not there (the reason is the message)."""


# -- parsing (pure) ------------------------------------------------------------------------------
def parse_watts(output: bytes) -> float:
    """The first number a power command printed."""
    m = _NUMBER.search(output)
    if not m:
        text = output.decode(errors="replace").strip()[:60]
        raise ValueError(f"no number in the command's output {text!r}")
    watts = float(m.group())
    if not math.isfinite(watts) or watts < 0:
        raise ValueError(f"{watts} is not a power reading")
    return watts


def parse_dcmi(text: str) -> float:
    """Watts from ``ipmitool dcmi power reading``; a deactivated reading is unavailable."""
    state = _DCMI_STATE.search(text)
    if state and state.group(1).lower() != "activated":
        raise PowerUnavailable(f"the BMC's DCMI power reading is {state.group(1)}")
    m = _DCMI.search(text)
    if not m:
        raise ValueError("no 'Instantaneous power reading' in ipmitool's output")
    return float(m.group(1))


def rapl_delta(prev_uj: int, cur_uj: int, max_range_uj: int) -> int:
    """Energy between two readings of a counter that wraps after ``max_range_uj``."""
    if cur_uj >= prev_uj:
        return cur_uj - prev_uj
    return cur_uj + max_range_uj - prev_uj


# -- plugins -------------------------------------------------------------------------------------
class PowerPlugin:
    """A meter. ``probe()`` raises PowerUnavailable or returns details for the timeline."""

    kind = "power"
    polled = True  # read_watts() is slow: a thread polls it

    def probe(self) -> dict:
        raise NotImplementedError

    def read_watts(self) -> float:
        raise NotImplementedError


class RaplPower(PowerPlugin):
    kind = "rapl"
    polled = False

    def __init__(self, root: str | Path = "/sys/class/powercap"):
        self.root = Path(root)
        self.zones: list[tuple[str, Path, int]] = []  # (name, energy_uj path, max range)

    def probe(self) -> dict:
        try:
            entries = sorted(os.listdir(self.root))
        except OSError:
            raise PowerUnavailable(f"no {self.root} (no RAPL energy counters)") from None
        top = [e for e in entries if re.fullmatch(r"intel-rapl:\d+", e)]
        sub = [e for e in entries if re.fullmatch(r"intel-rapl:\d+:\d+", e)]
        names = {e: _read_text(self.root / e / "name") for e in top + sub}
        psys = [e for e in top if names[e] == "psys"]
        if psys:
            chosen = psys
        else:
            packages = [e for e in top if (names[e] or "").startswith("package")]
            chosen = packages + [e for e in sub if names[e] == "dram"
                                 and e.rsplit(":", 1)[0] in packages]
        if not chosen:
            raise PowerUnavailable(f"no RAPL package or psys zone in {self.root}")
        zones = []
        for e in chosen:
            path = self.root / e / "energy_uj"
            try:
                int(path.read_text())
                max_range = int((self.root / e / "max_energy_range_uj").read_text())
            except PermissionError:
                raise PowerUnavailable(f"{path} is readable by root only") from None
            except (OSError, ValueError) as err:
                raise PowerUnavailable(f"cannot read {path}: {err}") from None
            label = names[e] if e in top else f"{names[e.rsplit(':', 1)[0]]}/{names[e]}"
            zones.append((label, path, max_range))
        self.zones = zones
        return {"zones": [z[0] for z in zones], "covers": "CPU packages and DRAM"
                if not psys else "platform (psys)"}

    def read_energy(self) -> list[int]:
        return [int(path.read_bytes()) for _, path, _ in self.zones]

    def watts(self, prev: list[int], cur: list[int], dt_s: float) -> float:
        joules = sum(rapl_delta(p, c, z[2]) for p, c, z in zip(prev, cur, self.zones)) / 1e6
        return joules / dt_s if dt_s > 0 else NAN


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


class CommandPower(PowerPlugin):
    kind = "command"

    def __init__(self, command, timeout: float = 5.0):
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise UsageError("--power cmd: give a command that prints watts")
        self.timeout = timeout

    def _run(self) -> bytes:
        try:
            p = subprocess.run(self.argv, capture_output=True, timeout=self.timeout,
                               stdin=subprocess.DEVNULL)
        except FileNotFoundError:
            raise PowerUnavailable(f"{self.argv[0]}: command not found") from None
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{self.argv[0]} did not answer within {self.timeout:g} s") from None
        if p.returncode != 0:
            first = (p.stderr or p.stdout).decode(errors="replace").strip().splitlines()
            raise RuntimeError(f"{self.argv[0]} exited with {p.returncode}"
                               + (f": {first[0]}" if first else ""))
        return p.stdout

    def probe(self) -> dict:
        try:
            watts = self.read_watts()
        except PowerUnavailable:
            raise
        except Exception as e:
            raise PowerUnavailable(str(e)) from None
        return {"command": self.argv, "first_reading_w": watts}

    def read_watts(self) -> float:
        return parse_watts(self._run())


class IpmiPower(CommandPower):
    kind = "ipmi"

    def __init__(self, timeout: float = 5.0):
        super().__init__(["ipmitool", "dcmi", "power", "reading"], timeout)

    def probe(self) -> dict:
        if shutil.which("ipmitool") is None:
            raise PowerUnavailable("ipmitool is not installed")
        return super().probe()

    def read_watts(self) -> float:
        return parse_dcmi(self._run().decode(errors="replace"))


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
        from .redfish import RedfishPower

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
