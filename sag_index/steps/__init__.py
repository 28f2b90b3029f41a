"""The SAG retrieval as named steps, run in order by ``sag_index.retrieval.SagRetriever.retrieve``.

1 NER -> 2 entity recall -> 3 dual-channel event recall -> 4 event details -> 5 multi-hop expansion ->
6 coarse rerank -> 7 selection -> 8 chunk backtrack; one module per step, each a function
``(services, run) -> (candidates, note)`` over the shared :class:`~sag_index.steps.base.Run`.
"""

from __future__ import annotations

from sag_index.steps.base import RetrievalStep
from sag_index.steps.chunk_backtrack import chunk_backtrack
from sag_index.steps.coarse_rerank import coarse_rerank
from sag_index.steps.entity_recall import entity_recall
from sag_index.steps.event_details import event_details
from sag_index.steps.event_recall import event_recall
from sag_index.steps.expansion import expansion
from sag_index.steps.ner import ner
from sag_index.steps.selection import selection

STEPS: tuple[RetrievalStep, ...] = (
    RetrievalStep("1_ner", ner),
    RetrievalStep("2_entity_recall", entity_recall),
    RetrievalStep("3_event_recall", event_recall),
    RetrievalStep("4_event_details", event_details),
    RetrievalStep("5_multihop_expansion", expansion),
    RetrievalStep("6_coarse_rerank", coarse_rerank),
    RetrievalStep("7_selection", selection),
    RetrievalStep("8_chunk_backtrack", chunk_backtrack),
)

__all__ = ["STEPS", "RetrievalStep"]
