"""The Postgres functions `sql_query` refuses to call, found in the query's identifiers.

A read-only transaction does not stop functions with effects outside the transaction:
`pg_terminate_backend` ends another session of the same role (no privilege needed for that),
`pg_notify` wakes listeners, advisory locks block other clients, `pg_stat_reset` wipes the
statistics. `query_to_xml` and its kin run a query given as a string, so they could call all of
the above from inside a literal; they are refused too.

The scan reads the statement the way the server's lexer does (strings, dollar quotes, comments,
quoted identifiers), so a literal that merely mentions a name is allowed while `"PG_CATALOG"."
pg_terminate_backend"`, mixed case and comments between the parts are still found. A `U&"..."`
identifier (which can spell any name in escapes) is refused outright. A column or table named
like one of these functions is refused as well: failing closed costs a rename in the query.
"""

from __future__ import annotations

import re

DENIED_FUNCTIONS = frozenset(
    {
        # other sessions and the server
        "pg_terminate_backend",
        "pg_cancel_backend",
        "pg_reload_conf",
        "pg_rotate_logfile",
        "pg_log_backend_memory_contexts",
        "pg_promote",
        "pg_switch_wal",
        "pg_create_restore_point",
        "pg_backup_start",
        "pg_backup_stop",
        "pg_start_backup",
        "pg_stop_backup",
        "pg_wal_replay_pause",
        "pg_wal_replay_resume",
        "pg_import_system_collations",
        # messages and locks other clients see
        "pg_notify",
        "pg_advisory_lock",
        "pg_advisory_lock_shared",
        "pg_advisory_xact_lock",
        "pg_advisory_xact_lock_shared",
        "pg_try_advisory_lock",
        "pg_try_advisory_lock_shared",
        "pg_try_advisory_xact_lock",
        "pg_try_advisory_xact_lock_shared",
        "pg_advisory_unlock",
        "pg_advisory_unlock_shared",
        "pg_advisory_unlock_all",
        # statistics and replication state
        "pg_stat_reset",
        "pg_stat_reset_shared",
        "pg_stat_reset_single_table_counters",
        "pg_stat_reset_single_function_counters",
        "pg_stat_reset_slru",
        "pg_stat_reset_replication_slot",
        "pg_stat_reset_subscription_stats",
        "pg_create_physical_replication_slot",
        "pg_create_logical_replication_slot",
        "pg_drop_replication_slot",
        "pg_copy_physical_replication_slot",
        "pg_copy_logical_replication_slot",
        "pg_replication_slot_advance",
        "pg_logical_slot_get_changes",
        "pg_logical_slot_get_binary_changes",
        "pg_logical_slot_peek_changes",
        "pg_logical_slot_peek_binary_changes",
        "pg_logical_emit_message",
        "pg_replication_origin_create",
        "pg_replication_origin_drop",
        "pg_replication_origin_advance",
        "pg_replication_origin_session_setup",
        "pg_replication_origin_session_reset",
        "pg_replication_origin_xact_setup",
        "pg_replication_origin_xact_reset",
        # server files and large objects
        "pg_read_file",
        "pg_read_binary_file",
        "pg_ls_dir",
        "pg_stat_file",
        "pg_ls_logdir",
        "pg_ls_waldir",
        "pg_ls_tmpdir",
        "pg_ls_archive_statusdir",
        "lo_import",
        "lo_export",
        "lo_create",
        "lo_creat",
        "lo_unlink",
        "lo_from_bytea",
        "lo_put",
        "lowrite",
        # functions that run a query given as text
        "query_to_xml",
        "query_to_xmlschema",
        "query_to_xml_and_xmlschema",
        "ts_stat",
        "ts_rewrite",
        "dblink",
        "dblink_exec",
        "dblink_send_query",
        "dblink_open",
    }
)

_TOKEN = re.compile(
    r"""
      (?P<comment>--[^\n]*)
    | (?P<block>/\*)
    | (?P<unicode>[uU]&")
    | (?P<quoted>"(?:[^"]|"")*")
    | (?P<escaped>[eE]'(?:[^'\\]|\\.|'')*')
    | (?P<string>'(?:[^']|'')*')
    | (?P<dollar>\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$)
    | (?P<word>[A-Za-z_\x80-\U0010ffff][A-Za-z0-9_$\x80-\U0010ffff]*)
    """,
    re.VERBOSE | re.DOTALL,
)


def denied_function(sql: str) -> str | None:
    """The first denied function `sql` names (or `U&"..."` for an escaped name), else None."""
    position = 0
    while (match := _TOKEN.search(sql, position)) is not None:
        kind, text = match.lastgroup, match.group()
        position = match.end()
        if kind == "block":
            position = _block_end(sql, position)
        elif kind == "unicode":
            return 'U&"..."'
        elif kind == "dollar":
            end = sql.find(text, position)
            position = len(sql) if end < 0 else end + len(text)
        elif kind in ("quoted", "word"):
            name = text[1:-1].replace('""', '"') if kind == "quoted" else text.lower()
            if name in DENIED_FUNCTIONS:
                return name
    return None


def _block_end(sql: str, position: int) -> int:
    """The index after the `*/` closing a block comment opened before `position` (they nest)."""
    depth = 1
    while depth and position < len(sql):
        if sql.startswith("/*", position):
            depth, position = depth + 1, position + 2
        elif sql.startswith("*/", position):
            depth, position = depth - 1, position + 2
        else:
            position += 1
    return position
