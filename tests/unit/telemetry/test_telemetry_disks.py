"""iostat's figures from /proc/diskstats, with known answers; which devices are sampled."""

from __future__ import annotations

import math
import os
import time

import pytest

from oltplab.errors import UsageError
from oltplab.telemetry.sources import U32, counter_delta
from oltplab.telemetry.sources.disks import (METRICS, DiskSource, choose_devices, iostat_figures,
                                             parse_diskstats, path_device, whole_disks)

# major minor name, then 17 counters: reads merged sectors ms, writes merged sectors ms,
# in-flight, io_ticks, weighted_ms, discards (4 fields), flushes, flush_ms
BEFORE = b"""   7       0 loop0 50 0 400 3 0 0 0 0 0 4 3 0 0 0 0 0 0
 254       0 vda 1000 10 8000 500 2000 20 16000 4000 0 900 4500 0 0 0 0 100 50
 254       1 vda1 990 10 7900 490 1990 20 15900 3990 0 890 4480 0 0 0 0 0 0
"""
AFTER_2S = b"""   7       0 loop0 50 0 400 3 0 0 0 0 0 4 3 0 0 0 0 0 0
 254       0 vda 1200 10 12096 600 2400 20 24192 5200 3 1900 5800 0 0 0 0 120 60
 254       1 vda1 1190 10 11996 590 2390 20 24092 5190 3 1890 5780 0 0 0 0 0 0
"""


def figures(before: bytes, after: bytes, dt: float, dev: str = "vda") -> dict:
    prev, cur = parse_diskstats(before)[dev], parse_diskstats(after)[dev]
    return dict(zip(METRICS, iostat_figures(prev, cur, dt)))


def test_parse_keeps_every_field_and_filters_names():
    stats = parse_diskstats(BEFORE)
    assert set(stats) == {"loop0", "vda", "vda1"}
    assert stats["vda"][:4] == (1000, 10, 8000, 500) and len(stats["vda"]) == 17
    assert set(parse_diskstats(BEFORE, {"vda"})) == {"vda"}


def test_iostat_formulas_known_answer():
    f = figures(BEFORE, AFTER_2S, 2.0)
    assert f["r_s"] == 100.0 and f["w_s"] == 200.0  # 200 reads, 400 writes in 2 s
    assert f["rMB_s"] == 1.0 and f["wMB_s"] == 2.0  # 4096 and 8192 sectors of 512 B
    assert f["r_await"] == 0.5  # 100 ms over 200 reads
    assert f["w_await"] == 3.0  # 1200 ms over 400 writes
    assert f["aqu_sz"] == pytest.approx(0.65)  # 1300 weighted ms in 2000 ms
    assert f["util"] == 50.0  # 1000 ms busy in 2000 ms
    assert f["f_s"] == 10.0


def test_no_io_means_no_latency_and_util_is_capped():
    f = figures(BEFORE, BEFORE, 1.0)
    assert f["r_s"] == 0 and math.isnan(f["r_await"]) and math.isnan(f["w_await"])
    busy = AFTER_2S.replace(b" 1900 5800", b" 2200 5800")  # 1300 ms busy in 1 s: clock skew
    assert figures(BEFORE, busy, 1.0)["util"] == 100.0


def test_32_bit_millisecond_counters_wrap():
    before = b" 8 0 sda 10 0 80 4294967000 0 0 0 0 0 4294967290 4294967200\n"
    after = b" 8 0 sda 20 0 160 200 0 0 0 0 0 10 300\n"
    f = figures(before, after, 1.0, "sda")
    assert f["r_await"] == pytest.approx((200 + U32 - 4294967000) / 10)  # 49.6 ms
    assert f["util"] == pytest.approx((10 + U32 - 4294967290) / 10)
    assert f["aqu_sz"] == pytest.approx((300 + U32 - 4294967200) / 1000)
    assert math.isnan(f["f_s"])  # a kernel without flush fields


def test_counter_reset_above_32_bits_is_unknown():
    assert counter_delta(5, 7) == 2
    assert counter_delta(U32 - 1, 3) == 4
    assert math.isnan(counter_delta(U32 + 10, 3))


def _fake_sys(root, entries: dict[str, str]):
    (root / "block").mkdir(parents=True)
    for name, where in entries.items():
        target = root / where / name
        target.mkdir(parents=True)
        os.symlink(target, root / "block" / name)
    return str(root)


def test_auto_picks_physical_whole_disks_only(tmp_path):
    sys_root = _fake_sys(tmp_path, {"sda": "devices/pci0000:00/ata1/block",
                                    "nvme0n1": "devices/pci0000:00/nvme/block",
                                    "loop0": "devices/virtual/block",
                                    "dm-0": "devices/virtual/block",
                                    "zram0": "devices/virtual/block"})
    assert whole_disks(sys_root) == {"dm-0": True, "loop0": True, "nvme0n1": False,
                                     "sda": False, "zram0": True}
    known = {"sda", "sda1", "sda2", "nvme0n1", "nvme0n1p1", "loop0", "dm-0", "zram0"}
    chosen, roles = choose_devices("auto", None, known, sys_root)
    assert chosen == ["nvme0n1", "sda"] and roles == {}
    # asked for explicitly, a partition or a loop device is sampled
    assert choose_devices(["sda1", "/dev/loop0"], None, known, sys_root)[0] == ["sda1", "loop0"]
    assert choose_devices("sda,dm-0", None, known, sys_root)[0] == ["sda", "dm-0"]
    with pytest.raises(UsageError, match="'sdz' is not in /proc/diskstats"):
        choose_devices(["sdz"], None, known, sys_root)


def test_device_behind_a_path_is_found_and_sampled():
    src = DiskSource("auto", {"datadir": "/var/tmp", "nowhere": "/proc"})
    role = src.roles["datadir"]
    assert role["path"] == "/var/tmp"
    if role["device"] is None:
        pytest.skip(f"no block device behind /var/tmp here: {role['reason']}")
    assert role["device"] in src.devices and src.devices[0] == role["device"]
    assert os.path.exists(f"/sys/block/{role['device']}")  # a whole disk, not a partition
    assert src.roles["nowhere"]["device"] is None and src.roles["nowhere"]["reason"]
    assert src.describe()[role["device"]]["roles"] == ["datadir"]


def test_a_device_node_is_its_own_device():
    disk = next((n for n, virtual in whole_disks().items() if not virtual), None)
    if disk is None or not os.path.exists(f"/dev/{disk}"):
        pytest.skip("no physical disk node here")
    found = path_device(f"/dev/{disk}")
    assert (found["device"], found["partition"]) == (disk, None)


def test_real_diskstats_give_finite_rates():
    src = DiskSource("auto", {"datadir": "/var/tmp"})
    if not src.devices:
        pytest.skip("no physical disk here")
    src.open()
    try:
        first = src.read(time.monotonic_ns())
        assert all(math.isnan(v) for v in first)  # the baseline
        time.sleep(0.05)
        values = dict(zip(src.columns, src.read(time.monotonic_ns())))
    finally:
        src.close()
    dev = src.devices[0]
    for m in ("r_s", "w_s", "rMB_s", "wMB_s", "aqu_sz", "util"):
        v = values[f"disk.{dev}.{m}"]
        assert v >= 0 and math.isfinite(v)
