"""Shared plumbing of cubesage: settings, database, embedded PostgreSQL, embeddings, tokens, LLM wiring."""

import os

# litellm (pulled in by dspy) fetches a model price map from the web at import time; keep it offline.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
