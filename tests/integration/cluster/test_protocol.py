"""The relay protocol on a real Dask cluster on this machine (a scheduler and a worker in this
process): orders down, heartbeats both ways, silence noticed on each side, cancellation, a
lost task said in one line, an item answered in the task's reader while its loop is busy."""

from __future__ import annotations

import time

import pytest

from oltplab.cluster import protocol
from oltplab.cluster.protocol import Relays, TaskLink, put_quietly, serve_orders


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=1, threads_per_worker=8, processes=False,
                      dashboard_address=None) as cluster, Client(cluster) as c:
        yield c


def echo(up_name: str, down_name: str, silence_s: float, reasons: str | None = None) -> str:
    """A task that answers each order ``x`` with ``got x``, says ``beat`` every heartbeat,
    stops on ``bye``, and puts why it stopped into the queue ``reasons``."""
    from distributed import Queue
    up = Queue(up_name)

    def order(text: str) -> str | None:
        if text != "hb":
            put_quietly(up, f"got {text}")
        return "bye" if text == "bye" else None

    why = serve_orders(Queue(down_name), silence_s, order, lambda: None, poll_s=0.05,
                       beat=lambda: put_quietly(up, "beat"))
    if reasons is not None:
        Queue(reasons).put(why)
    return why


def mute(up_name: str, down_name: str, seconds: float) -> str:
    """A task that says nothing for ``seconds``."""
    time.sleep(seconds)
    return "done"


def fails(up_name: str, down_name: str) -> None:
    raise RuntimeError("the part's process could not start\nmore")


class Seen:
    """What came up from each host, with a switch for the coordinator's heartbeat."""

    def __init__(self):
        self.items: list[tuple[str, str]] = []
        self.beating = True

    def __call__(self, host, item) -> None:
        self.items.append((host, item))

    def of(self, host: str) -> list[str]:
        return [i for h, i in self.items if h == host]


def _until(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_heartbeats_keep_a_task_and_the_coordinators_silence_ends_it(client):
    seen = Seen()
    relays = Relays(client, "t-echo", ["h1"], seen, "hb", lambda h: seen.beating, silence_s=1.5,
                    what="part")
    relays.start(lambda h, up, down: client.submit(echo, up, down, 1.5, pure=False))
    try:
        relays.put("h1", "x")
        assert _until(lambda: "got x" in seen.of("h1"), 30)
        time.sleep(3.2)  # twice the silence: the heartbeats keep both sides going
        assert relays.lost("h1") is None and not relays.futures["h1"].done()
        assert seen.of("h1").count("beat") >= 3  # the task's, one a second
        assert "got hb" not in seen.of("h1")
        seen.beating = False  # the coordinator falls silent: the task stops by itself
        stopped = time.monotonic()
        assert relays.futures["h1"].result(timeout=10) == "the coordinator was silent for 1.5 s"
        assert 1.5 - protocol.HEARTBEAT_S <= time.monotonic() - stopped < 4.0
    finally:
        relays.close()


def test_bye_ends_a_task_and_a_cancelled_task_stops(client):
    from distributed import Queue
    reasons = Queue("t-reasons", client=client)
    seen = Seen()
    relays = Relays(client, "t-bye", ["h1", "h2"], seen, "hb", lambda h: True, silence_s=30)
    relays.start(lambda h, up, down: client.submit(echo, up, down, 30, reasons.name,
                                                   pure=False))
    relays.put("h1", "bye")
    assert relays.futures["h1"].result(timeout=30) == "bye"
    assert _until(lambda: seen.of("h2"), 30)  # h2's task runs
    relays.close()  # cancels h2's
    assert {reasons.get(timeout=10), reasons.get(timeout=10)} == {"bye", "cancelled"}
    assert relays.futures["h2"].status == "cancelled"


def test_the_coordinator_says_in_one_line_why_a_host_is_lost(client, monkeypatch):
    monkeypatch.setattr(protocol, "END_GRACE_S", 0.3)
    seen = Seen()
    tasks = {"h1": lambda up, down: client.submit(mute, up, down, 30, pure=False),
             "h2": lambda up, down: client.submit(fails, up, down, pure=False),
             "h3": lambda up, down: client.submit(mute, up, down, 0, pure=False)}
    relays = Relays(client, "t-lost", list(tasks), seen, "hb", lambda h: True, silence_s=1.0,
                    what="part", silent_from_start=True)
    relays.start(lambda h, up, down: tasks[h](up, down))
    try:
        assert relays.lost("h1") is None  # not silent yet
        assert _until(lambda: all(relays.lost(h) for h in tasks), 30)
        assert relays.lost("h1") == ("host h1: no heartbeat for 1 s (its worker hangs or is "
                                     "cut off)")
        assert relays.lost("h2") == ("host h2: its Dask worker died or its part was lost "
                                     "(RuntimeError: the part's process could not start)")
        assert relays.lost("h3") == "host h3: its part ended without a last word"
    finally:
        relays.close()


def busy(up_name: str, down_name: str) -> float:
    """A task whose loop is busy for 3 s at a time; the reader answers ``ping`` meanwhile."""
    from distributed import Queue
    up = Queue(up_name)

    def take(item) -> list:
        if item == "ping":
            put_quietly(up, "pong")
            return []
        return [item]

    with TaskLink(Queue(down_name), 30, take) as link:
        time.sleep(3.0)
        order = link.order(10)
    return order


def test_the_tasks_reader_answers_while_its_loop_is_busy(client):
    seen = Seen()
    relays = Relays(client, "t-busy", ["h1"], seen, "hb", lambda h: False, silence_s=30)
    relays.start(lambda h, up, down: client.submit(busy, up, down, pure=False))
    try:
        time.sleep(0.5)
        sent = time.monotonic()
        relays.put("h1", "ping")
        assert _until(lambda: "pong" in seen.of("h1"), 2.0)
        assert time.monotonic() - sent < 1.5  # the loop sleeps for 3 s: the reader answered
        relays.put("h1", "go")
        assert relays.futures["h1"].result(timeout=30) == "go"  # other items reach the loop
    finally:
        relays.close()
