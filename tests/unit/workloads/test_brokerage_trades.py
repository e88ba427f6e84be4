"""The brokerage's initial trading: Trade-Result's lot handling with known answers (FIFO and LIFO,
partial and whole lots, a sell beyond the holding, a buy covering a short), its rounding, and a
generated chunk of 100 customers x 5 days whose totals agree as the checks require."""

from __future__ import annotations

import datetime
from collections import Counter, defaultdict

import pytest

from oltplab.workloads.brokerage import customers as cu
from oltplab.workloads.brokerage import reference as ref
from oltplab.workloads.brokerage import trades as tr
from oltplab.workloads.brokerage.lots import commission_cents, tax_cents, trade_lots
from oltplab.workloads.brokerage.scale import Scale
from oltplab.workloads.brokerage.schema import BALANCE_COLUMNS, BALANCE_TABLE, COLUMNS


def long_lots():
    """Two long lots: 100 shares bought at $20.00 by trade 1, 200 at $21.00 by trade 2."""
    return [[1, 100, 2000, "d1"], [2, 200, 2100, "d2"]]


def short_lots():
    """Two short lots: 100 shares sold at $25.00 by trade 5, 200 at $24.00 by trade 6."""
    return [[5, -100, 2500, "d5"], [6, -200, 2400, "d6"]]


def test_fifo_sell_takes_the_oldest_lot_whole_then_part_of_the_next():
    lots, hist = long_lots(), []
    assert trade_lots(lots, 300, 150, True, False, 9, 2200, "d9", hist) == (
        150, 100 * 2000 + 50 * 2100, 150 * 2200)
    assert hist == [(1, 100, 0), (2, 200, 150)]
    assert lots == [[2, 150, 2100, "d2"]]


def test_lifo_sell_takes_part_of_the_newest_lot():
    lots, hist = long_lots(), []
    assert trade_lots(lots, 300, 150, True, True, 9, 2200, "d9", hist) == (
        150, 150 * 2100, 150 * 2200)
    assert hist == [(2, 200, 50)]
    assert lots == [[1, 100, 2000, "d1"], [2, 50, 2100, "d2"]]


def test_lifo_sell_of_exactly_the_newest_lot_deletes_it():
    lots, hist = long_lots(), []
    assert trade_lots(lots, 300, 200, True, True, 9, 1900, "d9", hist) == (
        100, 200 * 2100, 200 * 1900)
    assert hist == [(2, 200, 0)]
    assert lots == [[1, 100, 2000, "d1"]]


def test_sell_beyond_the_holding_closes_every_lot_and_opens_a_short_one():
    lots, hist = long_lots(), []
    assert trade_lots(lots, 300, 400, True, False, 9, 2200, "d9", hist) == (
        -100, 100 * 2000 + 200 * 2100, 300 * 2200)
    assert hist == [(1, 100, 0), (2, 200, 0), (9, 0, -100)]
    assert lots == [[9, -100, 2200, "d9"]]


def test_sell_against_a_short_position_adds_a_short_lot():
    lots, hist = short_lots(), []
    assert trade_lots(lots, -300, 100, True, True, 9, 2200, "d9", hist) == (-400, 0, 0)
    assert hist == [(9, 0, -100)]
    assert lots == [*short_lots(), [9, -100, 2200, "d9"]]


def test_lifo_buy_covers_the_newest_short_lot():
    lots, hist = short_lots(), []
    assert trade_lots(lots, -300, 200, False, True, 9, 2300, "d9", hist) == (
        -100, 200 * 2300, 200 * 2400)
    assert hist == [(6, -200, 0)]
    assert lots == [[5, -100, 2500, "d5"]]


def test_fifo_buy_covers_the_oldest_short_lot_then_part_of_the_next():
    lots, hist = short_lots(), []
    assert trade_lots(lots, -300, 200, False, False, 9, 2300, "d9", hist) == (
        -100, 200 * 2300, 100 * 2500 + 100 * 2400)
    assert hist == [(5, -100, 0), (6, -200, -100)]
    assert lots == [[6, -100, 2400, "d6"]]


def test_buy_beyond_a_short_position_covers_it_and_opens_a_long_lot():
    lots, hist = short_lots(), []
    assert trade_lots(lots, -300, 400, False, False, 9, 2300, "d9", hist) == (
        100, 300 * 2300, 100 * 2500 + 200 * 2400)
    assert hist == [(5, -100, 0), (6, -200, 0), (9, 0, 100)]
    assert lots == [[9, 100, 2300, "d9"]]


