"""Cube semantic models: load/validate, REST client, built-in compiler, semantic-asset export."""
