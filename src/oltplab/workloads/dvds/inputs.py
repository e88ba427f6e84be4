"""What a run of the DVD-Store-derived workload fixes once and what each user gets: the run's
constants (the size the build recorded and the run's parameters) and each user's terminal,
the C object that draws its orders (``_native.DvdsTerminal``)."""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, replace

from .params import DvdsParams
from .schema import ds2_build


@dataclass(frozen=True)
class RunConstants:
    """The build's size (customers and products the users draw from) and the parameters."""

    size: str
    customers: int
    products: int
    params: DvdsParams
    reviews: int = 0  # a DS3 build's loaded reviews, which the users rate

    def as_dict(self) -> dict:
        return {"size": self.size, "customers": self.customers, "products": self.products,
                **({"loaded_reviews": self.reviews} if self.params.ds3 else {}),
                **asdict(self.params)}


def draw_constants(rng: random.Random, schema, spec=None) -> RunConstants:
    """The run's constants; a DS3 build turns DVD Store 3's steps on (``params.ds3``), and a
    run that asks for them on a DS2 build is refused (SchemaError)."""
    params = getattr(spec, "params", None) or DvdsParams()
    ds3 = bool(getattr(schema, "ds3", False))
    if params.ds3 and not ds3:
        raise ds2_build(schema.size)
    if ds3 and not params.ds3:
        params = replace(params, ds3=True)
    return RunConstants(size=schema.size, customers=schema.customers, products=schema.products,
                        params=params, reviews=getattr(schema, "reviews", 0) if ds3 else 0)


def terminal(plan, w_max: int, constants: RunConstants):
    """One user's order generator, seeded by its plan."""
    from ... import _native
    from . import words
    p = constants.params
    return _native.DvdsTerminal(
        plan.seed, constants.customers, constants.products, p.pct_new_customers, p.searches,
        p.search_batch, p.line_items, p.think_time, title_words=words.TITLE_WORDS,
        actor_first=words.ACTOR_FIRST, actor_last=words.ACTOR_LAST,
        countries=words.COUNTRIES, states=words.STATES, ds3=p.ds3, review_searches=p.reviews,
        pct_new_reviews=p.pct_new_reviews, pct_new_helpfulness=p.pct_new_helpfulness,
        pct_new_members=p.pct_new_members, review_ids=max(1, constants.reviews))
