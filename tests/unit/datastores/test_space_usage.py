"""``btrfs filesystem usage -b``'s raw Used, and when btrfs-progs leaves RAID-5/6 chunks out of
it: outputs of btrfs-progs 6.2 and 5.4 on one RAID-5 file system (3 loop devices, 100 MiB of
random data: 150 MiB raw with parity) and a RAID-1 one, as root and as an unprivileged user."""

from __future__ import annotations

from oltplab.datastores.space import parse_usage

HEAD = "Overall:\n    Device size:\t\t        1610612736\n"

RAID5_ROOT = HEAD + """\
    Used:\t\t\t         157810688
    Data ratio:\t\t\t              1.50
    Metadata ratio:\t\t              2.00

Data,RAID5: Size:301989888, Used:104857600 (34.72%)
   /dev/loop0\t 150994944
Metadata,RAID1: Size:80478208, Used:245760 (0.31%)
System,RAID1: Size:8388608, Used:16384 (0.20%)
"""

# btrfs-progs 6.2 as an unprivileged user: no chunk tree, so no RAID-5 chunk counted
RAID5_NO_CHUNK_TREE = HEAD + """\
    Used:\t\t\t            524288
    Data ratio:\t\t\t              0.00
    Metadata ratio:\t\t              2.00

Data,RAID5: Size:301989888, Used:104857600 (34.72%)

Metadata,RAID1: Size:80478208, Used:245760 (0.31%)

System,RAID1: Size:8388608, Used:16384 (0.20%)
"""
NO_CHUNK_TREE = ("WARNING: cannot read detailed chunk info, per-device usage will not be "
                 "shown, run as root\n")

# btrfs-progs 5.4 as root on the same file system
RAID5_BEFORE_5_7 = HEAD + """\
    Used:\t\t\t            524288
    Free (estimated):\t\t                 0\t(min: 9223372037571215360)
    Data ratio:\t\t\t              0.00
    Metadata ratio:\t\t              2.00

Data,RAID5: Size:301989888, Used:104857600 (34.72%)
   /dev/loop0\t 150994944
   /dev/loop1\t 150994944
   /dev/loop2\t 150994944

Metadata,RAID1: Size:80478208, Used:245760 (0.31%)
   /dev/loop1\t  80478208
   /dev/loop2\t  80478208
"""
RAID56_NOT_IMPLEMENTED = "WARNING: RAID56 detected, not implemented\n"

RAID1_NO_CHUNK_TREE = """Overall:
    Used:\t\t\t          42303488
    Data ratio:\t\t\t              2.00
    Metadata ratio:\t\t              2.00

Data,RAID1: Size:67108864, Used:20971520 (31.25%)
Metadata,RAID1: Size:33554432, Used:163840 (0.49%)
"""


def test_raid5_counted_where_btrfs_progs_reads_the_chunk_tree():
    raw = parse_usage(RAID5_ROOT, "")
    assert raw.printed == 157810688 and raw.not_counted is None


def test_raid5_before_btrfs_progs_5_7_is_not_counted_and_says_so():
    raw = parse_usage(RAID5_BEFORE_5_7, RAID56_NOT_IMPLEMENTED * 3)
    assert raw.printed == 524288  # metadata and system only: what was recorded as allocated
    assert raw.not_counted == ("btrfs filesystem usage cannot count the RAID-5/6 chunks here "
                               "(RAID56 detected, not implemented): its Used leaves them out")


def test_raid5_without_the_chunk_tree_is_not_counted():
    raw = parse_usage(RAID5_NO_CHUNK_TREE, NO_CHUNK_TREE)
    assert raw.not_counted is not None and "cannot read detailed chunk info" in raw.not_counted
    raw = parse_usage(RAID5_NO_CHUNK_TREE, "")  # no warning, but a ratio of 0.00
    assert raw.not_counted is not None and "Data ratio 0.00" in raw.not_counted


def test_a_warning_that_leaves_no_chunk_out_is_no_reason():
    raw = parse_usage(RAID1_NO_CHUNK_TREE, NO_CHUNK_TREE)
    assert raw.printed == 42303488 and raw.not_counted is None
