"""The TPC-E-derived brokerage in MariaDB's dialect: the schema and its load (LOAD DATA), the
consistency checks.

The SQL lives in sql/*.sql; connections come from engines/mariadb/client.py. ``DIALECT`` is
this package behind the engine interface (engines/base.py ``Dialect``;
engines/mariadb/dialect.py). The headline's unit on the server is the trades completed among
those entered since the run began (trade ids above the highest at its start); the frames'
procedures are not part of it yet, so a run's precheck asks for none.
"""

from __future__ import annotations

from ..dialect import MariaDBDialect

DIALECT = MariaDBDialect(
    __name__, procedures=(),
    unit_sql="(SELECT COUNT(*) FROM trade WHERE t_id > {base} AND t_st_id = 'CMPT')",
    base_sql="SELECT COALESCE(MAX(t_id), 0) FROM trade")
