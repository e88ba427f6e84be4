-- One order of the DVD-Store-derived shop for pgbench, drawn as the C terminal draws it
-- (src/oltplab/native/dvds/terminal.c): a new customer (NEWPCT in 10,000, i.e. pct x 100) or
-- a login of user<1..C>; then 1..5 browses, each by category, actor or title (one third each)
-- of 1..9 rows; then a cart of 1..9 items, products uniform over 1..P but every 10,000th
-- (POP = P / 10000 of them) ten times as likely, quantity 1..3. Variables given with -D:
-- C (customers), P (products), POP, NEWPCT. pgbench has no strings: the words are picked
-- from array literals by index on the server (@TITLE_WORDS@, @ACTOR_FIRST@, @ACTOR_LAST@,
-- @STATES@ and @COUNTRIES@ are filled in from workloads/dvds/words.py by bench/dvds_driver.py),
-- user names are 'user' || n and 'newuser' || n, and a new customer's letters (names, street,
-- city) are fixed strings of the lengths the terminal draws. A taken new name (0) ends the
-- order instead of drawing another.
\set u random(1, 10000)
\if :u <= :NEWPCT
\set region random(1, 2)
\set house random(1000, 9999)
\set phone random(1000000000, 9999999999)
\set cardtype random(1, 5)
\set card random(1000000000000000, 9999999999999999)
\set exp random(2025, 2030) * 100 + random(1, 12)
\set user random(1, 1000000000)
\set age random(18, 90)
\set income 20000 * random(1, 5)
\set gender random(0, 1)
\if :region = 1
\set state random(1, 50)
\set zip random(10000, 99999)
SELECT dvds_new_customer('QWERTY', 'ASDFGHJKLZ', :house || ' XCVBNMQ ST', '', 'POIUYTRE',
       (ARRAY[@STATES@])[:state], :zip, 'US', 1, 'ASDFGHJKLZ@example.com', :phone, :cardtype,
       :card, :exp, 'newuser' || :user, 'password', :age, :income,
       substr('FM', :gender + 1, 1)) AS cid
\gset
\else
\set country random(1, 10)
SELECT dvds_new_customer('QWERTY', 'ASDFGHJKLZ', :house || ' XCVBNMQ ST', '', 'POIUYTRE',
       '', '', (ARRAY[@COUNTRIES@])[:country], 2, 'ASDFGHJKLZ@example.com', :phone,
       :cardtype, :card, :exp, 'newuser' || :user, 'password', :age, :income,
       substr('FM', :gender + 1, 1)) AS cid
