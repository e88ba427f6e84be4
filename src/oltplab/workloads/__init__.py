"""The workloads, registered once (the contract is in workloads/base.py): ``get(name)`` gives
one (UsageError for an unknown name), ``names()`` all of them. The workload of a record that
does not name one is the TPC-C-derived one, the only workload of older records."""

from __future__ import annotations

import importlib

from ..errors import UsageError

WORKLOADS = ("tpcc", "dvds", "brokerage")
DEFAULT = "tpcc"


def get(name: str | None = None):
    """The ``WORKLOAD`` of ``workloads/<name>`` (the default one for None)."""
    name = name or DEFAULT
    if name not in WORKLOADS:
        raise UsageError(f"workload {name!r} is not one of {', '.join(WORKLOADS)}")
    return importlib.import_module(f"{__name__}.{name}").WORKLOAD


def of_record(record: dict):
    """The workload a run record ran (``workload``, else the default)."""
    return get(record.get("workload") if isinstance(record.get("workload"), str) else None)
