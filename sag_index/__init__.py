"""SAG: chunk -> one event + entities, dual storage, 8-step multi-hop retrieval."""
