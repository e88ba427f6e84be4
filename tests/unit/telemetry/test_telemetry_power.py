"""Power plugins: recorded meter outputs, a fake powercap tree, a local Redfish service and a
real command; none available -> unavailable, never invented."""

from __future__ import annotations

import base64
import json
import math
import shutil
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from oltplab.errors import UsageError
from oltplab.telemetry.sampler import Sampler
from oltplab.telemetry.sources.power import (CommandPower, IpmiPower, PowerSource,
                                             PowerUnavailable, RaplPower, parse_power_spec)
from oltplab.telemetry.sources.power.base import parse_dcmi, parse_watts, rapl_delta
from oltplab.telemetry.sources.power.redfish import RedfishPower

DCMI_ACTIVE = """
    Instantaneous power reading:                   220 Watts
    Minimum during sampling period:                 96 Watts
    Maximum during sampling period:                300 Watts
    Average power reading over sample period:      221 Watts
    IPMI timestamp:                           Thu Jan  1 00:00:00 2026
    Sampling period:                          00000001 Seconds.
    Power reading state is:                   activated
"""
DCMI_OFF = DCMI_ACTIVE.replace("activated", "deactivated")


def test_dcmi_reading():
    assert parse_dcmi(DCMI_ACTIVE) == 220.0
    with pytest.raises(PowerUnavailable, match="deactivated"):
        parse_dcmi(DCMI_OFF)
    with pytest.raises(ValueError):
        parse_dcmi("Error: Unable to establish IPMI v2 / RMCP+ session")


def test_watts_from_any_output():
    assert parse_watts(b"123.4\n") == 123.4
    assert parse_watts(b"PSU total: 95.5 W\n") == 95.5
    assert parse_watts(b"1.5e2") == 150.0
    for bad in (b"", b"n/a\n", b"-5"):
        with pytest.raises(ValueError):
            parse_watts(bad)


def test_rapl_counter_wraps_at_its_range():
    assert rapl_delta(1000, 5000, 10**9) == 4000
    assert rapl_delta(262143328850 - 100, 900, 262143328850) == 1000


def make_powercap(root: Path, zones: dict[str, tuple[str, int, int]]) -> Path:
    """zones: {'intel-rapl:0': (name, energy_uj, max_energy_range_uj)}"""
    for zone, (name, energy, max_range) in zones.items():
        z = root / zone
        z.mkdir(parents=True, exist_ok=True)
        (z / "name").write_text(name + "\n")
        (z / "energy_uj").write_text(f"{energy}\n")
        (z / "max_energy_range_uj").write_text(f"{max_range}\n")
    return root


def test_rapl_zones_packages_and_dram_or_psys_alone(tmp_path):
    big = 262143328850
    tree = make_powercap(tmp_path / "a", {
        "intel-rapl:0": ("package-0", 1, big), "intel-rapl:0:0": ("core", 1, big),
        "intel-rapl:0:1": ("dram", 1, big), "intel-rapl:1": ("package-1", 1, big),
        "intel-rapl-mmio:0": ("package-0", 1, big)})
    rapl = RaplPower(tree)
    assert rapl.probe()["zones"] == ["package-0", "package-1", "package-0/dram"]
    with_psys = make_powercap(tmp_path / "b", {"intel-rapl:0": ("package-0", 1, big),
                                               "intel-rapl:1": ("psys", 1, big)})
    assert RaplPower(with_psys).probe() == {"zones": ["psys"], "covers": "platform (psys)"}
    with pytest.raises(PowerUnavailable, match="no RAPL package"):
        RaplPower(make_powercap(tmp_path / "c", {"intel-rapl:0:0": ("core", 1, big)})).probe()
    with pytest.raises(PowerUnavailable, match="no RAPL energy counters"):
        RaplPower(tmp_path / "missing").probe()


def test_rapl_watts_through_the_sampler_with_a_wrap(tmp_path):
    """A writer thread plays a 50 W package whose counter wraps every 0.6 s."""
    max_range = 30_000_000
    tree = make_powercap(tmp_path, {"intel-rapl:0": ("package-0", 0, max_range)})
    energy = tree / "intel-rapl:0" / "energy_uj"
    start = time.monotonic()
    done = threading.Event()

    def play():
        while not done.is_set():
            uj = int(50e6 * (time.monotonic() - start)) % max_range
            tmp = energy.with_suffix(".tmp")
            tmp.write_text(f"{uj}\n")
            tmp.replace(energy)
            time.sleep(0.002)

    writer = threading.Thread(target=play, daemon=True)
    writer.start()
    try:
        time.sleep(0.05)
        s = Sampler(0.1, power=f"rapl:{tree}", devices=[], interfaces=[])
        s.start()
        time.sleep(1.5)
        tl = s.stop()
    finally:
        done.set()
        writer.join()
    assert tl.power["available"] and tl.power["source"] == "rapl"
    watts = [w for w in tl.columns["power.watts"] if w is not None]
    dts = [d for w, d in zip(tl.columns["power.watts"], tl.columns["dt_s"]) if w is not None]
    mean = sum(w * d for w, d in zip(watts, dts)) / sum(dts)
    # the writer thread may fall behind on a loaded host (the suite runs in two processes):
    # a stall of 100 ms moves the mean by 5 W over 1.5 s
    assert mean == pytest.approx(50.0, rel=0.1)
    full = [w for w, d in zip(tl.columns["power.watts"], tl.columns["dt_s"])
            if w is not None and d >= 0.05]
    # no lost or doubled energy across the wraps: a wrap handled wrongly moves a 0.1 s sample
    # by 300 W (30 J); a stalled writer moves one sample towards 0 W and the next above 50 W
    assert min(full) >= 0 and max(full) < 250, full


