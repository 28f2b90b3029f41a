"""Numbered, idempotent DDL files applied by ``cubesage_core.db.apply_schema``."""
