-- DVD Store 3's secondary and foreign keys on MariaDB (a DS3 build), added after the load as
-- keys.sql's: REVIEWS on prod_id, stars and (prod_id, stars), REVIEWS_HELPFULNESS on review_id;
-- the customer columns get keys of their own, which InnoDB's foreign keys need.

ALTER TABLE reviews ADD KEY reviews_product (prod_id), ADD KEY reviews_stars (stars),
    ADD KEY reviews_product_stars (prod_id, stars), ADD KEY reviews_customer (customerid);
ALTER TABLE reviews_helpfulness ADD KEY reviews_helpfulness_review (review_id),
    ADD KEY reviews_helpfulness_customer (customerid);

ALTER TABLE membership ADD CONSTRAINT membership_customer_fkey FOREIGN KEY (customerid)
    REFERENCES customers (customerid) ON DELETE CASCADE;
ALTER TABLE reviews ADD CONSTRAINT reviews_product_fkey FOREIGN KEY (prod_id)
    REFERENCES products (prod_id) ON DELETE CASCADE;
ALTER TABLE reviews ADD CONSTRAINT reviews_customer_fkey FOREIGN KEY (customerid)
    REFERENCES customers (customerid) ON DELETE CASCADE;
ALTER TABLE reviews_helpfulness ADD CONSTRAINT reviews_helpfulness_review_fkey
    FOREIGN KEY (review_id) REFERENCES reviews (review_id) ON DELETE CASCADE;
ALTER TABLE reviews_helpfulness ADD CONSTRAINT reviews_helpfulness_customer_fkey
    FOREIGN KEY (customerid) REFERENCES customers (customerid) ON DELETE CASCADE;
