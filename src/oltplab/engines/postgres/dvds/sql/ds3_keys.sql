-- DVD Store 3's keys and indexes (a DS3 build), built after the load as keys.sql's: REVIEWS
-- indexed on prod_id, stars and (prod_id, stars), REVIEWS_HELPFULNESS on review_id (the
-- ratings a review read sums); the foreign keys to the customers, products and reviews.

CREATE UNIQUE INDEX membership_pkey ON membership (customerid);
CREATE UNIQUE INDEX reviews_pkey ON reviews (review_id);
CREATE INDEX reviews_product ON reviews (prod_id);
CREATE INDEX reviews_stars ON reviews (stars);
CREATE INDEX reviews_product_stars ON reviews (prod_id, stars);
CREATE UNIQUE INDEX reviews_helpfulness_pkey ON reviews_helpfulness (review_helpfulness_id);
CREATE INDEX reviews_helpfulness_review ON reviews_helpfulness (review_id);

ALTER TABLE membership ADD CONSTRAINT membership_pkey PRIMARY KEY USING INDEX membership_pkey;
ALTER TABLE reviews ADD CONSTRAINT reviews_pkey PRIMARY KEY USING INDEX reviews_pkey;
ALTER TABLE reviews_helpfulness ADD CONSTRAINT reviews_helpfulness_pkey
    PRIMARY KEY USING INDEX reviews_helpfulness_pkey;
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
