"""The TPC-C-derived schema on MariaDB: its SQL files and what a built database holds."""

from __future__ import annotations

import functools

from ....errors import DatabaseError
from ....workloads.brokerage.schema import OWN_TABLES as BROKERAGE_TABLES
from ....workloads.brokerage.schema import brokerage_schema_here
from ....workloads.tpcc import schema as common
from ....workloads.tpcc.schema import META_TABLE
from ...base import SchemaInfo
from .. import client
from ..dialect import ask

PROCEDURES = ("NEWORD", "PAYMENT", "DELIVERY", "OSTAT", "SLEV")

#: sql_text(name), sql_statements(name): the files of this package's sql/ folder
sql_text = functools.partial(common.sql_text, __package__)
sql_statements = functools.partial(common.sql_statements, __package__)


def schema_info(dsn: str) -> SchemaInfo:
    """What the build recorded in ``tpcc_meta``; SchemaError when the database holds no
    (complete) TPC-C schema, saying so when it holds the DVD-Store-derived one instead."""
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT DATABASE()")
            dbname = cur.fetchone()[0]
            cur.execute("SELECT table_name FROM information_schema.tables"
                        " WHERE table_schema = DATABASE() AND table_name IN %s",
                        ([META_TABLE, "warehouse", "dvds_meta", *BROKERAGE_TABLES],))
            found = {r[0].lower() for r in cur.fetchall()}
            brokerage = found & set(BROKERAGE_TABLES)
            row = None
            if META_TABLE in found:
                cur.execute(f"SELECT warehouses, c_last_load, c_id_load, c_ol_i_id_load"
                            f" FROM {META_TABLE} LIMIT 1")
                row = cur.fetchone()
            if row is None and found - {"dvds_meta"} - brokerage:
                raise common.incomplete_schema(dbname)
            if row is None and brokerage:
                raise brokerage_schema_here(dbname, "TPC-C-derived", "tpcc")
            if row is None and found:
                raise common.other_schema(dbname, "DVD-Store-derived")
            if row is None:
                raise common.no_schema(dbname)
            cur.execute("SELECT COUNT(DISTINCT routine_name) FROM information_schema.routines"
                        " WHERE routine_schema = DATABASE() AND routine_name IN %s",
                        (list(PROCEDURES),))
            procedures = cur.fetchone()[0]
        return SchemaInfo(warehouses=int(row[0]), c_last_load=int(row[1]),
                          c_id_load=int(row[2]), c_ol_i_id_load=int(row[3]),
                          functions_installed=procedures == len(PROCEDURES))
    except client.Error as exc:
        raise DatabaseError(f"reading the TPC-C schema failed: {client.error_text(exc)}") from exc
    finally:
        conn.close()


def has_run(dsn: str) -> bool:
    """True when any order was entered after the load (then CC11 no longer applies)."""
    return ask(dsn, "SELECT EXISTS (SELECT 1 FROM district WHERE d_next_o_id <> 3001)",
               "the districts")
