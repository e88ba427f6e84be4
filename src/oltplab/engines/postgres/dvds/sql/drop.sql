-- Removes everything the build creates (used by 'oltplab dvds build --force'), including
-- functions of the same names left by other kits, whatever their arguments.
DROP TABLE IF EXISTS customers, orders, orderlines, cust_hist, products, inventory, categories,
    reorder, dvds_meta CASCADE;

DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure FROM pg_proc p
         WHERE p.pronamespace = current_schema()::regnamespace
           AND p.proname IN ('dvds_login', 'dvds_new_customer', 'dvds_browse_category',
                             'dvds_browse_actor', 'dvds_browse_title', 'dvds_purchase',
                             'dvds_restock')
    LOOP
        EXECUTE format('DROP ROUTINE %s', f);
    END LOOP;
END
$$;
