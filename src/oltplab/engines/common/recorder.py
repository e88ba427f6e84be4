"""The rules of a virtual user, the Recorder of a worker's measured window, and UserFailed.

The users themselves run in C, in the engine's driver: PostgreSQL's ``_native.ProcLoop``
(engines/postgres/driver.py, both modes), MariaDB's ``_native.MariaDBLoop``
(engines/mariadb/driver.py); these are the rules they follow.

Cycle (clause 5.2.5): draw a card from the deck, draw the inputs, wait the keying time,
run the transaction and wait for its answer (the response time), wait the think time.
Keying and think times are off unless the run asks for them. Delivery runs inside the user
like every other transaction, not deferred (as HammerDB does).

Serialization failures (40001) and deadlocks (40P01) re-run the transaction with the same
inputs (in --mode sql after a ROLLBACK); they are counted as retries, never as the New-Order
1% rollbacks, and the response time covers all attempts. A lost connection or a fatal
SQLSTATE ends the users with ``UserFailed``, which fails the run; other database errors are
counted as errors and the user carries on (after MAX_CONSECUTIVE_ERRORS in a row it gives up).

Boundaries: a PostgreSQL backend publishes its transaction counts when a transaction ends
at least a second after its previous publication (else after 10 s idle). The client cannot
tell from its own clock which commit that was (under load the server's and the client's
times of one commit differ by more than any margin), so when a user first reaches ramp_end,
and again at measure_end, it asks its backend to publish now (``FLUSH_SQL``, between two
transactions, waking from a keying or think time if need be) whenever a transaction ended
since its last flush, unless it has been idle for more than 10 s. The manager snapshots the
server's counters once every user has crossed, so that the server-side counts cover the
window (see engines/postgres/counters.py for what else they hold); a user that has crossed
ramp_end waits until that snapshot is taken, so that none of the window's transactions
commits before it (the server's unit is counted in its tables, at the snapshot's instant).
Users that wait between transactions cross at their own times, so a thousand of them do not
all query the server at the same instant.
The user stops at measure_end; a transaction in flight then finishes but does not count.
"""

from __future__ import annotations

from array import array
from collections import Counter

from ...metrics.histogram import HIGHEST_US, encode, new_histogram
from ... import workloads
from ...metrics.summary import TypeCounts

MAX_RETRIES = 100  # per transaction
# response times held per type before they enter the histogram: 64 KiB, however long the run
# (a type as rare as Delivery took over an hour to fill 512 KiB at 64 users, and the worker's
# memory grew by its pages for as long)
BULK_SAMPLES = 1 << 13
MAX_CONSECUTIVE_ERRORS = 100  # then the user gives up: something is broken, not contended


class UserFailed(Exception):
    """The user cannot go on (lost connection, or every transaction fails)."""