def test_command_plugin_for_real():
    cmd = CommandPower("echo 123.4")
    assert cmd.probe()["first_reading_w"] == 123.4
    s = Sampler(0.1, power="cmd:echo 123.4", devices=[], interfaces=[])
    s.start()
    time.sleep(0.6)
    tl = s.stop()
    assert tl.power["available"] and tl.power["source"] == "command"
    watts = [w for w in tl.columns["power.watts"] if w is not None]
    assert watts and set(watts) == {123.4}
    assert tl.units["power.watts"] == "W"


def test_failing_commands_are_unavailable():
    with pytest.raises(PowerUnavailable, match="command not found"):
        CommandPower("no-such-power-meter-here").probe()
    with pytest.raises(PowerUnavailable, match="exited with 1"):
        CommandPower("false").probe()
    with pytest.raises(PowerUnavailable, match="no number"):
        CommandPower("echo n/a").probe()


def test_nothing_available_is_said_so():
    src = PowerSource([RaplPower("/nonexistent/powercap"), CommandPower("false")])
    src.open()
    assert src.columns == [] and src.read(1) == []
    info = src.describe()
    assert info["available"] is False and info["source"] is None
    assert "/nonexistent/powercap" in info["reason"] and "false exited" in info["reason"]
    assert [t["source"] for t in info["tried"]] == ["rapl", "command"]


def test_auto_on_this_machine_never_invents_power():
    s = Sampler(0.1, power="auto", devices=[], interfaces=[])
    s.start()
    time.sleep(0.25)
    tl = s.stop()
    if Path("/sys/class/powercap").exists() or shutil.which("ipmitool"):
        pytest.skip("this machine may have a power meter")
    assert tl.power["available"] is False and "power.watts" not in tl.columns
    assert "ipmitool is not installed" in tl.power["reason"]
    off = Sampler(0.1, power="none", devices=[], interfaces=[]).stop()
    assert off.power["reason"] == "power measurement turned off"


def test_power_specs():
    def kinds(spec):
        return [p.kind for p in parse_power_spec(spec)]

    assert kinds("auto") == ["rapl", "ipmi"] and kinds("none") == [] and kinds(None) == []
    assert kinds("ipmi") == ["ipmi"] and kinds("rapl:/x") == ["rapl"]
    assert kinds(["cmd:echo 1", "redfish:https://bmc/redfish/v1/Chassis/1"]) == ["command",
                                                                                 "redfish"]
    assert parse_power_spec("cmd:sh -c 'echo 5'")[0].argv == ["sh", "-c", "echo 5"]
    for bad in ("watts", "cmd:", "redfish:", "redfish:bmc/Chassis/1", "ipmi:x"):
        with pytest.raises(UsageError):
            parse_power_spec(bad)


