"""The TPC-C-derived workload in MariaDB's dialect: load, procedures, consistency checks.

The SQL lives in sql/*.sql; connections come from engines/mariadb/client.py.
``DIALECT`` is this package behind the engine interface (engines/base.py ``Dialect``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ....config import BuildSpec
from ...base import DialectParts, Failure
from .. import client


@dataclass(frozen=True)
class MariaDBDialect(DialectParts):
    """engines.base.Dialect for MariaDB."""

    load_method: str = "infile"
    package = __name__

    def build(self, dsn: str, spec: BuildSpec, progress=None) -> dict:
        from .loader import build

        return build(dsn, spec, progress, method=self.load_method)

    def classify(self, exc: BaseException) -> Failure:
        return client.classify(exc)


DIALECT = MariaDBDialect()
