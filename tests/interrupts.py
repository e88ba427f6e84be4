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
