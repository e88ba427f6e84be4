-- Removes everything the build creates (used by 'oltplab tpcc build --force'), including
-- transaction functions of the same names left by other kits, whatever their arguments.
DROP TABLE IF EXISTS warehouse, district, customer, history, new_order, orders, order_line,
    item, stock, tpcc_meta CASCADE;

DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure FROM pg_proc p
         WHERE p.pronamespace = current_schema()::regnamespace
           AND p.proname IN ('neword', 'payment', 'ostat', 'delivery', 'slev',
                             'tpcc_neword_apply', 'tpcc_last_name')
    LOOP
        EXECUTE format('DROP ROUTINE %s', f);
    END LOOP;
END
$$;
