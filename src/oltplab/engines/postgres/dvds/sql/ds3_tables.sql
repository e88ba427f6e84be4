-- DVD Store 3's parts of the shop (a DS3 build: 'oltplab dvds build --ds3'), created after
-- tables.sql and loaded with the other tables: PRODUCTS' last column becomes membership_item
-- (0: for everyone; 1..3: the membership tier the product is an item of), MEMBERSHIP (at most
-- one membership per customer: its key), REVIEWS (1..5 stars, a summary and a text) and
-- REVIEWS_HELPFULNESS (a customer's rating 1..10 of a review). Keys come after the load
-- (ds3_keys.sql); REVIEWS.review_id and REVIEWS_HELPFULNESS.review_helpfulness_id are serial,
-- moved past the loaded ids by the loader.

ALTER TABLE products RENAME COLUMN common_prod_id TO membership_item;

CREATE TABLE membership (
    customerid      int      NOT NULL,
    membershiptype  smallint NOT NULL,  -- 1..3
    expiredate      date     NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE reviews (
    review_id       serial        NOT NULL,
    prod_id         int           NOT NULL,
    review_date     date          NOT NULL,
    stars           smallint      NOT NULL,
    customerid      int           NOT NULL,
    review_summary  varchar(50)   NOT NULL,
    review_text     varchar(1000) NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE reviews_helpfulness (
    review_helpfulness_id  serial   NOT NULL,
    review_id              int      NOT NULL,
    customerid             int      NOT NULL,
    helpfulness            smallint NOT NULL  -- 1..10
) WITH (autovacuum_enabled = off);
