"""access.py without a server: where the socket goes, TCP addresses, the password file."""

import socket
from pathlib import Path

import pytest

from oltplab.config import DbSpec
from oltplab.engines.postgres import access
from oltplab.errors import UsageError


def test_socket_goes_beside_the_datadir_while_the_path_fits_107_bytes():
    # "<datadir>.sock/.s.PGSQL.65535": 5 + 15 bytes on top of the data directory's path
    fits = Path("/" + "d" * (107 - 20 - 1))
    assert access.socket_dir(fits) == Path(f"{fits}.sock")
    assert len(f"{access.socket_dir(fits)}/.s.PGSQL.65535") == 107
    too_long = Path(f"{fits}x")
    fallback = access.socket_dir(too_long)
    assert fallback.parent == Path("/tmp") and fallback.name.startswith("oltplab-")
    assert fallback == access.socket_dir(too_long)  # found again by a later process
    assert fallback != access.socket_dir(Path(f"{fits}y"))


def test_client_host_of_listen_addresses():
    assert access.client_host("") is None and access.client_host(" , ") is None
    assert access.client_host("*") == "127.0.0.1"
    assert access.client_host("0.0.0.0") == "127.0.0.1"
    assert access.client_host("::") == "::1"
    assert access.client_host("10.0.0.5, 127.0.0.1") == "10.0.0.5"


def test_tcp_in_use_finds_a_listener_on_the_addresses_given():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert access.tcp_in_use(port, "127.0.0.1") == "127.0.0.1"
        assert access.tcp_in_use(port, "") is None  # no TCP asked for: no conflict
    assert access.tcp_in_use(port, "127.0.0.1") is None
    with pytest.raises(UsageError, match="cannot resolve"):
        access.tcp_in_use(port, "no-such-host.invalid")


def test_listen_must_be_a_list_of_addresses():
    assert DbSpec(listen="127.0.0.1, ::1").listen == "127.0.0.1, ::1"
    assert DbSpec(listen="*").listen == "*"
    for bad in ("127.0.0.1'; x", "a b", "1.2.3.4,", "\n"):
        with pytest.raises(UsageError, match="--listen"):
            DbSpec(listen=bad)


def test_password_file_is_0600_and_kept(tmp_path):
    path = tmp_path / "data.pgpass"
    uid, gid = path.parent.stat().st_uid, path.parent.stat().st_gid
    password = access.ensure_password(path, uid, gid)
    assert len(password) >= 32 and path.stat().st_mode & 0o777 == 0o600
    assert path.read_text() == f"*:*:*:postgres:{password}\n"
    assert access.ensure_password(path, uid, gid) == password
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.pgpass"]


def test_a_password_file_others_may_read_is_refused(tmp_path):
    path = tmp_path / "data.pgpass"
    path.write_text("*:*:*:postgres:known-to-others\n")
    path.chmod(0o644)
    st = path.stat()
    with pytest.raises(UsageError, match="not a file of mode 0600"):
        access.ensure_password(path, st.st_uid, st.st_gid)
    path.unlink()
    path.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UsageError, match="not a file of mode 0600"):
        access.ensure_password(path, st.st_uid, st.st_gid)


@pytest.mark.parametrize("engine", ["postgres", "mariadb"])
def test_write_owned_does_not_follow_a_symlink_at_its_temporary_name(tmp_path, engine):
    """A link planted where a predictable temporary name would be must not redirect the
    write: the victim stays as it was and the target gets the text."""
    from oltplab.engines.mariadb.instance import MariaDBInstance
    from oltplab.engines.postgres.instance import PostgresInstance
    from oltplab.engines.common.osuser import current_user

    datadir = tmp_path / "data"
    datadir.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    target = datadir / "settings.conf"
    (datadir / f".{target.name}.tmp").symlink_to(victim)
    spec = DbSpec(datadir=datadir, engine=engine)
    if engine == "mariadb":
        MariaDBInstance(spec)._write_owned(target, "x = 1\n", current_user(), 0o600)
    else:
        PostgresInstance(spec)._write_owned(target, "x = 1\n", current_user())
    assert victim.read_text() == "precious\n"
    assert target.read_text() == "x = 1\n" and not target.is_symlink()
    assert not [p.name for p in datadir.iterdir() if p.name.endswith(".tmp")
                and not p.is_symlink()], "no temporary file is left behind"
