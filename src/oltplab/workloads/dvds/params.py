"""The run parameters of the DVD-Store-derived workload, with the shop driver's defaults and
names: think time, the share of new customers, searches per order and rows per search, items
per cart."""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import UsageError

MAX_CART = 10  # items in one cart at most, whatever --line-items asks


@dataclass(frozen=True)
class DvdsParams:
    """``think_time`` (s; uniform 0..2x after each order), ``pct_new_customers`` (0..100),
    ``searches`` (browses per order: uniform 1..2n-1), ``search_batch`` (rows per browse:
    uniform 1..2n-1) and ``line_items`` (items per cart: uniform 1..2n-1, at most 10)."""

    think_time: float = 0.0
    pct_new_customers: float = 20.0
    searches: int = 3
    search_batch: int = 5
    line_items: int = 5

    def __post_init__(self):
        if not 0 <= self.pct_new_customers <= 100:
            raise UsageError(f"--pct-new-customers: {self.pct_new_customers:g} is not within "
                             "0..100")
        if self.think_time < 0:
            raise UsageError("--think-time must not be negative")
        for flag, value in (("--searches", self.searches), ("--search-batch", self.search_batch),
                            ("--line-items", self.line_items)):
            if value < 1:
                raise UsageError(f"{flag} must be at least 1, not {value}")

    @property
    def mean_items(self) -> float:
        """The expected items per cart: uniform 1..2n-1, capped at MAX_CART."""
        top = 2 * self.line_items - 1
        return sum(min(k, MAX_CART) for k in range(1, top + 1)) / top
