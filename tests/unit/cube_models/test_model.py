"""Model loading and validation: lookups, time dimensions, and errors that name file, cube and member."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cube_models.errors import ModelError
from cube_models.model import Dimension, Measure, Segment, load_model
from cubesage_core.settings import REPO_ROOT
from tests.unit.cube_models.helpers import base_doc, write_model

DEMO = REPO_ROOT / "demo" / "model"


def test_demo_model_loads_with_lookups() -> None:
    model = load_model(DEMO)
    assert set(model.cubes) == {
        "orders",
        "order_items",
        "customers",
        "products",
        "regions",
        "payments",
        "refunds",
        "revenue",
    }
    gmv = model.member("order_items.gmv")
    assert isinstance(gmv, Measure) and gmv.type == "sum" and gmv.cube == "order_items" and gmv.title == "GMV"
    assert gmv.meta["certified"] is True and gmv.filters
    assert isinstance(model.member("orders.status"), Dimension)
    assert isinstance(model.member("orders.completed"), Segment)
    assert model.member("orders.order_id").primary_key
    assert {m.path for m in model.measures()} >= {"orders.count", "order_items.aov", "revenue.revenue"}
    assert len(model.dimensions()) > 20


def test_time_dimension_for_follows_meta_own_cube_and_joins() -> None:
    model = load_model(DEMO)
    assert model.time_dimension_for("customers.new_customers") == "customers.signup_date"  # meta
    assert model.time_dimension_for("orders.count") == "orders.order_ts"  # own cube
    assert model.time_dimension_for("order_items.gmv") == "orders.order_ts"  # via many_to_one
    assert model.time_dimension_for("refunds.total_amount") == "refunds.refund_ts"
    assert model.time_dimension_for("regions.count") is None
    assert model.time_dimension_for("orders.status") is None


def test_a_time_dimension_named_without_its_cube_in_meta_is_the_measures_own_cubes(tmp_path: Path) -> None:
    doc = base_doc()
    doc["cubes"][0]["dimensions"].append({"name": "shipped", "sql": "shipped", "type": "time"})
    doc["cubes"][0]["measures"][1]["meta"] = {"time_dimension": "shipped"}
    model = load_model(write_model(tmp_path / "m", doc))
    assert model.time_dimension_for("a.total") == "a.shipped"  # a member path, as the trend query needs
    assert model.time_dimension_for("a.count") == "a.ts"


def test_load_is_cached_per_mtime(tmp_path: Path) -> None:
    folder = write_model(tmp_path / "m", base_doc())
    first = load_model(folder)
    assert load_model(folder) is first
    doc = base_doc()
    doc["cubes"][1]["dimensions"].append({"name": "extra", "sql": "extra", "type": "string"})
    time.sleep(0.01)
    write_model(folder, doc)
    second = load_model(folder)
    assert second is not first and second.find_member("b.extra") is not None


def _error(tmp_path: Path, doc: dict) -> ModelError:
    with pytest.raises(ModelError) as info:
        load_model(write_model(tmp_path / "bad", doc))
    return info.value


def test_unknown_member_in_measure_sql_points_to_file_cube_member(tmp_path: Path) -> None:
    doc = base_doc()
    doc["cubes"][0]["measures"].append({"name": "ratio", "type": "number", "sql": "{total} / {nope}"})
    err = _error(tmp_path, doc)
    assert err.file.endswith("model.yml") and err.cube == "a" and err.member == "ratio"
    assert "nope" in str(err) and "model.yml" in str(err)


def test_unknown_cube_in_reference(tmp_path: Path) -> None:
    doc = base_doc()
    doc["cubes"][0]["dimensions"].append({"name": "x", "type": "string", "sql": "{zzz.label}"})
    assert "unknown cube 'zzz'" in str(_error(tmp_path, doc))


def test_join_cycle_is_an_error(tmp_path: Path) -> None:
    doc = base_doc()
    doc["cubes"].append(
        {
            "name": "c",
            "sql_table": "s.c",
            "joins": [{"name": "a", "relationship": "many_to_one", "sql": "{CUBE}.a_id = {a}.id"}],
            "dimensions": [{"name": "id", "sql": "id", "type": "number", "primary_key": True}],
        }
    )
    doc["cubes"][1]["joins"] = [{"name": "c", "relationship": "many_to_one", "sql": "{CUBE}.c_id = {c}.id"}]
    err = _error(tmp_path, doc)
    assert "join cycle" in str(err) and "->" in str(err)


def test_reference_cycle_is_an_error(tmp_path: Path) -> None:
    doc = base_doc()
    doc["cubes"][0]["measures"] += [
        {"name": "m1", "type": "number", "sql": "{m2} + 1"},
        {"name": "m2", "type": "number", "sql": "{m1} + 1"},
    ]
    assert "reference cycle" in str(_error(tmp_path, doc))


def test_missing_primary_key_in_one_to_many_join(tmp_path: Path) -> None:
    doc = base_doc()
    doc["cubes"][0].pop("joins")
    doc["cubes"][1]["joins"] = [{"name": "a", "relationship": "one_to_many", "sql": "{CUBE}.id = {a}.b_id"}]
    doc["cubes"][1]["dimensions"][0]["primary_key"] = False
    err = _error(tmp_path, doc)
    assert "no primary key" in str(err) and "one_to_many join b->a" in str(err) and err.cube == "b"


@pytest.mark.parametrize("where", ["member", "cube"])
def test_duplicated_names(tmp_path: Path, where: str) -> None:
    doc = base_doc()
    if where == "member":
        doc["cubes"][0]["measures"].append({"name": "total", "type": "sum", "sql": "x"})
        assert "duplicated member name" in str(_error(tmp_path, doc))
    else:
        write_model(tmp_path / "bad", {"cubes": [doc["cubes"][1]]}, name="other.yml")
        assert "duplicated cube name" in str(_error(tmp_path, doc))


@pytest.mark.parametrize(
    "mutate,expected",
    [
        (
            lambda d: d["cubes"][0]["measures"].append({"name": "x", "type": "median", "sql": "a"}),
            "unknown measure type",
        ),
        (
            lambda d: d["cubes"][0]["dimensions"].append({"name": "x", "type": "geo", "sql": "a"}),
            "unknown dimension type",
        ),
        (lambda d: d["cubes"][0]["joins"].append({"name": "b2", "relationship": "many", "sql": "1=1"}), "relationship"),
        (
            lambda d: d["cubes"][0]["joins"].__setitem__(
                0, {"name": "zz", "relationship": "belongsTo", "sql": "1 = 1"}
            ),
            "unknown cube 'zz'",
        ),
        (lambda d: d["cubes"][0].pop("sql_table"), "exactly one of"),
        (lambda d: d["cubes"][0]["measures"].append({"name": "y", "type": "sum"}), "needs 'sql'"),
        (
            lambda d: d["cubes"][0]["dimensions"].append({"name": "z", "type": "string", "sql": "a +* ("}),
            "does not parse",
        ),
        # options that change numbers are refused, never silently ignored
        (
            lambda d: d["cubes"][0]["measures"].append({"name": "f", "type": "count", "filters": [{"member": "a.x"}]}),
            "each measure filter needs 'sql'",
        ),
        (
            lambda d: d["cubes"][0]["measures"].append({"name": "t", "type": "sum", "sql": "a", "multi_stage": True}),
            "measure option multi_stage is not supported",
        ),
        (
            lambda d: d["cubes"][0]["dimensions"].append(
                {"name": "c", "type": "string", "sql": "a", "case": {"when": [{"sql": "a > 1", "label": "x"}]}}
            ),
            "dimension option case is not supported",
        ),
        (
            lambda d: d["cubes"][0]["measures"].append(
                {"name": "r", "type": "number", "sql": "{count}", "rolling_window": {"trailing": "7 day"}}
            ),
            "a number measure cannot have a rolling_window",
        ),
        (
            lambda d: d["cubes"][0]["measures"].append(
                {"name": "r", "type": "sum", "sql": "a", "rolling_window": {"trailing": "a week"}}
            ),
            "is not 'unbounded' or '<n> <unit>'",
        ),
        (
            lambda d: d["cubes"][0]["measures"].append(
                {"name": "r", "type": "sum", "sql": "a", "rolling_window": {"trailing": "7 day", "granularity": "day"}}
            ),
            "unsupported keys ['granularity']",
        ),
    ],
)
def test_invalid_definitions(tmp_path: Path, mutate, expected: str) -> None:
    doc = base_doc()
    mutate(doc)
    assert expected in str(_error(tmp_path, doc))


def test_newer_relationship_names_and_views(tmp_path: Path) -> None:
    doc = base_doc()
    doc["cubes"][0]["joins"][0]["relationship"] = "belongsTo"
    doc["views"] = [
        {
            "name": "v",
            "cubes": [
                {"join_path": "a", "includes": ["count", {"name": "total", "alias": "amount"}]},
                {"join_path": "a.b", "includes": ["label"], "prefix": True},
            ],
        }
    ]
    model = load_model(write_model(tmp_path / "m", doc))
    assert model.cubes["a"].joins[0].relationship == "many_to_one"
    assert model.resolve_path("v.amount") == "a.total"
    assert model.member("v.b_label").path == "b.label"
    assert "v.count" in model.member_paths()


def test_bad_yaml(tmp_path: Path) -> None:
    folder = tmp_path / "y"
    folder.mkdir()
    (folder / "x.yml").write_text("cubes: [\n  - name: a\n")
    with pytest.raises(ModelError, match="invalid YAML"):
        load_model(folder)


@pytest.mark.parametrize(
    "patch",
    [
        {"description": ["a", "b"]},
        {"title": {"x": 1}},
        {"joins": {"other": 1}},
        {"meta": [1]},
        {"measures": [{"name": "m", "type": ["sum"], "sql": "x"}]},
        {"measures": [{"name": "m", "type": "sum", "sql": ["x"]}]},
        {"dimensions": [{"name": "d", "type": "string", "sql": ""}]},
        {"dimensions": [{"name": "d", "type": "string", "sql": "x", "title": True}]},
        {"joins": [{"name": ["x"], "sql": "1 = 1", "relationship": "many_to_one"}]},
        {"joins": [{"name": "x", "sql": "1 = 1", "relationship": ["many_to_one"]}]},
    ],
)
def test_wrong_types_are_model_errors_not_crashes(tmp_path: Path, patch: dict) -> None:
    import yaml

    from cube_models.errors import CubeModelsError

    cube = {"name": "t", "sql_table": "warehouse.t", "measures": [{"name": "count", "type": "count"}], **patch}
    (tmp_path / "m.yml").write_text(yaml.safe_dump({"cubes": [cube]}))
    with pytest.raises(CubeModelsError):
        load_model(tmp_path)
