"""The rows behind a mixed question's aggregate (router.behind): restricted as the aggregate is, or refused
when they cannot be (never listed unfiltered)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cube_models.model import SemanticModel, load_model
from router.behind import _aggregate_filters, _behind_extreme, _counted_rows
from router.parse.reading import Reading
from router.tables import ResultTable
from tests.unit.router.test_parse import MODEL, TODAY
from tests.unit.router.test_parse_league import MODEL as LEAGUE
from tests.unit.router.test_parse_league import SALARIES


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> SemanticModel:
    folder: Path = tmp_path_factory.mktemp("model")
    (folder / "shop.yml").write_text(
        MODEL
        + """
  - name: suppliers
    title: Suppliers
    sql_table: shop.suppliers
    dimensions:
      - {name: supplier_id, sql: supplier_id, type: number, primary_key: true}
      - {name: rating, sql: rating, type: number}
    measures:
      - {name: count, type: count}
      - {name: good_count, type: count, filters: [{sql: "{CUBE}.rating > 3"}]}
""",
        encoding="utf-8",
    )
    return load_model(folder)


NO_ROWS = ResultTable([], [])


def _listing(cube: str) -> Reading:
    return Reading("...", "en", TODAY, listing=cube, intent="detail")


def test_the_aggregate_filters_restrict_its_rows(model: SemanticModel) -> None:
    reading = _listing("orders")
    _aggregate_filters(
        reading,
        NO_ROWS,
        {
            "measures": ["orders.revenue"],
            "segments": ["orders.late"],
            "filters": [
                {"member": "nations.name", "operator": "equals", "values": ["GERMANY"]},
            ],
        },
        model,
    )
    assert [(f.member, f.values) for f in reading.filters] == [("nations.name", ["GERMANY"])]
    assert reading.segments == ["orders.late"] and reading.refusal is None


def test_rows_the_model_cannot_restrict_are_refused(model: SemanticModel) -> None:
    reading = _listing("suppliers")
    _aggregate_filters(
        reading,
        NO_ROWS,
        {
            "measures": ["orders.revenue"],
            "filters": [{"member": "nations.name", "operator": "equals", "values": ["GERMANY"]}],
        },
        model,
    )
    assert reading.refusal and "nations.name" in reading.refusal


def test_the_rows_behind_a_maximum_are_those_holding_its_value(model: SemanticModel) -> None:
    query, table = {"measures": ["orders.max_total"]}, ResultTable(["orders.max_total"], [[950.5]])
    reading = _listing("customers")
    _behind_extreme(reading, table, query, model)
    assert [(f.member, f.values) for f in reading.filters] == [("orders.total", ["950.5"])]
    assert reading.columns == ["orders.order_id", "orders.total"] and reading.refusal is None
    unjoined = _listing("suppliers")  # no join reaches the orders: refused, not listed unfiltered
    _behind_extreme(unjoined, table, query, model)
    assert unjoined.refusal and not unjoined.filters
    grouped = _listing("orders")  # a grouped maximum's rows are its groups' (``_behind_aggregate``)
    _behind_extreme(grouped, table, {**query, "dimensions": ["nations.name"]}, model)
    assert grouped.refusal is None and not grouped.filters


def test_undated_rows_take_the_aggregate_period(model: SemanticModel) -> None:
    query = {
        "measures": ["orders.max_total"],
        "timeDimensions": [{"dimension": "orders.ordered_at", "dateRange": ["2024-01-01", "2024-12-31"]}],
    }
    undated = _listing("customers")
    _aggregate_filters(undated, NO_ROWS, query, model)
    assert [(f.member, f.operator) for f in undated.filters] == [("orders.ordered_at", "inDateRange")]
    dated = _listing("orders")  # rows with a date of their own keep the question's dating
    _aggregate_filters(dated, NO_ROWS, query, model)
    assert not dated.filters


def test_the_rows_a_filtered_count_counts_are_its_segments_or_refused(model: SemanticModel) -> None:
    late = _listing("orders")
    _counted_rows(late, NO_ROWS, {"measures": ["orders.late_count"], "dimensions": ["nations.name"]}, model)
    assert late.segments == ["orders.late"] and late.refusal is None
    good = _listing("suppliers")  # no segment holds the count's condition: refused, not listed without it
    _counted_rows(good, NO_ROWS, {"measures": ["suppliers.good_count"]}, model)
    assert good.refusal and "segment" in good.refusal and not good.segments
    plain = _listing("orders")  # a count without filters lists the rows as they are
    _counted_rows(plain, NO_ROWS, {"measures": ["orders.count"]}, model)
    assert plain.refusal is None and not plain.segments


def test_an_ungrouped_maximum_is_not_drilled_into_every_row_it_spans(model: SemanticModel) -> None:
    from types import SimpleNamespace

    from router.pipeline import Pipeline

    drilled: list[dict] = []
    pipeline = Pipeline.__new__(Pipeline)
    pipeline.c = SimpleNamespace(model=lambda: model, drill=lambda query, *a: drilled.append(query))
    aggregate = SimpleNamespace(cube_query={"measures": ["orders.max_total"]}, rows=[{"orders.max_total": 950.5}])
    result = SimpleNamespace(aggregate=aggregate, understanding=SimpleNamespace(normalized="..."))
    assert pipeline._drill(result, {}, TODAY) is None and not drilled  # the detail path lists the row holding it
    counted = SimpleNamespace(cube_query={"measures": ["orders.count"]}, rows=[{"orders.count": 3}])
    pipeline.detail_env = SimpleNamespace(policy=SimpleNamespace(max_limit=10))
    pipeline._drill(SimpleNamespace(aggregate=counted, understanding=result.understanding), {}, TODAY)
    assert drilled == [{"measures": ["orders.count"]}]  # a count's rows are drilled into


def test_a_bound_on_a_measure_of_each_listed_row_bounds_its_column_else_is_refused(model: SemanticModel) -> None:
    bound = {"member": "orders.revenue", "operator": "gt", "values": ["5"]}
    reading = _listing("orders")  # "how many orders had revenue over 5, and list them": counted per order
    _aggregate_filters(
        reading, NO_ROWS, {"measures": ["orders.revenue"], "dimensions": ["orders.order_id"], "filters": [bound]}, model
    )
    assert [(f.member, f.operator, f.values) for f in reading.filters] == [("orders.total", "gt", ["5"])]
    customers = _listing("customers")  # the customers whose orders' revenue passes: not a column of theirs
    _aggregate_filters(customers, NO_ROWS, {"measures": ["orders.revenue"], "filters": [bound]}, model)
    assert customers.refusal and "orders.revenue" in customers.refusal


def test_the_rows_behind_one_period_are_dated_by_it(model: SemanticModel) -> None:
    from router.behind import _grouped_period

    query = {
        "measures": ["orders.revenue"],
        "timeDimensions": [{"dimension": "orders.ordered_at", "granularity": "month"}],
    }
    one = ResultTable(["orders.ordered_at.month", "orders.revenue"], [["2024-02-01T00:00:00.000", 10.0]])
    reading = _listing("orders")
    _grouped_period(reading, one, query, model)
    assert [(f.member, f.operator, f.values) for f in reading.filters] == [
        ("orders.ordered_at", "inDateRange", ["2024-02-01", "2024-02-29"])
    ]
    two = ResultTable(one.columns, [*one.rows, ["2024-03-01T00:00:00.000", 9.0]])
    several = _listing("orders")  # rows of two months are not merged into one listing
    _grouped_period(several, two, query, model)
    assert several.refusal and not several.filters


def test_rows_apart_from_the_aggregate_are_listed_as_the_rows_referring_to_both(tmp_path: Path) -> None:
    (tmp_path / "league.yml").write_text(LEAGUE + SALARIES, encoding="utf-8")
    league = load_model(tmp_path)
    reading = _listing("people")  # "..., and who were their five highest-paid players that year?"
    reading.columns = ["people.player_id", "people.full_name", "salaries.salary", "awards.season"]
    reading.order = [("salaries.salary", "desc")]
    query = {
        "measures": ["salaries.total"],
        "filters": [{"member": "teams.name", "operator": "equals", "values": ["X"]}],
    }
    _aggregate_filters(reading, NO_ROWS, query, league)
    # players belong to no team: one row per salary, each naming its player; not the awards' dates beside them
    assert reading.refusal is None and reading.listing == "salaries"
    assert reading.columns == ["salaries.salary_key", "people.player_id", "people.full_name", "salaries.salary"]
    assert [(f.member, f.values) for f in reading.filters] == [("teams.name", ["X"])]


def test_a_bound_on_a_ratio_of_each_listed_row_bounds_and_shows_its_own_value(model: SemanticModel) -> None:
    reading = _listing("orders")  # "how many orders had a delay ratio over 50%, and which were they?"
    query = {  # counted: the orders grouped by their key, those whose ratio passes
        "measures": ["orders.late_ratio"],
        "dimensions": ["orders.order_id"],
        "filters": [{"member": "orders.late_ratio", "operator": "gt", "values": ["0.5"]}],
    }
    _aggregate_filters(reading, NO_ROWS, query, model)
    assert reading.refusal is None and reading.row_measures == ["orders.late_ratio"]
    assert [(f.member, f.operator, f.values) for f in reading.filters] == [("orders.late_ratio", "gt", ["0.5"])]
