"""TPM and NOPM arithmetic and per-transaction summaries: pure functions, mergeable counts.

Server-side rates follow HammerDB's definitions:
- TPM  = delta of sum(xact_commit + xact_rollback) over all pg_stat_database rows, per minute;
- NOPM = delta of sum(d_next_o_id) over DISTRICT, per minute (rolled-back New-Orders leave
  d_next_o_id unchanged, so they are excluded).
Client-side rates count the transactions whose response time lies wholly in the measured
window: client TPM counts every completed business transaction (committed or rolled back by
the 1% rule), client NOPM the committed New-Orders.
"""

from __future__ import annotations

from dataclasses import dataclass

from .histogram import summarize


def per_minute(count: float, seconds: float) -> float:
    """A count over ``seconds`` expressed per minute (0 for an empty window)."""
    if seconds <= 0:
        return 0.0
    return count * 60.0 / seconds


def rate(count: float, seconds: float) -> int:
    """``per_minute`` rounded to a whole number, as TPM and NOPM are reported."""
    return int(round(per_minute(count, seconds)))


def server_rates(xacts_delta: int, d_next_o_id_delta: int, seconds: float) -> tuple[int, int]:
    """(tpm, nopm) from the deltas of the two server counters over ``seconds``."""
    return rate(xacts_delta, seconds), rate(d_next_o_id_delta, seconds)


@dataclass(frozen=True)
class TypeCounts:
    """Counts of one transaction type in the measured window.

    ``committed`` and ``rolled_back`` (the New-Order 1% rule, TPC-C 2.4.2.3) are completed
    business transactions; ``errors`` are transactions that failed otherwise; ``retries``
    counts re-executions after serialization failures and deadlocks. ``total_us`` is the
    exact sum of the completed transactions' response times.
    """

    committed: int = 0
    rolled_back: int = 0
    errors: int = 0
    retries: int = 0
    total_us: int = 0

    @property
    def count(self) -> int:
        return self.committed + self.rolled_back

    def __add__(self, other: "TypeCounts") -> "TypeCounts":
        return TypeCounts(
            self.committed + other.committed,
            self.rolled_back + other.rolled_back,
            self.errors + other.errors,
            self.retries + other.retries,
            self.total_us + other.total_us,
        )


def client_rates(counts: dict[str, TypeCounts], seconds: float,
                 unit: str) -> tuple[int, int]:
    """(client_tpm, client_nopm): completed transactions, and committed transactions of type
    ``unit`` (New-Orders for TPC-C), per minute."""
    completed = sum(c.count for c in counts.values())
    committed = counts[unit].committed if unit in counts else 0
    return rate(completed, seconds), rate(committed, seconds)


def transaction_entry(counts: TypeCounts, hist) -> dict:
    """The JSON-ready entry of one transaction type: counts and latency in ms."""
    lat = summarize(hist, counts.total_us if hist.get_total_count() == counts.count else None)
    entry = {
        "count": counts.count,
        "committed": counts.committed,
        "rolled_back": counts.rolled_back,
        "errors": counts.errors,
        "retries": counts.retries,
    }
    entry.update(lat.as_dict())
    return entry