def test_buy_on_a_long_or_empty_position_opens_a_lot():
    lots, hist = long_lots(), []
    assert trade_lots(lots, 300, 800, False, True, 9, 2300, "d9", hist) == (1100, 0, 0)
    assert hist == [(9, 0, 800)] and lots[-1] == [9, 800, 2300, "d9"]
    lots, hist = [], []
    assert trade_lots(lots, 0, 100, False, False, 3, 2000, "d3", hist) == (100, 0, 0)
    assert hist == [(3, 0, 100)] and lots == [[3, 100, 2000, "d3"]]


def test_tax_is_the_gain_times_the_rates_rounded_half_up():
    assert tax_cents(10_000, 12_500 + 3_333) == 1_583  # 1,583.3 cents
    assert tax_cents(1, 50_000) == 1  # half a cent rounds up
    assert tax_cents(3, 10_000) == 0  # 0.3 cents
    assert tax_cents(0, 29_000) == 0 and tax_cents(-5_000, 29_000) == 0


def test_commission_is_value_times_rate_rounded_half_up():
    assert commission_cents(200, 2550, 57) == 2_907  # $5,100.00 x 0.57 %
    assert commission_cents(100, 2001, 45) == 900  # 900.45 cents
    assert commission_cents(100, 2011, 45) == 905  # 904.95 cents: half up


SCALE = Scale(1_000, 5)
SEED = 11
SECURITY = {ref.symbol(i): i for i in range(ref.securities(SCALE))}


def generate(seed: int, first: int = 1, count: int = 100, scale: Scale = SCALE):
    """The chunk's tables as lists of rows (each a list of fields), its pieces' sizes and
    its broker tally."""
    tally = tr.new_tally(scale)
    tables: dict[str, list[list[str]]] = defaultdict(list)
    pieces = []
    for table, text, rows in cu.chunk_rows(seed, scale, first, count, tally):
        lines = text.splitlines()
        assert len(lines) == rows and text.endswith("\n"), table
        pieces.append((table, rows))
        tables[table] += [line.split("\t") for line in lines]
    return tables, pieces, tally


@pytest.fixture(scope="module")
def chunk():
    return generate(SEED)


def cents(text: str) -> int:
    whole, _, part = text.partition(".")
    assert len(part) == 2, text
    value = int(whole.lstrip("-")) * 100 + int(part)
    return -value if text.startswith("-") else value


def test_every_row_has_its_tables_columns_and_pieces_are_small(chunk):
    tables, pieces, _ = chunk
    columns = {**COLUMNS, BALANCE_TABLE: BALANCE_COLUMNS}
    for table, rows in tables.items():
        assert {len(r) for r in rows} == {len(columns[table])}, table
    assert max(n for _, n in pieces) <= tr.PIECE_ROWS
    assert {t for t, _ in pieces} == set(tables)
    # the chunk's trades come in several pieces: the generator keeps only its open lots
    assert sum(1 for t, _ in pieces if t == "trade") >= 3


