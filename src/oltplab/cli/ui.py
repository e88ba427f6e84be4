"""Terminal output for the CLI: the live line, build progress and result tables."""

from __future__ import annotations

import sys
import time
from typing import Any

from rich.console import Console
from rich.table import Table


def _console(stderr: bool) -> Console:
    """A console that does not squeeze tables or wrap paths when output is not a terminal."""
    probe = Console(stderr=stderr)
    return Console(stderr=stderr, highlight=False, soft_wrap=not probe.is_terminal,
                   width=None if probe.is_terminal else 200)


err = _console(stderr=True)
out = _console(stderr=False)


class LiveLine:
    """One status line rewritten in place on a terminal; a line every ``every`` seconds
    otherwise."""

    def __init__(self, every: float = 10.0):
        self.tty = sys.stderr.isatty()
        self.every = every
        self._last = 0.0
        self._width = 0

    def show(self, text: str) -> None:
        now = time.monotonic()
        if self.tty:
            pad = max(0, self._width - len(text))
            sys.stderr.write("\r" + text + " " * pad)
            sys.stderr.flush()
            self._width = len(text)
        elif now - self._last >= self.every:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()
            self._last = now

    def done(self, text: str | None = None) -> None:
        if self.tty and self._width:
            sys.stderr.write("\r" + " " * self._width + "\r")
            self._width = 0
        if text:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()


class BuildLines:
    """A build's live line: ``start(header)`` prints the header (if any) and gives the
    progress callback, which clears the line when a part of the build is done; ``close()``
    ends the line whatever happened."""

    def __init__(self):
        self.line, self.t0 = None, time.monotonic()

    def start(self, header: str | None = None):
        if header:
            sys.stderr.write(header + "\n")
        self.line, self.t0 = LiveLine(every=5), time.monotonic()
        return self.progress

    def progress(self, event: str, done: int, total: int) -> None:
        pct = 100.0 * done / total if total else 0.0
        self.line.show(f"build: {event} {done:,}/{total:,} ({pct:.0f}%)  "
                       f"elapsed {time.monotonic() - self.t0:.0f} s")
        if total and done >= total:
            self.line.done()

    def close(self) -> None:
        if self.line is not None:
            self.line.done()


def fmt_int(x: Any) -> str:
    return "-" if x is None else f"{int(round(x)):,}"


def fmt_ms(x: Any) -> str:
    return "-" if x is None else f"{x:.2f}"


def fmt_pct(x: Any) -> str:
    return "-" if x is None else f"{100 * x:.2f}%"


def steps_table(run: dict[str, Any]) -> Table:
    """TPM (instance): HammerDB's, every database of the server; TPM (workload): the
    workload's database alone, the sampler excluded."""
    t = Table(title=f"{run.get('id', '')}  [{run.get('status')}]", title_justify="left")
    for col in ("users", "TPM (instance)", "TPM (workload)", "NOPM", "client TPM",
                "client NOPM", "NOPM/user", "NO p95 ms", "NO p99 ms", "PY p99 ms", "retries",
                "errors"):
        t.add_column(col, justify="right")
    for s in run.get("steps", []):
        tx = s.get("transactions", {})
        no = tx.get("new_order", {})
        py = tx.get("payment", {})
        retries = sum(v.get("retries", 0) or 0 for v in tx.values())
        errors = sum(v.get("errors", 0) or 0 for v in tx.values())
        users = s.get("users") or 0
        per_user = (s.get("nopm") or 0) / users if users else None
        t.add_row(
            f"{users}{'*' if s.get('partial') else ''}",
            fmt_int(s.get("tpm")), fmt_int(s.get("workload_tpm")), fmt_int(s.get("nopm")),
            fmt_int(s.get("client_tpm")), fmt_int(s.get("client_nopm")), fmt_int(per_user),
            fmt_ms(no.get("p95")), fmt_ms(no.get("p99")), fmt_ms(py.get("p99")),
            str(retries), str(errors),
        )
    return t


INPUT_COLUMNS = (("remote order lines", "remote_order_lines"),
                 ("remote payments", "remote_payments"),
                 ("payments by name", "payments_by_last_name"),
                 ("order-status by name", "order_status_by_last_name"),
                 ("rolled-back New-Orders", "rolled_back_new_orders"),
                 ("skipped deliveries", "skipped_deliveries"))


def inputs_table(run: dict[str, Any]) -> Table:
    """The input shares of clause 5.5 per step, and the throughput's variation per 10 s."""
    t = Table(title="inputs (clause 5.5) and stability", title_justify="left")
    for col in ("users", *(c for c, _ in INPUT_COLUMNS), "lines/order", "CV per 10 s"):
        t.add_column(col, justify="right")
    for s in run.get("steps", []):
        shares = s.get("inputs") or {}
        lines = shares.get("order_lines_per_order")
        cv = (s.get("throughput") or {}).get("cv")
        t.add_row(f"{s.get('users')}{'*' if s.get('partial') else ''}",
                  *(fmt_pct(shares.get(k)) for _, k in INPUT_COLUMNS),
                  "-" if lines is None else f"{lines:.2f}", fmt_pct(cv))
    return t


