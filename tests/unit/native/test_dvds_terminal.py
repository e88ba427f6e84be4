"""The DVD-Store-derived shopper in C (``_native.DvdsTerminal``), stepped from Python as the
loop steps it: each ``next_call()`` draws the next call of the order, ``complete(value, us)``
tells it the call returned (no ``complete``: the call failed). The mix of a few thousand
simulated orders, the arguments, the order's state across draws, and the checks of the
constructor. (test_native_sanitizers.py runs this module again under AddressSanitizer and
UndefinedBehaviorSanitizer.)"""

from __future__ import annotations

from collections import Counter
from statistics import mean

import pytest

from oltplab import _native

WORDS = dict(title_words=("ALPHA", "BRAVO", "CHARLIE", "DELTA"),
             actor_first=("ADA", "BOB", "CLEO"), actor_last=("KING", "LANE"),
             countries=("Canada", "South Africa", "Japan"), states=("CA", "NY", "TX"))
BROWSES = ("browse_category", "browse_actor", "browse_title")


def shopper(seed: int = 7, customers: int = 20_000, products: int = 10_000, **over):
    return _native.DvdsTerminal(seed, customers, products, **{**WORDS, **over})


class Shop:
    """What the database would answer: logins find user<N> as customer N, new customers get
    ids from 10^6 on, browses find ``batch`` rows, purchases commit (their order id) unless
    ``short(cart)`` says a product ran out (-1)."""

    def __init__(self, short=lambda prods: False):
        self.next_customer, self.next_order, self.short = 1_000_000, 1, short

    def answer(self, kind: str, args: tuple) -> int:
        if kind == "login":
            return int(args[0].removeprefix("user"))
        if kind == "new_customer":
            self.next_customer += 1
            return self.next_customer
        if kind == "purchase":
            if self.short(parse_array(args[1])):
                return -1
            self.next_order += 1
            return self.next_order
        return int(args[1])


def parse_array(text: str) -> list[int]:
    assert text[0] == "{" and text[-1] == "}"
    return [int(v) for v in text[1:-1].split(",")]


def orders(t, n: int, shop: Shop | None = None) -> list[list[tuple[str, tuple]]]:
    """``n`` whole orders, every call answered by ``shop``: each a list of (kind, args)."""
    shop = shop or Shop()
    out = []
    for _ in range(n):
        calls = []
        while True:
            kind, args = t.next_call()
            calls.append((kind, args))
            t.complete(shop.answer(kind, args), us=1)
            if kind == "purchase":
                break
        out.append(calls)
    return out


def test_module_names_the_calls_the_unit_and_the_input_keys():
    assert _native.DVDS_NAMES == ("login", "new_customer", "browse_category", "browse_actor",
                                  "browse_title", "purchase", "reviews_product",
                                  "reviews_actor", "reviews_title", "new_review",
                                  "new_helpfulness", "new_member")
    assert _native.DVDS_UNIT_NAME == "order"
    assert "dvds" in _native.WORKLOADS
    assert _native.DVDS_INPUT_KEYS[:9] == (
        "logins", "new_customers", "searches", "browse_category", "browse_actor",
        "browse_title", "purchases", "cart_items", "rolled_back_purchases")


def test_an_order_is_a_login_or_new_customer_then_browses_then_a_purchase():
    for calls in orders(shopper(), 300):
        kinds = [k for k, _ in calls]
        assert kinds[0] in ("login", "new_customer")
        assert 1 <= len(kinds) - 2 <= 5 and set(kinds[1:-1]) <= set(BROWSES)
        assert kinds[-1] == "purchase"


def test_new_customers_are_a_fifth_of_the_orders():
    firsts = Counter(calls[0][0] for calls in orders(shopper(), 4000))
    assert abs(firsts["new_customer"] / 4000 - 0.20) < 0.02
    assert Counter(c[0][0] for c in orders(shopper(pct_new_customers=0), 300)) == {"login": 300}
    assert Counter(c[0][0] for c in orders(shopper(pct_new_customers=100.0), 300)) == {
        "new_customer": 300}


