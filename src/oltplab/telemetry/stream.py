"""A host's sampler in a process of its own, for a coordinator elsewhere: each sample is
streamed as it is taken, and the complete timeline is written to a file at the end, which the
coordinator fetches and places on its own clock.

    python -m oltplab.telemetry.stream --out FILE [--interval 1] [--power SPEC] [--devices A,B]

Standard input takes one command per line: ``clock`` (the process answers with its clocks,
the probe of cluster/clocks.py: the clocks of the process that stamps the samples), ``stop``,
or the end of the input (the coordinator went away): the sampler stops, the timeline goes to
FILE (atomically), and the last line names it. Standard output carries one JSON object per
line:

    {"sample": [t_ns, unix_ns, {column: value or null}]}    as each sample is taken
    {"clock": [unix_ns, mono_ns]}                           the answer to ``clock``
    {"timeline": FILE}                                      the last line
    {"error": TEXT}                                         could not start (exit 1)

``place`` puts a host's timeline on the coordinator's clocks with the host's measured offsets,
and ``with_hosts`` records the placed timelines of the other hosts in the coordinator's own:
one file, every host on one time axis.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import threading
import time
from pathlib import Path

from ..errors import OltplabError
from .sampler import Sampler, Timeline, _compact, clock_pair

POLL_S = 0.02  # how often the process looks for a new sample to send


class _Out:
    """Standard output, one JSON line at a time from either thread."""

    def __init__(self, stream):
        self.stream = stream
        self.lock = threading.Lock()

    def send(self, obj) -> None:
        line = json.dumps(obj, separators=(",", ":"), allow_nan=False)
        with self.lock:
            try:
                self.stream.write(line + "\n")
                self.stream.flush()
            except (BrokenPipeError, ValueError):  # the reader went away: the end is near
                pass


def _commands(stdin, out: _Out, wall, done: threading.Event) -> None:
    for line in stdin:
        cmd = line.strip()
        if cmd == "clock":
            mono, unix = clock_pair(wall)
            out.send({"clock": [unix, mono]})
        elif cmd == "stop":
            break
    done.set()  # stop, or the end of the input


def serve(out_file: Path, interval: float, power: str, devices, wall_shift_s: float,
          stdin=None, stdout=None) -> int:
    """Run the sampler until told to stop; 0 when the timeline was written."""
    out = _Out(stdout or sys.stdout)
    shift = int(round(wall_shift_s * 1e9))

    def wall() -> int:
        return time.time_ns() + shift

    try:
        sampler = Sampler(interval, power=power, devices=devices, wall_clock=wall).start()
    except OltplabError as e:
        out.send({"error": str(e)})
        return 1
    done = threading.Event()
    threading.Thread(target=_commands, args=(stdin or sys.stdin, out, wall, done),
                     name="oltplab-stream-commands", daemon=True).start()
    last = None
    try:
        while not done.wait(POLL_S):
            latest = sampler.latest()
            if latest is None or latest[0] == last:
                continue
            last, values = latest
            unix = wall() - (time.monotonic_ns() - last)
            out.send({"sample": [last, unix, {k: _compact(v) for k, v in values.items()}]})
    finally:
        timeline = sampler.stop()
        from ..results.store import atomic_write
        atomic_write(out_file, json.dumps(timeline.to_dict(), allow_nan=False))
        out.send({"timeline": str(out_file)})
    return 0


def place(tl: Timeline, mono_offset_ns: int, wall_offset_ns: int) -> Timeline:
    """A host's timeline on the coordinator's clocks: each monotonic instant (samples, marks,
    errors, its start and end) less the host's monotonic offset, each wall clock reading less
    its wall offset (both host minus coordinator, cluster/clocks.py)."""
    def mono(t):
        return None if t is None else int(t) - mono_offset_ns

    columns = dict(tl.columns)
    if "t_ns" in columns:
        columns["t_ns"] = [mono(t) for t in columns["t_ns"]]
    if "t_unix_ns" in columns:
        columns["t_unix_ns"] = [None if t is None else int(t) - wall_offset_ns
                                for t in columns["t_unix_ns"]]
    return dataclasses.replace(
        tl, columns=columns, t0_ns=mono(tl.t0_ns), end_ns=mono(tl.end_ns),
        t0_unix=None if tl.t0_unix is None else tl.t0_unix - wall_offset_ns / 1e9,
        marks=[{**m, "t_ns": mono(m.get("t_ns"))} for m in tl.marks],
        errors=[{**e, **({"t_ns": mono(e["t_ns"])} if "t_ns" in e else {}),
                 **({"last_t_ns": mono(e["last_t_ns"])} if "last_t_ns" in e else {})}
                for e in tl.errors])


def with_hosts(main: Timeline, parts: dict[str, dict]) -> Timeline:
    """The coordinator's timeline with other hosts' beside it: ``parts`` maps each host to
    ``{"clock": <its Offset.to_json()>, "timeline": <its placed Timeline> or None}`` and,
    for a host whose sampler was lost, ``"error"`` (its timeline: what it streamed)."""
    hosts = dict(main.hosts)
    for name, part in parts.items():
        tl = part.get("timeline")
        hosts[name] = {"clock": part.get("clock"),
                       "timeline": tl.to_dict() if tl is not None else None,
                       **({"error": part["error"]} if part.get("error") else {})}
    return dataclasses.replace(main, hosts=hosts)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m oltplab.telemetry.stream",
                                description="A host's sampler for a coordinator elsewhere.")
    p.add_argument("--out", required=True, type=Path, help="where the timeline goes at the end")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between samples")
    p.add_argument("--power", default="auto", help="as oltplab's --power")
    p.add_argument("--devices", default="auto", help="auto, or block devices a,b,...")
    p.add_argument("--wall-shift", type=float, default=0.0,
                   help="seconds added to the wall clock this process reports (a host whose "
                        "clock is off, as tests make one)")
    a = p.parse_args(argv)
    devices = a.devices if a.devices == "auto" else [d for d in a.devices.split(",") if d]
    return serve(a.out, a.interval, a.power, devices, a.wall_shift)


if __name__ == "__main__":
    sys.exit(main())
