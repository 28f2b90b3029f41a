"""Table-level evidence: what the engines found for a table and for its columns, metrics and dimensions.

A question names columns more often than tables ("singers from France" -> singer.country),
so a table's evidence aggregates its children's: the best vector similarity of the
table or of a child (damped), plus the lexical coverage of the question by
engine R hits on the table and its children (each hit weighted by 1/ambiguity,
one contribution per matched search term).
"""

from __future__ import annotations

from collections import defaultdict

from fourengine.models import RankedAsset

CHILD_DAMPING = 0.9
LEXICAL_WEIGHT = 0.25
LEXICAL_CAP = 2.0
R_PREFIX = "r:"


def lexical_terms(ranked: RankedAsset) -> dict[str, float]:
    return {k[len(R_PREFIX) :]: v for k, v in ranked.features.items() if k.startswith(R_PREFIX)}


def table_evidence(
    candidates: dict[str, RankedAsset],
    similarity: dict[str, float] | None = None,
) -> dict[str, float]:
    """Evidence score per table asset id (tables known directly or through a child); ``similarity`` gives
    the vector similarity of tables that are not candidates themselves."""
    similarity = similarity or {}
    vector: dict[str, float] = defaultdict(float)
    lexical: dict[str, dict[str, float]] = defaultdict(dict)
    for ranked in candidates.values():
        owner = ranked.asset.table_id
        if owner is None:
            continue
        v = ranked.features.get("v", 0.0)
        if ranked.asset.asset_type != "table":
            v *= CHILD_DAMPING
        vector[owner] = max(vector[owner], v)
        terms = lexical[owner]
        for term, weight in lexical_terms(ranked).items():
            terms[term] = max(terms.get(term, 0.0), weight)
    for owner in list(vector):
        vector[owner] = max(vector[owner], similarity.get(owner, 0.0))
    out: dict[str, float] = {}
    for owner in set(vector) | set(lexical):
        lex = min(sum(lexical[owner].values()), LEXICAL_CAP)
        out[owner] = vector[owner] + LEXICAL_WEIGHT * lex
    return out
