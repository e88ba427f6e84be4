"""The C part refuses misuse instead of crashing: objects whose __init__ never ran or failed,
and a module init that runs out of memory at any allocation. (test_native_sanitizers.py runs
this module again under AddressSanitizer and UndefinedBehaviorSanitizer.)"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from oltplab import _native
from oltplab.workloads.tpcc.mix import NEW_ORDER

ARGS = dict(seed=1, w_max=10, stock_d_id=3, c_id=1, c_ol_i_id=2, c_last=3)


def terminal_calls(t) -> list:
    return [t.next_kind, t.warehouse, lambda: t.inputs(NEW_ORDER, 1),
            lambda: t.inputs_text(NEW_ORDER, 1), lambda: t.think_time(0), t.random]


def test_terminal_methods_before_init_raise():
    t = _native.Terminal.__new__(_native.Terminal)
    for call in terminal_calls(t):
        with pytest.raises(RuntimeError, match="not initialised"):
            call()


def test_terminal_methods_after_a_failed_first_init_raise():
    t = _native.Terminal.__new__(_native.Terminal)
    with pytest.raises(ValueError, match="outside"):
        t.__init__(**ARGS, warehouses=[1, 11])
    for call in terminal_calls(t):
        with pytest.raises(RuntimeError, match="not initialised"):
            call()


@pytest.mark.parametrize("bad, error", [
    (dict(warehouses=[1, 2, 99]), ValueError),     # checked after the array was begun
    (dict(warehouses=[1, "x"]), TypeError),
    (dict(warehouses=[]), ValueError),
    (dict(warehouses=[1], w_max="x"), TypeError),  # fails while parsing the arguments
])
def test_failed_reinit_leaves_no_stale_warehouse_count(bad, error):
    """A failed re-__init__ used to keep the old count beside a new, shorter array (or a
    half-written one): draws then read past it. It must leave the terminal as it was."""
    t = _native.Terminal(**ARGS, warehouses=[1, 2, 3, 4, 5, 6, 7, 8])
    with pytest.raises(error):
        t.__init__(**{**ARGS, "w_max": 3, **bad})
    assert {t.warehouse() for _ in range(2000)} == set(range(1, 9))
    # w_max kept: remote supply warehouses still range over 2..10
    supplies = {s for _ in range(3000) for s in t.inputs(NEW_ORDER, 1)[4]}
    assert max(supplies) == 10


def test_reinit_replaces_the_warehouses_and_the_generator():
    t = _native.Terminal(**ARGS, warehouses=[1, 2, 3, 4, 5])
    t.__init__(**{**ARGS, "seed": 9, "w_max": 4}, warehouses=[4])
    fresh = _native.Terminal(**{**ARGS, "seed": 9, "w_max": 4}, warehouses=[4])
    assert {t.warehouse() for _ in range(100)} == {4}
    assert [t.inputs(NEW_ORDER, 4) for _ in range(50)] == [
        fresh.inputs(NEW_ORDER, 4) for _ in range(50)]


def test_procloop_methods_before_init_raise():
    loop = _native.ProcLoop.__new__(_native.ProcLoop)
    for call in (loop.run, loop.stop, loop.take_samples, loop.counts):
        with pytest.raises(RuntimeError, match="not initialised"):
            call()
    assert loop.error is None and loop.crossed == (0, 0) and loop.completed == 0


def test_procloop_rejects_bad_arguments_before_touching_a_connection():
    loop = _native.ProcLoop.__new__(_native.ProcLoop)
    with pytest.raises(TypeError):
        loop.__init__()
    from oltplab.engines.postgres.driver import libpq_path

    args = dict(workload="tpcc", libpq=libpq_path(), connections=[], pointers=[],
                terminals=[], names=_native.NAMES, flush_sql="", ramp_end_ns=0,
                measure_end_ns=0, waits=False, flush_stats=False, idle_published_after_ns=0,
                max_retries=0, max_consecutive_errors=1, retryable=[], fatal=[], bulk=1)
    with pytest.raises(ValueError, match="per terminal, at least one"):
        loop.__init__(**args)
    with pytest.raises(ValueError, match="one name per transaction kind"):
        loop.__init__(**{**args, "names": _native.NAMES[:-1]})
    with pytest.raises(ValueError, match="no workload nope"):
        loop.__init__(**{**args, "workload": "nope"})
    with pytest.raises(ValueError, match="no workload nope"):
        _native.MariaDBLoop(workload="nope", connections=[], terminals=[], ramp_end_ns=0,
                            measure_end_ns=0, waits=False, max_retries=0,
                            max_consecutive_errors=1, retryable=[], lost=[], bulk=1)
    with pytest.raises(RuntimeError, match="not initialised"):
        loop.run()


# Each allocation of the module's import fails in turn, alone (CPython's
# _testcapi.set_nomemory), in a forked child per position: the import must raise MemoryError or
# give the module with every constant, never crash or leave a NULL behind. It stops after 50
# imports in a row that no failure reached.
NOMEMORY = textwrap.dedent("""
    import importlib.util, os, sys, _testcapi
    path, expected = sys.argv[1:]
    failures = start = clean = 0
    while clean < 50:
        pid = os.fork()
        if pid == 0:
            spec = importlib.util.spec_from_file_location("oltplab._native", path)
            _testcapi.set_nomemory(start, start + 1)
            try:
                m = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(m)
                got = repr((m.WEIGHTS, m.NAMES, m.KEYING_S, m.THINK_MEAN_S, m.THINK_CAP,
                            m.DECK_SIZE, m.STOPPED, m.Terminal, m.ProcLoop, m.WORKLOADS))
            except MemoryError:
                os._exit(1)
            except BaseException:
                os._exit(4)
            _testcapi.remove_mem_hooks()
            os._exit(0 if got == expected else 3)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status) or os.WEXITSTATUS(status) > 1:
            print("status", status, "at allocation", start)
            sys.exit(2)
        failed = os.WEXITSTATUS(status) == 1
        failures += failed
        clean = 0 if failed else clean + 1
        start += 1
    print(failures)
""")


def test_module_init_raises_on_every_failed_allocation():
    m = _native
    expected = repr((m.WEIGHTS, m.NAMES, m.KEYING_S, m.THINK_MEAN_S, m.THINK_CAP, m.DECK_SIZE,
                     m.STOPPED, m.Terminal, m.ProcLoop, m.WORKLOADS))
    p = subprocess.run([sys.executable, "-c", NOMEMORY, m.__file__, expected],
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONMALLOC": "malloc"})
    assert p.returncode == 0, p.stdout + p.stderr
    assert int(p.stdout) > 20  # the import failed at many of its allocations, cleanly
