"""What the MariaDB driver's modules share: one W=1 build per test process (the suite's
MariaDB, tests/conftest.py), which the procedures-mode tests run on and the --mode sql tests
copy table by table before each test. Runs keep the build consistent, so that a copy taken
after another module's runs is a consistent W=1 as well."""

from __future__ import annotations

import pytest

from oltplab.config import BuildSpec
from oltplab.engines.mariadb.tpcc import DIALECT

#: The shared build's database.
W1_DATABASE = "shared_w1"


@pytest.fixture(scope="session")
def mariadb_w1(mariadb) -> str:
    """The DSN of the process's W=1 build (seed 4242), made once."""
    mariadb.ensure_database(W1_DATABASE)
    dsn = mariadb.dsn(W1_DATABASE)
    DIALECT.build(dsn, BuildSpec(warehouses=1, build_users=2, seed=4242))
    return dsn
