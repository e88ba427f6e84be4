"""What a run of the DVD-Store-derived workload fixes once and what each user gets: the run's
constants (the size the build recorded and the run's parameters) and each user's terminal,
the C object that draws its orders (``_native.DvdsTerminal``)."""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass

from .params import DvdsParams


@dataclass(frozen=True)
class RunConstants:
    """The build's size (customers and products the users draw from) and the parameters."""

    size: str
    customers: int
    products: int
    params: DvdsParams

    def as_dict(self) -> dict:
        return {"size": self.size, "customers": self.customers, "products": self.products,
                **asdict(self.params)}


def draw_constants(rng: random.Random, schema, spec=None) -> RunConstants:
    params = getattr(spec, "params", None) or DvdsParams()
    return RunConstants(size=schema.size, customers=schema.customers, products=schema.products,
                        params=params)


@dataclass(frozen=True)
class User:
    """One virtual user (the shop has no home warehouse: the fields the step expects are 0)."""

    index: int
    w_id: int = 0
    stock_d_id: int = 0
    warehouses: tuple[int, ...] = ()


def assign_users(rng: random.Random, users: int, warehouses: int = 0,
                 spread: bool = False) -> tuple[User, ...]:
    if users < 1:
        raise ValueError("need at least one user")
    return tuple(User(i) for i in range(users))


def terminal(plan, w_max: int, constants: RunConstants):
    """One user's order generator, seeded by its plan."""
    from ... import _native
    from . import words
    p = constants.params
    return _native.DvdsTerminal(
        plan.seed, constants.customers, constants.products, p.pct_new_customers, p.searches,
        p.search_batch, p.line_items, p.think_time, title_words=words.TITLE_WORDS,
        actor_first=words.ACTOR_FIRST, actor_last=words.ACTOR_LAST,
        countries=words.COUNTRIES, states=words.STATES)
