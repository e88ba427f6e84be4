"""``oltplab dvds build --engine mariadb``: create, load and key the DVD-Store-derived schema.

The rows are those of the PostgreSQL build: the same chunks and generator
(workloads/dvds/population.py and chunks.py), whose COPY text is also MariaDB's LOAD DATA
format. Steps, each reported through ``progress(event, done, total)`` from the calling
process:

1. ``tables`` (0/1, 1/1): refuse a database that holds the TPC-C-derived schema, and an
   existing DVD-Store-derived one unless forced (then drop it), and a server whose full-text
   indexes would leave out the shortest words of the catalogue; create the eight tables with
   their primary keys (a DS3 build: DVD Store 3's three too, and PRODUCTS' membership_item).
2. ``load``: ``build_users`` processes each load the chunks dealt to them with ``LOAD DATA
   LOCAL INFILE`` from a pipe (engines/mariadb/bulk.py), a generator thread ahead of the
   statements, and tally the quantities their order lines order per product. Then this
   process adds the tallies up and loads INVENTORY (whose ``sales`` is that sum) and
   CATEGORIES.
3. ``indexes`` (statements done) and ``analyze``: the statements of keys.sql, a table's in
   one session, the tables' in up to ``build_users`` sessions at once, full-text indexes with
   stopwords off; the foreign keys in place; ANALYZE TABLE; the procedures and the restock
   trigger; last the build's record in ``dvds_meta``, which marks a complete build.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed

from ....errors import DatabaseError, SchemaError, UsageError
from ....workloads.dvds import population as pop
from ....workloads.dvds import words
from ....workloads.dvds.build import build_record, build_summary
from ....workloads.dvds.chunks import LoadJob, load_jobs, produce
from ....workloads.brokerage.schema import OWN_TABLES as BROKERAGE_TABLES
from ....workloads.brokerage.schema import brokerage_schema_here
from ....workloads.dvds.schema import DS3_TABLES, META_TABLE, TABLES, tpcc_schema_here
from ...common.build import draw_seed, timings
from .. import bulk, client
from .schema import TPCC_TABLES, present, procedures_present, sql_statements, sql_text

#: The shortest word a user searches for: InnoDB's full-text indexes must keep it.
SHORTEST_WORD = min(len(w) for w in (*words.TITLE_WORDS, *words.ACTOR_FIRST, *words.ACTOR_LAST))


def _files(name: str, ds3: bool) -> list[str]:
    """The statements of sql/<name>.sql, and of sql/ds3_<name>.sql for a DS3 build."""
    return sql_statements(name) + (sql_statements(f"ds3_{name}") if ds3 else [])


def _prepare(dsn: str, force: bool, ds3: bool = False) -> None:
    """Check the database and the server, drop an old schema if forced, create the tables."""
    def check(cur, dbname: str, min_token) -> None:
        if present(cur, TPCC_TABLES):
            raise tpcc_schema_here(dbname)
        if present(cur, BROKERAGE_TABLES):
            raise brokerage_schema_here(dbname, "DVD-Store-derived", "dvds")
        existing = present(cur, [*TABLES, META_TABLE])
        procedures = procedures_present(cur)
        if (existing or procedures) and not force:
            raise SchemaError(f"database {dbname} already holds a DVD-Store-derived schema "
                              f"({len(existing)} of its tables, {len(procedures)} of its "
                              "procedures): pass --force to drop and rebuild it")
        if int(min_token) > SHORTEST_WORD:
            raise SchemaError(f"the server's innodb_ft_min_token_size is {min_token}: its "
                              f"full-text indexes would leave out the words of "
                              f"{SHORTEST_WORD} letters that the users search for; set it "
                              f"to {SHORTEST_WORD} or less (-c innodb_ft_min_token_size="
                              f"{SHORTEST_WORD})")

    bulk.prepare_schema(dsn, "innodb_ft_min_token_size", check,
                        sql_statements("drop") + _files("tables", ds3))


def _load(job: LoadJob) -> tuple[dict, list[int]]:
    """One worker: the chunks of its job; the rows it loaded per table and its tally of the
    quantities ordered per product."""
    what = f"{len(job.work)} chunk(s) from {job.work[0].table} {job.work[0].first}"
    return dict(bulk.load_job(job, produce, what)), job.sales


def _load_rest(dsn: str, seed: int, size, sales: list[int]) -> Counter:
    """INVENTORY (from the tally of all order lines) and CATEGORIES."""
    rows: Counter = Counter()
    conn = client.connect(dsn, local_infile=True)
    try:
        bulk.load_infile(conn, bulk.items(
            ("inventory", pop.inventory_rows(seed, size, sales).encode("ascii"), size.products),
            ("categories", pop.category_rows().encode("ascii"), len(words.CATEGORIES))), rows)
    except client.Error as exc:
        raise DatabaseError(f"loading the inventory failed: {client.error_text(exc)}") from exc
    finally:
        conn.close()
    return rows


def _table_of(statement: str) -> str:
    """The table an 'ALTER TABLE table ...' statement works on."""
    return statement.split()[2]


def _key_session(dsn: str, statements: list[str]) -> int:
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION innodb_ft_enable_stopword = OFF")
        bulk.execute_all(conn, statements)
    finally:
        conn.close()
    return len(statements)


def _keys(dsn: str, sessions: int, progress, ds3: bool = False) -> None:
    """The indexes of keys.sql, a table's statements in order in one session, up to
    ``sessions`` tables at once in the file's order (products first: its full-text indexes
    take longest); then the foreign keys."""
    statements = _files("keys", ds3)
    foreign = [s for s in statements if "FOREIGN KEY" in s]
    groups: dict[str, list[str]] = {}
    for statement in statements:
        if statement not in foreign:
            groups.setdefault(_table_of(statement), []).append(statement)
    done = 0
    with ThreadPoolExecutor(max(1, min(sessions, len(groups)))) as pool:
        for future in as_completed([pool.submit(_key_session, dsn, g) for g in groups.values()]):
            done += future.result()
            if progress:
                progress("indexes", done, len(statements))
    conn = client.connect(dsn)
    try:
        # in place, without reading the rows (the load made them hold)
        bulk.execute_all(conn, ["SET SESSION foreign_key_checks = 0", *foreign,
                                "SET SESSION foreign_key_checks = 1"])
    finally:
        conn.close()
    if progress:
        progress("indexes", len(statements), len(statements))


def _finish(dsn: str, sessions: int, record: dict, started: float, progress) -> None:
    """Keys, statistics, procedures, then the build's record (a complete build)."""
    tables = TABLES + (DS3_TABLES if record["ds3"] else ())
    try:
        _keys(dsn, sessions, progress, record["ds3"])
        conn = client.connect(dsn)
        try:
            bulk.execute_all(conn, [f"ANALYZE TABLE {', '.join(tables)}"])
            if progress:
                progress("analyze", len(tables), len(tables))
            bulk.execute_all(conn, bulk.procedure_statements(sql_text("procedures")))
            bulk.record_build(conn, META_TABLE, record, started)
        finally:
            conn.close()
    except client.Error as exc:
        raise DatabaseError(f"building keys and procedures failed: {client.error_text(exc)}") \
            from exc


