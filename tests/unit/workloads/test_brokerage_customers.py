"""The brokerage's customers: the fixed tier scramble and its inverse (200/600/200 of every load
unit), tax ids, accounts and baskets drawn from (seed, c_id), and a chunk's customer-side rows."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict

import pytest

from oltplab.workloads.brokerage import customers as cu
from oltplab.workloads.brokerage import reference as ref
from oltplab.workloads.brokerage.scale import Scale

from .test_brokerage_trades import generate

#: A chunk of the third load unit, one day of trading.
SCALE = Scale(3_000, 1)
FIRST, COUNT, SEED = 2_001, 100, 5


@pytest.fixture(scope="module")
def chunk():
    return generate(SEED, FIRST, COUNT, SCALE)[0]


@pytest.mark.parametrize("load_unit", [0, 3])
def test_every_load_unit_has_200_600_200_customers_in_tiers_1_2_3(load_unit):
    first = load_unit * 1_000 + 1
    tiers = [cu.tier_of(c) for c in range(first, first + 1_000)]
    assert Counter(tiers) == {1: 200, 2: 600, 3: 200}
    assert tiers[:10] == [2, 3, 2, 2, 3, 2, 2, 1, 2, 3]  # fixed, scrambled, whatever the seed


@pytest.mark.parametrize("load_unit", [0, 7])
def test_customer_of_is_the_inverse_of_the_scramble(load_unit):
    found = []
    for tier, n in zip((1, 2, 3), cu.TIER_CUSTOMERS):
        for slot in range(n):
            c_id = cu.customer_of(load_unit, tier, slot)
            assert cu.tier_of(c_id) == tier
            found.append(c_id)
    assert sorted(found) == list(range(load_unit * 1_000 + 1, load_unit * 1_000 + 1_001))
    assert cu.customer_of(0, 1, 0) == 392 and cu.customer_of(2, 1, 0) == 2_392
    with pytest.raises(ValueError, match="tier 1 has 200"):
        cu.customer_of(0, 1, 200)


def test_tax_ids_are_distinct_and_fixed():
    ids = [cu.tax_id(c) for c in range(1, 300_001)]
    assert len(set(ids)) == len(ids) and {len(t) for t in ids} == {11}
    assert cu.tax_id(1) == "618XP0339BX" and cu.tax_id(2) == "236UF0679DU"


def test_accounts_by_tier_mean_five():
    counts = {c: cu.account_count(SEED, c) for c in range(1, 5_001)}
    for c, n in counts.items():
        lo, hi = cu.ACCOUNTS[cu.tier_of(c) - 1]
        assert lo <= n <= hi
    assert {n for c, n in counts.items() if cu.tier_of(c) == 3} == set(range(5, 11))
    assert abs(statistics.mean(counts.values()) - 5) < 0.1
    first = [counts[c] for c in range(1, 50)]
    assert [cu.account_count(SEED, c) for c in range(1, 50)] == first
    assert [cu.account_count(SEED + 1, c) for c in range(1, 50)] != first


def test_baskets_hold_2_to_18_distinct_securities_mean_ten():
    sizes = []
    for c in range(1, 1_001):
        baskets = cu.baskets(SEED, SCALE, c)
        assert len(baskets) == cu.account_count(SEED, c)
        for basket in baskets:
            assert len(set(basket)) == len(basket) and 2 <= len(basket) <= 18
            assert all(0 <= i < ref.securities(SCALE) for i in basket)
            sizes.append(len(basket))
    assert abs(statistics.mean(sizes) - 10) < 0.25 and {2, 18} <= set(sizes)


def test_the_chunks_customers(chunk):
    customers = chunk["customer"]
    ids = list(range(FIRST, FIRST + COUNT))
    assert [int(r[0]) for r in customers] == ids
    assert [(r[1], int(r[7])) for r in customers] == [(cu.tax_id(c), cu.tier_of(c)) for c in ids]
    assert all(r[2] == "ACTV" and r[6] in "MF" and "1935" <= r[8] <= "2006" for r in customers)
    assert [int(r[9]) for r in customers] == [ref.customer_address(c, SCALE) for c in ids]
    assert [int(r[0]) for r in chunk["address"]] == [ref.customer_address(c, SCALE) for c in ids]
    zips = {ref.zip_code(k) for k in range(ref.ZIP_CODES)}
    assert all(r[3] in zips for r in chunk["address"])
    rates = defaultdict(list)
    for tx_id, c_id in chunk["customer_taxrate"]:
        rates[int(c_id)].append(tx_id)
    assert all(r[0] in ref.NATIONAL_TAX_IDS and r[1] in ref.DIVISIONAL_TAX_IDS
               for r in rates.values()) and sorted(rates) == ids
    assert all(max(map(len, r[22:24])) <= 50 for r in customers)


def test_the_chunks_accounts_and_their_trades(chunk):
    accounts = chunk["customer_account"]
    expected = [ref.account_id(c, k) for c in range(FIRST, FIRST + COUNT)
                for k in range(1, cu.account_count(SEED, c) + 1)]
    assert [int(r[0]) for r in accounts] == expected
    assert {int(r[1]) for r in accounts} == set(range(21, 31))  # the third unit's brokers
    assert Counter(r[4] for r in accounts).keys() == {"0", "1", "2"}
    basket = {}
    for c in range(FIRST, FIRST + COUNT):
        for k, securities in enumerate(cu.baskets(SEED, SCALE, c), 1):
            basket[str(ref.account_id(c, k))] = {ref.symbol(i) for i in securities}
    traded = defaultdict(set)
    for t in chunk["trade"]:
        traded[t[8]].add(t[5])
    assert all(symbols <= basket[ca] for ca, symbols in traded.items())
    assert len(traded) > 0.95 * len(accounts)


def test_permissions_the_owner_and_0_1_2_others(chunk):
    owner = {r[0]: (r[1], r[3], r[4]) for r in chunk["customer"]}
    by_account = defaultdict(list)
    for ca_id, acl, tax, l_name, f_name in chunk["account_permission"]:
        by_account[ca_id].append((acl, tax, f"{f_name} {l_name}"))
    accounts = {r[0]: r[2] for r in chunk["customer_account"]}
    assert set(by_account) == set(accounts)
    tax_ids = {r[1] for r in chunk["customer"]}
    extras = Counter()
    for ca_id, rows in by_account.items():
        c_tax, l_name, f_name = owner[accounts[ca_id]]
        assert rows[0] == ("0000", c_tax, f"{f_name} {l_name}")
        assert [acl for acl, _, _ in rows[1:]] == ["0001", "0011"][:len(rows) - 1]
        assert len({tax for _, tax, _ in rows}) == len(rows) and {t for _, t, _ in rows} <= tax_ids
        extras[len(rows) - 1] += 1
    assert 1.3 < len(chunk["account_permission"]) / len(accounts) < 1.55
    assert extras[0] > extras[1] > extras[2]
    executed = Counter()
    for t in chunk["trade"]:
        names = [name for _, _, name in by_account[t[8]]]
        assert t[9] in names
        executed[t[9] == names[0]] += 1
    assert 0.92 < executed[True] / len(chunk["trade"]) < 0.98  # the owner 90 %, or alone


def test_watch_lists_hold_50_to_150_distinct_securities(chunk):
    assert chunk["watch_list"] == [[str(c), str(c)] for c in range(FIRST, FIRST + COUNT)]
    items = defaultdict(list)
    for wl_id, symb in chunk["watch_item"]:
        items[wl_id].append(symb)
    symbols = {ref.symbol(i) for i in range(ref.securities(SCALE))}
    for wl in items.values():
        assert len(set(wl)) == len(wl) and 50 <= len(wl) <= 150 and set(wl) <= symbols
    assert 90 < len(chunk["watch_item"]) / COUNT < 110
