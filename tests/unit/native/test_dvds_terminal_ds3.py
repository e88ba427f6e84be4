"""DVD Store 3's steps of the shopper (``DvdsTerminal(..., ds3=True)``): between the browses
and the purchase, the review searches, then the new review, helpfulness rating and new
membership the order drew, with their shares and arguments; a DS2 shopper draws as before.
(test_native_sanitizers.py runs this module under the sanitizers too.)"""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from .test_dvds_terminal import BROWSES, WORDS, Shop, orders, shopper

SEARCHES = ("reviews_product", "reviews_actor", "reviews_title")
WRITES = ("new_review", "new_helpfulness", "new_member")


def ds3(seed: int = 7, **over):
    return shopper(seed, **{"ds3": True, "review_ids": 50_000, **over})


def test_an_order_browses_then_searches_reviews_then_writes_then_purchases():
    for calls in orders(ds3(pct_new_reviews=50, pct_new_helpfulness=50, pct_new_members=50),
                        300):
        kinds = [k for k, _ in calls]
        assert kinds[0] in ("login", "new_customer") and kinds[-1] == "purchase"
        rest = kinds[1:-1]
        browses = [k for k in rest if k in BROWSES]
        searches = [k for k in rest if k in SEARCHES]
        writes = [k for k in rest if k in WRITES]
        assert rest == browses + searches + writes
        assert 1 <= len(searches) <= 5 and writes == [w for w in WRITES if w in writes]


def test_the_shares_follow_the_percentages_and_inputs_count_them():
    t = ds3(pct_new_reviews=5, pct_new_helpfulness=10, pct_new_members=1, review_searches=3)
    got = orders(t, 20_000)
    kinds = Counter(k for calls in got for k, _ in calls)
    n = len(got)
    assert abs(kinds["new_review"] / n - 0.05) < 0.01
    assert abs(kinds["new_helpfulness"] / n - 0.10) < 0.015
    assert abs(kinds["new_member"] / n - 0.01) < 0.004
    searches = sum(kinds[k] for k in SEARCHES)
    assert abs(searches / n - 3) < 0.06
    assert all(abs(kinds[k] / searches - 1 / 3) < 0.02 for k in SEARCHES)
    inputs = t.inputs()
    assert inputs["review_orders"] == n and inputs["review_searches"] == searches
    assert inputs["new_reviews"] == kinds["new_review"]
    assert inputs["new_helpfulness"] == kinds["new_helpfulness"]
    assert inputs["new_members"] + inputs["taken_memberships"] == kinds["new_member"]
    assert [inputs[k] for k in SEARCHES] == [kinds[k] for k in SEARCHES]


def test_the_arguments_of_the_ds3_calls():
    t = ds3(pct_new_reviews=100, pct_new_helpfulness=100, pct_new_members=100, search_batch=2)
    words = set(WORDS["title_words"])
    seen = set()
    for calls in orders(t, 200):
        customer = None
        for kind, args in calls:
            if kind == "login":
                customer = args[0].removeprefix("user")
            if kind == "reviews_product":
                assert 1 <= int(args[0]) <= 10_000 and 1 <= int(args[1]) <= 5
                assert 1 <= int(args[2]) <= 3
            elif kind == "reviews_actor":
                first, last = args[0].split()
                assert first in WORDS["actor_first"] and last in WORDS["actor_last"]
            elif kind == "reviews_title":
                assert args[0] in words and 1 <= int(args[1]) <= 5
            elif kind == "new_review":
                prod, cust, stars, summary, text = args
                assert 1 <= int(prod) <= 10_000 and 1 <= int(stars) <= 5
                assert len(summary.split()) == 2 and set(summary.split()) <= words
                assert 5 <= len(text.split()) <= 15 and len(text) < 160
                assert customer is None or cust == customer
            elif kind == "new_helpfulness":
                assert 1 <= int(args[0]) <= 50_000 and 1 <= int(args[2]) <= 10
            elif kind == "new_member":
                assert 1 <= int(args[1]) <= 3
            seen.add(kind)
    assert set(SEARCHES + WRITES) <= seen


def test_a_long_review_keeps_to_its_buffer():
    long = tuple(c * 31 for c in "ABCDEFGH")  # 31 letters a word: a few fit in 159 bytes
    t = ds3(pct_new_reviews=100, title_words=long)
    for calls in orders(t, 50):
        for kind, args in calls:
            if kind == "new_review":
                assert len(args[3]) <= 50 and len(args[4]) <= 159 and args[4].split()


def test_the_mariadb_calls_of_ds3():
    t = ds3(pct_new_reviews=100, pct_new_members=100)
    made = {}
    for _ in range(200):
        kind, args = t.next_call()
        made.setdefault(kind, t.mariadb_call("@o"))
        t.complete(Shop().answer(kind, args) if kind not in WRITES else 1, us=1)
    assert made["new_review"].startswith("CALL DVDS_NEW_REVIEW(")
    assert made["new_review"].count("'") == 4 and made["new_review"].endswith(",@o)")
    assert made["new_member"].startswith("CALL DVDS_NEW_MEMBER(")
    assert made["reviews_product"].startswith("CALL DVDS_REVIEWS_PRODUCT(")


#: sha256 of seed 11's first 300 orders as ``canonical`` writes them, computed from the
#: shopper of commit 6c8e4d6, before DVD Store 3's steps were added.
DS2_ORDERS_SHA256 = "930e6c3cacd3646f1904b3084b9c0f842a0d15ad4a2a7d2fefd1012a91b19d67"


def canonical(got: list) -> bytes:
    """Each call a line: its kind and arguments joined by |."""
    return "".join(f"{kind}|{'|'.join(args)}\n" for calls in got for kind, args in calls).encode()


def test_a_ds2_shopper_draws_the_same_orders_as_before():
    plain = orders(shopper(11), 300)
    assert hashlib.sha256(canonical(plain)).hexdigest() == DS2_ORDERS_SHA256
    assert orders(shopper(11, ds3=False, review_searches=7, pct_new_reviews=90), 300) == plain
    assert not any(k in SEARCHES + WRITES for calls in plain for k, _ in calls)


def test_a_membership_taken_counts_apart_and_the_order_goes_on():
    t = ds3(pct_new_members=100)
    for _ in range(100):
        kind, args = t.next_call()
        t.complete(0 if kind == "new_member" else Shop().answer(kind, args), us=1)
    inputs = t.inputs()
    assert inputs["new_members"] == 0 and inputs["taken_memberships"] > 0


@pytest.mark.parametrize("key", ["pct_new_reviews", "pct_new_helpfulness", "pct_new_members"])
def test_percentages_outside_0_100_are_refused(key):
    with pytest.raises(ValueError, match=f"{key} must be within 0..100"):
        ds3(**{key: 100.5})
    with pytest.raises(ValueError, match="review_searches must be within"):
        ds3(review_searches=0)
    with pytest.raises(ValueError, match="review_ids must be within"):
        ds3(review_ids=0)