def test_searches_per_order_average_n_and_each_kind_a_third():
    t = shopper(searches=3)
    done = orders(t, 4000)
    per_order = [len(calls) - 2 for calls in done]
    assert min(per_order) == 1 and max(per_order) == 5
    assert abs(mean(per_order) - 3) < 0.1
    kinds = Counter(k for calls in done for k, _ in calls[1:-1])
    total = sum(kinds.values())
    assert set(kinds) == set(BROWSES)
    assert all(abs(kinds[k] / total - 1 / 3) < 0.02 for k in BROWSES)
    inputs = t.inputs()
    assert inputs["searches"] == total
    assert all(inputs[k] == kinds[k] for k in BROWSES)
    assert {len(calls) - 2 for calls in orders(shopper(searches=1), 50)} == {1}


def test_browse_arguments():
    batches, categories, actors, titles = [], set(), set(), set()
    for calls in orders(shopper(search_batch=5), 2000):
        for kind, args in calls[1:-1]:
            assert len(args) == 2
            batches.append(int(args[1]))
            if kind == "browse_category":
                categories.add(int(args[0]))
            elif kind == "browse_actor":
                actors.add(args[0])
            else:
                titles.add(args[0])
    assert min(batches) == 1 and max(batches) == 9 and abs(mean(batches) - 5) < 0.15
    assert categories == set(range(1, 17))
    assert actors == {f"{f} {last}" for f in WORDS["actor_first"]
                      for last in WORDS["actor_last"]}
    assert titles == set(WORDS["title_words"])


@pytest.mark.parametrize("line_items, expected", [(5, 5.0), (8, 7.0), (1, 1.0)])
def test_items_per_cart_average_n_and_never_exceed_ten(line_items, expected):
    """uniform 1 .. 2n-1, capped at 10: n = 8 gives (1 + .. + 10 + 5 x 10) / 15 = 7."""
    carts = [parse_array(calls[-1][1][1]) for calls in orders(shopper(line_items=line_items),
                                                              3000)]
    sizes = [len(c) for c in carts]
    assert max(sizes) <= 10 and min(sizes) == 1
    assert abs(mean(sizes) - expected) < 0.15


def test_every_ten_thousandth_product_is_ten_times_as_likely_and_quantities_are_1_to_3():
    t = shopper(products=100_000, line_items=10, searches=1)
    hits, quantities, draws = Counter(), Counter(), 0
    while draws < 300_000:
        for calls in orders(t, 1000):
            args = calls[-1][1]
            prods, qty = parse_array(args[1]), parse_array(args[2])
            assert len(prods) == len(qty)
            hits.update(prods)
            quantities.update(qty)
            draws += len(prods)
    assert min(hits) >= 1 and max(hits) <= 100_000
    popular = [p for p in range(10_000, 100_001, 10_000)]
    per_popular = sum(hits[p] for p in popular) / len(popular)
    per_other = (draws - sum(hits[p] for p in popular)) / (100_000 - len(popular))
    assert 8.5 < per_popular / per_other < 11.5
    assert set(quantities) == {1, 2, 3}
    assert all(abs(quantities[q] / draws - 1 / 3) < 0.01 for q in (1, 2, 3))


def test_logins_name_users_within_the_customers_and_the_purchase_is_theirs():
    users = set()
    for calls in orders(shopper(customers=5, pct_new_customers=0), 400):
        (kind, (user, password)), purchase = calls[0], calls[-1]
        assert kind == "login" and password == "password"
        users.add(int(user.removeprefix("user")))
        assert purchase[1][0] == user.removeprefix("user")  # the id the login returned
    assert users == {1, 2, 3, 4, 5}


def test_a_new_customer_is_a_whole_profile_and_buys_as_the_new_id():
    t = shopper(pct_new_customers=100, first_name_len=6, last_name_len=10)
    regions, countries = Counter(), set()
    for calls in orders(t, 400):
        kind, a = calls[0]
        assert kind == "new_customer" and len(a) == 19
        first, last, address1, address2, city, state, zip_, country, region, email = a[:10]
        phone, card_type, card, expiry, username, password, age, income, gender = a[10:]
        assert first.isalpha() and first.isupper() and len(first) == 6 and len(last) == 10
        house, street, st = address1.split()
        assert len(house) == 4 and house.isdigit() and len(street) == 7 and st == "ST"
        assert address2 == "" and len(city) == 8 and city.isalpha()
        regions[region] += 1
        if region == "1":
            assert country == "US" and state in WORDS["states"]
            assert len(zip_) == 5 and zip_.isdigit()
        else:
            assert region == "2" and country in WORDS["countries"] and state == zip_ == ""
            countries.add(country)
        assert username.startswith("newuser") and 1 <= int(username[7:]) <= 10**9
        assert email == f"{last}@example.com" and password == "password"
        assert len(phone) == 10 and 1 <= int(card_type) <= 5 and len(card) == 16
        assert len(expiry) == 7 and expiry[4] == "/"
        assert 18 <= int(age) <= 90 and int(income) in range(20_000, 100_001, 20_000)
        assert gender in ("M", "F")
        assert int(calls[-1][1][0]) > 1_000_000  # the id new_customer returned
    assert abs(regions["1"] / 400 - 0.5) < 0.1
    assert countries == set(WORDS["countries"])


