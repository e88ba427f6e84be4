"""A plan's brokerage cell at a server given by dsn: the brokerage there is reused when the
build recorded the cell's customers and days, and refused in one line otherwise (no schema,
an unfinished build, another scale); only a managed server is rebuilt."""

from __future__ import annotations

import pytest

from oltplab.engines.common.sqlfiles import sql_statements
from oltplab.errors import SchemaError, UsageError
from oltplab.plans.brokerage import ensure_brokerage
from oltplab.workloads.brokerage.scale import parse_scale

META = ("INSERT INTO brokerage_meta (customers, days, scale_factor, trades, max_t_id, seed, "
        "build_users, start_date, build_seconds, oltplab_version) VALUES "
        "(1000, 1, 500, 57600, 57600, 4, 2, '2005-01-03', 1.0, 'test')")


def test_a_dsns_brokerage_is_reused_at_the_cells_scale_and_refused_at_another(pg):
    dsn = pg.create_db("bkplan")
    name = dsn.split("?")[0].rsplit("/", 1)[1]
    one_day, two_days = parse_scale(1000, 1), parse_scale(1000, 2)
    with pytest.raises(UsageError, match=f"no TPC-E-derived brokerage schema in database "
                                         f"{name}"):
        ensure_brokerage("postgres", dsn, one_day, managed=False)
    for statement in sql_statements("oltplab.engines.postgres.brokerage", "tables"):
        pg.sql(statement, name)
    with pytest.raises(SchemaError, match="incomplete"):  # the build's record is missing
        ensure_brokerage("postgres", dsn, one_day, managed=False)
    pg.sql(META, name)
    assert ensure_brokerage("postgres", dsn, one_day, managed=False) == "reused"
    with pytest.raises(SchemaError) as e:
        ensure_brokerage("postgres", dsn, two_days, managed=False,
                         on_build=lambda: pytest.fail("a server given by dsn is not rebuilt"))
    assert str(e.value) == ("the brokerage at dsn has 1,000 customers x 1 day, not 1,000 "
                            "customers x 2 days; only a managed server is rebuilt")
