"""What a TPC-E-derived brokerage build is asked for: ``BrokerageBuildSpec``, validated and
frozen at the edge (the CLI) and handed to an engine's brokerage loader; and what every
engine's build records (``build_record``, the row of brokerage_meta) and returns
(``build_summary``)."""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import UsageError
from .reference import START_DATE
from .scale import Scale
from .schema import BALANCE_TABLE, TABLES

#: MariaDB's innodb_page_size choices, in KiB (the paper's 8 KiB pages, or the default 16).
PAGE_SIZES = (8, 16)


@dataclass(frozen=True)
class BrokerageBuildSpec:
    """``scale`` (scale.parse_scale); ``build_users`` loading processes; ``seed`` None for a
    random one (the build records the seed it used, so any build can be made again);
    ``force`` drops an existing brokerage schema first; ``page_size`` MariaDB's
    innodb_page_size in KiB (8 or 16; None: the server's), settable only when its data
    directory is created."""

    scale: Scale
    build_users: int = 2
    seed: int | None = None
    force: bool = False
    page_size: int | None = None

    def __post_init__(self):
        if self.build_users < 1:
            raise UsageError(f"--build-users {self.build_users}: give 1 or more")
        if self.page_size is not None and self.page_size not in PAGE_SIZES:
            raise UsageError(f"page size {self.page_size} KiB: give 8 or 16 (innodb_page_size)")


def build_record(scale: Scale, seed: int, build_users: int, max_t_id: int,
                 page_kib: int | None = None) -> dict:
    """The row of brokerage_meta that a complete build writes last, by column (the engine adds
    build_seconds and oltplab_version): the scale, its trade ids and the highest loaded one
    (the run's trade ids start after it), the seed and the loading processes, the first day
    of the initial trading, and the page size in KiB (None where not known)."""
    return dict(customers=scale.customers, days=scale.days, scale_factor=scale.scale_factor,
                trades=scale.trades, max_t_id=max_t_id, seed=seed, build_users=build_users,
                start_date=START_DATE.isoformat(), page_kib=page_kib)


def build_summary(record: dict, times: dict, rows) -> dict:
    """What an engine's brokerage build returns: customers, days, scale_factor, trades,
    max_t_id, build_users, seed (the one used), page_kib, ``times`` (engines/common/build.py
    ``timings``: seconds, phases) and rows (per table: the 33 and brokerage_balance, the
    accounts' opening and built balances), from the build's ``record`` (``build_record``)."""
    keep = ("customers", "days", "scale_factor", "trades", "max_t_id", "build_users", "seed",
            "page_kib")
    return {**{k: record[k] for k in keep}, **times,
            "rows": {t: rows.get(t, 0) for t in (*TABLES, BALANCE_TABLE)}}
