-- The demo warehouse "shop" (contract: ../shared/WAREHOUSE.md). Recreated by `cubesage demo load`.
DROP TABLE IF EXISTS warehouse.fact_refund, warehouse.fact_payment, warehouse.fact_order_item,
    warehouse.fact_order, warehouse.dim_product, warehouse.dim_customer, warehouse.dim_region CASCADE;

CREATE TABLE warehouse.dim_region (
    region_id   integer PRIMARY KEY,
    region_code text NOT NULL UNIQUE,
    name_en     text NOT NULL,
    name_zh     text NOT NULL
);
CREATE TABLE warehouse.dim_customer (
    customer_id   integer PRIMARY KEY,
    customer_name text NOT NULL,
    segment       text NOT NULL,
    region_id     integer NOT NULL REFERENCES warehouse.dim_region(region_id),
    city          text NOT NULL,
    signup_date   date NOT NULL
);
CREATE TABLE warehouse.dim_product (
    product_id   integer PRIMARY KEY,
    product_name text NOT NULL,
    category     text NOT NULL,
    brand        text NOT NULL,
    unit_price   numeric(10,2) NOT NULL,
    launched_on  date NOT NULL
);
CREATE TABLE warehouse.fact_order (
    order_id    integer PRIMARY KEY,
    customer_id integer NOT NULL REFERENCES warehouse.dim_customer(customer_id),
    region_id   integer NOT NULL REFERENCES warehouse.dim_region(region_id),
    channel     text NOT NULL,
    status      text NOT NULL,
    order_ts    timestamp NOT NULL
);
CREATE TABLE warehouse.fact_order_item (
    order_item_id integer PRIMARY KEY,
    order_id      integer NOT NULL REFERENCES warehouse.fact_order(order_id),
    product_id    integer NOT NULL REFERENCES warehouse.dim_product(product_id),
    quantity      integer NOT NULL,
    unit_price    numeric(10,2) NOT NULL,
    discount      numeric(4,3) NOT NULL,
    amount        numeric(12,2) NOT NULL
);
CREATE TABLE warehouse.fact_payment (
    payment_id integer PRIMARY KEY,
    order_id   integer NOT NULL REFERENCES warehouse.fact_order(order_id),
    method     text NOT NULL,
    amount     numeric(12,2) NOT NULL,
    paid_ts    timestamp NOT NULL
);
CREATE TABLE warehouse.fact_refund (
    refund_id integer PRIMARY KEY,
    order_id  integer NOT NULL REFERENCES warehouse.fact_order(order_id),
    amount    numeric(12,2) NOT NULL,
    reason    text NOT NULL,
    refund_ts timestamp NOT NULL
);
