"""Named storage profiles, as HCIBench users know them: data, not code.

A profile fixes what is measured (block size, access pattern, read share); how hard it is driven
(``--iodepth``, ``--jobs``), how much is touched (``--size``) and for how long are run options.
Groups expand to several profiles: ``easy`` is HCIBench's "easy run" (the four corners plus the
70/30 and 50/50 mixes), ``bs-sweep`` the 70/30 random mix across block sizes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError

DEFAULT_PROFILE = "4k-70r30w-random"
SWEEP_SIZES = ("4k", "8k", "16k", "32k", "64k", "128k", "256k")


@dataclass(frozen=True)
class Profile:
    """One fio workload: ``rw`` is fio's access pattern, ``rwmixread`` the read percentage."""

    name: str
    bs: str
    rw: str
    rwmixread: int
    description: str

    @property
    def bs_bytes(self) -> int:
        return parse_fio_size(self.bs)


def _mix(bs: str, read: int) -> Profile:
    return Profile(f"{bs}-{read}r{100 - read}w-random", bs, "randrw", read,
                   f"{bs} random, {read}% reads")


def _build() -> dict[str, Profile]:
    listed = [
        Profile("4k-randread", "4k", "randread", 100, "4k random reads"),
        Profile("4k-randwrite", "4k", "randwrite", 0, "4k random writes"),
        _mix("8k", 50),
        Profile("128k-seqread", "128k", "read", 100, "128k sequential reads"),
        Profile("128k-seqwrite", "128k", "write", 0, "128k sequential writes"),
        Profile("256k-seqread", "256k", "read", 100, "256k sequential reads"),
        Profile("256k-seqwrite", "256k", "write", 0, "256k sequential writes"),
    ]
    listed += [_mix(bs, 70) for bs in SWEEP_SIZES]
    return {p.name: p for p in sorted(listed, key=lambda p: (p.bs_bytes, p.name))}


GROUPS: dict[str, tuple[str, ...]] = {
    "easy": ("4k-randread", "4k-randwrite", "256k-seqread", "256k-seqwrite",
             "4k-70r30w-random", "8k-50r50w-random"),
    "bs-sweep": tuple(f"{bs}-70r30w-random" for bs in SWEEP_SIZES),
}

_FIO_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024**2, "mb": 1024**2,
              "mib": 1024**2, "g": 1024**3, "gb": 1024**3, "gib": 1024**3, "t": 1024**4,
              "tb": 1024**4, "tib": 1024**4}


def parse_fio_size(text: str) -> int | None:
    """A size as fio reads it with its default ``kb_base=1024`` (4k = 4KB = 4KiB = 4096).

    None for what is not a plain size (percentages, ranges, ``${VAR}``).
    """
    s = str(text).strip().lower()
    digits = s.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = s[len(digits):]
    try:
        value = float(digits)
    except ValueError:
        return None
    if unit not in _FIO_UNITS or value < 0:
        return None
    return int(value * _FIO_UNITS[unit])


PROFILES: dict[str, Profile] = _build()


def resolve(names: tuple[str, ...] | list[str]) -> tuple[Profile, ...]:
    """Profiles for names and groups, in the order given; unknown names are a usage error."""
    out: list[Profile] = []
    for name in names:
        if name in GROUPS:
            out.extend(PROFILES[n] for n in GROUPS[name])
        elif name in PROFILES:
            out.append(PROFILES[name])
        else:
            raise UsageError(f"--profile: unknown profile {name!r} (see 'oltplab fio profiles'; "
                             "a fio job file is given by its path)")
    return tuple(out)
