"""The transactions of the DVD-Store-derived shop as the statements a virtual user's libpq
connection prepares. Procedures mode: one call of each function of sql/functions.sql, in the
workload's kinds' order (login, new_customer, browse_category, browse_actor, browse_title,
purchase, then DVD Store 3's reviews_product, reviews_actor, reviews_title, new_review,
new_helpfulness, new_member). ``--mode sql``: the statements the twelve functions run, sent
from the client by the C loop (native/dvds/sqlpq.c, which names them:
``_native.DVDS_SQL_STATEMENTS``) in pipelined round trips, each call one transaction. A
connection prepares DVD Store 3's calls (functions or statements) for a DS3 run only: their
statements read the tables a DS3 build adds, and a build older than them lacks their
functions.
The C loop sends text parameters; the server reads them as the functions' argument types, or
the columns'."""

from __future__ import annotations

#: (prepared name, number of parameters), in the kinds' order.
FUNCTIONS = (("dvds_login", 2), ("dvds_new_customer", 19), ("dvds_browse_category", 2),
             ("dvds_browse_actor", 2), ("dvds_browse_title", 2), ("dvds_purchase", 3),
             ("dvds_reviews_product", 3), ("dvds_reviews_actor", 3), ("dvds_reviews_title", 3),
             ("dvds_new_review", 5), ("dvds_new_helpfulness", 3), ("dvds_new_member", 2))

_PRODUCT = "SELECT * FROM products"  # DS2 and DS3 builds name the last column apart

#: DVD Store 3's calls: their statements are prepared for a DS3 run only.
DS3_CALLS = tuple(name.removeprefix("dvds_") for name, _ in FUNCTIONS[6:])

# A review as the searches read it: its sum of helpfulness ratings beside its columns.
_HELPFUL = """(SELECT coalesce(sum(h.helpfulness), 0) FROM reviews_helpfulness h
                WHERE h.review_id = v.review_id) AS helpful"""
_BEST_FIRST = "ORDER BY v.stars DESC, v.review_date DESC"


def _reviews_of(column: str) -> str:
    """Reviews of at least $2 stars of up to $3 products whose ``column`` holds every word of
    $1 (full-text): up to $3 of them, the best rated first."""
    return f"""
        SELECT v.review_id, v.prod_id, p.title, p.actor, v.review_date, v.stars,
               v.review_summary, v.review_text, {_HELPFUL}
          FROM reviews v JOIN products p ON p.prod_id = v.prod_id
         WHERE v.prod_id = ANY (ARRAY(
                   SELECT prod_id FROM products
                    WHERE to_tsvector('simple', {column}) @@ plainto_tsquery('simple', $1)
                    LIMIT $3))
           AND v.stars >= $2
         {_BEST_FIRST} LIMIT $3"""


