"""The C loop at its limits, against the suite's PostgreSQL: many users in one
worker, Terminals it holds, and a connection libpq cannot write to. test_native_sanitizers.py
runs this module again under AddressSanitizer and UndefinedBehaviorSanitizer."""

from __future__ import annotations

import asyncio
import random
import time

import pytest

from oltplab import _native
from oltplab.engines.postgres import driver as pquser
from oltplab.engines.postgres.tpcc.schema import schema_info
from oltplab.metrics.histogram import decode
from oltplab.engines.common.loop import UserPlan
from oltplab.engines.common.recorder import Recorder
from oltplab.engines.postgres.states import FATAL_STATES, FLUSH_SQL, RETRYABLE_STATES
from oltplab.workloads.tpcc.inputs import RunConstants, draw_constants, terminal

S = 1_000_000_000


def run_users(dsn: str, users: int, bulk: int, rampup_s: float, measure_s: float):
    """Run ``users`` procedures-mode users in one ProcUsers (one worker's loop); returns the
    recorder, the boundaries crossed, and per type the response times handed over and the
    most at once."""
    constants = draw_constants(random.Random(3), schema_info(dsn).c_last_load)
    handed, longest = [0] * 5, [0] * 5

    class Handed(Recorder):
        def add_samples(self, kind, us):
            time.sleep(0.002)  # a busy worker: meanwhile every user's answer arrives
            handed[kind] += len(us)
            longest[kind] = max(longest[kind], len(us))
            super().add_samples(kind, us)

    async def go():
        conns = [pquser.open_connection(dsn, "oltplab-test", True) for _ in range(users)]
        plans = [UserPlan(i, 1, i % 10 + 1, (1,), 100 + i) for i in range(users)]
        procs = pquser.ProcUsers("tpcc", conns, plans, 1, constants, waits=False, bulk=bulk)
        now = time.monotonic_ns()
        boundaries = []
        rec = Handed(now + int(rampup_s * S), now + int((rampup_s + measure_s) * S),
                     users=users, on_boundary=lambda b, n: boundaries.append((b, n)))
        try:
            await procs.run(rec)
        finally:
            await procs.aclose()
        return rec, boundaries

    rec, boundaries = asyncio.run(go())
    return rec, boundaries, handed, longest


def test_sample_buffer_overflow_with_many_users_in_one_worker(scratch_w1):
    """One epoll batch can complete one transaction per user; the buffers were checked once
    per batch, so with 3 or more users a buffer near ``bulk`` was written past its end. With
    64 users and room for 3 response times per type, the boundary is crossed hundreds of times,
    and each hand-over is slow enough for many users' answers to arrive in one batch. Every
    transaction counted in the window is handed over exactly once."""
    users, bulk = 64, 3
    rec, boundaries, handed, longest = run_users(scratch_w1, users, bulk, 0.5, 2.5)
    assert boundaries == [(0, users), (1, users)]
    assert max(longest) == bulk
    counts = rec.counts()
    histograms = [decode(text) for text in rec.encoded()]
    for c, h, n in zip(counts, histograms, handed):
        assert n == c.committed + c.rolled_back == h.get_total_count()
    # the buffers filled and were handed over many times (fewer under the sanitizers' load)
    assert sum(handed) > 30 * bulk


def loop_args(conns: list, terminals: list, **over) -> dict:
    now = time.monotonic_ns()
    args = dict(workload="tpcc", libpq=pquser.libpq_path(), connections=conns,
                pointers=[c.pgconn_ptr for c in conns], terminals=terminals,
                names=pquser.kind_names("tpcc"), flush_sql=FLUSH_SQL, ramp_end_ns=now,
                measure_end_ns=now + 60 * S, waits=False, flush_stats=False,
                idle_published_after_ns=10 * S, max_retries=3,
                max_consecutive_errors=3, retryable=RETRYABLE_STATES, fatal=FATAL_STATES,
                bulk=16)
    return {**args, **over}


def one_terminal():
    return terminal(UserPlan(0, 1, 1, (1,), 7), 1, RunConstants(0, 70, 1, 1))


def test_procloop_refuses_an_uninitialised_terminal_and_stays_unusable(loaded_w1):
    conn = pquser.open_connection(loaded_w1, "oltplab-test", flush_stats=False)
    try:
        loop = _native.ProcLoop.__new__(_native.ProcLoop)
        blank = _native.Terminal.__new__(_native.Terminal)
        with pytest.raises(RuntimeError, match="Terminal is not initialised"):
            loop.__init__(**loop_args([conn], [blank]))
        with pytest.raises(RuntimeError, match="ProcLoop is not initialised"):
            loop.run()
        with pytest.raises(ValueError, match="bulk"):
            loop.__init__(**loop_args([conn], [one_terminal()], bulk=0))
        loop.__init__(**loop_args([conn], [one_terminal()]))  # a failed __init__ left no trace
        with pytest.raises(RuntimeError, match="initialised once"):
            loop.__init__(**loop_args([conn], [one_terminal()]))
    finally:
        conn.finish()


