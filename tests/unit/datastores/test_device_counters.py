"""The device counters a device fault's bytes come from (faults/datastore.py): a device named
by any link to its node is read from /proc/diskstats under the node's name, in bytes."""

from __future__ import annotations

import os

from oltplab.faults.datastore import block_name, io_bytes, io_delta, rate

# /proc/diskstats: major minor name, then reads, merged, sectors read, ms, writes, merged,
# sectors written, ...
DISKSTATS = (" 7 3 loop3 120 0 2048 10 300 0 8192 40 0 50 50 0 0 0 0 0 0\n"
             " 7 4 loop4 1 0 8 0 2 0 16 0 0 0 0 0 0 0 0 0 0\n")


def test_a_link_to_a_device_is_read_under_its_node_s_name(tmp_path):
    stats = tmp_path / "diskstats"
    stats.write_text(DISKSTATS)
    link = tmp_path / "disk-by-id"
    os.symlink("/dev/loop3", link)
    assert block_name(str(link)) == "loop3" and block_name("/dev/loop4") == "loop4"
    assert io_bytes([str(link), "/dev/loop4", "/dev/loop9"], str(stats)) == {
        str(link): (2048 * 512, 8192 * 512), "/dev/loop4": (8 * 512, 16 * 512)}


def test_the_bytes_between_two_readings_and_the_rate_in_mb():
    before = {"a": (100, 1000), "b": (0, 0), "gone": (5, 5), "reset": (900, 900)}
    after = {"a": (150, 4000), "b": (0, 512), "reset": (10, 10)}
    assert io_delta(before, after) == {"a": (50, 3000), "b": (0, 512)}
    assert rate(95_215_616, 2.447) == 38.9  # MB = 10^6 bytes
    assert rate(None, 2.0) is None and rate(10**6, 0) is None
