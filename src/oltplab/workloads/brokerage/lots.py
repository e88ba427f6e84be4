"""What a completed trade does to a position's lots (Trade-Result's frame 2): pure, used by the
build's generator (trades.py, for every trade that closes lots; it opens a lot itself, with the
same rows, when there is nothing to close) and by the tests as the reference.

A position is an account's holding of one security: its open lots, oldest first, each a list
``[h_t_id, h_qty, h_price, h_dts]`` (price in cents), and its summary quantity (hs_qty), the sum
of the lots' quantities. The lots of a position are all long (h_qty > 0) or all short
(h_qty < 0). A sell against a long position, or a buy against a short one, closes lots newest
first (LIFO) or oldest first (FIFO): a lot taken whole is deleted, a lot taken in part keeps the
rest; what is left of the trade's quantity opens a new lot of the trade's own (a short one,
negative, for a sell beyond the holding). Every lot touched, and the new lot, is logged as a
holding_history row (hh_h_t_id = the lot's trade, before and after quantities; the new lot's
row is (t_id, 0, qty)). The values of the closed quantity give the gain: sell value (what the
closed shares were sold for) minus buy value (what they were bought for).
"""

from __future__ import annotations


def trade_lots(lots: list, held: int, qty: int, is_sell: bool, lifo: bool, t_id: int,
               price: int, dts: str, history: list) -> tuple[int, int, int]:
    """Apply trade ``t_id`` (``qty`` shares at ``price`` cents, a sell or a buy, LIFO or FIFO,
    completed at ``dts``) to the position of open ``lots`` whose summary is ``held``.

    Changes ``lots`` in place, appends one (hh_h_t_id, hh_before_qty, hh_after_qty) to
    ``history`` per lot touched or opened, and returns (the new summary quantity, the buy
    value, the sell value) of the shares closed, in cents.
    """
    needed = qty
    buy_value = sell_value = 0
    if is_sell:
        if held > 0:
            while needed and lots:
                lot = lots[-1] if lifo else lots[0]
                have = lot[1]
                if have > needed:
                    history.append((lot[0], have, have - needed))
                    lot[1] = have - needed
                    buy_value += needed * lot[2]
                    needed = 0
                else:
                    history.append((lot[0], have, 0))
                    lots.pop(-1 if lifo else 0)
                    buy_value += have * lot[2]
                    needed -= have
            sell_value = (qty - needed) * price
        if needed:
            history.append((t_id, 0, -needed))
            lots.append([t_id, -needed, price, dts])
        return held - qty, buy_value, sell_value
    if held < 0:
        while needed and lots:
            lot = lots[-1] if lifo else lots[0]
            short = -lot[1]
            if short > needed:
                history.append((lot[0], -short, needed - short))
                lot[1] = needed - short
                sell_value += needed * lot[2]
                needed = 0
            else:
                history.append((lot[0], -short, 0))
                lots.pop(-1 if lifo else 0)
                sell_value += short * lot[2]
                needed -= short
        buy_value = (qty - needed) * price
    if needed:
        history.append((t_id, 0, needed))
        lots.append([t_id, needed, price, dts])
    return held + qty, buy_value, sell_value


def tax_cents(gain: int, rate: int) -> int:
    """The tax on a gain of ``gain`` cents at ``rate`` hundred-thousandths (the customer's two
    rates summed), rounded half up to the cent; nothing on no gain."""
    if gain <= 0:
        return 0
    return (gain * rate + 50_000) // 100_000


def commission_cents(qty: int, price: int, rate: int) -> int:
    """qty x price (cents) x rate (hundredths of a percent), rounded half up to the cent."""
    return (qty * price * rate + 5_000) // 10_000
