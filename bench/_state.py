"""What an attack must not change, as fingerprints: the semantic layer, terms, engine D's approved few-shots,
the SAG index, API keys, the warehouse's write counters and the model folder.

``fingerprint(url, model_dir)`` -> {part: digest}; :func:`changed` names the parts that differ. The audit log
and feedback proposals are expected to grow and are not part of it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from cubesage_core import db

PARTS = {
    "semantic_assets": "SELECT md5(coalesce(string_agg(asset_id || ':' || content_hash, ',' ORDER BY asset_id), '')) "
    "FROM semlayer.asset",
    "business_terms": "SELECT md5(coalesce(string_agg(term_id || ':' || canonical_term || ':' || "
    "coalesce(mapped_asset_id, ''), ',' ORDER BY term_id), '')) FROM semlayer.business_term",
    "approved_few_shots": "SELECT md5(coalesce(string_agg(id || ':' || question || ':' || "
    "coalesce(cube_query::text, '') || ':' || coalesce(sql, ''), ',' ORDER BY id), '')) "
    "FROM semlayer.dynamic_few_shot_cache WHERE approved",
    "sag_chunks": "SELECT md5(coalesce(string_agg(chunk_id, ',' ORDER BY chunk_id), '')) FROM sag.source_chunk",
    "api_keys": "SELECT md5(coalesce(string_agg(key_id || ':' || array_to_string(scopes, '+') || ':' || "
    "coalesce(revoked_at::text, ''), ',' ORDER BY key_id), '')) FROM semlayer.api_key",
}
WAREHOUSE_WRITES = (
    "SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::text FROM pg_stat_user_tables "
    "WHERE schemaname = ANY(%s)"
)


def fingerprint(url: str, model_dir: Path | None, schemas: list[str]) -> dict[str, str]:
    with db.connection(url) as conn:
        out = {name: str(db.one(conn.execute(query).fetchone())[0]) for name, query in PARTS.items()}
        out["warehouse_writes"] = str(db.one(conn.execute(WAREHOUSE_WRITES, (schemas,)).fetchone())[0])
    if model_dir is not None:
        digest = hashlib.sha256()
        for path in sorted(Path(model_dir).glob("*.y*ml")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
        out["model_files"] = digest.hexdigest()
    return out


def changed(before: dict[str, str], after: dict[str, str], ignore: tuple[str, ...] = ()) -> list[str]:
    return sorted(k for k in before if k not in ignore and before[k] != after.get(k))
