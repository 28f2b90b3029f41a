"""SAG: chunk -> one event + entities, dual storage, 8-step multi-hop retrieval.

Public entry points (import from the modules):
- ``sag_index.loaders``: ``load_path``, ``load_dir``, ``load_markdown``, ``load_text``, ``load_html``,
  ``load_json_records`` -> ``Chunk`` lists with content-hash ids.
- ``sag_index.pipeline.index_chunks(chunks, url, store, processor=None, ...) -> IndexReport``.
- ``sag_index.retrieval.SagRetriever(url, store).retrieve(question, RetrievalParams(...)) -> RetrievalResult``
  (``SagRetriever.with_llm(url, store)`` for the DSPy NER and selection in LLM mode).
- ``sag_index.warehouse.index_warehouse(url, warehouse_map, wiki_dir=None, store=None, progress=None)``.
- ``sag_index.recall.SagRecall(url, store, settings)``: ``recall_tables(question) -> list[TableHit]``,
  ``recall_rows(question) -> list[RowHit]``.
- ``sag_index.backends.get_store(settings, url) -> VectorStore`` (raises ``StoreUnavailable``).
"""
