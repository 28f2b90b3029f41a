-- HNSW indexes on every vector table of the PostgreSQL SAG store (sag_index.backends.postgres), so kNN stays
-- an index scan as the warehouse grows. Event vectors are indexed for the wiki sections (kind 'doc'), the
-- events recalled by vector: a filter on kind would starve an index over both kinds, and table-row events are
-- recalled through their entities' name vectors and BM25, never by their own vectors (sag_index.retrieval
-- DENSE_KINDS), so they get no graph to build. Entity names without a vector (ids, numbers) are left out.
-- Queries raise hnsw.ef_search to their k. A bulk load drops these and builds them once (backends/_hnsw.py).
CREATE INDEX IF NOT EXISTS event_vectors_doc_content_hnsw ON sag.event_vectors
    USING hnsw (content_vec vector_cosine_ops) WHERE kind = 'doc';
CREATE INDEX IF NOT EXISTS event_vectors_doc_title_hnsw ON sag.event_vectors
    USING hnsw (title_vec vector_cosine_ops) WHERE kind = 'doc';
CREATE INDEX IF NOT EXISTS entity_vectors_name_hnsw ON sag.entity_vectors
    USING hnsw (name_vec vector_cosine_ops) WHERE name_vec IS NOT NULL;
CREATE INDEX IF NOT EXISTS event_entity_vectors_desc_hnsw ON sag.event_entity_vectors
    USING hnsw (desc_vec vector_cosine_ops);
