"""RAPL: the energy counters of /sys/class/powercap (see the package's docstring)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .. import NAN
from .base import PowerPlugin, PowerUnavailable, rapl_delta


class RaplPower(PowerPlugin):
    kind = "rapl"
    polled = False

    def __init__(self, root: str | Path = "/sys/class/powercap"):
        self.root = Path(root)
        self.zones: list[tuple[str, Path, int]] = []  # (name, energy_uj path, max range)

    def probe(self) -> dict:
        try:
            entries = sorted(os.listdir(self.root))
        except OSError:
            raise PowerUnavailable(f"no {self.root} (no RAPL energy counters)") from None
        top = [e for e in entries if re.fullmatch(r"intel-rapl:\d+", e)]
        sub = [e for e in entries if re.fullmatch(r"intel-rapl:\d+:\d+", e)]
        names = {e: _read_text(self.root / e / "name") for e in top + sub}
        psys = [e for e in top if names[e] == "psys"]
        if psys:
            chosen = psys
        else:
            packages = [e for e in top if (names[e] or "").startswith("package")]
            chosen = packages + [e for e in sub if names[e] == "dram"
                                 and e.rsplit(":", 1)[0] in packages]
        if not chosen:
            raise PowerUnavailable(f"no RAPL package or psys zone in {self.root}")
        zones = []
        for e in chosen:
            path = self.root / e / "energy_uj"
            try:
                int(path.read_text())
                max_range = int((self.root / e / "max_energy_range_uj").read_text())
            except PermissionError:
                raise PowerUnavailable(f"{path} is readable by root only") from None
            except (OSError, ValueError) as err:
                raise PowerUnavailable(f"cannot read {path}: {err}") from None
            label = names[e] if e in top else f"{names[e.rsplit(':', 1)[0]]}/{names[e]}"
            zones.append((label, path, max_range))
        self.zones = zones
        return {"zones": [z[0] for z in zones], "covers": "CPU packages and DRAM"
                if not psys else "platform (psys)"}

    def read_energy(self) -> list[int]:
        return [int(path.read_bytes()) for _, path, _ in self.zones]

    def watts(self, prev: list[int], cur: list[int], dt_s: float) -> float:
        joules = sum(rapl_delta(p, c, z[2]) for p, c, z in zip(prev, cur, self.zones)) / 1e6
        return joules / dt_s if dt_s > 0 else NAN


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None
