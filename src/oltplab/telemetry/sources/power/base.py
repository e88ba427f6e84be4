"""What every power meter shares: the column it fills, the plugin interface, and the parsers
of meters' output."""

from __future__ import annotations

import math
import re

COLUMN = "power.watts"
_NUMBER = re.compile(rb"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_DCMI = re.compile(r"Instantaneous power reading\s*:\s*([0-9.]+)\s*Watts", re.I)
_DCMI_STATE = re.compile(r"Power reading state is\s*:\s*(\w+)", re.I)


class PowerUnavailable(Exception):
    """This meter is not there (the reason is the message)."""


# -- parsing (pure) ------------------------------------------------------------------------------
def parse_watts(output: bytes) -> float:
    """The first number a power command printed."""
    m = _NUMBER.search(output)
    if not m:
        text = output.decode(errors="replace").strip()[:60]
        raise ValueError(f"no number in the command's output {text!r}")
    watts = float(m.group())
    if not math.isfinite(watts) or watts < 0:
        raise ValueError(f"{watts} is not a power reading")
    return watts


def parse_dcmi(text: str) -> float:
    """Watts from ``ipmitool dcmi power reading``; a deactivated reading is unavailable."""
    state = _DCMI_STATE.search(text)
    if state and state.group(1).lower() != "activated":
        raise PowerUnavailable(f"the BMC's DCMI power reading is {state.group(1)}")
    m = _DCMI.search(text)
    if not m:
        raise ValueError("no 'Instantaneous power reading' in ipmitool's output")
    return float(m.group(1))


def rapl_delta(prev_uj: int, cur_uj: int, max_range_uj: int) -> int:
    """Energy between two readings of a counter that wraps after ``max_range_uj``."""
    if cur_uj >= prev_uj:
        return cur_uj - prev_uj
    return cur_uj + max_range_uj - prev_uj


# -- plugins -------------------------------------------------------------------------------------
class PowerPlugin:
    """A meter. ``probe()`` raises PowerUnavailable or returns details for the timeline."""

    kind = "power"
    polled = True  # read_watts() is slow: a thread polls it

    def probe(self) -> dict:
        raise NotImplementedError

    def read_watts(self) -> float:
        raise NotImplementedError
