"""The market emulator's side of the loop (native/brokerage/actor.c), driven through the
terminals' Python methods as the loop drives them: a user's committed Trade-Order hands its
trade to the bound emulator (not a rolled-back one, nor an executor without permission), an
actor draws the due Trade-Result and, once it completes, the emulator's tape moves; a
Market-Feed's answer rows come back as market orders; the first actor of the first worker
draws Data-Maintenance at once and then once a minute; bad rows are refused whole."""

from __future__ import annotations

import time

import pytest

from oltplab import _native
from oltplab.workloads.brokerage import inputs

from .test_brokerage_terminal import CONSTANTS


@pytest.fixture(scope="module")
def kwargs():
    return inputs.terminal_kwargs(CONSTANTS)


def _pair(kwargs, maintenance=False):
    market = _native.BrokerageMarket(11, kwargs["securities"], 16, 1 << 12)
    user = _native.BrokerageTerminal(3, **kwargs)
    actor = _native.BrokerageTerminal(4, **kwargs)
    user.bind_market(market)
    actor.bind_market(market, actor=True, maintenance=maintenance)
    return market, user, actor


def _order(user, roll_back=False):
    """The user's next market order by symbol (other calls completed on the way, as the loop
    does): its arguments (symbol at 4, type at 7, quantity at 8, roll_it_back last)."""
    while True:
        name, args = user.next_call()
        if (name == "trade_order" and (args[-1] == "true") == roll_back and args[4]
                and args[7] in ("TMB", "TMS")):
            return args
        user.complete()


def _row(trade_id, args, rolled_back=False):
    """Trade-Order's answer: trade_id, status_id, symbol, type_id, bid_price, trade_qty,
    is_market, roll_it_back."""
    return [(str(trade_id), "SBMT", args[4], args[7], "25.00", args[8], "t",
             "t" if rolled_back else "f")]


def _next_due(actor, limit_s=6.0):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        call = actor.next_call()
        if call[0] != "wait":
            return call
        assert 0 <= call[1] <= 0.01  # an actor looks again within 10 ms
        time.sleep(call[1])
    raise AssertionError("nothing came due")


def test_a_committed_market_order_comes_back_as_its_trade_result(kwargs):
    market, user, actor = _pair(kwargs)
    assert actor.next_call()[0] == "wait"
    args = _order(user)
    user.complete(7001, rows=_row(7001, args))
    name, (trade_id, price) = _next_due(actor)
    assert name == "trade_result" and trade_id == "7001"
    assert 20.0 <= float(price) <= 30.0
    actor.complete(rows=[("1", "100.00", "1.00", "0.00", "0.00")])
    counts = actor.actor_counts()
    assert counts["refused"] == 0 and counts["pending_limits"] == 0
    assert counts["market"] == user.actor_counts()["market"] != 0  # the same emulator
    assert actor.next_call()[0] == "wait"  # its result was the only work


def test_rolled_back_and_refused_orders_never_reach_the_market(kwargs):
    market, user, actor = _pair(kwargs)
    args = _order(user, roll_back=True)
    assert user.complete(7002, rows=_row(7002, args, rolled_back=True))["rolled_back"]
    args = _order(user)
    user.complete(0, rows=[("0", None, None, args[7], None, args[8], None, "f")])  # no permit
    assert market.pending()["results"] == 0 and actor.next_call()[0] == "wait"
    assert user.actor_counts()["refused"] == 0


def test_an_unknown_symbol_is_refused_and_counted(kwargs):
    market, user, actor = _pair(kwargs)
    args = _order(user)
    user.complete(7003, rows=[("7003", "SBMT", "NO-SUCH-SYMBOL", args[7], "25.00", args[8],
                               "t", "f")])
    assert user.actor_counts()["refused"] == 1


def test_maintenance_comes_first_then_once_a_minute(kwargs):
    market, user, actor = _pair(kwargs, maintenance=True)
    name, args = actor.next_call()
    assert name == "data_maintenance" and args[0] == "account_permission"
    assert len(args) == 8 and args[6].startswith("D") and 1 <= int(args[4]) <= 31
    actor.complete(value=1)
    assert actor.next_call()[0] == "wait"
    assert actor.actor_counts()["maintenance"] == 1


def test_bad_rows_are_refused_whole(kwargs):
    market, user, actor = _pair(kwargs)
    _order(user)
    with pytest.raises(TypeError):
        user.complete(7004, rows=[("7004", 5)])
    with pytest.raises(TypeError):
        user.complete(7004, rows=[tuple(str(k) for k in range(17))])
    with pytest.raises(TypeError):
        user.complete(7004, rows=5)


def test_a_market_feeds_answer_submits_its_triggered_trades(kwargs):
    """A feed is due once 10 Trade-Results completed (20 ticker entries); its answer's rows
    (trade_id, symbol, price, qty, type_id) come back as market orders."""
    market, user, actor = _pair(kwargs)
    for k in range(10):
        args = _order(user)
        user.complete(8000 + k, rows=_row(8000 + k, args))
    done = 0
    while done < 10:
        name, args = _next_due(actor)
        assert name == "trade_result"
        actor.complete(rows=[("1", "100.00", "1.00", "0.00", "0.00")])
        done += 1
    name, (symbols, prices, qtys) = _next_due(actor)
    assert name == "market_feed"
    assert symbols.count(",") == prices.count(",") == qtys.count(",") == 19
    symbol = symbols.strip("{}").split(",")[0].strip('"')
    assert market.pending()["results"] == 0
    actor.complete(rows=[("9001", symbol, "24.00", "100", "TLB"),
                         ("9002", symbol, "26.00", "200", "TLS")])
    assert market.pending()["results"] == 2  # their Trade-Results wait for their time
    assert market.counts()["market"] == 12  # 10 orders and the 2 triggered trades
