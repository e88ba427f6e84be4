"""Throughput around an injected fault: pure arithmetic on completions per second.

``series[i]`` is the number of transactions completed in second ``[i, i + 1)`` of the measured
window. For a fault at ``at_s`` (seconds into the window) that lasts ``for_s`` (0 for a kill):

- before: the mean of the BEFORE_S seconds before the fault (or of what exists), as TPM;
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
from dataclasses import dataclass

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

    def as_dict(self) -> dict:
        return {"before_tpm": _round(self.before_tpm), "dip_avg_pct": _round(self.dip_avg_pct),
                "dip_max_pct": _round(self.dip_max_pct),
                "back_within_10pct_s": _round(self.back_within_10pct_s), "dip_s": self.dip_s}


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


NONE = Dip(None, None, None, None, None)


def dip(series: list[int], at_s: float, for_s: float = 0.0) -> Dip:
    """The figures above for a fault at ``at_s`` lasting ``for_s`` seconds."""
    first = math.floor(at_s + 0.5)  # the first second at least half after the fault began
    before = series[max(0, int(at_s) - BEFORE_S):int(at_s)]
    if not before or first >= len(series):
        return NONE
    per_s = sum(before) / len(before)
    if per_s <= 0:
        return Dip(0.0, None, None, None, None)
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
               len(during))
