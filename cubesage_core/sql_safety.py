"""SQL no warehouse query may call: the deny-list shared by the SQL guard and the Cube model trust check."""

from __future__ import annotations

DENIED_FUNCTIONS: frozenset[str] = frozenset(
    {
        "pg_sleep",
        "pg_sleep_for",
        "pg_sleep_until",
        "pg_read_file",
        "pg_read_binary_file",
        "pg_ls_dir",
        "pg_stat_file",
        "pg_terminate_backend",
        "pg_cancel_backend",
        "pg_reload_conf",
        "pg_rotate_logfile",
        "pg_promote",
        "pg_switch_wal",
        "dblink",
        "dblink_exec",
        "dblink_connect",
        "lo_import",
        "lo_export",
        "lo_get",
        "lo_put",
        "lo_unlink",
        "lo_create",
        "lo_open",
        "copy",
        "set_config",
        "current_setting",
        "query_to_xml",
        "table_to_xml",
        "database_to_xml",
        "pg_advisory_lock",
        "pg_advisory_xact_lock",
        "txid_current",
        "nextval",
        "setval",
    }
)
# any function whose name starts with one of these is refused too (admin, large objects, remote SQL)
DENIED_PREFIXES: tuple[str, ...] = ("pg_", "dblink", "lo_")


def denied(
    function_name: str, functions: frozenset[str] = DENIED_FUNCTIONS, prefixes: tuple[str, ...] = DENIED_PREFIXES
) -> bool:
    name = function_name.lower().rsplit(".", 1)[-1]
    return name in functions or name.startswith(prefixes)
