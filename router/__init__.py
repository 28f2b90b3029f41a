"""Intent routing, RAG-Fusion decomposition, query plans and path execution."""
