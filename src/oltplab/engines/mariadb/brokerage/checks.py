"""The consistency conditions of workloads/brokerage/checks.py on MariaDB, in one snapshot
(engines/mariadb/dialect.py ``run_conditions``), on a database whose build completed
(schema.schema_info says what else it holds). The conditions' SQL is written for both
engines, and MariaDB runs it as written."""

from __future__ import annotations

from ....errors import UsageError
from ....workloads.brokerage.checks import CONDITIONS
from ....workloads.brokerage.schema import META_TABLE, no_schema
from ....workloads.checks import CheckResult
from ..dialect import run_conditions
from .schema import schema_info


def run_checks(dsn: str, after_run: bool = False) -> list[CheckResult]:
    """BK1-BK7 in one snapshot; they hold after the build and after any run, so ``after_run``
    changes nothing. Raises UsageError when the database holds no brokerage schema (or
    another workload's), SchemaError when its build did not finish."""
    schema_info(dsn)
    return run_conditions(dsn, CONDITIONS, META_TABLE,
                          lambda name: UsageError(str(no_schema(name))), complete=True)
