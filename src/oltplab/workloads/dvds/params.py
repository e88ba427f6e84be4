"""The run parameters of the DVD-Store-derived workload, with the shop driver's defaults and
names: think time, the share of new customers, searches per order and rows per search, items
per cart; DVD Store 3's review searches per order and shares of new reviews, helpfulness
ratings and new members."""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import UsageError

MAX_CART = 10  # items in one cart at most, whatever --line-items asks
#: The parameters of DVD Store 3's steps alone (a DS2 run does not read them).
DS3_PARAMS = ("pct_new_members", "reviews", "pct_new_reviews", "pct_new_helpfulness")


@dataclass(frozen=True)
class DvdsParams:
    """``think_time`` (s; uniform 0..2x after each order), ``pct_new_customers`` (0..100),
    ``searches`` (browses per order: uniform 1..2n-1), ``search_batch`` (rows per browse:
    uniform 1..2n-1) and ``line_items`` (items per cart: uniform 1..2n-1, at most 10); with
    ``ds3`` (DVD Store 3's steps, on a DS3 build) ``reviews`` (review searches per order:
    uniform 1..2n-1) and the percent of orders that write a review (``pct_new_reviews``),
    rate one (``pct_new_helpfulness``) and make their customer a member
    (``pct_new_members``)."""

    think_time: float = 0.0
    pct_new_customers: float = 20.0
    searches: int = 3
    search_batch: int = 5
    line_items: int = 5
    ds3: bool = False
    pct_new_members: float = 1.0
    reviews: int = 3
    pct_new_reviews: float = 5.0
    pct_new_helpfulness: float = 10.0

    def __post_init__(self):
        for flag, pct in (("--pct-new-customers", self.pct_new_customers),
                          ("--pct-new-members", self.pct_new_members),
                          ("--pct-new-reviews", self.pct_new_reviews),
                          ("--pct-new-helpfulness", self.pct_new_helpfulness)):
            if not 0 <= pct <= 100:
                raise UsageError(f"{flag}: {pct:g} is not within 0..100")
        if self.think_time < 0:
            raise UsageError("--think-time must not be negative")
        for flag, value in (("--searches", self.searches), ("--search-batch", self.search_batch),
                            ("--line-items", self.line_items), ("--reviews", self.reviews)):
            if value < 1:
                raise UsageError(f"{flag} must be at least 1, not {value}")

    @property
    def mean_items(self) -> float:
        """The expected items per cart: uniform 1..2n-1, capped at MAX_CART."""
        top = 2 * self.line_items - 1
        return sum(min(k, MAX_CART) for k in range(1, top + 1)) / top
