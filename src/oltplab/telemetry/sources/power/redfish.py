"""Power from a Redfish service (a BMC's REST API), one plugin of sources/power.py.

Given a chassis URL such as ``https://bmc/redfish/v1/Chassis/1``, the first of these that
holds a number is read on every poll:

- ``Power`` -> ``PowerControl[0].PowerConsumedWatts`` (the original schema, deprecated but
  the most widely served);
- ``EnvironmentMetrics`` -> ``PowerWatts.Reading`` (newer services);
- ``PowerSubsystem`` -> ``PowerSupplies`` -> each supply's ``Metrics`` ->
  ``InputPowerWatts.Reading``, summed over the supplies.

A URL that is itself a Power resource is read directly. Basic authentication; TLS
certificates are verified unless ``verify_tls`` is false (BMCs often have self-signed ones).
"""

from __future__ import annotations

import base64
import json
import re
import ssl
import urllib.error
import urllib.parse
import urllib.request

from ....errors import UsageError
from .base import PowerPlugin, PowerUnavailable


def _reading(obj) -> float | None:
    value = obj.get("Reading") if isinstance(obj, dict) else obj
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def redfish_power_watts(doc: dict) -> float | None:
    """``PowerControl[0].PowerConsumedWatts`` of a (deprecated) Power resource."""
    controls = doc.get("PowerControl") or []
    if controls and isinstance(controls[0], dict):
        return _reading(controls[0].get("PowerConsumedWatts"))
    return None


def redfish_environment_watts(doc: dict) -> float | None:
    """``PowerWatts.Reading`` of an EnvironmentMetrics resource."""
    return _reading(doc.get("PowerWatts"))


def redfish_psu_watts(doc: dict) -> float | None:
    """``InputPowerWatts.Reading`` of a PowerSupplyMetrics resource."""
    return _reading(doc.get("InputPowerWatts"))


class RedfishPower(PowerPlugin):
    kind = "redfish"

    def __init__(self, url: str, user: str | None = None, password: str | None = None,
                 verify_tls: bool = True, timeout: float = 5.0):
        if not re.match(r"https?://", url):
            raise UsageError(f"--power redfish: {url!r} is not an http(s) URL of a chassis")
        self.url = url.rstrip("/")
        self.timeout = timeout
        self._auth = None
        if user is not None:
            token = base64.b64encode(f"{user}:{password or ''}".encode()).decode()
            self._auth = f"Basic {token}"
        self._ssl = None
        if url.startswith("https") and not verify_tls:
            self._ssl = ssl.create_default_context()
            self._ssl.check_hostname = False
            self._ssl.verify_mode = ssl.CERT_NONE
        self._plan: tuple[str, list[str]] | None = None  # (kind, urls)

    def _get(self, url: str) -> dict:
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
        if self._auth:
            request.add_header("Authorization", self._auth)
        with urllib.request.urlopen(request, timeout=self.timeout, context=self._ssl) as r:
            return json.loads(r.read())

    def _link(self, doc: dict, name: str) -> str | None:
        ref = doc.get(name)
        if isinstance(ref, dict) and isinstance(ref.get("@odata.id"), str):
            return urllib.parse.urljoin(self.url + "/", ref["@odata.id"])
        return None

    def _find(self) -> tuple[str, list[str]]:
        doc = self._get(self.url)
        if redfish_power_watts(doc) is not None:  # the URL is a Power resource itself
            return "Power", [self.url]
        power = self._link(doc, "Power")
        if power and redfish_power_watts(self._get(power)) is not None:
            return "Power", [power]
        env = self._link(doc, "EnvironmentMetrics")
        if env and redfish_environment_watts(self._get(env)) is not None:
            return "EnvironmentMetrics", [env]
        subsystem = self._link(doc, "PowerSubsystem")
        if subsystem:
            supplies = self._link(self._get(subsystem), "PowerSupplies")
            members = self._get(supplies).get("Members", []) if supplies else []
            metrics = []
            for m in members:
                ref = m.get("@odata.id") if isinstance(m, dict) else None
                if ref:
                    link = self._link(self._get(urllib.parse.urljoin(self.url + "/", ref)),
                                      "Metrics")
                    if link:
                        metrics.append(link)
            if metrics:
                return "PowerSubsystem", metrics
        raise PowerUnavailable(f"{self.url} has no power reading (Power, EnvironmentMetrics "
                               "or PowerSubsystem)")

    def probe(self) -> dict:
        try:
            self._plan = self._find()
            watts = self.read_watts()
        except PowerUnavailable:
            raise
        except (OSError, ValueError, urllib.error.URLError) as e:
            raise PowerUnavailable(f"Redfish {self.url}: {e}") from None
        return {"url": self.url, "resource": self._plan[0], "first_reading_w": watts}

    def read_watts(self) -> float:
        kind, urls = self._plan
        parse = {"Power": redfish_power_watts, "EnvironmentMetrics": redfish_environment_watts,
                 "PowerSubsystem": redfish_psu_watts}[kind]
        values = [parse(self._get(u)) for u in urls]
        if any(v is None for v in values):
            raise ValueError(f"Redfish {kind} answered without a reading")
        return float(sum(values))
