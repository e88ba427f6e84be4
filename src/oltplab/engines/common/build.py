"""What every engine's build (engines/<engine>/<workload>/loader.py) does alike: the seed of
its rows and the times of its steps in its summary."""

from __future__ import annotations

import random


def draw_seed(seed: int | None) -> int:
    """The seed given, or a random one (such a build's rows cannot be made again unless it
    records the seed it drew)."""
    return seed if seed is not None else random.SystemRandom().randrange(2**62)


def timings(started: float, loading: float, finishing: float, ended: float) -> dict:
    """A build's ``seconds`` and ``phases`` (tables, load, indexes_and_analyze) from the
    monotonic times its steps began at and it ended at."""
    return {"seconds": round(ended - started, 3),
            "phases": {"tables": round(loading - started, 3),
                       "load": round(finishing - loading, 3),
                       "indexes_and_analyze": round(ended - finishing, 3)}}
