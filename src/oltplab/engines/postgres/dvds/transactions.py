"""The transactions of the DVD-Store-derived shop as the statements a virtual user's libpq
connection prepares: in procedures mode, one call of each function of sql/functions.sql, in
the workload's kinds' order (login, new_customer, browse_category, browse_actor, browse_title,
purchase, then DVD Store 3's reviews_product, reviews_actor, reviews_title, new_review,
new_helpfulness, new_member). The C loop sends text parameters; the server reads them as the functions'
argument types."""

from __future__ import annotations

from ....errors import UsageError

#: (prepared name, number of parameters), in the kinds' order.
FUNCTIONS = (("dvds_login", 2), ("dvds_new_customer", 19), ("dvds_browse_category", 2),
             ("dvds_browse_actor", 2), ("dvds_browse_title", 2), ("dvds_purchase", 3),
             ("dvds_reviews_product", 3), ("dvds_reviews_actor", 3), ("dvds_reviews_title", 3),
             ("dvds_new_review", 5), ("dvds_new_helpfulness", 3), ("dvds_new_member", 2))


def call(name: str, params: int) -> str:
    """``SELECT name($1, ..., $params)``."""
    return f"SELECT {name}({', '.join(f'${k}' for k in range(1, params + 1))})"


def prepared(mode: str) -> list[tuple[str, str]]:
    """What a virtual user's libpq connection prepares, as (name, SQL)."""
    if mode == "sql":
        raise UsageError("--mode sql is not available for the dvds workload yet")
    return [(name, call(name, params)) for name, params in FUNCTIONS]
