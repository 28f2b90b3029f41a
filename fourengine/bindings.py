"""Term bindings: business terms pinned to technical assets, built from engine R (and strong V term hits).

A binding needs an unambiguous match: an exact (or Chinese containment) hit whose
matched text maps to exactly one asset, or a term asset that engine V found at or
above the binding threshold (its mapped asset is in the asset's meta).
"""

from __future__ import annotations

from fourengine.models import TermBinding, TermHit, VectorHit


def build_bindings(
    term_hits: list[TermHit],
    vector_hits: list[VectorHit],
    vector_threshold: float,
) -> list[TermBinding]:
    out: dict[str, TermBinding] = {}
    for hit in sorted(term_hits, key=lambda h: -h.score):
        if hit.match == "trigram" or hit.ambiguity != 1 or not hit.mapped_asset_id or not hit.mapped_asset_type:
            continue
        out.setdefault(
            hit.term_id,
            TermBinding(
                hit.term_id,
                hit.canonical_term,
                hit.mapped_asset_type,
                hit.mapped_asset_id,
                hit.filter_value,
                "R",
                hit.matched,
            ),
        )
    for vhit in vector_hits:
        asset = vhit.asset
        if asset.asset_type != "term" or vhit.score < vector_threshold:
            continue
        mapped_id, mapped_type = asset.meta.get("mapped_asset_id"), asset.meta.get("mapped_asset_type")
        term_id = asset.meta.get("term_id") or asset.asset_id.removeprefix("term:")
        if mapped_id and mapped_type and term_id not in out:
            out[term_id] = TermBinding(
                term_id,
                asset.title or asset.name,
                mapped_type,
                mapped_id,
                asset.meta.get("filter_value"),
                "V",
            )
    return list(out.values())
