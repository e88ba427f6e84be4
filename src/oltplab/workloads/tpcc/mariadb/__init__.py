"""The TPC-C-derived workload in MariaDB's dialect: load, procedures, consistency checks.

The SQL lives in ../sql/mariadb_*.sql; connections come from engines/mariadb/client.py.
``DIALECT`` is this package behind the engine interface (engines/base.py ``Dialect``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ....config import BuildSpec
from ....engines.base import Failure
from ....engines.mariadb import client


@dataclass(frozen=True)
class MariaDBDialect:
    """engines.base.Dialect for MariaDB."""

    load_method: str = "infile"

    def build(self, dsn: str, spec: BuildSpec, progress=None) -> dict:
        from .loader import build

        return build(dsn, spec, progress, method=self.load_method)

    def run_checks(self, dsn: str, after_run: bool = False) -> list:
        from .checks import run_checks

        return run_checks(dsn, after_run)

    def classify(self, exc: BaseException) -> Failure:
        return client.classify(exc)


DIALECT = MariaDBDialect()
