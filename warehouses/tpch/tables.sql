-- TPC-H tables (TPC-H specification 2.x, section 1.4), created in the pack's schema (search_path is set
-- by load.py). Keys and foreign keys are added by constraints.sql after the bulk load.
CREATE TABLE region (
    r_regionkey integer NOT NULL,
    r_name      text    NOT NULL,
    r_comment   text
);
CREATE TABLE nation (
    n_nationkey integer NOT NULL,
    n_name      text    NOT NULL,
    n_regionkey integer NOT NULL,
    n_comment   text
);
CREATE TABLE supplier (
    s_suppkey   integer       NOT NULL,
    s_name      text          NOT NULL,
    s_address   text          NOT NULL,
    s_nationkey integer       NOT NULL,
    s_phone     text          NOT NULL,
    s_acctbal   numeric(15,2) NOT NULL,
    s_comment   text
);
CREATE TABLE customer (
    c_custkey    integer       NOT NULL,
    c_name       text          NOT NULL,
    c_address    text          NOT NULL,
    c_nationkey  integer       NOT NULL,
    c_phone      text          NOT NULL,
    c_acctbal    numeric(15,2) NOT NULL,
    c_mktsegment text          NOT NULL,
    c_comment    text
);
CREATE TABLE part (
    p_partkey     integer       NOT NULL,
    p_name        text          NOT NULL,
    p_mfgr        text          NOT NULL,
    p_brand       text          NOT NULL,
    p_type        text          NOT NULL,
    p_size        integer       NOT NULL,
    p_container   text          NOT NULL,
    p_retailprice numeric(15,2) NOT NULL,
    p_comment     text
);
CREATE TABLE partsupp (
    ps_partkey    integer       NOT NULL,
    ps_suppkey    integer       NOT NULL,
    ps_availqty   integer       NOT NULL,
    ps_supplycost numeric(15,2) NOT NULL,
    ps_comment    text
);
CREATE TABLE orders (
    o_orderkey      integer       NOT NULL,
    o_custkey       integer       NOT NULL,
    o_orderstatus   char(1)       NOT NULL,
    o_totalprice    numeric(15,2) NOT NULL,
    o_orderdate     date          NOT NULL,
    o_orderpriority text          NOT NULL,
    o_clerk         text          NOT NULL,
    o_shippriority  integer       NOT NULL,
    o_comment       text
);
CREATE TABLE lineitem (
    l_orderkey      integer       NOT NULL,
    l_partkey       integer       NOT NULL,
    l_suppkey       integer       NOT NULL,
    l_linenumber    integer       NOT NULL,
    l_quantity      numeric(15,2) NOT NULL,
    l_extendedprice numeric(15,2) NOT NULL,
    l_discount      numeric(15,2) NOT NULL,
    l_tax           numeric(15,2) NOT NULL,
    l_returnflag    char(1)       NOT NULL,
    l_linestatus    char(1)       NOT NULL,
    l_shipdate      date          NOT NULL,
    l_commitdate    date          NOT NULL,
    l_receiptdate   date          NOT NULL,
    l_shipinstruct  text          NOT NULL,
    l_shipmode      text          NOT NULL,
    l_comment       text
);
