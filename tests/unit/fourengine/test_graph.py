"""Engine G's planner on a small hand-made graph."""

from fourengine.engines.graph import JoinGraph
from fourengine.models import JoinEdge


def _edge(a: str, b: str, risk: str = "low") -> JoinEdge:
    return JoinEdge(f"{a}->{b}", f"table:{a}", f"table:{b}", f"{a}.{b}_id = {b}.id", "many_to_one", risk)


GRAPH = JoinGraph(
    [
        _edge("orders", "customers"),
        _edge("orders", "regions"),
        _edge("customers", "regions"),
        _edge("items", "orders"),
        _edge("items", "products"),
        _edge("orders", "items", "high"),
        _edge("island", "atoll"),
    ]
)


def test_plan_connects_terminals_from_the_root() -> None:
    plan = GRAPH.plan(["table:orders", "table:customers", "table:regions"], depth=3)
    pairs = {frozenset((e.left, e.right)) for e in plan.edges}
    assert pairs == {frozenset(("table:orders", "table:customers")), frozenset(("table:orders", "table:regions"))}
    assert plan.bridge_tables == [] and plan.unreachable == []


def test_plan_adds_bridge_tables_and_prefers_low_fanout_edges() -> None:
    plan = GRAPH.plan(["table:products", "table:regions"], depth=3)
    assert plan.bridge_tables == ["table:items", "table:orders"]
    assert all(e.fanout_risk == "low" for e in plan.edges)  # items->orders, not the high orders->items
    assert plan.risk == "low"


def test_plan_reports_unreachable_and_depth_limited_terminals() -> None:
    assert GRAPH.plan(["table:orders", "table:atoll"], depth=3).unreachable == ["table:atoll"]
    assert GRAPH.plan(["table:products", "table:regions"], depth=2).unreachable == ["table:regions"]


def test_walk_is_depth_limited() -> None:
    hops = GRAPH.walk(["table:products"], depth=2)
    assert hops == {"table:products": 0, "table:items": 1, "table:orders": 2}