def test_a_taken_username_is_drawn_again_with_another_name_in_the_same_order():
    t = shopper(pct_new_customers=100)
    kind, first = t.next_call()
    assert t.complete(0, us=5) == {"headline": False, "rolled_back": False, "unit_us": None}
    kind2, second = t.next_call()
    assert kind2 == "new_customer" and second[14] != first[14]
    t.complete(1234, us=7)
    kind, _ = t.next_call()
    assert kind in BROWSES  # the order goes on
    t.complete(3, us=11)
    while kind != "purchase":
        kind, args = t.next_call()
        if kind != "purchase":
            t.complete(1, us=0)
    assert args[0] == "1234"
    assert t.complete(99, us=100) == {"headline": True, "rolled_back": False,
                                      "unit_us": 5 + 7 + 11 + 100}
    inputs = t.inputs()
    assert (inputs["new_customers"], inputs["taken_usernames"]) == (1, 1)


def test_a_failed_call_abandons_the_order():
    """No complete(): the call failed with an error. The next draw starts a new order, and
    the failed order's response times do not count in the next one's."""
    t = shopper(pct_new_customers=0)
    t.next_call()
    t.complete(42, us=1000)
    kind, _ = t.next_call()
    assert kind in BROWSES
    # it failed: no complete()
    for _ in range(200):  # the next order, and every order after a failed browse, starts anew
        kind, _ = t.next_call()
        assert kind == "login"
        t.complete(43, us=1)
        kind, _ = t.next_call()
        assert kind in BROWSES
    t.complete(2, us=1)
    while (kind := t.next_call()[0]) != "purchase":
        t.complete(2, us=1)
    assert t.complete(7, us=1)["unit_us"] < 1000
    kind, _ = t.next_call()
    assert kind == "login"
    assert t.next_call()[0] == "login"  # the login failed: a new order again
    assert t.inputs()["logins"] == 201


def test_a_login_that_finds_no_one_ends_the_order():
    t = shopper(pct_new_customers=0)
    for _ in range(50):
        kind, _ = t.next_call()
        assert kind == "login"
        t.complete(0)
    assert (t.inputs()["logins"], t.inputs()["unknown_logins"]) == (50, 50)


def test_a_purchase_short_of_stock_rolls_the_order_back_and_the_next_order_starts():
    t = shopper()
    done = orders(t, 2000, Shop(short=lambda prods: prods[0] % 4 == 0))
    inputs = t.inputs()
    short = sum(parse_array(calls[-1][1][1])[0] % 4 == 0 for calls in done)
    assert 0 < short < 2000
    assert inputs["purchases"] == 2000 and inputs["rolled_back_purchases"] == short
    assert inputs["cart_items"] == sum(len(parse_array(c[-1][1][1])) for c in done)
    assert inputs["logins"] + inputs["new_customers"] == 2000
    t2 = shopper()
    t2.next_call()
    t2.complete(5)
    while t2.next_call()[0] != "purchase":
        t2.complete(1)
    assert t2.complete(-1, us=3) == {"headline": False, "rolled_back": True, "unit_us": 3}
    assert t2.next_call()[0] in ("login", "new_customer")


def test_complete_is_once_per_call_and_after_a_draw():
    t = shopper()
    with pytest.raises(RuntimeError, match="next_call"):
        t.complete(1)
    t.next_call()
    t.complete(1)
    with pytest.raises(RuntimeError, match="completed already"):
        t.complete(1)


def test_the_same_seed_draws_the_same_orders():
    assert orders(shopper(seed=3), 200) == orders(shopper(seed=3), 200)
    assert orders(shopper(seed=3), 50) != orders(shopper(seed=4), 50)
    t = shopper(seed=3)
    first = orders(t, 20)
    t.__init__(3, 20_000, 10_000, **WORDS)  # re-init: the generator and the order start anew
    assert orders(t, 20) == first


