"""The relay protocol's limits live in one module, and its silence arithmetic."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from oltplab.cluster import protocol
from oltplab.cluster.protocol import Silence, died

SRC = Path(protocol.__file__).resolve().parent.parent
# the protocol's users: the load generator's relay, the parts, the samplers
USERS = [*sorted((SRC / "cluster").glob("*.py")), SRC / "loadgen" / "relay.py",
         SRC / "loadgen" / "remote.py"]
# what each of them had a copy of, under these names or others
LIMITS = {"HEARTBEAT_S", "SILENCE_S", "START_TIMEOUT_S", "HELLO_TIMEOUT_S", "PROBE_TIMEOUT_S",
          "PING_TIMEOUT_S", "END_GRACE_S", "DONE_GRACE_S", "BYE_TIMEOUT_S", "STOP_TIMEOUT_S"}


def _assigned(path: Path) -> set[str]:
    """The names a module binds at its top level to a number."""
    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            found |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return found


def test_no_module_but_the_protocol_defines_its_limits():
    """Each limit once: the load generator's relay, the parts and the samplers import them
    (the heartbeat and the silence were copied into five modules)."""
    copies = sorted((str(p.relative_to(SRC)), name) for p in SRC.rglob("*.py")
                    if p.name != "protocol.py"
                    for name in _assigned(p) & ({"HEARTBEAT_S", "SILENCE_S"}
                                                | (LIMITS if p in USERS else set())))
    assert copies == []
    assert (protocol.HEARTBEAT_S, protocol.SILENCE_S) == (1.0, 10.0)
    assert protocol.HEARTBEAT_S < protocol.SILENCE_S / 2  # several beats fit in a silence


class Clock:
    def __init__(self, t: float = 100.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_silence_counts_from_the_last_word_and_ends_past_the_limit():
    clock = Clock()
    s = Silence(2.5, clock)
    clock.t = 102.5
    assert s.quiet_for() == 2.5 and s.ended("the coordinator") is None  # at the limit: not yet
    clock.t = 102.6
    assert s.ended("the coordinator") == "the coordinator was silent for 2.5 s"
    s.heard()
    assert s.quiet_for() == 0.0 and s.ended("x") is None
    clock.t = 105.0
    assert s.quiet_for() == pytest.approx(2.4) and s.ended("x") is None


def test_a_lost_task_is_one_line_naming_its_host_and_what_was_lost():
    err = RuntimeError("worker tls://127.0.0.2:4000 died\ntraceback follows")
    assert died("h2", "part", err) == ("host h2: its Dask worker died or its part was lost "
                                       "(RuntimeError: worker tls://127.0.0.2:4000 died)")
    assert died("h1", "relay", TimeoutError()) == \
        "host h1: its Dask worker died or its relay was lost (TimeoutError)"
