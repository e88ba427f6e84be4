"""crash_note: the step warning that leaves the server-side TPM out after a kill, only when the
kill made the server recover from a crash (its counters were reset): a killed server on either
engine and a killed PostgreSQL backend, not a MariaDB session ended with KILL CONNECTION."""

from __future__ import annotations

from oltplab.faults.inject import crash_note


def _event(kind: str, crash: bool | None, at_s: float | None = 3.0) -> dict:
    e = {"kind": kind, "event": f"at=3s,{kind}", "at_s": at_s}
    if crash is not None:
        e["crash_recovery"] = crash
    return e


def test_a_mariadb_session_ended_resets_nothing():
    assert crash_note([_event("kill-backend", False)]) is None


def test_a_crash_on_either_kill_leaves_the_server_tpm_out():
    note = crash_note([_event("kill-backend", True), _event("throttle", None),
                       _event("kill-server", True)])
    assert note == ("kill-backend, kill-server during the window: crash recovery reset the "
                    "server's statistics, so the server-side TPM is left out; the client-side "
                    "TPM counts")


def test_a_kill_that_never_fired_or_a_device_fault_says_nothing():
    assert crash_note([_event("kill-server", None, at_s=None)]) is None
    assert crash_note([_event("remove-device", None)]) is None
