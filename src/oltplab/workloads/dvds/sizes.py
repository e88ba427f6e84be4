"""The sizes of a DVD-Store-derived database: ``parse_size("10MB")`` and what each size holds.

DVD Store names a database by its approximate size on disk; the size fixes the row counts.
n MB: ratio r = n / 10 of the 10 MB database (20,000 customers, 1,000 orders a month, 10,000
products); exactly 1 GB: 2,000,000 customers, 100,000 orders a month, 100,000 products;
n GB otherwise: r = n / 100 of the 100 GB database (200,000,000 customers, 10,000,000 orders a
month, 1,000,000 products). Orders span 12 months. Counts are rounded to whole rows, half up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from ...errors import UsageError

MONTHS = 12

_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(mb|gb)\s*", re.IGNORECASE)

#: (customers, orders per month, products) at ratio 1, per unit; "1gb" stands for exactly 1 GB.
_BASE = {"mb": (20_000, 1_000, 10_000), "1gb": (2_000_000, 100_000, 100_000),
         "gb": (200_000_000, 10_000_000, 1_000_000)}
_DIVISOR = {"mb": 10, "gb": 100}


@dataclass(frozen=True)
class Size:
    """A database size: its name ("10MB", "1GB") and row counts."""

    name: str
    customers: int
    orders_per_month: int
    products: int

    @property
    def orders(self) -> int:
        return MONTHS * self.orders_per_month


def _round(x: Fraction) -> int:
    """Half up: 2.5 -> 3."""
    return int(x + Fraction(1, 2))


def parse_size(text: str) -> Size:
    """The Size that ``text`` names: n MB or n GB, any case, as 10MB, 1gb, 20GB, 0.5GB."""
    m = _SIZE.fullmatch(str(text))
    if not m:
        raise UsageError(f"unknown size {text!r}: give n MB or n GB, as 10MB, 1GB, 20GB")
    n, unit = Fraction(m.group(1)), m.group(2).lower()
    key = "1gb" if unit == "gb" and n == 1 else unit
    ratio = Fraction(1) if key == "1gb" else n / _DIVISOR[unit]
    customers, per_month, products = (_round(ratio * base) for base in _BASE[key])
    if min(customers, per_month, products) < 1:
        raise UsageError(f"size {text!r} is too small to hold a row of every table: give more,"
                         " as 10MB")
    number = m.group(1).rstrip("0").rstrip(".") if "." in m.group(1) else str(int(m.group(1)))
    return Size(name=f"{number}{unit.upper()}", customers=customers,
                orders_per_month=per_month, products=products)
