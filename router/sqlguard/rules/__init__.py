"""The guard's rules in the order they run: ``single_statement(statements, policy) -> tree`` first, then each
of ``TREE_RULES`` as ``rule(tree, policy) -> tree``."""

from __future__ import annotations

from router.sqlguard.rules.allowed_tables import allowed_tables
from router.sqlguard.rules.denied_functions import denied_functions
from router.sqlguard.rules.limit import enforce_limit
from router.sqlguard.rules.no_writes import no_writes
from router.sqlguard.rules.select_only import select_only
from router.sqlguard.rules.single_statement import single_statement

__all__ = ["TREE_RULES", "single_statement"]

TREE_RULES = (select_only, no_writes, allowed_tables, denied_functions, enforce_limit)
