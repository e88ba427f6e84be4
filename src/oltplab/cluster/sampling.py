"""Samplers on the cluster's hosts for a run here: every host's telemetry on this machine's
time axis, streamed while the run goes and complete at its end.

    with HostSamplers(client, ["h1", "h2"], interval=1.0, power="auto") as samplers:
        ...                          # the run; samplers.latest() -> host -> (t_ns, columns)
    parts = samplers.parts           # host -> {"clock", "timeline" (placed), "error",
                                     #          "warning" (a clock known to 100 ms or worse)}
    timeline = stream.with_hosts(my_timeline, parts)

Each host runs telemetry/stream.py, a process of its own, started by a task on the host's
worker (``serve``) that holds none of the host's resources: it runs beside the run's placed
tasks, not after them. The task relays the process's lines here through a Dask queue and
this machine's orders (``clock``, ``hb`` every second, ``stop``) to the process through
another (the relay protocol, protocol.py: TaskLink there, Relays here); it stops the process
when told, when this machine has been silent for ``SILENCE_S``, or when the task is
cancelled, and returns the timeline file the process wrote. The clock is probed against the
stream process itself (its answer to ``clock``), five round trips through the queues, the
shortest winning (clocks.measure); the file is placed on this machine's clocks with that offset
(stream.place). A host that dies or stops answering keeps
what it streamed until then, as a timeline marked with the error.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from typing import Sequence

from ..telemetry.sampler import Timeline
from ..telemetry.stream import place
from .client import forward_lines
from .clocks import Offset, Reading, measure, now
from .protocol import HEARTBEAT_S, PROBE_TIMEOUT_S, SILENCE_S, START_TIMEOUT_S, Relays
from .protocol import SAMPLER_STOP_TIMEOUT_S as STOP_TIMEOUT_S
from .protocol import serve_orders


# --------------------------------------------------------------------------- on the host

def serve(up_name: str, down_name: str, interval: float, power: str,
          silence_s: float = SILENCE_S) -> dict:
    """The host's side (a Dask task there): run the stream process, relay both ways, return
    ``{"timeline": <the file's JSON> or None, "ended": why, "error": text or None}``."""
    from distributed import Queue
    up, down = Queue(up_name), Queue(down_name)
    folder = tempfile.mkdtemp(prefix="oltplab-stream-")
    out = os.path.join(folder, "timeline.json")
    err = open(os.path.join(folder, "stderr"), "w+b")
    proc = subprocess.Popen(
        [sys.executable, "-m", "oltplab.telemetry.stream", "--out", out,
         "--interval", repr(float(interval)), "--power", power],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1)
    threading.Thread(target=forward_lines, args=(proc, up), daemon=True,
                     name="oltplab-stream-out").start()

    def order(text: str) -> str | None:
        if text == "clock":
            proc.stdin.write("clock\n")
            proc.stdin.flush()
        return "stop" if text == "stop" else None

    ended = "?"
    try:
        ended = serve_orders(down, silence_s, order,
                             lambda: None if proc.poll() is None else
                             f"the sampler exited with code {proc.returncode}",
                             poll_s=HEARTBEAT_S)
    finally:
        try:
            proc.stdin.close()  # the end of its input: it writes its file and exits
            proc.wait(10)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        doc = None
        try:
            with open(out) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            pass
        err.seek(0)
        tail = err.read().decode("utf-8", "replace").strip().splitlines()[-1:]
        err.close()
        for name in (out, os.path.join(folder, "stderr"), folder):
            try:
                os.rmdir(name) if name == folder else os.unlink(name)
            except OSError:
                pass
    error = None if doc is not None else (tail[0] if tail else ended)
    return {"timeline": doc, "ended": ended, "error": error}


# --------------------------------------------------------------------------- here

class HostSamplers:
    """The hosts' samplers of one run, seen from here (see the module's text)."""

    def __init__(self, client, hosts: Sequence[str], interval: float = 1.0,
                 power: str = "auto", silence_s: float = SILENCE_S):
        self.client = client
        self.hosts = list(hosts)
        self.interval = interval
        self.power = power
        self.silence_s = silence_s
        self.parts: dict[str, dict] = {}
        self.offsets: dict[str, Offset] = {}
        self._samples: dict[str, list] = {h: [] for h in self.hosts}
        self._clock: dict[str, queue.Queue] = {h: queue.Queue() for h in self.hosts}
        self._lock = threading.Lock()
        self._relays = Relays(client, "samples", self.hosts, self._line, "hb",
                              lambda host: host not in self.parts, silence_s, what="sampler")
        self._futures = self._relays.futures

    def __enter__(self) -> HostSamplers:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        """Start each host's sampler, wait for its first sample, probe its clock."""
        from .client import placement

        def submit(h: str, up: str, down: str):
            where = {k: v for k, v in placement(h).items() if k != "resources"}
            return self.client.submit(serve, up, down, self.interval, self.power,
                                      self.silence_s, **where)
        self._relays.start(submit)
        deadline = time.monotonic() + START_TIMEOUT_S
        for h in self.hosts:
            while not self._samples[h] and h not in self.parts:
                self._check(h)
                if time.monotonic() > deadline:
                    self.parts[h] = {"error": f"no sample within {START_TIMEOUT_S:g} s"}
                    break
                time.sleep(0.05)
        for h in self.hosts:
            if h not in self.parts:
                try:
                    self.offsets[h] = measure(h, lambda: self._ask_clock(h))
                except TimeoutError:  # its samples cannot be placed: dropped, the run goes on
                    why = f"no answer to a clock probe within {PROBE_TIMEOUT_S:g} s"
                    self.parts[h] = {"error": why, "warning": f"host {h}: its samples are "
                                     f"left out ({why})"}
                    self._put(h, "stop")

    def latest(self) -> dict[str, tuple[int, dict]]:
        """Each host's last sample so far: its instant on this machine's monotonic clock and
        its columns (the live view)."""
        out = {}
        with self._lock:
            for h, samples in self._samples.items():
                if samples and h in self.offsets:
                    t, _, values = samples[-1]
                    out[h] = (self.offsets[h].to_coordinator(t), values)
        return out

    def stop(self) -> dict[str, dict]:
        """Stop every host's sampler; its part: clock, placed timeline, error."""
        if self._relays.stopping.is_set():
            return self.parts
        for h in self.hosts:
            if h not in self._futures:  # start() stopped before it
                self.parts.setdefault(h, {"error": "its sampler was not started"})
        for h in self.hosts:
            if h not in self.parts:
                self._put(h, "stop")
        deadline = time.monotonic() + STOP_TIMEOUT_S  # for all: hung hosts wait together
        for h in self.hosts:
            off = self.offsets.get(h)
            part = self.parts.get(h, {})
            result = None
            silent = self._relays.quiet_for(h)
            if h not in self.parts and silent > self.silence_s:  # it hangs: not waited for
                part = {"error": f"its sampler was silent for {silent:.0f} s"}
            elif h not in self.parts and h in self._futures:
                try:
                    result = self._futures[h].result(
                        timeout=max(0.1, deadline - time.monotonic()))
                except Exception as e:  # noqa: BLE001 - the worker died or hangs
                    part = {"error": f"its sampler was lost: {type(e).__name__}: {e}"
                            if str(e) else f"its sampler was lost: {type(e).__name__}"}
            if result is not None and result.get("timeline") is not None and off is not None:
                tl = place(Timeline.from_dict(result["timeline"]), off.mono_offset_ns,
                           off.wall_offset_ns)
                part = {"timeline": tl}
            elif result is not None:
                part = {"error": result.get("error") or result.get("ended")}
            if "timeline" not in part:
                part["timeline"] = self._streamed(h, off)
            part["clock"] = off.to_json() if off is not None else None
            if off is not None and off.warning():
                part["warning"] = off.warning()
            self.parts[h] = part
        self._relays.close()
        return self.parts

    # -- inside --------------------------------------------------------------------------
    def _line(self, host: str, line: str) -> None:
        """A line of the host's stream process (stream.py), as it arrives."""
        at = now()
        try:
            msg = json.loads(line)
        except ValueError:
            return
        if "sample" in msg:
            with self._lock:
                self._samples[host].append(tuple(msg["sample"]))
        elif "clock" in msg:
            self._clock[host].put((Reading(*msg["clock"]), at))

    def _put(self, host: str, order: str) -> None:
        self._relays.put(host, order)

    def _check(self, host: str) -> None:
        f = self._futures[host]
        if f.done() and host not in self.parts:
            try:
                result = f.result()
                self.parts[host] = {"error": result.get("error") or result.get("ended")}
            except Exception as e:  # noqa: BLE001
                self.parts[host] = {"error": f"its sampler was lost: {type(e).__name__}"}

    def _ask_clock(self, host: str) -> tuple[Reading, Reading]:
        """The stream process's clocks, asked through the queues, and this machine's when
        the answer arrived (one probe of measure)."""
        self._put(host, "clock")
        try:
            return self._clock[host].get(timeout=PROBE_TIMEOUT_S)
        except queue.Empty:
            raise TimeoutError(f"{host}: no clock reading in {PROBE_TIMEOUT_S:g} s") from None

    def _streamed(self, host: str, off: Offset | None) -> Timeline | None:
        """What the host streamed before it was lost, as a timeline on this machine's
        clocks (its samples' columns; no marks, devices or errors: those come with the
        file)."""
        with self._lock:
            samples = list(self._samples[host])
        if not samples or off is None:
            return None
        names = list(samples[0][2])
        columns: dict[str, list] = {
            "t_ns": [off.to_coordinator(t) for t, _, _ in samples],
            "t_unix_ns": [u - off.wall_offset_ns for _, u, _ in samples]}
        for name in names:
            columns[name] = [v.get(name) for _, _, v in samples]
        return Timeline(interval_s=self.interval, t0_ns=columns["t_ns"][0],
                        end_ns=columns["t_ns"][-1], columns=columns)