def test_a_terminal_held_by_a_procloop_refuses_python_calls(loaded_w1):
    """The loop draws from its Terminals without the GIL: Python may not draw or re-init
    them meanwhile, and may again once the loop is gone."""
    conn = pquser.open_connection(loaded_w1, "oltplab-test", flush_stats=False)
    try:
        term = one_terminal()
        loop = _native.ProcLoop(**loop_args([conn], [term]))
        with pytest.raises(RuntimeError, match="driven by a ProcLoop"):
            term.next_kind()
        with pytest.raises(RuntimeError, match="driven by a ProcLoop"):
            term.__init__(seed=1, w_max=1, stock_d_id=1, c_id=1, c_ol_i_id=1, c_last=1,
                          warehouses=[1])
        del loop
        assert 0 <= term.next_kind() < 5
    finally:
        conn.finish()


def test_a_connection_shut_for_writing_fails_the_users_within_seconds(scratch_w1):
    """The socket shut for writing under libpq: the call never reaches the server, which
    ends the session; the loop reports the lost connection instead of waiting for ever."""
    import socket

    conn = pquser.open_connection(scratch_w1, "oltplab-test", flush_stats=False)
    try:
        sock = socket.socket(fileno=conn.socket)
        sock.shutdown(socket.SHUT_WR)
        sock.detach()  # the descriptor stays libpq's
        loop = _native.ProcLoop(**loop_args([conn], [one_terminal()],
                                            ramp_end_ns=time.monotonic_ns() + 30 * S))
        t0 = time.monotonic()
        assert loop.run() == _native.FAILED
        assert time.monotonic() - t0 < 5
        assert "lost the database connection" in loop.error
    finally:
        conn.finish()


# PQflush answers 1 (output held back) and -1 (a failed send) only when the network misbehaves;
# this library puts scripted answers in front of the real PQflush, which then takes over. The
# loop is pointed at it as its libpq (its other functions resolve to the real library).
FLUSH_SCRIPT = r"""
#include <dlfcn.h>
#include <stdlib.h>
static int (*real_flush)(void *);
static const char *script;
int PQflush(void *conn) {
    if (!real_flush) {
        real_flush = (int (*)(void *))dlsym(dlopen(getenv("OLTPLAB_TEST_LIBPQ"),
                                                   RTLD_NOW | RTLD_NOLOAD), "PQflush");
        script = getenv("OLTPLAB_TEST_FLUSHES");
    }
    char *end;
    long v = script ? strtol(script, &end, 10) : 0;
    if (script && end != script) {
        script = end;
        return (int)v;
    }
    return real_flush(conn);
}
"""

# A child process: the loop loads its libpq once per process.
FLUSH_RUN = """
import ctypes, sys, time
sys.path.insert(0, sys.argv[4])
from native_module import use
native = use(sys.argv[1])
from integration.native.test_native_loop import S, loop_args, one_terminal
from oltplab.engines.postgres import driver as pquser
conn = pquser.open_connection(sys.argv[3], "oltplab-test", flush_stats=False)
ctypes.CDLL(sys.argv[2])
now = time.monotonic_ns()
loop = native.ProcLoop(**loop_args([conn], [one_terminal()], libpq=sys.argv[2],
                                   ramp_end_ns=now, measure_end_ns=now + S // 2, bulk=1 << 16))
events = [loop.run() for _ in range(2)]
print(events, sum(loop.counts()["committed"]), loop.error)
"""


