"""The faults a run can inject (``--inject EVENT``), registered once by the name an event gives:
kill-server and kill-backend (kill.py), throttle (throttle.py), remove-device, convert and scrub
of a btrfs datastore (datastore.py); inject.py times a run's events.

A fault is a class made with ``make(target, event, need_connections)``; it checks what it
needs before the run (``check(db, event)``, one UsageError line), ``fire(rec, stop)`` at its
time, and, when it lasts (``for=``), ``end(rec)`` after it, also when the run ends first. It
reaches the server only through the run's target and the engine registry.
"""

from __future__ import annotations

from .datastore import Convert, FailDevice, RemoveDevice, ReplaceDevice, Scrub
from .kill import KillBackend, KillServer
from .throttle import Throttle

FAULTS = {"kill-server": KillServer, "kill-backend": KillBackend, "throttle": Throttle,
          "remove-device": RemoveDevice, "replace-device": ReplaceDevice,
          "fail-device": FailDevice, "convert": Convert, "scrub": Scrub}
