"""The guard's one exception type: which rule refused the SQL and why."""

from __future__ import annotations


class SqlGuardError(ValueError):
    """Generated SQL refused by the guard; ``rule`` names the rule module that refused it."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"SQL refused by guard rule '{rule}': {message}")
        self.rule = rule
        self.reason = message