# -- Redfish, served on the loopback interface --------------------------------------------------
LEGACY = {
    "/redfish/v1/Chassis/1": {"@odata.id": "/redfish/v1/Chassis/1", "Id": "1",
                              "Power": {"@odata.id": "/redfish/v1/Chassis/1/Power"}},
    "/redfish/v1/Chassis/1/Power": {
        "@odata.id": "/redfish/v1/Chassis/1/Power",
        "PowerControl": [{"MemberId": "0", "PowerConsumedWatts": 590,
                          "PowerMetrics": {"AverageConsumedWatts": 587, "IntervalInMin": 20}}]},
}
ENVIRONMENT = {
    "/redfish/v1/Chassis/1": {"@odata.id": "/redfish/v1/Chassis/1",
                              "EnvironmentMetrics": {"@odata.id":
                                                     "/redfish/v1/Chassis/1/EnvironmentMetrics"}},
    "/redfish/v1/Chassis/1/EnvironmentMetrics": {"PowerWatts": {"Reading": 412.5,
                                                                "DataSourceUri": "/x"}},
}
PSUS = "/redfish/v1/Chassis/1/PowerSubsystem/PowerSupplies"
SUBSYSTEM = {
    "/redfish/v1/Chassis/1": {"PowerSubsystem": {"@odata.id":
                                                 "/redfish/v1/Chassis/1/PowerSubsystem"}},
    "/redfish/v1/Chassis/1/PowerSubsystem": {
        "CapacityWatts": 1600,
        "PowerSupplies": {"@odata.id": "/redfish/v1/Chassis/1/PowerSubsystem/PowerSupplies"}},
    "/redfish/v1/Chassis/1/PowerSubsystem/PowerSupplies": {"Members": [
        {"@odata.id": "/redfish/v1/Chassis/1/PowerSubsystem/PowerSupplies/PSU1"},
        {"@odata.id": "/redfish/v1/Chassis/1/PowerSubsystem/PowerSupplies/PSU2"}]},
    f"{PSUS}/PSU1": {"Metrics": {"@odata.id": f"{PSUS}/PSU1/Metrics"}},
    f"{PSUS}/PSU2": {"Metrics": {"@odata.id": f"{PSUS}/PSU2/Metrics"}},
    "/redfish/v1/Chassis/1/PowerSubsystem/PowerSupplies/PSU1/Metrics": {
        "InputPowerWatts": {"Reading": 201.0}},
    "/redfish/v1/Chassis/1/PowerSubsystem/PowerSupplies/PSU2/Metrics": {
        "InputPowerWatts": {"Reading": 199.5}},
}
NO_POWER = {"/redfish/v1/Chassis/1": {"Thermal": {"@odata.id": "/redfish/v1/Chassis/1/Thermal"}}}
AUTH = "Basic " + base64.b64encode(b"admin:secret").decode()


@pytest.fixture
def bmc():
    """A Redfish service on 127.0.0.1 that answers from ``server.docs`` with basic auth."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.headers.get("Authorization") != AUTH:
                self.send_response(401)
                self.end_headers()
                return
            doc = self.server.docs.get(self.path.rstrip("/"))
            body = json.dumps(doc).encode() if doc is not None else b"{}"
            self.send_response(200 if doc is not None else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.docs = {}
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _url(server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/redfish/v1/Chassis/1"


@pytest.mark.parametrize("docs, resource, watts", [(LEGACY, "Power", 590.0),
                                                   (ENVIRONMENT, "EnvironmentMetrics", 412.5),
                                                   (SUBSYSTEM, "PowerSubsystem", 400.5)])
def test_redfish_resources(bmc, docs, resource, watts):
    bmc.docs = docs
    meter = RedfishPower(_url(bmc), "admin", "secret")
    info = meter.probe()
    assert info["resource"] == resource and info["first_reading_w"] == watts
    assert meter.read_watts() == watts


def test_redfish_failures_are_reasons(bmc):
    bmc.docs = NO_POWER
    with pytest.raises(PowerUnavailable, match="no power reading"):
        RedfishPower(_url(bmc), "admin", "secret").probe()
    bmc.docs = LEGACY
    with pytest.raises(PowerUnavailable, match="401"):
        RedfishPower(_url(bmc), "admin", "wrong").probe()


def test_redfish_credentials_come_from_the_environment(bmc, monkeypatch):
    bmc.docs = LEGACY
    monkeypatch.setenv("OLTPLAB_REDFISH_USER", "admin")
    monkeypatch.setenv("OLTPLAB_REDFISH_PASSWORD", "secret")
    src = PowerSource(f"redfish:{_url(bmc)}", interval_s=0.1)
    src.open()
    try:
        assert src.describe()["available"] and src.describe()["source"] == "redfish"
        time.sleep(0.35)
        assert src.read(time.monotonic_ns()) == [590.0]
    finally:
        src.close()


def test_ipmi_needs_ipmitool():
    if shutil.which("ipmitool"):
        pytest.skip("ipmitool is installed here")
    with pytest.raises(PowerUnavailable, match="ipmitool is not installed"):
        IpmiPower().probe()


def test_meter_that_fails_later_gives_nulls_and_errors(tmp_path):
    flag = tmp_path / "fail"
    script = f"if [ -e {flag} ]; then exit 3; fi; echo 80"
    s = Sampler(0.1, power=["cmd:sh -c '" + script + "'"], devices=[], interfaces=[])
    s.start()
    time.sleep(0.35)
    flag.write_text("x")
    time.sleep(0.5)
    tl = s.stop()
    watts = tl.columns["power.watts"]
    assert 80.0 in watts and watts[-1] is None
    errors = [e for e in tl.errors if e["source"] == "power"]
    assert errors and "exited with 3" in errors[0]["error"]
    assert not any(isinstance(w, float) and math.isnan(w) for w in watts if w is not None)