\gset
\endif
\else
\set user random(1, :C)
SELECT dvds_login('user' || :user, 'password') AS cid
\gset
\endif
\if :cid > 0
\set browses random(1, 5)
\set kind random(0, 2)
\set batch random(1, 9)
\if :kind = 0
\set category random(1, 16)
SELECT dvds_browse_category(:category, :batch);
\elif :kind = 1
\set first random(1, 200)
\set last random(1, 200)
SELECT dvds_browse_actor((ARRAY[@ACTOR_FIRST@])[:first] || ' ' || (ARRAY[@ACTOR_LAST@])[:last], :batch);
\else
\set word random(1, 1000)
SELECT dvds_browse_title((ARRAY[@TITLE_WORDS@])[:word], :batch);
\endif
\if :browses >= 2
\set kind random(0, 2)
\set batch random(1, 9)
\if :kind = 0
\set category random(1, 16)
SELECT dvds_browse_category(:category, :batch);
\elif :kind = 1
\set first random(1, 200)
\set last random(1, 200)
SELECT dvds_browse_actor((ARRAY[@ACTOR_FIRST@])[:first] || ' ' || (ARRAY[@ACTOR_LAST@])[:last], :batch);
\else
\set word random(1, 1000)
SELECT dvds_browse_title((ARRAY[@TITLE_WORDS@])[:word], :batch);
\endif
\endif
\if :browses >= 3
\set kind random(0, 2)
\set batch random(1, 9)
\if :kind = 0
\set category random(1, 16)
SELECT dvds_browse_category(:category, :batch);
\elif :kind = 1
\set first random(1, 200)
\set last random(1, 200)
SELECT dvds_browse_actor((ARRAY[@ACTOR_FIRST@])[:first] || ' ' || (ARRAY[@ACTOR_LAST@])[:last], :batch);
\else
\set word random(1, 1000)
SELECT dvds_browse_title((ARRAY[@TITLE_WORDS@])[:word], :batch);
\endif
\endif
\if :browses >= 4
\set kind random(0, 2)
\set batch random(1, 9)
\if :kind = 0
\set category random(1, 16)
SELECT dvds_browse_category(:category, :batch);
\elif :kind = 1
\set first random(1, 200)
\set last random(1, 200)
SELECT dvds_browse_actor((ARRAY[@ACTOR_FIRST@])[:first] || ' ' || (ARRAY[@ACTOR_LAST@])[:last], :batch);
\else
\set word random(1, 1000)
SELECT dvds_browse_title((ARRAY[@TITLE_WORDS@])[:word], :batch);
\endif
\endif
\if :browses >= 5
\set kind random(0, 2)
\set batch random(1, 9)
\if :kind = 0
\set category random(1, 16)
SELECT dvds_browse_category(:category, :batch);
\elif :kind = 1
\set first random(1, 200)
\set last random(1, 200)
SELECT dvds_browse_actor((ARRAY[@ACTOR_FIRST@])[:first] || ' ' || (ARRAY[@ACTOR_LAST@])[:last], :batch);
\else
\set word random(1, 1000)
SELECT dvds_browse_title((ARRAY[@TITLE_WORDS@])[:word], :batch);
\endif
\endif
\set items random(1, 9)
\set v1 random(0, :P + :POP * 9 - 1)
\set p1 case when :v1 < :P then :v1 + 1 else ((:v1 - :P) / 9 + 1) * 10000 end
\set q1 random(1, 3)
\if :items >= 2
\set v2 random(0, :P + :POP * 9 - 1)
\set p2 case when :v2 < :P then :v2 + 1 else ((:v2 - :P) / 9 + 1) * 10000 end
\set q2 random(1, 3)
\endif
\if :items >= 3
\set v3 random(0, :P + :POP * 9 - 1)
\set p3 case when :v3 < :P then :v3 + 1 else ((:v3 - :P) / 9 + 1) * 10000 end
\set q3 random(1, 3)
\endif
\if :items >= 4
\set v4 random(0, :P + :POP * 9 - 1)
\set p4 case when :v4 < :P then :v4 + 1 else ((:v4 - :P) / 9 + 1) * 10000 end
\set q4 random(1, 3)
\endif
\if :items >= 5
\set v5 random(0, :P + :POP * 9 - 1)
\set p5 case when :v5 < :P then :v5 + 1 else ((:v5 - :P) / 9 + 1) * 10000 end
\set q5 random(1, 3)
\endif
\if :items >= 6
\set v6 random(0, :P + :POP * 9 - 1)
\set p6 case when :v6 < :P then :v6 + 1 else ((:v6 - :P) / 9 + 1) * 10000 end
\set q6 random(1, 3)
\endif
\if :items >= 7
\set v7 random(0, :P + :POP * 9 - 1)
\set p7 case when :v7 < :P then :v7 + 1 else ((:v7 - :P) / 9 + 1) * 10000 end
\set q7 random(1, 3)
\endif
\if :items >= 8
\set v8 random(0, :P + :POP * 9 - 1)
\set p8 case when :v8 < :P then :v8 + 1 else ((:v8 - :P) / 9 + 1) * 10000 end
\set q8 random(1, 3)
\endif
\if :items >= 9
\set v9 random(0, :P + :POP * 9 - 1)
\set p9 case when :v9 < :P then :v9 + 1 else ((:v9 - :P) / 9 + 1) * 10000 end
\set q9 random(1, 3)
\endif
\if :items = 1
SELECT dvds_purchase(:cid, ARRAY[:p1]::int[], ARRAY[:q1]::int[]);
\elif :items = 2
SELECT dvds_purchase(:cid, ARRAY[:p1, :p2]::int[], ARRAY[:q1, :q2]::int[]);
\elif :items = 3
SELECT dvds_purchase(:cid, ARRAY[:p1, :p2, :p3]::int[], ARRAY[:q1, :q2, :q3]::int[]);
\elif :items = 4
SELECT dvds_purchase(:cid, ARRAY[:p1, :p2, :p3, :p4]::int[], ARRAY[:q1, :q2, :q3, :q4]::int[]);
\elif :items = 5
SELECT dvds_purchase(:cid, ARRAY[:p1, :p2, :p3, :p4, :p5]::int[], ARRAY[:q1, :q2, :q3, :q4, :q5]::int[]);
\elif :items = 6
SELECT dvds_purchase(:cid, ARRAY[:p1, :p2, :p3, :p4, :p5, :p6]::int[], ARRAY[:q1, :q2, :q3, :q4, :q5, :q6]::int[]);
\elif :items = 7
SELECT dvds_purchase(:cid, ARRAY[:p1, :p2, :p3, :p4, :p5, :p6, :p7]::int[], ARRAY[:q1, :q2, :q3, :q4, :q5, :q6, :q7]::int[]);
\elif :items = 8
SELECT dvds_purchase(:cid, ARRAY[:p1, :p2, :p3, :p4, :p5, :p6, :p7, :p8]::int[], ARRAY[:q1, :q2, :q3, :q4, :q5, :q6, :q7, :q8]::int[]);
\elif :items = 9
SELECT dvds_purchase(:cid, ARRAY[:p1, :p2, :p3, :p4, :p5, :p6, :p7, :p8, :p9]::int[], ARRAY[:q1, :q2, :q3, :q4, :q5, :q6, :q7, :q8, :q9]::int[]);
\endif
\endif
