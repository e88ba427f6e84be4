"""The DVD-Store-derived workload in MariaDB's dialect: load (LOAD DATA), the stored
procedures and the restock trigger, consistency checks.

The SQL lives in sql/*.sql; connections come from engines/mariadb/client.py; the users' C loop
writes each CALL (native/dvds/). ``DIALECT`` is this package behind the engine interface
(engines/base.py ``Dialect``; engines/mariadb/dialect.py): failures are classified as for
every workload (by error number), the run monitor checks the procedures the run calls (DS3's
six on a DS3 run only: a build older than them has DS2's six alone), and the
headline's unit on the server is the number of orders added since the run began (ORDERS rows
above the highest orderid at its start: a purchase that is rolled back adds none).
"""

from __future__ import annotations

from ....workloads.dvds.schema import functions_called
from ..dialect import MariaDBDialect
from .schema import PROCEDURES


def _called(params) -> tuple[str, ...]:
    return tuple(name.upper() for name in functions_called(params))


DIALECT = MariaDBDialect(__name__, procedures=PROCEDURES,
                         unit_sql="(SELECT COUNT(*) FROM orders WHERE orderid > {base})",
                         base_sql="SELECT COALESCE(MAX(orderid), 0) FROM orders", called=_called)