class Recorder:
    """Counts and histograms of one worker's measured window, shared by its users.

    A transaction counts when it started at or after ``ramp_end`` and finished by
    ``measure_end``: its response time lies wholly in the window. ``inputs`` counts what the
    counted transactions drew (the workload's ``input_keys``; TPC-C's: order lines and remote
    ones, remote and by-name payments, by-name order-status, deliveries and their skipped
    districts). ``workload`` is the default one unless given.
    """

    __slots__ = ("ramp_end", "measure_end", "committed", "rolled_back", "errors", "retries",
                 "total_us", "hists", "_samples", "completed", "headline", "lost", "inputs",
                 "users", "crossed", "cross_ns", "on_boundary", "workload", "_unit")

    def __init__(self, ramp_end_ns: int, measure_end_ns: int, users: int = 0, on_boundary=None,
                 workload=None):
        self.ramp_end = ramp_end_ns
        self.measure_end = measure_end_ns
        self.users = users
        self.crossed = [0, 0]
        self.cross_ns: tuple[list[int], list[int]] = ([], [])  # when each user's flush ended
        self.on_boundary = on_boundary  # called with (boundary, users) once all have crossed
        self.workload = workload or workloads.get()
        # the type whose commits the headline counts (TPC-C: New-Order): ``headline`` counts it
        self._unit = self.workload.type_index(self.workload.unit_transaction)
        n = len(self.workload.transactions)
        self.committed = [0] * n
        self.rolled_back = [0] * n
        self.errors = [0] * n
        self.retries = [0] * n
        self.total_us = [0] * n
        self.hists = [new_histogram() for _ in range(n)]
        # Response times wait in compact arrays and enter the histograms in bulk (one
        # record_value per distinct value), off the virtual users' hot path.
        self._samples = [array("q") for _ in range(n)]
        self.completed = 0  # every phase, for live rates
        self.headline = 0
        self.lost = 0  # users whose connection was lost and who reconnected (--inject)
        self.inputs = self.workload.zero_inputs()

    def done(self, kind: int, start: int, end: int, rolled_back: bool, retries: int) -> bool:
        """Count a completed transaction; True when it lies in the window."""
        self.completed += 1
        if kind == self._unit and not rolled_back:
            self.headline += 1
        if start >= self.ramp_end and end <= self.measure_end:
            us = (end - start) // 1000
            if rolled_back:
                self.rolled_back[kind] += 1
            else:
                self.committed[kind] += 1
            self.retries[kind] += retries
            self.total_us[kind] += us
            samples = self._samples[kind]
            samples.append(us)
            if len(samples) >= BULK_SAMPLES:
                self._drain(kind)
            return True
        return False

    def add_samples(self, kind: int, us: array) -> None:
        """Response times (us) recorded elsewhere under the same window rule."""
        samples = self._samples[kind]
        samples.extend(us)
        if len(samples) >= BULK_SAMPLES:
            self._drain(kind)

    def add_counts(self, c: dict) -> None:
        """Counts kept elsewhere under the same rules: ``_native.ProcLoop.counts()``."""
        for k in range(len(self.workload.transactions)):
            self.committed[k] += c["committed"][k]
            self.rolled_back[k] += c["rolled_back"][k]
            self.errors[k] += c["errors"][k]
            self.retries[k] += c["retries"][k]
            self.total_us[k] += c["total_us"][k]
        if "inputs" in c:
            self.workload.add_inputs(self.inputs, c["inputs"])
        self.completed += c["completed"]
        self.headline += c["headline"]
        self.lost += c.get("lost", 0)
        for boundary in (0, 1):
            self.cross_ns[boundary].extend(c["cross_ns"][boundary])

    def failed(self, kind: int, start: int, end: int, retries: int) -> None:
        if start >= self.ramp_end and end <= self.measure_end:
            self.errors[kind] += 1
            self.retries[kind] += retries

    def cross(self, boundary: int, flushed_ns: int | None) -> None:
        """A user crossed a boundary; ``flushed_ns`` is when its flush statement ended (None
        when it needed none)."""
        if flushed_ns is not None:
            self.cross_ns[boundary].append(flushed_ns)
        self.crossed[boundary] += 1
        if self.crossed[boundary] == self.users and self.on_boundary is not None:
            self.on_boundary(boundary, self.users)

    def counts(self) -> tuple[TypeCounts, ...]:
        return tuple(TypeCounts(self.committed[k], self.rolled_back[k], self.errors[k],
                                self.retries[k], self.total_us[k])
                     for k in range(len(self.workload.transactions)))

    def _drain(self, kind: int) -> None:
        record = self.hists[kind].record_value
        for us, n in Counter(self._samples[kind]).items():
            record(us if 0 < us <= HIGHEST_US else (1 if us <= 0 else HIGHEST_US), n)
        self._samples[kind] = array("q")

    def encoded(self) -> tuple[str, ...]:
        for kind in range(len(self.hists)):
            self._drain(kind)
        return tuple(encode(h) for h in self.hists)
