"""--host-memory: a real server in a memory control group with a limit, page cache included;
the group's peak; the group gone after stop; refusals where no memory controller can be made."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import asyncpg
import pytest

from oltplab.host import memory as hostmem
from oltplab.config import DbSpec
from oltplab.engines.postgres.instance import PostgresInstance
from oltplab.errors import DatabaseError, UsageError

from conftest import ctrl_c_when, free_port

MiB = 1024**2


@pytest.fixture
def memory_controller():
    """Skip where this host gives our process no writable memory controller."""
    try:
        probe = hostmem.create_group(64 * MiB, f"probe-{free_port()}")
    except UsageError as e:
        pytest.skip(str(e))
    probe.remove()


def _memory_line(pid: int) -> str:
    lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    return next(ln.split(":", 2)[2] for ln in lines
                if "memory" in ln.split(":")[1].split(",") or ln.startswith("0::"))


def test_server_and_its_backends_run_in_the_limited_group(server_tmp, memory_controller):
    spec = DbSpec(datadir=server_tmp / "data", port=free_port(), db_memory=32 * MiB,
                  host_memory=160 * MiB)
    inst = PostgresInstance(spec)
    try:
        inst.start()
        group = inst.memory_group()
        assert group is not None and group.path.name.startswith(hostmem.PREFIX)
        limit_file = "memory.limit_in_bytes" if group.version == 1 else "memory.max"
        assert int((group.path / limit_file).read_text()) == 160 * MiB
        postmaster = inst.status()["pid"]

        async def backend_pid_and_line():
            conn = await asyncpg.connect(inst.dsn("postgres"), timeout=10)
            try:
                pid = await conn.fetchval("SELECT pg_backend_pid()")
                await conn.execute("CREATE TABLE filler AS SELECT g, repeat('x', 500) AS pad "
                                   "FROM generate_series(1, 20000) g")
                return pid, _memory_line(pid)
            finally:
                await conn.close()

        backend, backend_line = asyncio.run(backend_pid_and_line())
        assert backend != postmaster
        assert _memory_line(postmaster).endswith("/" + group.path.name)
        assert backend_line.endswith("/" + group.path.name)
        assert postmaster in group.procs()
        peak = group.peak()
        assert peak is not None and 0 < peak <= 160 * MiB
        rec = group.record()
        assert rec["limit_bytes"] == 160 * MiB and rec["cgroup"] == str(group.path)

        # a second start of the running server with another limit is refused, not ignored
        with pytest.raises(DatabaseError, match="--host-memory"):
            PostgresInstance(spec.with_(host_memory=256 * MiB)).start()
        PostgresInstance(spec).start()  # the same limit: the running server is used as it is
    finally:
        inst.stop("immediate")
    assert not group.path.exists(), "the group must go with the server"


def test_server_without_host_memory_runs_in_no_group_of_ours(server_tmp):
    inst = PostgresInstance(DbSpec(datadir=server_tmp / "data", port=free_port(),
                                   db_memory=32 * MiB))
    try:
        inst.start()
        assert inst.memory_group() is None
    finally:
        inst.stop("immediate")


def test_refused_where_no_memory_controller(tmp_path):
    with pytest.raises(UsageError, match="not a memory control group"):
        hostmem.create_group(128 * MiB, "x", parent=tmp_path)
    unified = Path("/sys/fs/cgroup/unified")
    if unified.is_dir() and "memory" not in (unified / "cgroup.controllers").read_text():
        with pytest.raises(UsageError, match="not a memory control group"):
            hostmem.create_group(128 * MiB, "x", parent=unified)


def test_refused_where_the_group_cannot_be_made(tmp_path):
    (tmp_path / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    (tmp_path / f"{hostmem.PREFIX}taken").write_text("a file where the group would go")
    with pytest.raises(UsageError, match="cannot be made"):
        hostmem.create_group(128 * MiB, "taken", parent=tmp_path)


@pytest.mark.parametrize("host, db, ok", [
    (96 * MiB, 32 * MiB, True), (95 * MiB, 32 * MiB, False), (None, 32 * MiB, True)])
def test_host_memory_leaves_room_beside_db_memory(host, db, ok):
    if ok:
        assert DbSpec(host_memory=host, db_memory=db).host_memory == host
    else:
        with pytest.raises(UsageError, match="--host-memory"):
            DbSpec(host_memory=host, db_memory=db)


def test_interrupted_start_leaves_no_memory_group_and_no_server(server_tmp, memory_controller):
    """Ctrl-C while the server in a memory group starts: the start is undone, the server
    stopped and the group removed (not only when pg_ctl reports a failure)."""
    inst = PostgresInstance(DbSpec(datadir=server_tmp / "data", port=free_port(),
                                   db_memory=32 * MiB, host_memory=160 * MiB))
    inst.init()
    found = []

    def runs_in_its_group() -> bool:
        group = hostmem.group_of(inst._pid() or 0)
        found.extend([group] if group is not None else [])
        return bool(found)

    try:
        with ctrl_c_when(runs_in_its_group), pytest.raises(KeyboardInterrupt):
            inst.start()
            time.sleep(5)  # the signal comes while start() runs, or here at the latest
    finally:
        left_running = inst.is_running()
        left_group = bool(found) and found[0].path.exists()
        inst.stop("immediate")
        for group in found:
            if group.path.is_dir():
                group.remove()
    assert found, "the server never ran in its group"
    assert not left_running, "the interrupted start left the server running"
    assert not left_group, "the interrupted start left the memory group"
