"""Bad input gets one clear line and exit code 2 (usage) or 1 (runtime), never a traceback."""

from __future__ import annotations

import socket

import pytest

from .conftest import free_port


def _one_line_error(p, rc: int, needle: str) -> None:
    assert p.returncode == rc, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, p.stderr
    assert needle.lower() in lines[0].lower(), lines[0]


@pytest.mark.parametrize("args, needle", [
    (["tpcc", "run", "--users", "0,abc"], "--users"),
    (["tpcc", "run", "--users", "1,,2"], "--users"),
    (["tpcc", "run", "--duration", "-5s"], "negative"),
    (["tpcc", "run", "--rampup", "-1"], "negative"),
    (["tpcc", "run", "--duration", "soon"], "not a duration"),
    (["tpcc", "run", "--mode", "turbo"], "--mode"),
    (["tpcc", "build", "--warehouses", "0"], "--warehouses"),
    (["tpcc", "build", "--warehouses", "-3"], "--warehouses"),
    (["tpcc", "build", "--warehouses", "x"], "--warehouses"),
    (["tpcc", "build"], "--warehouses"),
    (["tpcc", "build", "-w", "1", "--frobnicate"], "frobnicate"),
    (["db", "start", "--db-memory", "lots"], "--db-memory"),
    (["db", "start", "-c", "nonsense"], "name=value"),
    (["db", "start", "--port", "70000"], "--port"),
    (["db", "start", "--dsn", "postgresql://x@127.0.0.1:1/x"], "--dsn"),
    (["db", "start", "--listen", "127.0.0.1'; x"], "--listen"),
    (["tpcc", "run", "--listen", "*", "--dsn", "postgresql://x@127.0.0.1:1/x"], "--listen"),
    (["db", "start", "--host-memory", "lots"], "--host-memory"),
    (["db", "start", "--host-memory", "0"], "--host-memory"),
    (["tpcc", "run", "--host-memory", "64MiB", "--db-memory", "32MiB"], "--host-memory"),
    (["tpcc", "run", "--host-memory", "1GiB", "--dsn", "postgresql://x@127.0.0.1:1/x"],
     "--host-memory"),
])
def test_usage_errors_exit_2(cli, tmp_path, args, needle):
    _one_line_error(cli(*args, cwd=tmp_path), 2, needle)


def test_datadir_is_a_file(cli, tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    p = cli("db", "start", "--datadir", str(f), "--port", str(free_port()), cwd=tmp_path)
    assert p.returncode in (1, 2)
    _one_line_error(p, p.returncode, "afile")


def test_unreachable_dsn(cli, tmp_path):
    port = free_port()
    p = cli("tpcc", "run", "--dsn", f"postgresql://postgres@127.0.0.1:{port}/tpcc", cwd=tmp_path)
    _one_line_error(p, 1, "connect")


def test_port_in_use(cli, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        p = cli("db", "start", "--datadir", str(tmp_path / "pg"), "--port", str(port),
                "--listen", "127.0.0.1", cwd=tmp_path)
    assert p.returncode in (1, 2)
    _one_line_error(p, p.returncode, str(port))


def test_results_show_unknown_run(cli, tmp_path):
    (tmp_path / "results").mkdir()
    _one_line_error(cli("results", "show", "nope", cwd=tmp_path), 2, "no run")
