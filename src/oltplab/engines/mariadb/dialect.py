"""A workload in MariaDB's dialect, behind the engine interface (engines/base.py ``Dialect``):
its package's loader, checks and schema modules, the engine's classification of errors, what
the run monitor needs to know of its procedures and tables; and what every workload's dialect
package does alike on MariaDB: its checks in one snapshot (``run_conditions``), a yes-or-no
question to its database (``ask``)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from ...errors import DatabaseError, SchemaError
from ...workloads.checks import SAMPLE_ROWS, CheckResult
from ..base import DialectParts, Failure
from . import client


class MariaDBDialect(DialectParts):
    """engines.base.Dialect for MariaDB.

    - ``package``: the workload's dialect package (engines/mariadb/<workload>/);
    - ``procedures``: the stored procedures a procedures-mode run needs (upper case), and
      ``called`` those a run calls, from its spec's ``params`` (None: all of them);
    - ``unit_sql``: a scalar subquery counting the headline's unit on the server (committed
      New-Orders, orders), with ``{base}`` where the count starts from ``base_sql``'s answer
      at the run's start (None: the count needs no base).
    """

    def __init__(self, package: str, procedures: tuple[str, ...], unit_sql: str,
                 base_sql: str | None = None,
                 called: Callable[[Any], tuple[str, ...]] | None = None):
        self.package = package
        self.procedures = procedures
        self.unit_sql = unit_sql
        self.base_sql = base_sql
        self.called = called

    def procedures_called(self, spec) -> tuple[str, ...]:
        """The stored procedures a procedures-mode run of ``spec`` calls (upper case)."""
        return self.called(spec.params) if self.called else self.procedures

    def classify(self, exc: BaseException) -> Failure:
        return client.classify(exc)


def ask(dsn: str, query: str, what: str) -> bool:
    """The answer of ``query`` (one value, taken as true or false; no row is false) on a
    session of its own; DatabaseError("cannot read <what>: ...") when it cannot be had."""
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute(query)
            row = cur.fetchone()
        return bool(row and row[0])
    except client.Error as exc:
        raise DatabaseError(f"cannot read {what}: {client.error_text(exc)}") from exc
    finally:
        conn.close()


def run_conditions(dsn: str, conditions: Sequence, meta_table: str,
                   no_schema: Callable[[str], SchemaError],
                   leave_out: Collection[str] = (), complete: bool = False) -> list:
    """The ``conditions`` (checks.Condition: each query returns its violating rows) but those
    named in ``leave_out``, all in one ``START TRANSACTION WITH CONSISTENT SNAPSHOT, READ
    ONLY`` at REPEATABLE READ (InnoDB's default), so a live system gives no false failures;
    a CheckResult each. ``no_schema(dbname)`` is raised when ``meta_table`` is missing, or
    with ``complete`` when it holds no row (the build did not finish)."""
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            if not cur.execute("SELECT 1 FROM information_schema.tables"
                               " WHERE table_schema = DATABASE() AND table_name = %s",
                               (meta_table,)) or \
                    (complete and not cur.execute(f"SELECT 1 FROM {meta_table} LIMIT 1")):
                cur.execute("SELECT DATABASE()")
                raise no_schema(cur.fetchone()[0])
            cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
            results = []
            for cond in conditions:
                if cond.name in leave_out:
                    continue
                cur.execute(f"SELECT COUNT(*) OVER () AS _violations, v.* FROM ({cond.sql}) v"
                            f" LIMIT {SAMPLE_ROWS}")
                names = [d[0] for d in cur.description]
                rows = cur.fetchall()
                violations = rows[0][0] if rows else 0
                results.append(CheckResult(
                    name=cond.name, clause=cond.clause, description=cond.description,
                    ok=violations == 0, violations=violations,
                    sample=[" ".join(f"{k}={v}" for k, v in zip(names[1:], r[1:]))
                            for r in rows]))
            cur.execute("COMMIT")
        return results
    except client.Error as exc:
        raise DatabaseError(f"consistency checks failed to run: {client.error_text(exc)}") \
            from exc
    finally:
        conn.close()
