"""Rule: no write, DDL or command node anywhere in the tree (data-modifying CTEs included)."""

from __future__ import annotations

from sqlglot import exp

from router.sqlguard.errors import SqlGuardError
from router.sqlguard.policy import GuardPolicy

WRITE_NODES: tuple[type[exp.Expression], ...] = (
    exp.Insert,
    exp.Update,
    exp.Delete,
    exp.Merge,
    exp.Create,
    exp.Drop,
    exp.Alter,
    exp.TruncateTable,
    exp.Command,
    exp.Set,
    exp.Copy,
    exp.Grant,
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
)


def no_writes(tree: exp.Expression, policy: GuardPolicy) -> exp.Expression:
    node = tree.find(*WRITE_NODES)
    if node is not None:
        raise SqlGuardError("no_writes", f"{node.key.upper()} is not allowed inside a query")
    return tree
