"""The TPC-C-derived workload in MariaDB's dialect: load, procedures, consistency checks.

The SQL lives in sql/*.sql; connections come from engines/mariadb/client.py.
``DIALECT`` is this package behind the engine interface (engines/base.py ``Dialect``;
engines/mariadb/dialect.py): the run monitor checks the five procedures, and the headline's
unit on the server is ``sum(d_next_o_id)`` over DISTRICT, which only committed New-Orders
advance.
"""

from __future__ import annotations

from ..counters import DISTRICT_SUM
from ..dialect import MariaDBDialect
from .schema import PROCEDURES

DIALECT = MariaDBDialect(__name__, procedures=PROCEDURES, unit_sql=DISTRICT_SUM)
