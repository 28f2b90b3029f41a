"""What the guard allows: the configured warehouse schemas, the physical tables of the semantic assets within
them, denied functions, LIMIT bounds."""

from __future__ import annotations

from dataclasses import dataclass, field

from cubesage_core.sql_safety import DENIED_FUNCTIONS, DENIED_PREFIXES, denied


@dataclass(frozen=True)
class GuardPolicy:
    """Allowed physical tables (``schema.table``, lower case), the schemas they must lie in (the configured
    warehouse schemas; default: ``default_schema`` alone) and LIMIT bounds."""

    allowed_tables: frozenset[str]
    max_limit: int = 1000
    default_limit: int = 100
    default_schema: str = "warehouse"
    denied_functions: frozenset[str] = field(default=DENIED_FUNCTIONS)
    denied_prefixes: tuple[str, ...] = DENIED_PREFIXES
    allowed_schemas: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        schemas = self.allowed_schemas or frozenset({self.default_schema})
        object.__setattr__(self, "allowed_schemas", frozenset(s.lower() for s in schemas))

    def denies(self, function_name: str) -> bool:
        return denied(function_name, self.denied_functions, self.denied_prefixes)