@pytest.mark.parametrize("flushes, events, error", [
    ("1 1 1", "[0, 1]", "None"),  # waits for room to write, then carries on to the end
    ("1 -1", "[0, 3]", "new_order: lost the database connection ()"),  # fails at once
])
def test_pqflush_held_output_waits_and_a_failed_flush_fails_the_user(scratch_w1, tmp_path,
                                                                     flushes, events, error):
    """PQflush used to be called until it stopped answering 1, spinning, and -1 was ignored."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    src = tmp_path / "flushes.c"
    src.write_text(FLUSH_SCRIPT)
    real = pquser.libpq_path()
    shim = tmp_path / "libflushes.so"
    subprocess.run(["gcc", "-shared", "-fPIC", str(src), "-o", str(shim), "-Wl,--no-as-needed",
                    real, "-ldl", f"-Wl,-rpath,{os.path.dirname(real)}"], check=True)
    tests = Path(__file__).resolve().parents[2]
    p = subprocess.run([sys.executable, "-c", FLUSH_RUN, _native.__file__, str(shim), scratch_w1,
                        str(tests)], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "OLTPLAB_TEST_LIBPQ": real,
                            "OLTPLAB_TEST_FLUSHES": flushes})
    assert p.returncode == 0, p.stderr[-3000:]
    got_events, rest = p.stdout.strip().split("] ", 1)
    committed, got_error = rest.split(" ", 1)
    assert (got_events + "]", got_error) == (events, error)
    assert (int(committed) > 0) == (error == "None")


# A unix-socket relay between one client and the server, in a child process (libpq's connect
# holds the GIL). After "hold" on its stdin it passes the client's bytes on without taking them
# from the socket (MSG_PEEK): the server answers every round trip as usual, yet the client's
# send buffer only fills, as it does when a server stops reading. After "drain" it takes and
# drops what the client sends; it ends when its stdin closes.
PEEK_RELAY = r"""
import os, select, socket, sys, time
listener = socket.socket(socket.AF_UNIX)
listener.bind(sys.argv[1])
listener.listen(1)
print("listening", flush=True)
client, _ = listener.accept()
server = socket.socket(socket.AF_UNIX)
server.connect(sys.argv[2])
mode, passed = "relay", 0
while True:
    ready, _, _ = select.select([client, server, sys.stdin], [], [], 1)
    if sys.stdin in ready:
        mode = sys.stdin.readline().strip()
        if not mode:
            break
    if server in ready:
        client.sendall(server.recv(1 << 16))
    if client not in ready:
        continue
    if mode == "drain":
        client.recv(1 << 16)
    elif mode == "hold":
        data = client.recv(1 << 20, socket.MSG_PEEK)
        server.sendall(data[passed:])
        if len(data) == passed:
            time.sleep(0.01)  # the socket stays readable: nothing new yet
        passed = len(data)
    else:
        server.sendall(client.recv(1 << 16))
"""


def test_sql_flush_on_a_full_socket_buffer_lets_stop_return(scratch_w1):
    """--mode sql sent each round trip by calling PQflush until the socket took everything,
    spinning on sched_yield: while a server did not read, the worker's loop (every user, and
    stop()) hung. The client's socket buffer is made tiny and a relay stops taking what it
    sends; the loop must wait for room to write and still answer stop() at once."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="oltplab-relay-") as short:  # AF_UNIX: 107 bytes
        full_buffer_then_stop(scratch_w1, Path(short))


def full_buffer_then_stop(scratch_w1: str, directory) -> None:
    """The test above, with the relay's socket in ``directory``."""
    import socket
    import subprocess
    import sys
    import threading
    from urllib.parse import parse_qs, quote, urlsplit

    query = parse_qs(urlsplit(scratch_w1).query)
    name = f".s.PGSQL.{query['port'][0]}"
    relay = subprocess.Popen([sys.executable, "-c", PEEK_RELAY, str(directory / name),
                              f"{query['host'][0]}/{name}"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    running = None
    try:
        assert relay.stdout.readline() == "listening\n"
        dsn = f"{scratch_w1.partition('?')[0]}?host={quote(str(directory), safe='/')}" \
              f"&port={query['port'][0]}"
        conn = pquser.open_connection(dsn, "oltplab-test", flush_stats=False, mode="sql")
        sock = socket.socket(fileno=conn.socket)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1)  # the kernel's least, ~4.5 kB
        sock.detach()  # the descriptor stays libpq's
        loop = _native.ProcLoop(**loop_args([conn], [one_terminal()], sql=True))
        events = []

        def drive():  # past the ramp-up boundary (now), to the next event
            events.append(loop.run())
            if events[-1] == _native.BOUNDARY:
                events.append(loop.run())

        running = threading.Thread(target=drive, daemon=True)
        relay.stdin.write("hold\n")
        relay.stdin.flush()
        running.start()
        time.sleep(1.5)  # the first transaction or two fill the buffer
        t0 = time.monotonic()
        loop.stop()
        running.join(5)
        waited = time.monotonic() - t0
    finally:
        if running is not None:  # a loop still spinning gets its room to write, and stops
            relay.stdin.write("drain\n")
            relay.stdin.flush()
            running.join(30)
        relay.stdin.close()
        relay.wait(10)
    conn.finish()
    assert waited < 1, f"stop() took {waited:.1f} s"
    assert events == [_native.BOUNDARY, _native.STOPPED]
    assert loop.error is None
