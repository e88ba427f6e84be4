"""What PostgreSQL's answers mean to a virtual user: the SQLSTATEs worth a retry, those that end
the user, and the statement that makes a backend publish its transaction counts at a boundary
(engines/common/recorder.py describes the boundaries)."""

RETRYABLE_STATES = ("40001", "40P01")  # serialization failures and deadlocks
# the server shutting down or restarting, the database gone (and class 08, connection errors)
FATAL_STATES = ("57P01", "57P02", "57P03", "57P04", "3D000")
# Reading a table makes the backend hold pending table statistics, without which PostgreSQL
# publishes nothing, not even this statement's own transaction: with it, the flush always
# publishes everything, itself included (exactly one transaction).
FLUSH_SQL = "SELECT pg_stat_force_next_flush() FROM warehouse LIMIT 1"
# PostgreSQL's PGSTAT_IDLE_INTERVAL (10 s), with a margin for the difference between the
# server's timestamps and the client's
IDLE_PUBLISHED_AFTER_NS = 10_500_000_000
