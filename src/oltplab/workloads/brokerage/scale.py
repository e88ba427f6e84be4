"""The scale of a TPC-E-derived brokerage build: ``Scale`` and ``parse_scale``.

A build is counted in load units (LU) of 1,000 customers. The scale factor (customers per
trade result per second, 500 by default) and the days of initial trading (300 by default, of
8 hours each) fix the loaded trades: ``days x 28,800 s x customers / scale_factor``, 57,600 a
day per load unit. The run reads the scale the build recorded in ``brokerage_meta``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import UsageError

LOAD_UNIT = 1_000
DEFAULT_DAYS = 300
DEFAULT_SCALE_FACTOR = 500
#: Seconds of one day of trading (8 hours).
TRADING_SECONDS = 8 * 3600
#: Below this many days the time windows of Trade-Lookup (back-off up to 32 h, 4 days of
#: trading) are not meaningful: the build warns.
MEANINGFUL_DAYS = 5


@dataclass(frozen=True)
class Scale:
    """``customers`` (a multiple of LOAD_UNIT), ``days`` of initial trading, and the
    ``scale_factor`` (customers per trade result per second)."""

    customers: int
    days: int = DEFAULT_DAYS
    scale_factor: int = DEFAULT_SCALE_FACTOR

    @property
    def load_units(self) -> int:
        return self.customers // LOAD_UNIT

    @property
    def trades_per_day(self) -> int:
        """Trades loaded per day of trading: 57,600 per load unit at the default factor."""
        return TRADING_SECONDS * self.customers // self.scale_factor

    @property
    def trades(self) -> int:
        """The trade ids a build spans (some are skipped: population's rollback ids)."""
        return self.days * self.trades_per_day

    @property
    def meaningful(self) -> bool:
        return self.days >= MEANINGFUL_DAYS


def parse_scale(customers, days=DEFAULT_DAYS, scale_factor=DEFAULT_SCALE_FACTOR) -> Scale:
    """The Scale of the user's ``--customers``, ``--days`` (and scale factor); UsageError in one
    line for anything else than a positive multiple of 1,000 customers and 1 day or more."""
    try:
        c, d, sf = int(customers), int(days), int(scale_factor)
    except (TypeError, ValueError):
        raise UsageError(f"--customers and --days take whole numbers, not {customers!r} and "
                         f"{days!r}") from None
    if c < LOAD_UNIT or c % LOAD_UNIT:
        raise UsageError(f"--customers {customers}: give a positive multiple of {LOAD_UNIT:,} "
                         "(a load unit), as 1000 or 5000")
    if d < 1:
        raise UsageError(f"--days {days}: give 1 day of initial trading or more (300 by "
                         "default)")
    if sf < 1:
        raise UsageError(f"scale factor {scale_factor}: give 1 customer per trade result "
                         "per second or more (500 by default)")
    return Scale(c, d, sf)
