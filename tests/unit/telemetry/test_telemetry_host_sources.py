"""CPU, memory and network sources: recorded /proc contents with known answers, and a
fake /proc root read through the sources themselves."""

from __future__ import annotations

import math

import pytest

from oltplab.errors import UsageError
from oltplab.telemetry.sources.cpu import CpuSource, cpu_percent, parse_stat
from oltplab.telemetry.sources.memory import MemorySource, memory_figures, parse_meminfo
from oltplab.telemetry.sources.network import NetworkSource, parse_net_dev

STAT_A = b"cpu  1000 100 300 5000 200 50 50 100 40 0\ncpu0 500 50 150 2500 100 25 25 50 20 0\n"
# +600 user, +0 nice, +200 system, +100 idle, +50 iowait, +25 irq, +25 softirq, +0 steal
STAT_B = b"cpu  1600 100 500 5100 250 75 75 100 90 0\ncpu0 800 50 250 2550 125 37 37 50 45 0\n"

MEMINFO = b"""MemTotal:       24684096 kB
MemFree:         9200308 kB
MemAvailable:   22710344 kB
Buffers:           31908 kB
Cached:         14620484 kB
SwapCached:            0 kB
Dirty:             12536 kB
Writeback:             4 kB
SReclaimable:     500000 kB
HugePages_Total:       0
"""

NET_DEV = (
    b"Inter-|   Receive                                                |  Transmit\n"
    b" face |bytes    packets errs drop fifo frame compressed multicast"
    b"|bytes    packets errs drop fifo colls carrier compressed\n"
    b"    lo: 8349312915 2181265    0    0    0     0          0         0 "
    b"8349312915 2181265    0    0    0     0       0          0\n"
    b"  eth0: 108846839    2710    0    0    0     0          0         0 "
    b"  174826    1651    0    0    0     0       0          0\n")


def test_cpu_percentages_add_up_and_fold_as_documented():
    prev, cur = parse_stat(STAT_A), parse_stat(STAT_B)
    assert prev == (1000, 100, 300, 5000, 200, 50, 50, 100)  # guest is not added again
    user, system, idle, iowait, steal = cpu_percent(prev, cur)
    assert (user, system, idle, iowait, steal) == (60.0, 25.0, 10.0, 5.0, 0.0)
    assert all(math.isnan(v) for v in cpu_percent(prev, prev))


def test_cpu_counter_going_backwards_counts_as_zero():
    cur = parse_stat(STAT_B.replace(b" 250 75", b" 150 75", 1))  # iowait went down
    values = cpu_percent(parse_stat(STAT_A), cur)
    assert values[3] == 0.0 and sum(values) == pytest.approx(100.0)


def test_not_a_stat_file():
    with pytest.raises(ValueError):
        parse_stat(b"intr 1 2 3\n")


def test_memory_as_free_reports_it():
    m = parse_meminfo(MEMINFO)
    used, cached, dirty = memory_figures(m)
    assert used == (24684096 - 22710344) * 1024
    assert cached == (31908 + 14620484 + 500000) * 1024
    assert dirty == (12536 + 4) * 1024
    old_kernel = {k: v for k, v in m.items() if k != b"MemAvailable"}
    assert memory_figures(old_kernel)[0] == (24684096 - 9200308 - 31908 - 14620484 - 500000) * 1024


def test_net_dev_parsing():
    assert parse_net_dev(NET_DEV) == {"lo": (8349312915, 8349312915), "eth0": (108846839, 174826)}


def _fake_proc(tmp_path, stat=STAT_A, meminfo=MEMINFO, net=NET_DEV):
    (tmp_path / "net").mkdir(exist_ok=True)
    (tmp_path / "stat").write_bytes(stat)
    (tmp_path / "meminfo").write_bytes(meminfo)
    (tmp_path / "net" / "dev").write_bytes(net)
    return str(tmp_path)


def test_sources_over_a_fake_proc_root(tmp_path):
    root = _fake_proc(tmp_path)
    cpu, mem, net = CpuSource(root), MemorySource(root), NetworkSource("auto", root)
    assert net.columns == ["net.lo.rx_bytes_s", "net.lo.tx_bytes_s",
                           "net.eth0.rx_bytes_s", "net.eth0.tx_bytes_s"]
    for s in (cpu, mem, net):
        s.open()
    t0 = 1_000_000_000
    assert all(math.isnan(v) for v in cpu.read(t0) + net.read(t0))
    assert mem.read(t0)[0] == (24684096 - 22710344) * 1024  # a level: no baseline needed
    _fake_proc(tmp_path, stat=STAT_B,
               net=NET_DEV.replace(b"108846839", b"108856839").replace(b"174826", b"176826"))
    t1 = t0 + 2_000_000_000  # 2 s later
    assert cpu.read(t1) == [60.0, 25.0, 10.0, 5.0, 0.0]
    assert net.read(t1) == [0.0, 0.0, 5000.0, 1000.0]
    for s in (cpu, mem, net):
        s.close()


def test_interfaces_asked_for_must_exist(tmp_path):
    root = _fake_proc(tmp_path)
    assert NetworkSource(["eth0"], root).columns == ["net.eth0.rx_bytes_s", "net.eth0.tx_bytes_s"]
    with pytest.raises(UsageError, match="'wlan9'"):
        NetworkSource("eth0,wlan9", root)