def test_think_time_follows_the_purchase_alone():
    t = shopper(think_time=2.0)
    purchase = _native.DVDS_NAMES.index("purchase")
    waits = [t.think_time(purchase) for _ in range(5000)]
    assert 0 <= min(waits) and max(waits) <= 4.0 and abs(mean(waits) - 2.0) < 0.1
    assert {t.think_time(k) for k in range(purchase)} == {0.0}
    assert shopper().think_time(purchase) == 0.0
    with pytest.raises(ValueError, match="no call kind"):
        t.think_time(len(_native.DVDS_NAMES))


def test_the_mariadb_calls_quote_text_and_pass_the_cart_as_json():
    t = shopper(pct_new_customers=100)
    t.next_call()
    call = t.mariadb_call("@oltplab_out")
    assert call.startswith("CALL DVDS_NEW_CUSTOMER('") and call.endswith(",@oltplab_out)")
    t.complete(77)
    seen = {}
    while True:
        kind, args = t.next_call()
        seen[kind] = (args, t.mariadb_call())
        if kind == "purchase":
            break
        t.complete(1)
    args, call = seen["purchase"]
    assert call == (f"CALL DVDS_PURCHASE(77,'[{args[1][1:-1]}]','[{args[2][1:-1]}]',@o)")
    for kind in set(seen) - {"purchase"}:
        args, call = seen[kind]
        proc = "DVDS_" + kind.upper()
        assert call in (f"CALL {proc}({args[0]},{args[1]},@o)",
                        f"CALL {proc}('{args[0]}',{args[1]},@o)")


@pytest.mark.parametrize("over, error, match", [
    (dict(customers=0), ValueError, "customers"),
    (dict(products=0), ValueError, "products"),
    (dict(products=2**31), ValueError, "products"),
    (dict(pct_new_customers=100.5), ValueError, "pct_new_customers"),
    (dict(pct_new_customers=-1), ValueError, "pct_new_customers"),
    (dict(pct_new_customers=float("nan")), ValueError, "pct_new_customers"),
    (dict(searches=0), ValueError, "searches"),
    (dict(search_batch=0), ValueError, "search_batch"),
    (dict(line_items=0), ValueError, "line_items"),
    (dict(think_time=-0.5), ValueError, "think_time"),
    (dict(think_time=float("inf")), ValueError, "think_time"),
    (dict(first_name_len=0), ValueError, "first_name_len"),
    (dict(last_name_len=31), ValueError, "last_name_len"),
    (dict(title_words=()), ValueError, "title_words"),
    (dict(actor_first=("ADA", 3)), TypeError, "actor_first"),
    (dict(actor_last="KING"), TypeError, "actor_last"),
    (dict(countries=("A" * 32,)), ValueError, "countries"),
    (dict(states=("O'NEIL",)), ValueError, "states"),
    (dict(states=("",)), ValueError, "states"),
    (dict(title_words=("CAFÉ",)), ValueError, "title_words"),
    (dict(title_words=None), TypeError, "title_words"),
    (dict(searches="3"), TypeError, "integer"),
])
def test_bad_arguments_raise_and_leave_the_terminal_as_it_was(over, error, match):
    args = dict(seed=1, customers=100, products=1000, **WORDS)
    args.update(over)
    if over.get("title_words", ()) is None:
        del args["title_words"]
    with pytest.raises(error, match=match):
        _native.DvdsTerminal(**args)
    t = shopper(seed=9)
    with pytest.raises(error, match=match):
        t.__init__(**args)
    assert orders(t, 30) == orders(shopper(seed=9), 30)


def test_methods_before_init_raise():
    t = _native.DvdsTerminal.__new__(_native.DvdsTerminal)
    for call in (t.next_call, lambda: t.complete(1), t.inputs, t.mariadb_call,
                 lambda: t.think_time(0)):
        with pytest.raises(RuntimeError, match="not initialised"):
            call()


def test_the_word_lists_of_the_workload_fit():
    words = pytest.importorskip("oltplab.workloads.dvds.words")
    t = _native.DvdsTerminal(1, 1000, 1000, title_words=words.TITLE_WORDS,
                             actor_first=words.ACTOR_FIRST, actor_last=words.ACTOR_LAST,
                             countries=words.COUNTRIES, states=words.STATES)
    for _ in range(500):
        kind, args = t.next_call()
        assert t.mariadb_call().startswith("CALL DVDS_")
        t.complete(Shop().answer(kind, args))
