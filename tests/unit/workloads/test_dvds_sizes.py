"""DVD-Store-derived sizes: the row counts of each size, and the sizes refused."""

from __future__ import annotations

import pytest

from oltplab.errors import UsageError
from oltplab.workloads.dvds.sizes import Size, parse_size


@pytest.mark.parametrize("text, expected", [
    ("10MB", Size("10MB", 20_000, 1_000, 10_000)),
    ("10mb", Size("10MB", 20_000, 1_000, 10_000)),
    ("1GB", Size("1GB", 2_000_000, 100_000, 100_000)),
    ("1gb", Size("1GB", 2_000_000, 100_000, 100_000)),
    ("20GB", Size("20GB", 40_000_000, 2_000_000, 200_000)),
    ("100GB", Size("100GB", 200_000_000, 10_000_000, 1_000_000)),
    ("100MB", Size("100MB", 200_000, 10_000, 100_000)),
    ("0.5GB", Size("0.5GB", 1_000_000, 50_000, 5_000)),
    ("1.0GB", Size("1GB", 2_000_000, 100_000, 100_000)),
    (" 5 Mb ", Size("5MB", 10_000, 500, 5_000)),
])
def test_row_counts(text, expected):
    assert parse_size(text) == expected


def test_orders_span_twelve_months():
    assert parse_size("10MB").orders == 12_000
    assert parse_size("1GB").orders == 1_200_000
    assert parse_size("100GB").orders == 120_000_000


def test_counts_are_rounded_half_up():
    size = parse_size("0.15MB")  # r = 0.015: 300 customers, 15 orders a month, 150 products
    assert (size.customers, size.orders_per_month, size.products) == (300, 15, 150)
    assert parse_size("0.0005GB").orders_per_month == 50  # r = 0.000005 x 10,000,000


@pytest.mark.parametrize("text", ["3XB", "10", "MB", "10 KB", "1TB", "-1GB", "ten MB", "1e3MB",
                                  "", "10MB10"])
def test_unknown_sizes(text):
    with pytest.raises(UsageError, match="unknown size .*: give n MB or n GB, as 10MB, 1GB, 20GB"):
        parse_size(text)


@pytest.mark.parametrize("text", ["0MB", "0GB", "0.0GB", "0.001MB"])
def test_sizes_without_rows(text):
    with pytest.raises(UsageError, match="too small") as e:
        parse_size(text)
    assert "\n" not in str(e.value)
