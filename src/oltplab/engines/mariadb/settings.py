"""MariaDB server settings: derived from --db-memory, overridden with -c, read back for the record.

Pure but for ``read_settings``, which asks an open connection.
"""

from __future__ import annotations

import re

from ...errors import UsageError
from ..base import MIN_DB_MEMORY

_KiB, _MiB, _GiB = 1024, 1024**2, 1024**3

# Recorded with every run even at their defaults: they decide durability, the cost of each
# commit and how the data reaches the device.
ALWAYS_RECORDED = (
    "innodb_buffer_pool_size", "innodb_doublewrite", "innodb_flush_log_at_trx_commit",
    "innodb_flush_method", "innodb_io_capacity", "innodb_log_buffer_size",
    "innodb_log_file_size", "innodb_log_group_home_dir", "innodb_page_size",
    "innodb_snapshot_isolation", "log_bin", "max_connections", "sync_binlog",
    "thread_handling", "transaction_isolation", "version",
)

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def mariadb_size(nbytes: int) -> str:
    """Bytes as a MariaDB size value: the largest of G, M, K that divides exactly."""
    for unit, div in (("G", _GiB), ("M", _MiB), ("K", _KiB)):
        if nbytes >= div and nbytes % div == 0:
            return f"{nbytes // div}{unit}"
    return str(nbytes)


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def option_name(name: str) -> str:
    """A server option's canonical name: MariaDB treats '-' and '_' alike."""
    if not _NAME.fullmatch(name):
        raise UsageError(f"-c {name}=...: {name!r} is not a MariaDB option name")
    return name.lower().replace("-", "_")


def derive_settings(db_memory: int, need_connections: int = 100,
                    overrides: tuple[tuple[str, str], ...] | dict = ()) -> dict[str, str]:
    """Server options for OLTP from the memory given to the database; pure.

    ``db_memory`` becomes innodb_buffer_pool_size, InnoDB's own cache (with O_DIRECT, the
    default on Linux, the page cache holds no data pages). Derived from it:

    - innodb_log_file_size = 2 x the buffer pool, within 256MiB..64GiB: the redo log (one
      preallocated file) that bounds how far checkpoints may lag. HammerDB's own CI uses
      0.5 GiB per CPU within 4..64 GiB; ours scales with the pool so that a small test
      server does not preallocate gigabytes;
    - innodb_log_buffer_size = the pool / 32, within 16MiB..256MiB.

    Durability is honest: innodb_flush_log_at_trx_commit=1 and the doublewrite buffer on;
    no binary log (nothing replicates from a managed server). The buffer pool is neither
    dumped at shutdown nor loaded at start, so that every run starts from the same cache.
    max_connections leaves 20 connections above ``need_connections``. ``overrides`` (-c
    name=value) are applied last, in order; '-' and '_' in names are the same.
    """
    if db_memory < MIN_DB_MEMORY:
        raise UsageError(f"--db-memory: {db_memory} bytes is too small; give at least 16MiB")
    if need_connections < 1:
        raise UsageError(f"need_connections must be at least 1, not {need_connections}")
    pool = db_memory // _MiB * _MiB
    settings = {
        "innodb_buffer_pool_size": mariadb_size(pool),
        "innodb_log_file_size": mariadb_size(_clamp(2 * pool, 256 * _MiB, 64 * _GiB)),
        "innodb_log_buffer_size": mariadb_size(_clamp(pool // 32 // _MiB * _MiB,
                                                      16 * _MiB, 256 * _MiB)),
        "innodb_flush_log_at_trx_commit": "1",
        "innodb_doublewrite": "ON",
        "innodb_buffer_pool_dump_at_shutdown": "OFF",
        "innodb_buffer_pool_load_at_startup": "OFF",
        "max_connections": str(max(151, need_connections + 20)),
        "local_infile": "ON",
        "character_set_server": "latin1",
        "collation_server": "latin1_bin",
    }
    items = overrides.items() if isinstance(overrides, dict) else overrides
    for name, value in items:
        key = option_name(name)
        settings.pop(key, None)
        settings[key] = str(value)
    return settings


def option_line(name: str, value: str) -> str:
    """One line of an option file's [mariadbd] group."""
    if "\n" in value:
        raise UsageError(f"-c {name}: a value cannot span lines")
    return f"{name.replace('_', '-')} = {value}"


def read_settings(conn) -> dict:
    """Options not at their compiled-in defaults, plus ALWAYS_RECORDED, and the version, from
    an open PyMySQL connection."""
    names = ", ".join(f"'{n.upper()}'" for n in ALWAYS_RECORDED)
    with conn.cursor() as cur:
        cur.execute("SELECT LOWER(variable_name), global_value"
                    "  FROM information_schema.system_variables"
                    " WHERE global_value_origin <> 'COMPILE-TIME'"
                    f"   OR variable_name IN ({names}) ORDER BY 1")
        rows = cur.fetchall()
        cur.execute("SELECT VERSION()")
        version = cur.fetchone()[0]
    return {"server_version": version, "settings": {name: value for name, value in rows}}
