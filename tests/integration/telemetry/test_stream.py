"""A host's sampler as a process of its own (telemetry/stream.py): its samples streamed as they
are taken, its complete timeline written at the end, its clocks probed, and its timeline put
back on the coordinator's clocks when its wall clock runs 1.5 s ahead."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time

import pytest

from oltplab.cluster.clocks import Probe, Reading, now, offset_from
from oltplab.telemetry.sampler import Sampler, Timeline
from oltplab.telemetry.stream import place, with_hosts

SHIFT = 1_500_000_000


class Host:
    """The stream process and a reader thread that notes when each line arrived."""

    def __init__(self, out, *args: str):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "oltplab.telemetry.stream", "--out", str(out), *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put((now(), json.loads(line)))
        self.lines.put((now(), None))

    def send(self, text: str) -> None:
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def until(self, key: str, timeout: float = 20.0, into: list | None = None):
        deadline = time.monotonic() + timeout
        while True:
            at, msg = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            assert msg is not None, f"the stream ended before {key}"
            if key in msg:
                return at, msg[key]
            if into is not None:
                into.append((at, msg))

    def probe(self, into: list) -> Probe:
        sent = now()
        self.send("clock")
        received, (unix, mono) = self.until("clock", into=into)
        return Probe(sent, Reading(unix, mono), received)


@pytest.fixture
def hosts():
    started: list[Host] = []
    yield started
    for h in started:
        if h.proc.poll() is None:
            h.proc.kill()
        h.proc.wait(5)


def test_a_clock_1_5_s_ahead_is_put_back_within_the_measured_bound(tmp_path, hosts):
    h = Host(tmp_path / "h2.json", "--interval", "0.25", "--power", "none",
             "--wall-shift", "1.5")
    hosts.append(h)
    at, first = h.until("sample")  # sampling
    streamed: list = [(at, {"sample": first})]
    off = offset_from("h2", [h.probe(streamed) for _ in range(5)])
    time.sleep(1.0)
    h.send("stop")
    _, path = h.until("timeline", into=streamed)
    assert h.proc.wait(10) == 0 and path == str(tmp_path / "h2.json")
    # the host's wall clock is 1.5 s ahead; its monotonic clock is this machine's
    assert abs(off.wall_offset_ns - SHIFT) <= off.bound_ns < 50_000_000
    assert abs(off.mono_offset_ns) <= off.bound_ns

    tl = Timeline.from_dict(json.loads((tmp_path / "h2.json").read_text()))
    samples = [(at, m["sample"]) for at, m in streamed if "sample" in m]
    assert len(samples) >= 4 and {"cpu.idle", "mem.used_bytes"} <= set(samples[0][1][2])
    # every streamed sample is in the complete file, which has them all
    file_t = tl.columns["t_ns"]
    assert [s[0] for _, s in samples] == [t for t in file_t if t <= samples[-1][1][0]]
    placed = place(tl, off.mono_offset_ns, off.wall_offset_ns)
    by_t = dict(zip(file_t, placed.columns["t_unix_ns"]))
    for at, (t, unix, _) in samples:
        # taken before it arrived, and not long before: on this machine's wall clock once
        # placed, 1.5 s in the future as the host stamped it
        assert at.unix_ns - 500_000_000 <= by_t[t] <= at.unix_ns + off.bound_ns, (at, by_t[t])
        assert unix - at.unix_ns > SHIFT - 500_000_000
    assert placed.t0_unix == pytest.approx(tl.t0_unix - off.wall_offset_ns / 1e9)
    assert placed.columns["t_ns"] == [t - off.mono_offset_ns for t in file_t]

    # one file: this machine's timeline with the host's beside it
    with Sampler(0.25, power="none") as mine:
        time.sleep(0.3)
    merged = with_hosts(mine.stop(), {"h2": {"clock": off.to_json(), "timeline": placed}})
    again = Timeline.from_dict(json.loads(json.dumps(merged.to_dict(), allow_nan=False)))
    assert again.hosts["h2"]["clock"]["wall_offset_ns"] == off.wall_offset_ns
    assert Timeline.from_dict(again.hosts["h2"]["timeline"]) == placed


def test_the_end_of_its_input_stops_it_and_the_timeline_is_kept(tmp_path, hosts):
    h = Host(tmp_path / "h.json", "--interval", "0.1", "--power", "none")
    hosts.append(h)
    h.until("sample")
    h.proc.stdin.close()  # the coordinator went away
    h.until("timeline")
    assert h.proc.wait(10) == 0
    assert len(Timeline.from_dict(json.loads((tmp_path / "h.json").read_text()))) >= 1


def test_a_sampler_that_cannot_start_says_why(tmp_path, hosts):
    h = Host(tmp_path / "h.json", "--interval", "0.001", "--power", "none")
    hosts.append(h)
    _, error = h.until("error")
    assert "--sample-interval" in error and h.proc.wait(10) == 1
    assert not (tmp_path / "h.json").exists()
