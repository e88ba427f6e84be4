"""The managed MariaDB server: install, start, status, access rules, settings, stop.

Runs a real mariadbd (Debian's mariadb-server-core, which ``make install`` installs); skipped
only when mariadbd is not installed.
"""

from __future__ import annotations

import os
import socket
import stat

import psutil
import pytest

from oltplab.config import DbSpec
from oltplab.errors import DatabaseError, UsageError
from oltplab.engines.base import ManagedInstance
from oltplab.engines.mariadb import client
from oltplab.engines.mariadb.instance import PID_FILE, MariaDBInstance, find_binary

from conftest import ctrl_c_when, free_port

pytestmark = pytest.mark.skipif(find_binary("mariadbd") is None,
                                reason="mariadbd is not installed (Debian: mariadb-server-core)")

_MiB = 1024**2


def _query(dsn: str, sql: str):
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return cur.fetchall()
    finally:
        conn.close()


@pytest.fixture
def listening(server_tmp):
    """A server that listens on TCP (127.0.0.1), its redo log in another directory."""
    spec = DbSpec(datadir=server_tmp / "data", waldir=server_tmp / "redo", port=free_port(),
                  db_memory=64 * _MiB, listen="127.0.0.1",
                  settings=(("innodb-io-capacity", "300"),))
    inst = MariaDBInstance(spec)
    inst.start()
    try:
        yield inst
    finally:
        inst.stop()


def test_start_status_settings_and_stop(listening):
    inst = listening
    assert isinstance(inst, ManagedInstance)
    st = inst.status()
    assert st["running"] and st["pid"] and st["initialized"]
    assert st["version"].startswith(("10.", "11.", "12."))
    assert st["waldir"] == str(inst.waldir)
    assert (inst.waldir / "ib_logfile0").is_file()
    assert not (inst.datadir / "ib_logfile0").exists()
    record = inst.settings_for_record()
    s = record["settings"]
    assert "MariaDB" in record["server_version"]
    assert s["innodb_buffer_pool_size"] == str(64 * _MiB)
    assert s["innodb_log_file_size"] == str(256 * _MiB)  # 2 x pool, at least 256MiB
    assert s["innodb_log_group_home_dir"].rstrip("/") == str(inst.waldir)
    assert s["innodb_io_capacity"] == "300"  # -c innodb-io-capacity=300
    assert s["innodb_flush_log_at_trx_commit"] == "1"
    assert inst.ensure_database("tpcc") is True
    assert inst.ensure_database("tpcc") is False
    pid = st["pid"]
    inst.stop()
    assert not inst.is_running()
    assert not os.path.exists(f"/proc/{pid}") or not inst.status()["running"]
    inst.stop()  # a no-op when stopped
    inst.start()  # starts again on the same files
    inst.start()  # a no-op on a running server that allows enough connections
    with pytest.raises(DatabaseError, match="allows 151 connections"):
        inst.start(need_connections=500)
    assert _query(inst.dsn(), "SELECT DATABASE()") == (("tpcc",),)


def test_access_socket_dir_private_and_tcp_needs_password(listening):
    inst = listening
    sock_dir = inst.socket_path.parent
    st = os.stat(sock_dir)
    assert stat.S_IMODE(st.st_mode) == 0o700
    # temporary tables and sort files go there too, not into every user's /tmp
    assert _query(inst.dsn(""), "SELECT @@tmpdir") == ((str(sock_dir),),)
    if os.geteuid() == 0:  # run as root, the server runs as the unprivileged oltplab user
        assert st.st_uid != 0
        assert psutil.Process(inst.status()["pid"]).uids().real == st.st_uid
        assert _query(inst.dsn(""), "SELECT @@hostname IS NOT NULL")  # root on the socket
    pw = os.stat(inst.password_file)
    assert stat.S_IMODE(pw.st_mode) == 0o600
    tcp = inst.tcp_dsn("")
    assert tcp and "option_file=" in tcp and "password" not in tcp.split("?")[0]
    assert _query(tcp, "SELECT CURRENT_USER()")[0][0].startswith("oltplab@")
    # --loadgen's hosts lack the option file: the DSN they get carries the password
    remote = inst.remote_dsn("")
    assert "option_file" not in remote and remote.startswith("mariadb://oltplab:")
    assert _query(remote, "SELECT CURRENT_USER()")[0][0].startswith("oltplab@")
    port = inst.status()["port"]
    for user in ("root", "oltplab"):  # no password over TCP: refused
        with pytest.raises(DatabaseError, match="Access denied"):
            client.connect(f"mariadb://{user}@127.0.0.1:{port}/")
    with pytest.raises(DatabaseError, match="Access denied"):
        client.connect(f"mariadb://oltplab:wrong@127.0.0.1:{port}/")
    accounts = _query(inst.dsn(""), "SELECT user, host FROM mysql.global_priv"
                                    " WHERE user IN ('root', 'oltplab', '') ORDER BY user")
    assert accounts == (("oltplab", "%"), ("root", "localhost"))