def test_the_chunks_trade_ids_are_its_range_but_the_rollback_ones(chunk):
    tables, _, _ = chunk
    ids = [int(r[0]) for r in tables["trade"]]
    span = tr.trade_ids(SCALE, 1, 100)
    assert span == range(1, 1 + SCALE.trades // 10)
    assert ids == [t for t in span if t % 101 != 51] and len(ids) == tr.loaded_count(span)
    # ranges of all the chunks cover every id once, in chunk order
    spans = [tr.trade_ids(SCALE, f, 100) for f in range(1, 1001, 100)]
    assert [t for s in spans for t in s] == list(range(1, SCALE.trades + 1))
    assert sum(tr.loaded_count(s) for s in spans) == 288_000 - 2_851  # 51, 152 ... 287,901
    assert tr.max_trade_id(SCALE) == 288_000
    odd = Scale(1_000, 1, 435)  # 66,206 ids: the last is a rollback's (66,206 % 101 == 51)
    assert odd.trades == 66_206 and tr.max_trade_id(odd) == 66_205


def test_trade_times_follow_the_ids_over_the_trading_days(chunk):
    tables, _, _ = chunk
    times = [r[1] for r in tables["trade"]]
    assert times == sorted(times)
    days = sorted({t[:10] for t in times})
    assert days == [ref.trading_date(d).isoformat() for d in range(5)]
    assert days[0] == ref.START_DATE.isoformat() and days[-1] == "2025-01-10"
    assert min(times) == "2025-01-06 09:00:00" and max(times) < "2025-01-10 17:00:00"


def test_history_rows_end_at_the_trade_with_its_status(chunk):
    tables, _, _ = chunk
    history = defaultdict(list)
    for t_id, dts, st in tables["trade_history"]:
        history[t_id].append((dts, st))
    assert len(history) == len(tables["trade"])
    for t in tables["trade"]:
        rows = history[t[0]]
        expected = ["SBMT", "CMPT"] if ref.IS_MARKET[t[3]] else ["PNDG", "SBMT", "CMPT"]
        assert [st for _, st in rows] == expected and t[2] == "CMPT"
        times = [dts for dts, _ in rows]
        assert times == sorted(set(times)) and times[-1] == t[1]


def test_one_settlement_per_trade_and_a_cash_transaction_for_each_cash_trade(chunk):
    tables, _, _ = chunk
    settle = {r[0]: r for r in tables["settlement"]}
    cash = {r[0]: r for r in tables["cash_transaction"]}
    assert len(settle) == len(tables["settlement"]) == len(tables["trade"])
    for t in tables["trade"]:
        se = settle[t[0]]
        day = datetime.date.fromisoformat(t[1][:10])
        assert se[2] == (day + datetime.timedelta(days=2)).isoformat()
        if t[4] == "1":
            assert se[1] == "Cash Account"
            assert cash[t[0]][1] == t[1] and cash[t[0]][2] == se[3]
            assert cash[t[0]][3].endswith(f" {t[6]} shares of {t[5]}")
        else:
            assert se[1] == "Margin" and t[0] not in cash and t[3] in ("TMB", "TLB")
    assert set(cash) <= set(settle)


def accounts_of(tables):
    """ca_id -> (tier, tax status, the two tax rates summed, broker)."""
    tier = {r[0]: int(r[7]) for r in tables["customer"]}
    rate = Counter()
    for tx_id, c_id in tables["customer_taxrate"]:
        rate[c_id] += ref.tax_rate(tx_id)
    return {r[0]: (tier[r[2]], int(r[4]), rate[r[2]], int(r[1]))
            for r in tables["customer_account"]}


def test_charge_commission_tax_and_settlement_amounts(chunk):
    """Replays the trades through the lot walk: the open lots are the holding rows, every
    lot touched is in holding_history, the tax is the gain at the customer's rates."""
    tables, _, _ = chunk
    accounts = accounts_of(tables)
    settle = {r[0]: cents(r[3]) for r in tables["settlement"]}
    positions = defaultdict(lambda: [0, []])
    hh = defaultdict(list)
    for h_t_id, t_id, before, after in tables["holding_history"]:
        hh[t_id].append((int(h_t_id), int(before), int(after)))
    taxed = 0
    for t in tables["trade"]:
        t_id, tt, symb, qty = int(t[0]), t[3], t[5], int(t[6])
        price, (tier, tax_st, rate, _) = cents(t[10]), accounts[t[8]]
        pos = positions[t[8], symb]
        hist = []
        pos[0], buy, sell = trade_lots(pos[1], pos[0], qty, ref.IS_SELL[tt], t[14] == "1",
                                       t_id, price, t[1], hist)
        assert hh[t[0]] == hist
        tax = tax_cents(sell - buy, rate) if tax_st else 0
        taxed += tax > 0
        ex = ref.exchange_of(SECURITY[symb])
        comm = commission_cents(qty, price, ref.commission_hundredths(tier, tt, ex, qty))
        charge = ref.charge_cents(tt, tier)
        assert (cents(t[11]), cents(t[12]), cents(t[13])) == (charge, comm, tax)
        value = qty * price
        amount = value - charge - comm if ref.IS_SELL[tt] else -(value + charge + comm)
        assert settle[t[0]] == amount - (tax if tax_st == 1 else 0)
        bid = cents(t[7])
        assert 2000 <= bid <= 3000
        if tt in ("TMB", "TMS"):
            assert abs(price - bid) <= tr.MARKET_SPREAD
        else:  # at or better than the limit: a limit sell above it, the others below
            assert 0 <= (price - bid if tt == "TLS" else bid - price) <= tr.LIMIT_SPREAD
    assert taxed > 100
    holding = {(r[1], r[2]): [] for r in tables["holding"]}
    for h_t_id, ca_id, symb, dts, price, qty in tables["holding"]:
        holding[ca_id, symb].append([int(h_t_id), int(qty), cents(price), dts])
    assert holding == {k: lots for k, (_, lots) in positions.items() if lots}


def test_holding_summary_is_the_sum_of_the_holdings(chunk):
    tables, _, _ = chunk
    held = Counter()
    for _, ca_id, symb, _, _, qty in tables["holding"]:
        held[ca_id, symb] += int(qty)
    summary = {(ca_id, symb): int(qty) for ca_id, symb, qty in tables["holding_summary"]}
    assert len(summary) == len(tables["holding_summary"])
    assert summary == {k: v for k, v in held.items() if v} and 0 not in summary.values()
    signs = defaultdict(set)
    for _, ca_id, symb, _, _, qty in tables["holding"]:
        signs[ca_id, symb].add(int(qty) > 0)
    assert all(len(s) == 1 for s in signs.values())  # a position is long or short


def test_balances_are_the_opening_plus_the_cash_transactions(chunk):
    tables, _, _ = chunk
    account = {r[0]: r[8] for r in tables["trade"]}
    moved = Counter()
    for t_id, _, amount, _ in tables["cash_transaction"]:
        moved[account[t_id]] += cents(amount)
    balance = {r[0]: (cents(r[1]), cents(r[2])) for r in tables[BALANCE_TABLE]}
    assert len(balance) == len(tables["customer_account"])
    for r in tables["customer_account"]:
        opening, built = balance[r[0]]
        assert cents(r[5]) == built == opening + moved[r[0]]
    assert sum(1 for r in tables["customer_account"] if moved[r[0]]) > 0.9 * len(balance)


def test_broker_tallies_are_the_sums_of_their_trades(chunk):
    tables, _, tally = chunk
    brokers = {r[0]: int(r[1]) for r in tables["customer_account"]}
    counts, comms = Counter(), Counter()
    for t in tables["trade"]:
        counts[brokers[t[8]]] += 1
        comms[brokers[t[8]]] += cents(t[12])
    assert set(counts) <= set(range(1, 11))
    total = tr.new_tally(SCALE)
    tr.add_tally(total, tally)
    tr.add_tally(total, tally)
    rows = [line.split("\t") for line in tr.broker_rows(SCALE, total).splitlines()]
    assert [r[0] for r in rows] == [str(b) for b in range(1, 11)]
    assert len({r[2] for r in rows}) == 10 and {r[1] for r in rows} == {"ACTV"}
    assert [(int(r[3]), cents(r[4])) for r in rows] == [
        (2 * counts[b], 2 * comms[b]) for b in range(1, 11)]


def test_the_mix_of_the_loaded_trades(chunk):
    tables, _, _ = chunk
    trades = tables["trade"]
    n = len(trades)
    types = Counter(t[3] for t in trades)
    for tt, share in (("TMB", 0.3), ("TMS", 0.3), ("TLB", 0.2), ("TLS", 0.1), ("TSL", 0.1)):
        assert abs(types[tt] / n - share) < 0.015, (tt, types[tt] / n)
    assert Counter(t[6] for t in trades).keys() == {"100", "200", "400", "800"}
    assert abs(sum(t[4] == "1" for t in trades) / n - 0.92) < 0.01
    assert abs(sum(t[14] == "1" for t in trades) / n - 0.35) < 0.015
    assert abs(len(tables["trade_history"]) / n - 2.4) < 0.02
    assert abs(len(tables["cash_transaction"]) / n - 0.92) < 0.01


def test_a_seeded_chunk_is_the_same_every_time():
    small = Scale(1_000, 1)
    tables, _, tally = generate(SEED, 201, 30, small)
    again, _, tally_again = generate(SEED, 201, 30, small)
    assert again == tables and tally_again == tally and tables["holding_history"]
    other, _, _ = generate(SEED + 1, 201, 30, small)
    assert other["trade"] != tables["trade"]


def test_broker_names_are_distinct_and_fixed():
    names = [tr.broker_name(b) for b in range(1, 200_001)]
    assert len(set(names)) == len(names) and max(map(len, names)) <= 49


def test_pieces_hold_at_most_piece_rows():
    lines = [f"{k}\n" for k in range(2 * tr.PIECE_ROWS + 1)]
    parts = list(tr.pieces("holding", lines))
    assert [n for _, _, n in parts] == [tr.PIECE_ROWS, tr.PIECE_ROWS, 1]
    assert {t for t, _, _ in parts} == {"holding"}
    assert "".join(text for _, text, _ in parts) == "".join(lines)


def test_position_rows_are_the_open_lots_and_the_nonzero_summaries():
    long, flat = tr.new_position("AAA", 1), tr.new_position("BBB", 2)
    long[0], long[1] = 300, [[4, 100, 2050, "2025-01-06 09:00:20"],
                             [9, 200, 2999, "2025-01-06 09:00:45"]]
    short = tr.new_position("CCC", 0)
    short[0], short[1] = -100, [[7, -100, 2000, "2025-01-06 09:00:35"]]
    accounts = [(11, 2, 0, 0, 1, ["A B"], [long, flat]), (12, 1, 1, 0, 1, ["C D"], [short])]
    assert {t: text for t, text, _ in tr.position_rows(accounts)} == {
        "holding": "4\t11\tAAA\t2025-01-06 09:00:20\t20.50\t100\n"
                   "9\t11\tAAA\t2025-01-06 09:00:45\t29.99\t200\n"
                   "7\t12\tCCC\t2025-01-06 09:00:35\t20.00\t-100\n",
        "holding_summary": "11\tAAA\t300\n12\tCCC\t-100\n"}


def test_money_text():
    assert [tr.money(c) for c in (0, 5, 100, -1, -12_345, 123_456_789)] == [
        "0.00", "0.05", "1.00", "-0.01", "-123.45", "1234567.89"]
