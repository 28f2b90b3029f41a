"""Alias of ``cube_models.validate`` (``validate``, ``Problem``) for callers that import this name."""

from cube_models.validate import Problem, suggest_members, validate

__all__ = ["Problem", "suggest_members", "validate"]
