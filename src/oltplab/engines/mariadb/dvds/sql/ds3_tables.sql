-- DVD Store 3's parts of the shop on MariaDB (a DS3 build: 'oltplab dvds build --ds3'), created
-- after tables.sql, with the columns of PostgreSQL's ds3_tables.sql: PRODUCTS' last column
-- becomes membership_item; MEMBERSHIP, REVIEWS and REVIEWS_HELPFULNESS with their primary keys
-- (the secondary and foreign keys come after the load: ds3_keys.sql). REVIEWS.review_id and
-- REVIEWS_HELPFULNESS.review_helpfulness_id are AUTO_INCREMENT: InnoDB moves the counters past
-- the loaded ids.

ALTER TABLE products CHANGE COLUMN common_prod_id membership_item int NOT NULL;

CREATE TABLE membership (
    customerid      int      NOT NULL,
    membershiptype  smallint NOT NULL,  -- 1..3
    expiredate      date     NOT NULL,
    PRIMARY KEY (customerid)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE reviews (
    review_id       int           NOT NULL AUTO_INCREMENT,
    prod_id         int           NOT NULL,
    review_date     date          NOT NULL,
    stars           smallint      NOT NULL,
    customerid      int           NOT NULL,
    review_summary  varchar(50)   NOT NULL,
    review_text     varchar(1000) NOT NULL,
    PRIMARY KEY (review_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE reviews_helpfulness (
    review_helpfulness_id  int      NOT NULL AUTO_INCREMENT,
    review_id              int      NOT NULL,
    customerid             int      NOT NULL,
    helpfulness            smallint NOT NULL,  -- 1..10
    PRIMARY KEY (review_helpfulness_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;
