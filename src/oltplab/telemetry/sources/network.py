"""Network bytes per second and interface, from /proc/net/dev.

``net.<interface>.rx_bytes_s`` and ``net.<interface>.tx_bytes_s`` for every interface present
when sampling starts (or the ones asked for). The loopback interface is kept: a database on
the same host talks to its clients over it.
"""

from __future__ import annotations

from ...errors import UsageError
from . import NAN, ProcFile, Source, counter_delta

RX_BYTES, TX_BYTES = 0, 8  # fields after "name:"


def column(interface: str, metric: str) -> str:
    return f"net.{interface}.{metric}"


def parse_net_dev(text: bytes) -> dict[str, tuple[int, int]]:
    """{interface: (rx_bytes, tx_bytes)}."""
    out = {}
    for line in text.splitlines():
        name, sep, rest = line.partition(b":")
        if not sep or b"|" in line:
            continue
        fields = rest.split()
        if len(fields) > TX_BYTES:
            out[name.strip().decode()] = (int(fields[RX_BYTES]), int(fields[TX_BYTES]))
    return out


class NetworkSource(Source):
    name = "network"

    def __init__(self, interfaces="auto", proc_root: str = "/proc"):
        super().__init__()
        self.path = f"{proc_root}/net/dev"
        try:
            with open(self.path, "rb") as f:
                known = list(parse_net_dev(f.read()))
        except OSError:
            known = []
        if interfaces == "auto" or interfaces is None:
            self.interfaces = known
        else:
            if isinstance(interfaces, str):
                interfaces = [i.strip() for i in interfaces.split(",") if i.strip()]
            for name in interfaces:
                if name not in known:
                    raise UsageError(f"network interface {name!r} is not in /proc/net/dev")
            self.interfaces = list(dict.fromkeys(interfaces))
        self.columns = [column(i, m) for i in self.interfaces
                        for m in ("rx_bytes_s", "tx_bytes_s")]
        self.units = {c: "bytes/s" for c in self.columns}
        self._file: ProcFile | None = None
        self._prev: dict[str, tuple[int, int]] | None = None
        self._prev_t = 0

    def open(self) -> None:
        self._file = ProcFile(self.path)

    def read(self, t_ns: int) -> list[float]:
        cur = parse_net_dev(self._file.read())
        prev, prev_t = self._prev, self._prev_t
        self._prev, self._prev_t = cur, t_ns
        if prev is None or t_ns <= prev_t:
            return [NAN] * len(self.columns)
        dt_s = (t_ns - prev_t) / 1e9
        out = []
        for name in self.interfaces:
            if name in cur and name in prev:
                out.append(counter_delta(prev[name][0], cur[name][0]) / dt_s)
                out.append(counter_delta(prev[name][1], cur[name][1]) / dt_s)
            else:
                out.extend((NAN, NAN))
        return out

    def describe(self) -> dict:
        return {"interfaces": list(self.interfaces)}

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