def warning_lines(run: dict[str, Any]) -> list[str]:
    """One line per warning of every step (none when nothing is wrong)."""
    return [f"warning: users {s.get('users')}: {w}"
            for s in run.get("steps", []) for w in s.get("warnings") or []]


def event_lines(run: dict[str, Any]) -> list[str]:
    """One line per injected fault (tpcc run --inject)."""
    from .. import workloads
    rate = workloads.of_record(run).throughput_name
    return [_event_line(e, rate) for e in run.get("events") or []]


def consistency_line(run: dict[str, Any]) -> str | None:
    """The consistency check a run ended with (--check), or None when it had none."""
    check = run.get("check")
    if not check:
        return None
    conds = check.get("conditions") or []
    bad = [c["name"] for c in conds if not c["ok"]]
    if bad:
        return "consistency: FAILED " + ", ".join(bad)
    names = f" ({conds[0]['name']}-{conds[-1]['name']})" if len(conds) > 1 else ""
    return f"consistency: all hold{names}"


def outcome_lines(run: dict[str, Any]) -> list[str]:
    """What a run's tables are followed by: its warnings, its faults, its consistency check,
    and a note on devices that serve more than the data (``storage_lines``)."""
    line = consistency_line(run)
    return [*warning_lines(run), *event_lines(run), *([line] if line else []),
            *storage_lines(run)]


def storage_lines(run: dict[str, Any]) -> list[str]:
    """A note when the devices whose I/O a run counts as its datastore's also serve the root
    file system or other file systems (telemetry.derive ``sharing_note``)."""
    from ..telemetry.derive import sharing_note
    note = sharing_note(s.get("telemetry") for s in run.get("steps") or ())
    return [f"note: {note[0].lower()}{note[1:].rstrip('.')}"] if note else []


def _event_line(e: dict[str, Any], rate: str = "TPM") -> str:
    """One injected fault: when, its recovery and the throughput around it."""
    if e.get("at_s") is None or e.get("error"):
        return f"event {e['event']}: {e.get('error') or 'not fired'}"
    parts = [f"event {e['event']}: at {e['at_s']:.1f} s"]
    if e.get("recovery_s") is not None:
        parts.append(f"recovery {e['recovery_s']:.1f} s")
    if e.get("seconds") is not None:  # the file system's work (a device fault); MB = 10^6 B
        verb = "scrubbed" if e.get("kind") == "scrub" else "written"
        moved = f"{e['bytes_moved'] / 1e6:,.0f} MB {verb}" if e.get("bytes_moved") else "done"
        speed = f" at {e['mb_per_s']:,.1f} MB/s" if e.get("mb_per_s") else ""
        parts.append(f"{moved} in {e['seconds']:.1f} s{speed}")
    if e.get("dip_avg_pct") is not None:
        parts.append(f"dip {e['dip_avg_pct']:.0f}% avg, {e['dip_max_pct']:.0f}% max "
                     f"against {e['before_tpm']:,.0f} {rate} before")
    back = e.get("back_within_10pct_s")
    parts.append("not back within 10%" if back is None else f"back within 10% after {back:g} s")
    return ", ".join(parts)


def runs_table(runs: list[dict[str, Any]]) -> Table:
    """Saved runs, a row each, with the headline figures their kind gives (``_headline``)."""
    t = Table(title="runs", title_justify="left")
    for col in ("run", "kind", "status", "steps", "headline"):
        t.add_column(col, justify="right" if col == "steps" else "left")
    for r in runs:
        t.add_row(r.get("id", "?"), r.get("kind", "?"), r.get("status", "?"),
                  str(len(r.get("steps", []))), r.get("_headline", "-"))
    return t


def cycles_table(run: dict[str, Any]) -> Table:
    """A backup run's cycles: bytes, seconds and MB/s of each backup and restore, the check."""
    t = Table(title=f"{run.get('id', '')}  {run.get('status', '')}", title_justify="left")
    for col in ("cycle", "backup MB", "backup s", "backup MB/s", "restore s", "restore MB/s",
                "check"):
        t.add_column(col, justify="right")
    for c in run.get("cycles") or []:
        b, r = c.get("backup") or {}, c.get("restore") or {}
        check = "-" if not r else "ok" if r.get("check_ok") else \
            "FAILED " + ",".join(r.get("check_failed") or [])
        t.add_row(str(c.get("cycle")), fmt_ms((b.get("bytes") or 0) / 1e6),
                  fmt_ms(b.get("seconds")), fmt_ms(b.get("mb_per_s")), fmt_ms(r.get("seconds")),
                  fmt_ms(r.get("mb_per_s")), check)
    return t


def print_tables(tables) -> None:
    """Report tables (report.model.Table) as the terminal shows them."""
    for table in tables:
        t = Table(title=table.title, title_justify="left")
        for col in table.columns:
            t.add_column(str(col))
        for row in table.rows:
            t.add_row(*("-" if v is None else str(v) for v in row))
        out.print(t)