def test_socket_only_by_default(server_tmp):
    port = free_port()
    inst = MariaDBInstance(DbSpec(datadir=server_tmp / "d", port=port, db_memory=32 * _MiB))
    inst.start()
    try:
        assert inst.tcp_dsn() is None and inst.status()["listen"] == ""
        assert inst.remote_dsn() is None
        assert _query(inst.dsn(""), "SELECT @@skip_networking") == ((1,),)
        with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port),
                                                                             timeout=2):
            pass
    finally:
        inst.stop()


def test_bad_inputs_are_refused_in_one_line(server_tmp):
    (server_tmp / "full").mkdir()
    (server_tmp / "full" / "x").write_text("x")
    with pytest.raises(UsageError, match="not empty and holds no MariaDB"):
        MariaDBInstance(DbSpec(datadir=server_tmp / "full")).init()
    with pytest.raises(UsageError, match="too small"):
        MariaDBInstance(DbSpec(datadir=server_tmp / "d", db_memory=1 * _MiB)).start()
    with pytest.raises(UsageError, match="one address"):
        MariaDBInstance(DbSpec(datadir=server_tmp / "d", listen="127.0.0.1,::1")).start()
    with pytest.raises(UsageError, match="set by oltplab"):
        MariaDBInstance(DbSpec(datadir=server_tmp / "d", settings=(("socket", "/x"),))).start()
    with pytest.raises(UsageError, match="host-memory"):
        MariaDBInstance(DbSpec(datadir=server_tmp / "d", db_memory=32 * _MiB,
                               host_memory=1024 * _MiB))
    with pytest.raises(UsageError, match="not a MariaDB option name"):
        MariaDBInstance(DbSpec(datadir=server_tmp / "d", settings=(("a b", "1"),))).start()


def test_a_bad_option_fails_the_start_with_the_servers_reason(server_tmp):
    inst = MariaDBInstance(DbSpec(datadir=server_tmp / "d", db_memory=32 * _MiB,
                                  settings=(("no_such_option", "1"),)))
    with pytest.raises(DatabaseError, match="no.such.option"):
        inst.start()
    assert not inst.is_running()


def test_settings_derive_from_db_memory_and_overrides_win():
    from oltplab.engines.mariadb.settings import derive_settings

    s = derive_settings(4 * 1024**3, need_connections=200)
    assert s["innodb_buffer_pool_size"] == "4G"
    assert s["innodb_log_file_size"] == "8G"  # 2 x pool
    assert s["innodb_log_buffer_size"] == "128M"  # pool / 32
    assert s["max_connections"] == "220"
    big = derive_settings(256 * 1024**3)
    assert big["innodb_log_file_size"] == "64G" and big["innodb_log_buffer_size"] == "256M"
    small = derive_settings(100 * _MiB, overrides=(("Innodb-Flush-Log-At-Trx-Commit", "2"),))
    assert small["innodb_log_file_size"] == "256M" and small["innodb_log_buffer_size"] == "16M"
    assert small["innodb_flush_log_at_trx_commit"] == "2"


def test_start_interrupted_before_the_pid_file_stops_the_spawned_server(server_tmp):
    """Ctrl-C after mariadbd was spawned but before it wrote its pid file: the server that
    nothing else knows of yet is stopped, not left running."""
    inst = MariaDBInstance(DbSpec(datadir=server_tmp / "data", port=free_port(),
                                  db_memory=64 * _MiB))
    inst.init()
    spawned = []

    def ours(p: psutil.Process) -> bool:
        """This instance's mariadbd: never another test's server, such as the session's."""
        try:
            return p.name() == "mariadbd" and str(inst.datadir) in " ".join(p.cmdline())
        except psutil.Error:
            return False

    def spawned_without_pid_file() -> bool:
        if not spawned:
            spawned.extend(p for p in psutil.Process().children() if ours(p))
        return bool(spawned) and not (inst.datadir / PID_FILE).exists()

    try:
        with ctrl_c_when(spawned_without_pid_file) as sent, pytest.raises(KeyboardInterrupt):
            inst.start()
        assert sent, "mariadbd was never seen before its pid file"
        alive = spawned[0].is_running() and spawned[0].status() != psutil.STATUS_ZOMBIE
    finally:
        for p in spawned:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
    assert not alive, "the interrupted start left mariadbd running"


def test_the_install_keeps_its_temporary_tables_out_of_tmp(server_tmp):
    """A mariadbd starting with /tmp as its tmpdir deletes the #sql files it may delete there, and
    so took the temporary tables of another install running beside it (its bootstrap then
    failed with "Unknown table 'mysql.tmp_proxies_priv'"). The install uses the server's
    private folder: a #sql file of the server's user in /tmp survives it."""
    import tempfile
    inst = MariaDBInstance(DbSpec(datadir=server_tmp / "data", db_memory=64 * _MiB))
    user = inst._server_user()
    inst._prepare_user(user)
    fd, name = tempfile.mkstemp(prefix="#sql-temptable-oltplab-test-", suffix=".MAI",
                                dir="/tmp")
    os.close(fd)
    try:
        if os.geteuid() == 0:
            os.chown(name, user.uid, user.gid)  # the server's user may delete its own files
        inst.init()
        assert inst.initialized()
        assert os.path.exists(name), "the install cleaned /tmp of its user's #sql files"
    finally:
        if os.path.exists(name):
            os.unlink(name)
