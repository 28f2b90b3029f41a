"""TEST HELPER: write the semantic assets of demo/model/*.yml into semlayer (asset ids as cube_models
exports them: table:<cube>, metric:<cube>.<measure>, dimension:<cube>.<dim>, segment:<cube>.<seg>,
join:<left>-><right>) plus join_edge rows. Used when ``cube_models.export`` is not available."""

from __future__ import annotations

from pathlib import Path

import yaml

from cubesage_core.db import connection
from cubesage_core.embeddings import Embedder
from fourengine.models import Asset
from fourengine.store import upsert_assets, upsert_join_edges

RISK = {"many_to_one": "low", "one_to_one": "low", "one_to_many": "high"}


def load_demo_assets(url: str, model_dir: Path, embedder: Embedder) -> int:
    assets: list[Asset] = []
    texts: list[str] = []
    edges = []
    for path in sorted(model_dir.glob("*.yml")):
        for cube in yaml.safe_load(path.read_text())["cubes"]:
            name, table = cube["name"], f"table:{cube['name']}"
            assets.append(Asset(table, "table", name, cube.get("title", name), cube.get("description", "")))
            texts.append(f"{cube.get('title', name)}: {cube.get('description', '')}")
            for kind, prefix in (("measures", "metric"), ("dimensions", "dimension"), ("segments", "segment")):
                for m in cube.get(kind) or []:
                    meta = {"type": m.get("type", ""), "primary_key": bool(m.get("primary_key"))}
                    title = m.get("title", m["name"].replace("_", " "))
                    assets.append(Asset(f"{prefix}:{name}.{m['name']}", prefix, f"{name}.{m['name']}", title,
                                        m.get("description", ""), table,
                                        bool((m.get("meta") or {}).get("certified")), meta))
                    texts.append(f"{cube.get('title', name)} {title}: {m.get('description', '')}")
            for join in cube.get("joins") or []:
                on = join["sql"].replace("{CUBE}", name).replace("{", "").replace("}", "")
                edge = {"edge_id": f"{name}->{join['name']}", "left_table": name, "right_table": join["name"],
                        "on_sql": on, "relationship": join["relationship"],
                        "fanout_risk": RISK.get(join["relationship"], "medium")}
                edges.append(edge)
                assets.append(Asset(f"join:{name}->{join['name']}", "join", edge["edge_id"],
                                    f"{name} to {join['name']}", on, None, False,
                                    {"left_table": table, "right_table": f"table:{join['name']}",
                                     "fanout_risk": edge["fanout_risk"], "relationship": join["relationship"]}))
                texts.append(f"join {name} to {join['name']} on {on}")
    with connection(url) as conn:
        parents = [(a, t) for a, t in zip(assets, texts, strict=True) if a.parent_id is None]
        children = [(a, t) for a, t in zip(assets, texts, strict=True) if a.parent_id is not None]
        for group in (parents, children):
            upsert_assets(conn, [a for a, _ in group], [t for _, t in group], embedder)
        upsert_join_edges(conn, edges)
    return len(assets)
