"""The engine seam: the registry, DSN schemes, and no database client outside engines/."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from oltplab import engines
from oltplab.config import DbSpec
from oltplab.engines.base import Dialect
from oltplab.errors import UsageError

SRC = Path(__file__).parents[3] / "src" / "oltplab"
CLIENTS = {"asyncpg", "psycopg", "pymysql"}


def _client_uses(path: Path) -> set[str]:
    """The database clients a module imports or names (``asyncpg.X`` included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Name):
            found.add(node.id)
    return found & CLIENTS


def test_no_module_outside_engines_uses_a_database_client():
    uses = {str(p.relative_to(SRC)): _client_uses(p) for p in SRC.rglob("*.py")}
    assert uses["engines/postgres/driver.py"] == {"psycopg"}  # the walk sees imports
    assert "pymysql" in uses["engines/mariadb/client.py"]
    outside = {path: clients for path, clients in uses.items()
               if clients and not path.startswith("engines/")}
    assert not outside, outside


def test_get_returns_each_engine_by_name():
    for name in engines.ENGINES:
        engine = engines.get(name)
        assert engine.name == name
        assert isinstance(engine.dialect, Dialect)
    assert engines.get("postgres").default_port == 5432
    assert engines.get("mariadb").default_port == 3306


@pytest.mark.parametrize("name", ["oracle", "Postgres", "", "base"])
def test_get_refuses_names_that_are_not_engines(name):
    with pytest.raises(UsageError, match="is not one of postgres, mariadb"):
        engines.get(name)


@pytest.mark.parametrize("dsn, engine", [
    ("postgresql://u@h:5432/tpcc", "postgres"),
    ("postgres://u@/tpcc?host=/run/pg", "postgres"),
    ("mysql://u@127.0.0.1:3306/tpcc", "mariadb"),
    ("MariaDB://root@localhost/tpcc?unix_socket=/s/mysqld.sock", "mariadb"),
])
def test_engine_of_dsn_follows_the_scheme(dsn, engine):
    assert engines.engine_of_dsn(dsn) == engine


@pytest.mark.parametrize("dsn", ["host=/tmp dbname=tpcc", "sqlite:///x.db", "", "postgresql"])
def test_engine_of_dsn_refuses_other_schemes(dsn):
    with pytest.raises(UsageError, match="postgresql://"):
        engines.engine_of_dsn(dsn)


def test_a_dsn_decides_the_engine_and_a_different_one_is_refused():
    assert engines.resolve(None, None) == "postgres"
    assert engines.resolve("mariadb", None) == "mariadb"
    assert engines.resolve(None, "mariadb://u@h/db") == "mariadb"
    with pytest.raises(UsageError, match="--engine postgres does not match --dsn"):
        engines.resolve("postgres", "mysql://u@h/db")
    with pytest.raises(UsageError, match="does not match"):
        DbSpec(engine="mariadb", dsn="postgresql://u@h/db")
    assert DbSpec(dsn="mysql://u@h/db", engine="mariadb").engine == "mariadb"


def test_a_part_an_engine_lacks_fails_in_one_line_only_when_asked_for():
    maria = engines.get("mariadb")
    assert maria.dialect.schema_info  # what exists is there
    missing = [part for part in ("driver", "backup")
               if not (SRC / "engines" / "mariadb" / f"{part}.py").exists()]
    for part in missing:
        with pytest.raises(UsageError, match=r"not available for MariaDB$"):
            getattr(maria, part)
    assert engines.get("postgres").driver.Users  # PostgreSQL's driver is there
