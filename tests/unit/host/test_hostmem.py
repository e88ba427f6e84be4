"""--host-memory values, and what a run records without a memory group."""

from __future__ import annotations

import pytest

from oltplab.config import parse_host_memory
from oltplab.errors import UsageError
from oltplab.host.memory import RunMemory


@pytest.mark.parametrize("text, value", [("none", None), ("NONE", None), ("256MiB", 256 * 2**20),
                                         ("1G", 2**30)])
def test_parse_host_memory(text, value):
    assert parse_host_memory(text) == value


@pytest.mark.parametrize("text", ["lots", "0", "-1GiB", ""])
def test_bad_host_memory_is_one_usage_error(text):
    with pytest.raises(UsageError, match="--host-memory"):
        parse_host_memory(text)


def test_run_without_group_or_cold_records_nothing_and_passes_marks_on():
    heard = []
    memory = RunMemory(None, cold=False, on_mark=lambda *a, **k: heard.append((a, k)))
    memory.begin()
    memory.mark("step_start", 5, step=0, users=1)
    step = {"users": 1}
    memory.step(step)
    assert step == {"users": 1} and memory.record() is None
    assert heard == [(("step_start", 5), {"step": 0, "users": 1})]
