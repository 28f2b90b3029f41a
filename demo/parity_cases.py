"""Parity cases over the demo model (demo/model): Cube queries the built-in compiler must answer as Cube does,
covering measure and dimension types, joins, filters, time dimensions, ordering, limits and totals. Used by
tests/integration/cube_models/test_parity.py and ``cubesage bench compile``."""

from __future__ import annotations

from typing import Any

from cube_models.parity import ParityCase


def _q(**kw: Any) -> dict[str, Any]:
    return kw


Q1 = ["2024-01-01", "2024-03-31"]
_TD_MONTH = {"dimension": "orders.order_ts", "granularity": "month", "dateRange": ["2024-01-01", "2024-06-30"]}

PARITY_CASES: list[ParityCase] = [
    # measure types
    ParityCase("count_distinct_by_status", _q(measures=["orders.count"], dimensions=["orders.status"])),
    ParityCase(
        "count_with_filters",
        _q(
            measures=[
                "orders.completed_count",
                "orders.refunded_count",
                "orders.cancelled_count",
                "orders.pending_count",
            ]
        ),
    ),
    ParityCase("count_distinct_with_filter", _q(measures=["orders.active_customers"], dimensions=["orders.channel"])),
    ParityCase("sum_with_filter", _q(measures=["order_items.gmv"])),
    ParityCase(
        "number_derived_aov",
        _q(
            measures=["order_items.aov", "order_items.gmv", "order_items.completed_orders"],
            dimensions=["orders.channel"],
        ),
    ),
    ParityCase("number_derived_refund_rate", _q(measures=["orders.refund_rate"], dimensions=["regions.name_en"])),
    ParityCase(
        "avg_min_max",
        _q(
            measures=[
                "products.avg_list_price",
                "products.min_list_price",
                "products.max_list_price",
                "products.count",
            ],
            dimensions=["products.category"],
        ),
    ),
    ParityCase(
        "avg_discount", _q(measures=["order_items.avg_discount", "order_items.line_count", "order_items.units_sold"])
    ),
    ParityCase(
        "sum_payments_by_method",
        _q(measures=["payments.total_amount", "payments.avg_amount", "payments.count"], dimensions=["payments.method"]),
    ),
    ParityCase(
        "refunds_by_reason", _q(measures=["refunds.count", "refunds.total_amount"], dimensions=["refunds.reason"])
    ),
    ParityCase("revenue_sql_cube", _q(measures=["revenue.revenue"], dimensions=["revenue.kind"])),
    ParityCase(
        "new_customers_by_year",
        _q(
            measures=["customers.new_customers"],
            timeDimensions=[{"dimension": "customers.signup_date", "granularity": "year"}],
        ),
    ),
    # dimension types
    ParityCase("number_dimension", _q(measures=["order_items.line_count"], dimensions=["order_items.quantity"])),
    ParityCase("boolean_dimension", _q(measures=["customers.count"], dimensions=["customers.is_vip"])),
    ParityCase(
        "raw_time_dimension",
        _q(
            dimensions=["orders.order_id", "orders.order_ts"],
            filters=[{"member": "orders.order_id", "operator": "lt", "values": ["20"]}],
            order={"orders.order_id": "asc"},
        ),
    ),
    ParityCase("dimensions_only_default_order", _q(dimensions=["regions.region_code", "regions.name_zh"])),
    ParityCase(
        "primary_key_dimension",
        _q(dimensions=["products.product_id", "products.product_name"], limit=15, order={"products.product_id": "asc"}),
    ),
    # joins
    ParityCase("join_many_to_one", _q(measures=["orders.count"], dimensions=["customers.segment"])),
    ParityCase("join_two_hops", _q(measures=["order_items.gmv"], dimensions=["customers.segment", "regions.name_en"])),
    ParityCase(
        "join_products", _q(measures=["order_items.gmv", "order_items.units_sold"], dimensions=["products.category"])
    ),
    ParityCase("join_chain_three", _q(measures=["payments.total_amount"], dimensions=["regions.name_en"])),
    ParityCase(
        "fanout_one_to_many_count_distinct",
        _q(measures=["orders.count", "order_items.gmv"], dimensions=["orders.channel"]),
    ),
    ParityCase("fanout_customers_count", _q(measures=["customers.count"], dimensions=["orders.status"])),
    ParityCase(
        "fanout_multiplied_sum",
        _q(measures=["payments.total_amount", "order_items.line_count"], dimensions=["payments.method"]),
    ),
    ParityCase(
        "fanout_two_dims_with_time",
        _q(
            measures=["payments.total_amount", "order_items.gmv"],
            dimensions=["payments.method", "orders.channel"],
            timeDimensions=[{"dimension": "orders.order_ts", "granularity": "year"}],
        ),
    ),
    ParityCase("fanout_multiplied_sum_only", _q(measures=["payments.total_amount"], dimensions=["products.category"])),
    ParityCase(
        "fanout_multiplied_no_dims",
        _q(
            measures=["payments.total_amount", "payments.avg_amount"],
            filters=[{"member": "order_items.quantity", "operator": "gte", "values": ["3"]}],
        ),
    ),
    ParityCase(
        "fanout_mixed_cubes",
        _q(measures=["customers.count", "orders.count", "customers.new_customers"], dimensions=["orders.channel"]),
    ),
    ParityCase(
        "fanout_regular_and_multiplied",
        _q(measures=["payments.count", "payments.total_amount", "order_items.gmv"], dimensions=["orders.channel"]),
    ),
    ParityCase("revenue_by_region", _q(measures=["revenue.revenue"], dimensions=["regions.name_zh"])),
    ParityCase(
        "customers_by_region", _q(measures=["customers.count"], dimensions=["regions.name_en", "customers.segment"])
    ),
    # segments
    ParityCase(
        "segment_completed", _q(measures=["orders.count"], segments=["orders.completed"], dimensions=["orders.channel"])
    ),
    ParityCase("segments_two", _q(measures=["orders.count"], segments=["orders.online", "orders.refunded"])),
    ParityCase(
        "segment_other_cube",
        _q(measures=["orders.count"], segments=["customers.vip"], dimensions=["regions.region_code"]),
    ),
    # filter operators
    ParityCase(
        "op_equals",
        _q(
            measures=["orders.count"],
            filters=[{"member": "orders.status", "operator": "equals", "values": ["completed"]}],
        ),
    ),
    ParityCase(
        "op_equals_many",
        _q(
            measures=["orders.count"],
            dimensions=["orders.status"],
            filters=[{"member": "orders.status", "operator": "equals", "values": ["completed", "refunded"]}],
        ),
    ),
    ParityCase(
        "op_not_equals",
        _q(
            measures=["orders.count"],
            dimensions=["orders.status"],
            filters=[{"member": "orders.status", "operator": "notEquals", "values": ["pending"]}],
        ),
    ),
    ParityCase(
        "op_not_equals_many",
        _q(
            measures=["orders.count"],
            dimensions=["orders.channel"],
            filters=[{"member": "orders.channel", "operator": "notEquals", "values": ["web", "app"]}],
        ),
    ),
    ParityCase(
        "op_contains",
        _q(
            measures=["customers.count"],
            filters=[{"member": "customers.customer_name", "operator": "contains", "values": ["li"]}],
        ),
    ),
    ParityCase(
        "op_contains_many",
        _q(
            measures=["customers.count"],
            dimensions=["customers.segment"],
            filters=[{"member": "customers.city", "operator": "contains", "values": ["an", "HAI"]}],
        ),
    ),
    ParityCase(
        "op_not_contains",
        _q(
            measures=["products.count"],
            filters=[{"member": "products.product_name", "operator": "notContains", "values": ["a"]}],
        ),
    ),
    ParityCase(
        "op_starts_with",
        _q(
            measures=["products.count"],
            dimensions=["products.category"],
            filters=[{"member": "products.brand", "operator": "startsWith", "values": ["A", "n"]}],
        ),
    ),
    ParityCase(
        "op_ends_with",
        _q(
            measures=["products.count"],
            filters=[{"member": "products.product_name", "operator": "endsWith", "values": ["headphones"]}],
        ),
    ),
    ParityCase(
        "op_contains_wildcard_chars",
        _q(
            measures=["customers.count"],
            filters=[{"member": "customers.customer_name", "operator": "contains", "values": ["%", "_"]}],
        ),
    ),
    ParityCase(
        "op_gt_number",
        _q(
            measures=["order_items.line_count"],
            filters=[{"member": "order_items.amount", "operator": "gt", "values": ["500"]}],
        ),
    ),
    ParityCase(
        "op_gte_lte",
        _q(
            measures=["order_items.line_count", "order_items.gmv"],
            filters=[
                {"member": "order_items.quantity", "operator": "gte", "values": ["2"]},
                {"member": "order_items.quantity", "operator": "lte", "values": ["3"]},
            ],
        ),
    ),
    ParityCase(
        "op_lt",
        _q(
            measures=["products.count"],
            filters=[{"member": "products.unit_price", "operator": "lt", "values": ["20.5"]}],
        ),
    ),
    ParityCase(
        "op_not_set_on_join",
        _q(
            measures=["orders.count"],
            dimensions=["orders.status"],
            filters=[{"member": "refunds.refund_id", "operator": "notSet"}],
        ),
    ),
    ParityCase("op_set", _q(measures=["orders.count"], filters=[{"member": "customers.city", "operator": "set"}])),
    ParityCase(
        "op_in_date_range",
        _q(
            measures=["orders.count"],
            dimensions=["orders.status"],
            filters=[{"member": "orders.order_ts", "operator": "inDateRange", "values": Q1}],
        ),
    ),
    ParityCase(
        "op_not_in_date_range",
        _q(
            measures=["orders.count"],
            filters=[
                {"member": "orders.order_ts", "operator": "notInDateRange", "values": ["2023-02-01", "2025-05-31"]}
            ],
        ),
    ),
    ParityCase(
        "op_before_date",
        _q(
            measures=["refunds.count"],
            filters=[{"member": "refunds.refund_ts", "operator": "beforeDate", "values": ["2023-06-01"]}],
        ),
    ),
    ParityCase(
        "op_after_date",
        _q(
            measures=["payments.count"],
            filters=[{"member": "payments.paid_ts", "operator": "afterDate", "values": ["2025-06-01"]}],
        ),
    ),
    ParityCase(
        "op_date_on_date_column",
        _q(
            measures=["customers.count"],
            filters=[
                {"member": "customers.signup_date", "operator": "inDateRange", "values": ["2024-02-01", "2024-02-29"]}
            ],
        ),
    ),
    ParityCase(
        "filter_or_group",
        _q(
            measures=["orders.count"],
            dimensions=["orders.channel"],
            filters=[
                {
                    "or": [
                        {"member": "orders.status", "operator": "equals", "values": ["refunded"]},
                        {"member": "orders.channel", "operator": "equals", "values": ["store"]},
                    ]
                }
            ],
        ),
    ),
    ParityCase(
        "filter_and_or_nested",
        _q(
            measures=["order_items.gmv"],
            dimensions=["products.category"],
            filters=[
                {
                    "and": [
                        {"member": "regions.region_code", "operator": "equals", "values": ["east", "north"]},
                        {
                            "or": [
                                {"member": "orders.channel", "operator": "equals", "values": ["web"]},
                                {"member": "products.unit_price", "operator": "gt", "values": ["100"]},
                            ]
                        },
                    ]
                }
            ],
        ),
    ),
    ParityCase(
        "filter_dimension_key",
        _q(
            measures=["orders.count"],
            filters=[{"dimension": "orders.channel", "operator": "equals", "values": ["app"]}],
        ),
    ),
    ParityCase(
        "filter_measure_having",
        _q(
            measures=["orders.count"],
            dimensions=["customers.city"],
            filters=[{"member": "orders.count", "operator": "gt", "values": ["3000"]}],
        ),
    ),
    ParityCase(
        "filter_number_measure_having",
        _q(
            measures=["orders.refund_rate"],
            dimensions=["customers.city"],
            filters=[{"member": "orders.refund_rate", "operator": "lt", "values": ["0.07"]}],
        ),
    ),
    ParityCase(
        "filter_injection_value",
        _q(
            measures=["orders.count"],
            filters=[
                {"member": "orders.status", "operator": "equals", "values": ["'; drop table warehouse.fact_order; --"]}
            ],
        ),
    ),
    ParityCase(
        "filter_number_values",
        _q(measures=["orders.count"], filters=[{"member": "orders.region_id", "operator": "equals", "values": [1, 2]}]),
    ),
    # time dimensions
    ParityCase("granularity_month", _q(measures=["order_items.gmv"], timeDimensions=[_TD_MONTH])),
    ParityCase(
        "granularity_year",
        _q(measures=["orders.count"], timeDimensions=[{"dimension": "orders.order_ts", "granularity": "year"}]),
    ),
    ParityCase(
        "granularity_quarter",
        _q(
            measures=["order_items.gmv", "order_items.aov"],
            timeDimensions=[
                {"dimension": "orders.order_ts", "granularity": "quarter", "dateRange": ["2023-01-01", "2024-12-31"]}
            ],
        ),
    ),
    ParityCase(
        "granularity_week",
        _q(
            measures=["orders.count"],
            timeDimensions=[
                {"dimension": "orders.order_ts", "granularity": "week", "dateRange": ["2024-02-01", "2024-03-15"]}
            ],
        ),
    ),
    ParityCase(
        "granularity_day",
        _q(
            measures=["refunds.total_amount"],
            timeDimensions=[
                {"dimension": "refunds.refund_ts", "granularity": "day", "dateRange": ["2024-05-01", "2024-05-31"]}
            ],
        ),
    ),
    ParityCase(
        "granularity_hour",
        _q(
            measures=["orders.count"],
            timeDimensions=[
                {"dimension": "orders.order_ts", "granularity": "hour", "dateRange": ["2024-05-01", "2024-05-03"]}
            ],
        ),
    ),
    ParityCase(
        "granularity_minute",
        _q(
            measures=["orders.count"],
            timeDimensions=[
                {"dimension": "orders.order_ts", "granularity": "minute", "dateRange": ["2024-05-01", "2024-05-01"]}
            ],
        ),
    ),
    ParityCase(
        "granularity_second",
        _q(
            measures=["payments.count"],
            timeDimensions=[
                {"dimension": "payments.paid_ts", "granularity": "second", "dateRange": ["2024-05-01", "2024-05-02"]}
            ],
        ),
    ),
    ParityCase(
        "granularity_date_column",
        _q(
            measures=["customers.count"],
            timeDimensions=[
                {
                    "dimension": "customers.signup_date",
                    "granularity": "month",
                    "dateRange": ["2024-01-01", "2024-12-31"],
                }
            ],
        ),
    ),
    ParityCase("granularity_in_dimensions", _q(measures=["orders.count"], dimensions=["orders.order_ts.month"])),
    ParityCase(
        "two_granularities",
        _q(
            measures=["orders.count"],
            timeDimensions=[
                {"dimension": "orders.order_ts", "granularity": "year"},
                {"dimension": "orders.order_ts", "granularity": "quarter"},
            ],
        ),
    ),
    ParityCase(
        "time_dim_with_dimension",
        _q(measures=["order_items.gmv"], dimensions=["regions.name_en"], timeDimensions=[_TD_MONTH]),
    ),
    ParityCase(
        "date_range_only",
        _q(
            measures=["orders.count", "order_items.gmv"],
            timeDimensions=[{"dimension": "orders.order_ts", "dateRange": Q1}],
        ),
    ),
    ParityCase(
        "date_range_single_day",
        _q(measures=["orders.count"], timeDimensions=[{"dimension": "orders.order_ts", "dateRange": ["2024-03-08"]}]),
    ),
    ParityCase(
        "date_range_datetime",
        _q(
            measures=["orders.count"],
            timeDimensions=[
                {"dimension": "orders.order_ts", "dateRange": ["2024-03-08T06:00:00.000", "2024-03-08T18:30:00.000"]}
            ],
        ),
    ),
    ParityCase(
        "date_range_from_to_string",
        _q(
            measures=["order_items.gmv"],
            timeDimensions=[
                {"dimension": "orders.order_ts", "granularity": "month", "dateRange": "from 2024-01-01 to 2024-03-31"}
            ],
        ),
    ),
    ParityCase(
        "relative_last_year",
        _q(
            measures=["orders.count"],
            timeDimensions=[{"dimension": "orders.order_ts", "granularity": "month", "dateRange": "last year"}],
        ),
        real_clock=True,
    ),
    ParityCase(
        "relative_last_2_years",
        _q(
            measures=["order_items.gmv"],
            timeDimensions=[{"dimension": "orders.order_ts", "granularity": "quarter", "dateRange": "last 2 years"}],
        ),
        real_clock=True,
    ),
    ParityCase(
        "relative_this_year_empty",
        _q(measures=["orders.count"], timeDimensions=[{"dimension": "orders.order_ts", "dateRange": "this year"}]),
        real_clock=True,
    ),
    ParityCase(
        "relative_last_7_days",
        _q(measures=["orders.count"], timeDimensions=[{"dimension": "orders.order_ts", "dateRange": "last 7 days"}]),
        real_clock=True,
    ),
    # order, limit, offset, total
    ParityCase(
        "order_measure_desc_limit",
        _q(
            measures=["order_items.gmv"],
            dimensions=["products.product_name"],
            order={"order_items.gmv": "desc"},
            limit=10,
        ),
    ),
    ParityCase(
        "order_dimension_asc",
        _q(measures=["orders.count"], dimensions=["regions.region_code"], order=[["regions.region_code", "asc"]]),
    ),
    ParityCase(
        "order_two_keys",
        _q(
            measures=["orders.count"],
            dimensions=["orders.channel", "orders.status"],
            order=[["orders.channel", "desc"], ["orders.status", "asc"]],
        ),
    ),
    ParityCase(
        "order_time_desc",
        _q(
            measures=["orders.count"],
            timeDimensions=[{"dimension": "orders.order_ts", "granularity": "month"}],
            order={"orders.order_ts": "desc"},
            limit=5,
        ),
    ),
    ParityCase(
        "limit_offset",
        _q(
            measures=["orders.count"], dimensions=["customers.city"], order={"customers.city": "asc"}, limit=5, offset=3
        ),
    ),
    ParityCase(
        "total",
        _q(
            measures=["orders.count"],
            dimensions=["customers.city"],
            order={"customers.city": "asc"},
            limit=4,
            total=True,
        ),
    ),
    ParityCase(
        "total_with_offset",
        _q(
            measures=["order_items.gmv"],
            dimensions=["products.category"],
            order={"products.category": "asc"},
            limit=2,
            offset=1,
            total=True,
        ),
    ),
    ParityCase(
        "default_order_measure", _q(measures=["order_items.gmv", "orders.count"], dimensions=["regions.name_en"])
    ),
]
