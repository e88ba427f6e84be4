"""What a run of the TPC-E-derived brokerage fixes once and hands each customer-emulator user:
the run's constants (the scale, the highest loaded trade id and the seed the build recorded in
brokerage_meta) and each user's terminal, the C object that deals its transactions and draws
their inputs (``_native.BrokerageTerminal``, native/brokerage/terminal.c).

The terminal draws only ids that the build loaded, so it gets the build's customer side as
compact arrays (``Tables``, made once per run and shared by every user's terminal):

- ``accounts``: per customer (c_id - 1) its number of accounts (customers.account_count), one
  byte each;
- ``basket_at`` and ``baskets``: per account slot (c_id - 1) x 10 + k - 1 where its basket
  (customers.baskets: security indexes) starts in ``baskets``, int32, and one offset more at
  the end; slots past the customer's accounts are empty;
- ``execs``: per account slot the c_ids of the (at most 2) other customers the account permits
  (its account_permission rows but the owner's), 0 for none, int32;
- ``names``: per customer the indexes of its first and last name in words.FIRST_NAMES and
  LAST_NAMES, uint16: Trade-Order sends its executor's names and tax id, which the
  transaction compares with the owner's and the permissions'.

The permissions and names come from the build's own generator (customers.chunk_rows, stopped
before the chunk's watch lists and trades), so they are the loaded rows themselves.
"""

from __future__ import annotations

import functools
import random
from array import array
from dataclasses import asdict, dataclass

from . import customers as cust
from . import market, population, trades, words
from . import reference as ref
from .scale import Scale

_EPOCH = 719_163  # date(1970, 1, 1).toordinal()
EXTRA_EXECS = 2


@dataclass(frozen=True)
class RunConstants:
    """The build's scale and record: what every user's draws depend on."""

    customers: int
    days: int
    scale_factor: int
    max_t_id: int
    seed: int

    @property
    def scale(self) -> Scale:
        return Scale(self.customers, self.days, self.scale_factor)

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def params(self) -> "RunConstants":
        """What a step's rigor reads of the run (loadgen/step.py passes ``params``): these."""
        return self


def draw_constants(rng: random.Random, schema, spec=None) -> RunConstants:
    """The run's constants from the build's record (schema.BrokerageSchema)."""
    return RunConstants(customers=schema.customers, days=schema.days,
                        scale_factor=schema.scale_factor, max_t_id=schema.max_t_id,
                        seed=schema.seed)


@dataclass(frozen=True)
class Tables:
    """The build's customer side as the terminal takes it (see the module's docstring)."""

    accounts: bytes
    basket_at: bytes
    baskets: bytes
    execs: bytes
    names: bytes


def _permissions(seed: int, scale: Scale, first: int, count: int):
    """(c_id, first name, last name) of the chunk's customers and {ca_id: [other c_ids]},
    read from the build's own rows of the chunk."""
    people, others = [], {}
    by_tax_id = {}
    rows = cust.chunk_rows(seed, scale, first, count, population.new_tally(scale))
    try:
        for table, text, _ in rows:
            if table == "customer":
                for line in text.splitlines():
                    f = line.split("\t")
                    people.append((int(f[0]), f[4], f[3]))
                    by_tax_id[f[1]] = int(f[0])
            elif table == "account_permission":
                for line in text.splitlines():
                    ca_id, acl, tax_id = line.split("\t")[:3]
                    if acl != cust.ACLS[0]:
                        others.setdefault(int(ca_id), []).append(by_tax_id[tax_id])
            elif table not in ("address", "customer_taxrate"):
                break
    finally:
        rows.close()
    return people, others


