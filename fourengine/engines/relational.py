"""Engine R: exact / containment / trigram match of search terms against ``semlayer.business_term``.

One SQL round trip. A term matches when a search term's normalised key equals
one of its lexemes (canonical term + synonyms), when a Chinese lexeme occurs in
the raw question (jieba may segment differently), or when the trigram similarity
of an English key reaches the threshold. Each hit carries its mapped asset and
the ambiguity of the matched lexeme (how many distinct assets it maps to).
"""

from __future__ import annotations

import re
from collections import defaultdict

from psycopg import AsyncConnection

from fourengine.engines._rows import ASSET_COLUMNS, asset_from
from fourengine.model_terms import PREFIX as MODEL_TERM_PREFIX
from fourengine.models import TermHit

_SQL = f"""
WITH q(term) AS (SELECT DISTINCT unnest(%(terms)s::text[])),
lex AS (
    SELECT bt.term_id, bt.canonical_term, bt.mapped_asset_type, bt.mapped_asset_id, bt.filter_value,
           bt.definition, l.lexeme
    FROM semlayer.business_term bt
    CROSS JOIN LATERAL unnest(CASE WHEN cardinality(bt.lexemes) > 0 THEN bt.lexemes
                                   ELSE array_prepend(lower(bt.canonical_term), bt.synonyms) END) AS l(lexeme)
),
hits AS (
    SELECT lex.*, q.term AS matched, 'exact' AS match, 1.0::float8 AS score
    FROM lex JOIN q ON q.term = lex.lexeme
    UNION ALL
    SELECT lex.*, lex.lexeme, 'contains', 0.9
    FROM lex WHERE char_length(lex.lexeme) >= 2 AND lex.lexeme ~ '[\\u3400-\\u9fff]'
               AND strpos(%(raw)s, lex.lexeme) > 0
    UNION ALL
    SELECT lex.*, q.term, 'trigram', similarity(q.term, lex.lexeme)::float8
    FROM lex JOIN q ON char_length(q.term) >= 4 AND q.term <> lex.lexeme
                   AND lex.lexeme !~ '[\\u3400-\\u9fff]' AND similarity(q.term, lex.lexeme) >= %(trgm)s
)
SELECT DISTINCT ON (h.term_id, h.matched)
       h.term_id, h.canonical_term, h.matched, h.match, h.score, h.mapped_asset_type, h.mapped_asset_id,
       h.filter_value, h.definition, {ASSET_COLUMNS}
FROM hits h
LEFT JOIN semlayer.asset a ON a.asset_id = h.mapped_asset_id
WHERE %(scope)s::text IS NULL OR a.meta->>'namespace' = %(scope)s
ORDER BY h.term_id, h.matched, h.score DESC
"""


async def match_terms(
    conn: AsyncConnection,
    search_terms: list[str],
    raw_question: str,
    *,
    trigram_threshold: float = 0.6,
    scope: str | None = None,
) -> list[TermHit]:
    """Business terms matched by ``search_terms`` (normalised keys) or contained in ``raw_question``."""
    if not search_terms and not raw_question:
        return []
    cur = await conn.execute(
        _SQL,
        {
            "terms": search_terms,
            "raw": raw_question.lower(),
            "trgm": trigram_threshold,
            "scope": scope,
        },
    )
    hits: list[TermHit] = []
    for row in await cur.fetchall():
        asset = asset_from(row, 9) if row[9] is not None else None
        hits.append(
            TermHit(
                term_id=row[0],
                canonical_term=row[1],
                matched=row[2],
                match=row[3],
                score=float(row[4]),
                mapped_asset_type=row[5],
                mapped_asset_id=row[6],
                filter_value=row[7],
                definition=row[8] or "",
                asset=asset,
            )
        )
    return _with_ambiguity(_one_cube_one_table(_glossary_first(_longest_matches(hits, raw_question.lower()))))


def _cube(asset_id: str | None) -> str:
    """``table:albums``, ``dimension:albums.title`` and ``metric:albums.count`` all belong to ``albums``."""
    return (asset_id or "").split(":", 1)[-1].split(".", 1)[0]


def _one_cube_one_table(hits: list[TermHit]) -> list[TermHit]:
    """A word mapped to a table and to members of that same table ("album": the albums table and its title
    dimension) names the table: the members' hits on that word are dropped instead of making it ambiguous."""
    by_text: dict[str, list[TermHit]] = defaultdict(list)
    for hit in hits:
        by_text[hit.matched].append(hit)
    kept = []
    for same in by_text.values():
        tables = {_cube(h.mapped_asset_id) for h in same if h.mapped_asset_type == "table"}
        one_cube = len(tables) == 1 and {_cube(h.mapped_asset_id) for h in same} == tables
        kept += [h for h in same if not one_cube or h.mapped_asset_type == "table" or h.filter_value is not None]
    return kept


def _glossary_first(hits: list[TermHit]) -> list[TermHit]:
    """Words the glossary defines are the glossary's: a model-derived term (``model:...``) matching the
    same text as a glossary term is dropped, so the two never make each other ambiguous."""
    curated = {h.matched for h in hits if not h.term_id.startswith(MODEL_TERM_PREFIX)}
    return [h for h in hits if not (h.term_id.startswith(MODEL_TERM_PREFIX) and h.matched in curated)]


def _longest_matches(hits: list[TermHit], raw: str) -> list[TermHit]:
    """Longest match wins: drop hits whose matched text is a strict part of a strong (exact or contains)
    hit's, unless the question also says it outside every such longer match ("total order value ..., and
    its 10 largest orders": "order" is said a second time on its own)."""
    strong = {h.matched for h in hits if h.match != "trigram"}
    kept = []
    for hit in hits:
        longer = [other for other in strong if other != hit.matched and _part_of(hit.matched, other)]
        if not longer or _said_alone(hit.matched, longer, raw):
            kept.append(hit)
    return kept


def _part_of(short: str, long: str) -> bool:
    if short.isascii() and long.isascii():
        return f" {short} " in f" {long} "
    return short in long


def _spans(text: str, raw: str) -> list[tuple[int, int]]:
    """Where ``text`` stands in the question: as a word start for English (plural endings allowed)."""
    pattern = rf"\b{re.escape(text)}" if text.isascii() else re.escape(text)
    return [m.span() for m in re.finditer(pattern, raw)]


def _said_alone(short: str, longer: list[str], raw: str) -> bool:
    """Whether some occurrence of ``short`` in the question lies outside every occurrence of the longer
    matches that contain it; False when a longer match is not in the question as written (a normalised key)."""
    found = [_spans(other, raw) for other in longer]
    if not all(found):
        return False
    inside = [span for spans in found for span in spans]
    return any(not any(a <= start and end <= b for a, b in inside) for start, end in _spans(short, raw))


def _with_ambiguity(hits: list[TermHit]) -> list[TermHit]:
    """Ambiguity of a hit: distinct assets that hits of the same strength on the same text map to
    (a fuzzy alternative does not make an exact match ambiguous)."""
    targets: dict[tuple[str, bool], set[str]] = defaultdict(set)
    for hit in hits:
        targets[hit.matched, hit.match == "trigram"].add(hit.mapped_asset_id or hit.term_id)
    for hit in hits:
        hit.ambiguity = len(targets[hit.matched, hit.match == "trigram"])
    return hits