def build(dsn: str, spec, progress=None) -> dict:
    """Build the schema of ``spec.size`` (a workloads.dvds.build.DvdsBuildSpec) on MariaDB;
    returns the summary the PostgreSQL build returns: size, customers, orders, products,
    build_users, seed (the one used: a build without one draws it, and records it), seconds,
    phases (seconds per step), rows (per table), build_sales (the loaded INVENTORY.sales
    total)."""
    size = spec.size
    if spec.build_users < 1:
        raise UsageError("--build-users must be at least 1")
    seed = draw_seed(spec.seed)
    started = time.monotonic()
    if progress:
        progress("tables", 0, 1)
    _prepare(dsn, spec.force, spec.ds3)
    if progress:
        progress("tables", 1, 1)
    jobs = load_jobs(dsn, size, spec.build_users, seed, spec.ds3)
    t_load = time.monotonic()
    rows: Counter = Counter()
    sales = pop.new_sales(size)
    for loaded, tally in bulk.run_jobs(_load, jobs):
        rows.update(loaded)
        pop.add_sales(sales, tally)
    rows += _load_rest(dsn, seed, size, sales)
    if progress:
        progress("load", sum(rows.values()), sum(rows.values()))
    t_finish = time.monotonic()
    record = build_record(size, seed, spec.build_users, sum(sales), spec.ds3)
    _finish(dsn, spec.build_users, record, started, progress)
    return build_summary(record, timings(started, t_load, t_finish, time.monotonic()), rows)
