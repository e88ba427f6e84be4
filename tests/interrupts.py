"""Children that a test interrupts as Ctrl-C does.

A suite started as a background job (``make test &``, ``nohup make test``, some CI runners)
inherits SIGINT ignored, and an ignored signal stays ignored across exec: the child would never
see the Ctrl-C. Pass ``**INTERRUPTIBLE`` to ``subprocess.Popen`` to start it with SIGINT's
default disposition, which Python then turns into KeyboardInterrupt as in a terminal.
"""

from __future__ import annotations

import signal


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


INTERRUPTIBLE = {"preexec_fn": _sigint_default}


def ctrl_c(proc, timeout: float = 60.0) -> tuple[str, str]:
    """Ctrl-C to ``proc`` (started with ``INTERRUPTIBLE``): its output once it has ended, having
    checked that it ended as an interrupted command does (exit 130, no traceback). A child
    that does not end within ``timeout`` is killed and the test fails."""
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in (err or ""), err
    return out, err