@functools.lru_cache(maxsize=2)
def tables(seed: int, scale: Scale) -> Tables:
    """The arrays of the build of ``seed`` at ``scale`` (about 0.6 s per 1,000 customers,
    once per process: every terminal of the process shares them)."""
    n = scale.customers
    accounts = bytearray(n)
    basket_at, baskets = array("i", [0]), array("i")
    execs = array("i", bytes(4 * n * ref.MAX_ACCOUNTS * EXTRA_EXECS))
    names = array("H", bytes(4 * n))
    first_index = {name: k for k, name in reversed(list(enumerate(words.FIRST_NAMES)))}
    last_index = {name: k for k, name in reversed(list(enumerate(words.LAST_NAMES)))}
    for chunk in population.plan(scale):
        if chunk.kind != "customers":
            continue
        people, others = _permissions(seed, scale, chunk.first, chunk.count)
        for c_id, f_name, l_name in people:
            names[2 * (c_id - 1)] = first_index[f_name]
            names[2 * (c_id - 1) + 1] = last_index[l_name]
        for c_id in range(chunk.first, chunk.first + chunk.count):
            held = cust.baskets(seed, scale, c_id)
            accounts[c_id - 1] = len(held)
            for k in range(ref.MAX_ACCOUNTS):
                if k < len(held):
                    baskets.extend(held[k])
                    slot = ref.account_id(c_id, k + 1) - 1
                    for e, other in enumerate(others.get(slot + 1, ())):
                        execs[slot * EXTRA_EXECS + e] = other
                basket_at.append(len(baskets))
    return Tables(bytes(accounts), basket_at.tobytes(), baskets.tobytes(), execs.tobytes(),
                  names.tobytes())


@functools.lru_cache(maxsize=2)
def _words(scale: Scale) -> dict:
    return dict(
        first_names=tuple(words.FIRST_NAMES), last_names=tuple(words.LAST_NAMES),
        broker_names=tuple(trades.broker_name(b) for b in range(1, ref.brokers(scale) + 1)),
        sectors=tuple(name for _, name, _ in words.SECTORS),
        industries=tuple(words.INDUSTRIES),
        company_names=tuple(market.company_name(co) for co in
                            range(1, ref.companies(scale) + 1)),
        issues=tuple(market.ISSUES))


def terminal_kwargs(constants: RunConstants) -> dict:
    """Everything but the seed that a BrokerageTerminal of the run takes."""
    scale = constants.scale
    dates = market.daily_market_dates()
    t = tables(constants.seed, scale)
    return dict(customers=scale.customers, securities=ref.securities(scale),
                max_t_id=constants.max_t_id, days=scale.days,
                start_day=ref.START_DATE.toordinal() - _EPOCH,
                dm_first=dates[0].toordinal() - _EPOCH, dm_days=len(dates),
                **vars(t), **_words(scale))


def terminal(plan, w_max: int, constants: RunConstants):
    """One user's customer emulator, seeded by its plan."""
    from ... import _native
    return _native.BrokerageTerminal(plan.seed, **terminal_kwargs(constants))


#: The market emulator's actors per worker: a connection each that delivers its due
#: Trade-Results and Market-Feeds; one per ACTOR_USERS users, at least MIN_ACTORS, so that no
#: single connection caps the rate at which results are delivered.
ACTOR_USERS = 4
MIN_ACTORS = 2
MARKET_CAPACITY = 1024  # the emulator's stores start here and double up to MARKET_MAX_ENTRIES
MARKET_MAX_ENTRIES = 1 << 22


def actors_for(users: int) -> int:
    """The market emulator's actors in a worker of ``users`` users."""
    return max(MIN_ACTORS, -(-users // ACTOR_USERS))


def bind_market(terminals: list, plans: list, constants: RunConstants, actors: int) -> list:
    """The worker's market emulator: a BrokerageMarket its users' terminals feed, and
    ``actors`` terminals that deliver its work (the first worker's first actor also runs
    Data-Maintenance once a minute). Returns the actors' terminals."""
    from ... import _native
    seed = plans[0].seed if plans else constants.seed
    market = _native.BrokerageMarket(seed ^ 0x5EED_3A4B, ref.securities(constants.scale),
                                     MARKET_CAPACITY, MARKET_MAX_ENTRIES)
    for t in terminals:
        t.bind_market(market)
    first_worker = any(p.index == 0 for p in plans)
    out = []
    for k in range(actors):
        t = _native.BrokerageTerminal(seed + 1 + k, **terminal_kwargs(constants))
        t.bind_market(market, actor=True, maintenance=first_worker and k == 0)
        out.append(t)
    return out


def market_counts(terminals: list) -> dict:
    """The worker's emulator at the step's end (its loop has let the terminals go): pending
    limit orders, and what the emulator refused or had no room for."""
    out = {"pending_limits": 0, "market_refused": 0, "lost_triggers": 0,
           "data_maintenance_drawn": 0}
    markets = {}
    for t in terminals:
        c = t.actor_counts()
        out["market_refused"] += c["refused"]
        out["lost_triggers"] += c["lost_triggers"]
        out["data_maintenance_drawn"] += c["maintenance"]
        if c["market"]:
            markets[c["market"]] = c["pending_limits"]
    out["pending_limits"] = sum(markets.values())
    return out
