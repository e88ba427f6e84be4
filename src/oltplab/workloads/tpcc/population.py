"""The initial population [TPC-C 4.3.3.1] as COPY text, one warehouse at a time.

Pure generation: no database access. Every function returns rows in PostgreSQL's COPY text
format (tab-separated, ``\\N`` for NULL, one ``\\n`` per row), in the tables' column order, as
str or as UTF-8 bytes. Row values are drawn from a ``random.Random`` seeded per warehouse, so a
seeded build is the same whatever the number of build processes.

ORDER_LINE, the table with the most rows, is built as fixed-width rows (zero-padded numbers,
which COPY reads as usual) so that each field is written into all rows at once.

The rules followed (and the peer deviations avoided, see the digest's section 11): 10% BC
customers and 10% ORIGINAL rows, chosen at random without replacement; taxes 0.0000..0.2000;
O_C_ID a true permutation of 1..3000; OL_I_ID uniform at load; OL_AMOUNT 0.00 for delivered
orders (O_ID < 2101) and 0.01..9999.99 otherwise; a-strings from 128 symbols; zip codes of 4
random digits and '11111'.
"""

from __future__ import annotations

import random as _random

from .random import A_C_LAST, Strings, last_name, nurand, uniform_offsets

ITEMS = 100_000
DISTRICTS = 10
CUSTOMERS = 3_000  # per district
ORDERS = 3_000  # per district
FIRST_NEW_ORDER = 2_101  # orders 2101..3000 are undelivered and have a NEW_ORDER row
STOCK_BATCH = 10_000

NAMES = tuple(last_name(n) for n in range(1000))


def warehouse_rng(seed: int, w_id: int) -> _random.Random:
    """The generator for one warehouse (w_id 0 is the ITEM table)."""
    return _random.Random(f"oltplab-tpcc:{seed}:{w_id}")


def _tax(rng) -> str:
    """W_TAX and D_TAX: random within [0.0000 .. 0.2000] [4.3.3.1]."""
    return f"0.{int(rng.random() * 2001):04d}"


def _address(s: Strings) -> str:
    """street_1, street_2, city, state, zip as five COPY fields [4.3.3.1]."""
    return (f"{s.astring(10, 20)}\t{s.astring(10, 20)}\t{s.astring(10, 20)}\t"
            f"{s.letters_n(2)}\t{s.zip()}")


