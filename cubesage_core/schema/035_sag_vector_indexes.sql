-- HNSW indexes on the vector tables of the PostgreSQL SAG store that kNN searches (sag_index.backends.postgres),
-- so it stays an index scan as the warehouse grows. Event vectors are indexed for the wiki sections (kind
-- 'doc'), the events recalled by vector: a filter on kind would starve an index over both kinds, and table-row
-- events are recalled through their entities' names and BM25, never by vectors (sag_index.retrieval
-- DENSE_KINDS; they have none). Entity names get no graph: retrieval ranks a mention's candidates by exact
-- cosine over the entities sharing one of its tokens (token blocking through the BM25 postings' btree), so a
-- graph over every row name (tens of seconds to build for a warehouse's rows) would never be searched.
-- Title vectors get no graph either: retrieval searches the title+content vector only, so a title kNN (kept in
-- the store contract) is an exact scan, and a bulk load builds one graph over event vectors, not two.
-- Queries raise hnsw.ef_search to their k. A bulk load drops these and builds them once (backends/_hnsw.py).
DROP INDEX IF EXISTS sag.entity_vectors_name_hnsw;
DROP INDEX IF EXISTS sag.event_vectors_doc_title_hnsw;
CREATE INDEX IF NOT EXISTS event_vectors_doc_content_hnsw ON sag.event_vectors
    USING hnsw (content_vec vector_cosine_ops) WHERE kind = 'doc';
CREATE INDEX IF NOT EXISTS event_entity_vectors_desc_hnsw ON sag.event_entity_vectors
    USING hnsw (desc_vec vector_cosine_ops);
