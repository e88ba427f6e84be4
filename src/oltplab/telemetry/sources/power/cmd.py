"""Meters read by running a command: any command that prints watts, and ipmitool's DCMI
reading."""

from __future__ import annotations

import shlex
import shutil
import subprocess

from ....errors import UsageError
from .base import PowerPlugin, PowerUnavailable, parse_dcmi, parse_watts


class CommandPower(PowerPlugin):
    kind = "command"

    def __init__(self, command, timeout: float = 5.0):
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise UsageError("--power cmd: give a command that prints watts")
        self.timeout = timeout

    def _run(self) -> bytes:
        try:
            p = subprocess.run(self.argv, capture_output=True, timeout=self.timeout,
                               stdin=subprocess.DEVNULL)
        except FileNotFoundError:
            raise PowerUnavailable(f"{self.argv[0]}: command not found") from None
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{self.argv[0]} did not answer within "
                               f"{self.timeout:g} s") from None
        if p.returncode != 0:
            first = (p.stderr or p.stdout).decode(errors="replace").strip().splitlines()
            raise RuntimeError(f"{self.argv[0]} exited with {p.returncode}"
                               + (f": {first[0]}" if first else ""))
        return p.stdout

    def probe(self) -> dict:
        try:
            watts = self.read_watts()
        except PowerUnavailable:
            raise
        except Exception as e:
            raise PowerUnavailable(str(e)) from None
        return {"command": self.argv, "first_reading_w": watts}

    def read_watts(self) -> float:
        return parse_watts(self._run())


class IpmiPower(CommandPower):
    kind = "ipmi"

    def __init__(self, timeout: float = 5.0):
        super().__init__(["ipmitool", "dcmi", "power", "reading"], timeout)

    def probe(self) -> dict:
        if shutil.which("ipmitool") is None:
            raise PowerUnavailable("ipmitool is not installed")
        return super().probe()

    def read_watts(self) -> float:
        return parse_dcmi(self._run().decode(errors="replace"))
