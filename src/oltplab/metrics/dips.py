"""Throughput around an injected fault: pure arithmetic on completions per second.

``series[i]`` is the number of transactions completed in second ``[i, i + 1)`` of the measured
window. For a fault at ``at_s`` (seconds into the window) that lasts ``for_s`` (0 for a kill):

- before: the mean of the BEFORE_S seconds before the fault (or of what exists), as TPM;
  ``before_s`` of them. Of several faults in one window (``dips``), a fault's before holds no
  earlier fault nor its recovery: only the seconds after the latest earlier disturbance, which
  runs from that fault's at_s to its return within 10% (or, when it never came back, to its
  end plus its duration once more: the settled level after it); when no second is left, the
  figures are None and ``note`` says why;
- back within 10%: seconds from the fault to the first whole second ``i`` from the fault's end
  on (``at_s + for_s``: a throttle may bite late in its window) that itself and the mean of
  the SMOOTH_S seconds from it (or what exists) are at least 90% of before (the mean keeps one
  lucky second from counting; the second itself keeps a catch-up burst after a stall from
  counting for the stall);
- the dip: the seconds from the fault's second to that return (at least one second); its
  mean and its lowest second, as % below before (negative: above). The fault's second is the
  first of which at least half lies after the fault: a fault fired a few milliseconds after
  the second it was asked for (at 3.001 s for at=3s) dips that second, not the next one.

Figures that cannot be computed (no second before the fault, no second after it) are None.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

BEFORE_S = 60
SMOOTH_S = 5
BACK_WITHIN = 0.10


@dataclass(frozen=True)
class Dip:
    before_tpm: float | None
    dip_avg_pct: float | None
    dip_max_pct: float | None
    back_within_10pct_s: float | None
    dip_s: int | None  # length of the dip window, whole seconds
    before_s: int | None = None  # the seconds the before figure is the mean of
    note: str | None = None  # why the figures are None, when a reason is known

    def as_dict(self) -> dict:
        return {"before_tpm": _round(self.before_tpm), "dip_avg_pct": _round(self.dip_avg_pct),
                "dip_max_pct": _round(self.dip_max_pct),
                "back_within_10pct_s": _round(self.back_within_10pct_s), "dip_s": self.dip_s,
                "before_s": self.before_s, "dip_note": self.note}


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


NONE = Dip(None, None, None, None, None)


def dip(series: list[int], at_s: float, for_s: float = 0.0, clear_from: float = 0.0) -> Dip:
    """The figures above for a fault at ``at_s`` lasting ``for_s`` seconds, its before taken
    from the whole seconds that begin at ``clear_from`` or later."""
    first = math.floor(at_s + 0.5)  # the first second at least half after the fault began
    before = series[max(0, math.ceil(clear_from), int(at_s) - BEFORE_S):int(at_s)]
    if not before or first >= len(series):
        return NONE
    per_s = sum(before) / len(before)
    if per_s <= 0:
        return Dip(0.0, None, None, None, None, len(before))
    back = None
    for i in range(math.ceil(at_s + for_s), len(series)):
        ahead = series[i:i + SMOOTH_S]
        floor = (1 - BACK_WITHIN) * per_s
        if series[i] >= floor and sum(ahead) / len(ahead) >= floor:
            back = i
            break
    end = len(series) if back is None else back
    end = min(len(series), max(end, first + 1))
    during = series[first:end]
    return Dip(per_s * 60, 100 * (1 - sum(during) / len(during) / per_s),
               100 * (1 - min(during) / per_s), None if back is None else back - at_s,
               len(during), len(before))


@dataclass(frozen=True)
class Fault:
    """One fault of a window, as the dips need it."""

    at_s: float
    for_s: float = 0.0  # how long the fault itself lasts (a throttle's window, a rebuild)
    down_s: float = 0.0  # how long the server did not answer (a kill's recovery)
    name: str = "an earlier fault"


def disturbed_until(fault: Fault, found: Dip) -> float:
    """When the disturbance of ``fault`` (whose figures are ``found``) ends: its return within
    10%, or, when it never came back, its end plus its duration once more."""
    if found.back_within_10pct_s is not None:
        return fault.at_s + found.back_within_10pct_s
    return fault.at_s + 2 * max(fault.for_s, fault.down_s)


def dips(series: list[int], faults: Sequence[Fault]) -> list[Dip]:
    """The figures of each of ``faults`` (in their order), each against a before that holds no
    earlier fault nor its recovery."""
    found: dict[int, Dip] = {}
    ended: list[tuple[float, Fault]] = []  # (disturbed until, fault) of those done
    for i in sorted(range(len(faults)), key=lambda k: faults[k].at_s):
        f = faults[i]
        earlier = [(end, e) for end, e in ended if e.at_s < f.at_s]
        clear, last = max(earlier, key=lambda x: x[0], default=(0.0, None))
        d = dip(series, f.at_s, f.for_s, clear)
        if last is not None and d.before_tpm is None and math.ceil(clear) >= int(f.at_s):
            d = replace(d, before_s=0, note=(
                f"no second before it is clear of {last.name} at {last.at_s:g} s and its "
                f"recovery (until {clear:.1f} s)"))
        found[i] = d
        ended.append((disturbed_until(f, d), f))
    return [found[i] for i in range(len(faults))]
