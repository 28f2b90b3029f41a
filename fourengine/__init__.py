"""Four-engine RAG (R/V/G/D), term bindings, reranker, CRAG gate, token budget."""
