"""What every workload's consistency checks are made of, whatever the workload: a
``Condition`` (a query returning the rows that violate it: none means it holds) and the
``CheckResult`` an engine makes of it, the first ``SAMPLE_ROWS`` violating rows as text.

The conditions are each workload's (workloads/<name>/checks.py); an engine runs them in one
snapshot (engines/<engine>/<name>/checks.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Violating rows shown per failed condition.
SAMPLE_ROWS = 5


@dataclass(frozen=True)
class Condition:
    name: str  # 'CC1', 'DS1' ..
    clause: str  # of the specification ('3.3.2.1'), or what it checks ('orders')
    description: str
    sql: str


@dataclass(frozen=True)
class CheckResult:
    name: str  # the condition's
    clause: str
    description: str
    ok: bool
    violations: int
    sample: list[str] = field(default_factory=list)  # the first violating rows, as text