#: ``--mode sql``: each statement by the name the C loop sends it under.
STATEMENTS = {
    "begin": "BEGIN",
    "begin_read_only": "BEGIN READ ONLY",
    "commit": "COMMIT",
    "rollback": "ROLLBACK",
    # login(username, password): the customer, then their 10 latest purchases as the shop
    # shows them (titles and actors)
    "login.customer": "SELECT customerid FROM customers WHERE username = $1 AND password = $2",
    "login.history": """
        SELECT h.orderid, p.title, p.actor FROM customers c
          JOIN cust_hist h ON h.customerid = c.customerid
          JOIN products p ON p.prod_id = h.prod_id
         WHERE c.username = $1 AND c.password = $2
         ORDER BY h.orderid DESC LIMIT 10""",
    # new_customer(firstname .. gender): no row when the username is taken
    "new_customer.insert": """
        INSERT INTO customers (firstname, lastname, address1, address2, city, state, zip,
                               country, region, email, phone, creditcardtype, creditcard,
                               creditcardexpiration, username, password, age, income, gender)
        VALUES ($1, $2, $3, NULLIF($4::text, ''), $5, NULLIF($6::text, ''),
                NULLIF($7::text, ''), $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
        ON CONFLICT DO NOTHING
        RETURNING customerid""",
    # the browses (category or words, batch): the rows themselves, counted by the client
    "browse_category.products": f"{_PRODUCT} WHERE category = $1 AND special = 1 LIMIT $2",
    "browse_actor.products": f"{_PRODUCT} WHERE to_tsvector('simple', actor)"
                             " @@ plainto_tsquery('simple', $1) LIMIT $2",
    "browse_title.products": f"{_PRODUCT} WHERE to_tsvector('simple', title)"
                             " @@ plainto_tsquery('simple', $1) LIMIT $2",
    # purchase: each product's stock locked (in prod_id order) and its price; then the order
    # with the client's amounts, its lines and history from the cart's arrays (the order's id
    # from its sequence in this session), and each product's stock taken
    "purchase.stock": "SELECT quan_in_stock FROM inventory WHERE prod_id = $1 FOR UPDATE",
    "purchase.price": "SELECT price FROM products WHERE prod_id = $1",
    "purchase.order": """
        INSERT INTO orders (orderdate, customerid, netamount, tax, totalamount)
        VALUES (current_date, $1, $2, $3, $4) RETURNING orderid""",
    "purchase.lines": """
        INSERT INTO orderlines (orderlineid, orderid, prod_id, quantity, orderdate)
        SELECT u.n, currval(pg_get_serial_sequence('orders', 'orderid')), u.prod_id, u.q,
               current_date
          FROM unnest($1::int[], $2::int[]) WITH ORDINALITY AS u(prod_id, q, n)""",
    "purchase.history": """
        INSERT INTO cust_hist (customerid, orderid, prod_id)
        SELECT $1, currval(pg_get_serial_sequence('orders', 'orderid')), u.prod_id
          FROM unnest($2::int[]) AS u(prod_id)""",
    "purchase.take": """
        UPDATE inventory SET quan_in_stock = quan_in_stock - $2, sales = sales + $2
         WHERE prod_id = $1""",
    # DVD Store 3's review searches: the reviews themselves, counted by the client; of a
    # product (prod_id, stars, batch), or of an actor's or a title word's products (words,
    # stars, batch)
    "reviews_product.reviews": f"""
        SELECT v.review_id, v.prod_id, v.review_date, v.stars, v.customerid, v.review_summary,
               v.review_text, {_HELPFUL}
          FROM reviews v
         WHERE v.prod_id = $1 AND v.stars >= $2
         {_BEST_FIRST} LIMIT $3""",
    "reviews_actor.reviews": _reviews_of("actor"),
    "reviews_title.reviews": _reviews_of("title"),
    # new_review(prod_id, customerid, stars, summary, text): the review's id
    "new_review.insert": """
        INSERT INTO reviews (prod_id, review_date, stars, customerid, review_summary,
                             review_text)
        VALUES ($1, current_date, $3, $2, $4, $5) RETURNING review_id""",
    # new_helpfulness(review_id, customerid, helpfulness): the rating's id
    "new_helpfulness.insert": """
        INSERT INTO reviews_helpfulness (review_id, customerid, helpfulness)
        VALUES ($1, $2, $3) RETURNING review_helpfulness_id""",
    # new_member(customerid, tier): no row when the customer is a member already
    "new_member.insert": """
        INSERT INTO membership (customerid, membershiptype, expiredate)
        VALUES ($1, $2, current_date + 365)
        ON CONFLICT DO NOTHING
        RETURNING customerid""",
}


def call(name: str, params: int) -> str:
    """``SELECT name($1, ..., $params)``."""
    return f"SELECT {name}({', '.join(f'${k}' for k in range(1, params + 1))})"


#: The loop's name of each kind's call, in the kinds' order (a run prepares those it sends).
KIND_NAMES = tuple(name for name, _ in FUNCTIONS)


def prepared(mode: str, constants=None) -> list[tuple[str, str]]:
    """What a virtual user's libpq connection prepares, as (name, SQL): the function calls, or
    for ``--mode sql`` the statements the C loop sends; DVD Store 3's only when ``constants``
    (the run's, workloads/dvds/inputs.py) are a DS3 run's, so that a DS2 run works on a build
    older than DVD Store 3's functions, which has DS2's six alone."""
    ds3 = bool(getattr(getattr(constants, "params", None), "ds3", False))
    if mode == "sql":
        from .... import _native
        return [(name, STATEMENTS[name]) for name in _native.DVDS_SQL_STATEMENTS
                if ds3 or name.split(".")[0] not in DS3_CALLS]
    return [(name, call(name, params)) for name, params in FUNCTIONS
            if ds3 or name.removeprefix("dvds_") not in DS3_CALLS]
