"""The run kinds, registered once: tpcc, dvds, brokerage, fio, backup, neighbours (each
declared in its own module here, runs/kind.py has the contract).

``get(name)`` gives a kind (UsageError for an unknown one), ``find(name)`` the kind or None,
``names()`` every kind in the order registered; ``register(kind)`` adds one (a test's toy kind,
say) and ``unregister(name)`` takes it away again. A plan's step kinds are the registered kinds
that have a ``step``.
"""

from __future__ import annotations

from ..errors import UsageError
from ..runs.kind import RunKind
from . import backup, brokerage, dvds, fio, neighbours, tpcc

DEFAULT_STEP = "tpcc"  # a plan without [[step]] tables runs the workload's user sequence
_KINDS: dict[str, RunKind] = {k.name: k for k in (tpcc.KIND, dvds.KIND, brokerage.KIND,
                                                  fio.KIND, backup.KIND, neighbours.KIND)}


def register(kind: RunKind) -> RunKind:
    if kind.name in _KINDS:
        raise UsageError(f"run kind {kind.name!r} is already registered")
    _KINDS[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    _KINDS.pop(name, None)


def find(name) -> RunKind | None:
    return _KINDS.get(name) if isinstance(name, str) else None


def get(name: str) -> RunKind:
    kind = find(name)
    if kind is None:
        raise UsageError(f"unknown run kind {name!r} (kinds: {', '.join(_KINDS)})")
    return kind


def names() -> tuple[str, ...]:
    return tuple(_KINDS)


def steps() -> dict:
    """{name: StepKind} of the kinds a plan's ``[[step]]`` can name."""
    return {k.name: k.step for k in _KINDS.values() if k.step is not None}