def originals(rng, n: int) -> set[int]:
    """The 10% of n rows, chosen at random, whose data holds 'ORIGINAL'."""
    return set(rng.sample(range(n), n // 10))


def item_rows(rng, randbytes=None) -> str:
    """ITEM: 100,000 rows [4.3.3.1]; ``randbytes`` as for ``Strings``."""
    s = Strings(rng, randbytes)
    rand = rng.random
    lens = uniform_offsets(rng, 25, ITEMS)  # I_DATA length 26..50
    names = uniform_offsets(rng, 11, ITEMS)  # I_NAME length 14..24
    chars = s.alpha.take(sum(lens) + 26 * ITEMS + sum(names) + 14 * ITEMS)
    marked = originals(rng, ITEMS)
    out = []
    p = 0
    for k in range(ITEMS):
        ln = names[k] + 14
        name = chars[p:p + ln]
        p += ln
        ld = lens[k] + 26
        data = chars[p:p + ld]
        p += ld
        if k in marked:
            data = s.original(data)
        price = int(rand() * 9901) + 100  # 1.00 .. 100.00
        out.append(f"{k + 1}\t{int(rand() * 10000) + 1}\t{name}\t"
                   f"{price // 100}.{price % 100:02d}\t{data}\n")
    return "".join(out)


def warehouse_row(w_id: int, rng, s: Strings) -> str:
    """WAREHOUSE: one row, W_YTD = 300,000.00 [4.3.3.1]."""
    return f"{w_id}\t{s.astring(6, 10)}\t{_address(s)}\t{_tax(rng)}\t300000.00\n"


def district_rows(w_id: int, rng, s: Strings) -> str:
    """DISTRICT: 10 rows, D_YTD = 30,000.00 and D_NEXT_O_ID = 3001 [4.3.3.1]."""
    return "".join(f"{d}\t{w_id}\t{s.astring(6, 10)}\t{_address(s)}\t{_tax(rng)}\t"
                   f"30000.00\t{ORDERS + 1}\n" for d in range(1, DISTRICTS + 1))


def stock_rows(w_id: int, rng, s: Strings, first: int, count: int, marked: set[int]) -> str:
    """STOCK rows s_i_id = first .. first+count-1 of one warehouse [4.3.3.1].

    ``marked`` holds the 0-based item indexes whose S_DATA holds 'ORIGINAL'.
    """
    quantities = uniform_offsets(rng, 91, count)  # 10..100
    lens = uniform_offsets(rng, 25, count)  # S_DATA length 26..50
    chars = s.alpha.take(sum(lens) + 26 * count)
    dists = s.letters.take_fields(10 * count, 24, "\t")  # S_DIST_01..10
    out = []
    p = q = 0
    for k in range(count):
        i_id = first + k
        ln = lens[k] + 26
        data = chars[p:p + ln]
        p += ln
        if i_id - 1 in marked:
            data = s.original(data)
        out.append(f"{i_id}\t{w_id}\t{quantities[k] + 10}\t{dists[q:q + 250]}0\t0\t0\t{data}\n")
        q += 250
    return "".join(out)


def customer_rows(w_id: int, d_id: int, rng, s: Strings, c_last_load: int, now: str,
                  ) -> tuple[str, str]:
    """CUSTOMER and HISTORY: 3,000 rows each for one district [4.3.3.1].

    C_LAST is last_name(c_id - 1) for c_id 1..1000 and last_name(NURand(255, 0, 999)) with
    C_LOAD for the others; 10% of the customers, chosen at random, have C_CREDIT 'BC'.
    """
    rand = rng.random
    firsts = uniform_offsets(rng, 9, CUSTOMERS)  # 8..16
    streets = uniform_offsets(rng, 11, 3 * CUSTOMERS)  # 10..20 (street_1, street_2, city)
    datas = uniform_offsets(rng, 201, CUSTOMERS)  # 300..500
    hdatas = uniform_offsets(rng, 13, CUSTOMERS)  # H_DATA 12..24
    need = (sum(firsts) + 8 * CUSTOMERS + sum(streets) + 30 * CUSTOMERS
            + sum(datas) + 300 * CUSTOMERS + sum(hdatas) + 12 * CUSTOMERS)
    chars = s.alpha.take(need)
    states = s.letters.take(2 * CUSTOMERS)
    digits = s.digits.take(20 * CUSTOMERS)  # zip (4) and phone (16)
    bad = set(rng.sample(range(1, CUSTOMERS + 1), CUSTOMERS // 10))
    cust = []
    hist = []
    p = 0
    tail = f"\t{d_id}\t{w_id}\t{now}\t10.00\t"
    for c_id in range(1, CUSTOMERS + 1):
        k = c_id - 1
        n = firsts[k] + 8
        first = chars[p:p + n]
        p += n
        a = 3 * k
        n1 = streets[a] + 10
        n2 = streets[a + 1] + 10
        n3 = streets[a + 2] + 10
        street_1 = chars[p:p + n1]
        street_2 = chars[p + n1:p + n1 + n2]
        city = chars[p + n1 + n2:p + n1 + n2 + n3]
        p += n1 + n2 + n3
        n = datas[k] + 300
        data = chars[p:p + n]
        p += n
        n = hdatas[k] + 12
        hdata = chars[p:p + n]
        p += n
        if c_id <= 1000:
            last = NAMES[k]
        else:
            last = NAMES[nurand(rng, A_C_LAST, 0, 999, c_last_load)]
        z = 20 * k
        credit = "BC" if c_id in bad else "GC"
        cust.append(
            f"{c_id}\t{d_id}\t{w_id}\t{first}\tOE\t{last}\t{street_1}\t{street_2}\t{city}\t"
            f"{states[2 * k:2 * k + 2]}\t{digits[z:z + 4]}11111\t{digits[z + 4:z + 20]}\t{now}\t"
            f"{credit}\t50000.00\t0.{int(rand() * 5001):04d}\t-10.00\t10.00\t1\t0\t{data}\n")
        hist.append(f"{c_id}\t{d_id}\t{w_id}{tail}{hdata}\n")
    return "".join(cust), "".join(hist)


# Zero-padded texts of O_ID and of the OL_NUMBER sequences 1..cnt (COPY reads "0042" as 42).
_O_IDS = [b"%04d" % o for o in range(ORDERS + 1)]
_LINE_NUMBERS = [b"".join(b"%02d" % n for n in range(1, cnt + 1)) for cnt in range(16)]


def _template(parts: list) -> tuple[bytes, list[int]]:
    """One fixed-width COPY row from text parts and field widths (ints, zero-filled); returns
    the row and the offsets of the fields."""
    row = bytearray()
    offsets = []
    for part in parts:
        if isinstance(part, int):
            offsets.append(len(row))
            row += b"0" * part
        else:
            row += part.encode("utf-8")
    return bytes(row), offsets


def _fill(buf: bytearray, row_width: int, offset: int, width: int, column: bytes) -> None:
    """Write a fixed-width field into every row of buf: column holds the rows' values, one
    after another, ``width`` bytes each."""
    for j in range(width):
        buf[offset + j::row_width] = column[j::width]


def _replace_all(buf: bytearray, pattern: bytes, make) -> None:
    """Replace every occurrence of pattern (a whole field with its tabs) by make()."""
    i = buf.find(pattern)
    while i != -1:
        buf[i:i + len(pattern)] = make()
        i = buf.find(pattern, i + 1)


def _order_line_block(w_id: int, d_id: int, first_o_id: int, counts: list[int], now: str | None,
                      rng, s: Strings) -> bytes:
    """ORDER_LINE rows of consecutive orders as COPY text; ``now`` is None for undelivered
    orders (OL_DELIVERY_D NULL, random OL_AMOUNT), else their delivery date (OL_AMOUNT 0.00).

    All rows have the same width (numbers are zero-padded), so each field is written into all
    rows at once. Uniform draws come from uniform random digits: OL_I_ID's five digits give
    0..99999, read as 1..100000 with 0 standing for 100000; OL_AMOUNT's six digits give
    0.00..9999.99, where 0.00 is drawn again from 0.01..9999.99.
    """
    rows = sum(counts)
    if now is None:
        amount = [4, ".", 2]
        middle = f"\t{w_id}\t\\N\t5\t"
    else:
        amount = ["0.00"]
        middle = f"\t{w_id}\t{now}\t5\t"
    # O_ID, OL_NUMBER, OL_I_ID (a '0' and five digits), [OL_AMOUNT], OL_DIST_INFO
    row, offsets = _template([4, f"\t{d_id}\t{w_id}\t", 2, "\t0", 5, middle, *amount, "\t",
                              24, "\n"])
    width = len(row)
    buf = bytearray(row * rows)
    _fill(buf, width, offsets[0], 4, b"".join(
        _O_IDS[o] * cnt for o, cnt in zip(range(first_o_id, first_o_id + len(counts)), counts)))
    _fill(buf, width, offsets[1], 2, b"".join(_LINE_NUMBERS[cnt] for cnt in counts))
    _fill(buf, width, offsets[2], 5, s.digits.take_bytes(5 * rows))
    if now is None:
        _fill(buf, width, offsets[3], 4, s.digits.take_bytes(4 * rows))
        _fill(buf, width, offsets[4], 2, s.digits.take_bytes(2 * rows))

        def nonzero_amount():
            value = rng.randint(1, 999_999)
            return b"\t%04d.%02d\t" % (value // 100, value % 100)

        _replace_all(buf, b"\t0000.00\t", nonzero_amount)
    _fill(buf, width, offsets[-1], 24, s.letters.take_bytes(24 * rows))
    _replace_all(buf, b"\t000000\t", lambda: b"\t100000\t")
    return bytes(buf)


def order_rows(w_id: int, d_id: int, rng, s: Strings, now: str) -> tuple[str, str, bytes, int]:
    """ORDERS, NEW_ORDER and ORDER_LINE for one district [4.3.3.1].

    Returns (orders, new_order, order_line, number of order lines). O_C_ID follows a random
    permutation of 1..3000; orders below 2101 are delivered (carrier set, OL_DELIVERY_D =
    O_ENTRY_D, OL_AMOUNT 0.00); the others have a NEW_ORDER row and a random OL_AMOUNT.
    OL_I_ID is uniform over 1..100000 and OL_QUANTITY 5.
    """
    customers = list(range(1, ORDERS + 1))
    rng.shuffle(customers)
    counts = [c + 5 for c in uniform_offsets(rng, 11, ORDERS)]  # O_OL_CNT 5..15
    carriers = uniform_offsets(rng, 10, FIRST_NEW_ORDER - 1)  # 1..10
    delivered = FIRST_NEW_ORDER - 1
    orders = "".join(
        f"{o_id}\t{d_id}\t{w_id}\t{customers[o_id - 1]}\t{now}\t"
        f"{carriers[o_id - 1] + 1 if o_id < FIRST_NEW_ORDER else chr(92) + 'N'}\t"
        f"{counts[o_id - 1]}\t1\n" for o_id in range(1, ORDERS + 1))
    lines = (_order_line_block(w_id, d_id, 1, counts[:delivered], now, rng, s)
             + _order_line_block(w_id, d_id, FIRST_NEW_ORDER, counts[delivered:], None, rng, s))
    new_order = "".join(f"{o_id}\t{d_id}\t{w_id}\n" for o_id in range(FIRST_NEW_ORDER, ORDERS + 1))
    return orders, new_order, lines, sum(counts)
