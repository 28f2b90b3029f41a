-- Created after the bulk load (faster than maintaining them during COPY).
CREATE INDEX ON warehouse.dim_customer (region_id);
CREATE INDEX ON warehouse.dim_customer (customer_name);
CREATE INDEX ON warehouse.dim_product (product_name);
CREATE INDEX ON warehouse.fact_order (customer_id);
CREATE INDEX ON warehouse.fact_order (region_id);
CREATE INDEX ON warehouse.fact_order (order_ts);
CREATE INDEX ON warehouse.fact_order_item (order_id);
CREATE INDEX ON warehouse.fact_order_item (product_id);
CREATE INDEX ON warehouse.fact_payment (order_id);
CREATE INDEX ON warehouse.fact_refund (order_id);
GRANT USAGE ON SCHEMA warehouse TO cubesage_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA warehouse TO cubesage_reader;
ANALYZE warehouse.dim_region, warehouse.dim_customer, warehouse.dim_product, warehouse.fact_order,
    warehouse.fact_order_item, warehouse.fact_payment, warehouse.fact_refund;
