"""datastore create's options, checked together before any device is touched."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from oltplab.datastores.spec import make_spec, parse_compress, parse_loop
from oltplab.errors import UsageError

GiB = 1024**3


def test_a_btrfs_policy_gives_its_mount_options():
    spec = make_spec("r5z", raid="raid5", metadata="raid1", checksum="off", compress="zstd:3",
                     loop="4x1GiB", mount_options="noatime")
    assert (spec.loop_count, spec.loop_bytes, spec.device_count) == (4, GiB, 4)
    assert spec.mount_opts() == ["compress=zstd:3", "nodatasum", "noatime"]
    spec = make_spec("d", fs="xfs", devices="/dev/sdx")
    assert spec.devices == (Path("/dev/sdx"),) and spec.mount_opts() == []


@pytest.mark.parametrize("kw, message", [
    (dict(raid="raid6", loop="2x1GiB"), "--raid raid6 needs at least 3 devices; 2 given"),
    (dict(metadata="raid1c3", devices="/dev/a,/dev/b"), "--metadata raid1c3 needs at least 3"),
    (dict(raid="dup", loop="2x1GiB"), "--raid dup keeps both copies on one device"),
    (dict(fs="xfs", loop="2x1GiB"), "--fs xfs takes exactly one device, not 2"),
    (dict(fs="ext4", compress="zstd", loop="1x1GiB"), "--compress is a btrfs policy; ext4"),
    (dict(loop="2x1GiB", devices="/dev/a"), "give either --devices"),
    (dict(), "give either --devices"),
    (dict(devices="/dev/a,/dev/a"), "a device is named twice"),
    (dict(raid="raid7", loop="2x1GiB"), "--raid: 'raid7' is not one of"),
    (dict(loop="2x1MiB"), "too small"),
    (dict(loop="99x1GiB"), "count of 1 to 16"),
    (dict(loop="4GiB"), "is not COUNTxSIZE"),
    (dict(devices="/dev/a,/dev/b", spares="2"), "--spares N makes N (1 to 4) more loop"),
    (dict(devices="/dev/a,/dev/b", spares="/dev/b"), "--spares: give devices that are not in"),
    (dict(fs="xfs", devices="/dev/a", spares="/dev/b"), "--spares: xfs replaces no device"),
    (dict(fs="ext4", devices="/dev/a", dedupe=True), "ext4 has none"),
])
def test_inconsistent_options_are_refused_in_one_line(kw, message):
    with pytest.raises(UsageError, match=re.escape(message)) as e:
        make_spec("x", **kw)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("text, ok", [("zstd", True), ("zstd:15", True), ("zstd:16", False),
                                      ("zlib:9", True), ("lzo", True), ("lzo:1", False),
                                      ("none", True), ("gzip", False), ("zstd:x", False)])
def test_compression_levels_are_those_btrfs_takes(text, ok):
    if ok:
        assert parse_compress(text) == text
    else:
        with pytest.raises(UsageError, match="--compress"):
            parse_compress(text)


def test_names_are_folder_names():
    for bad in ("", "../x", "a/b", "-x", "x" * 64):
        with pytest.raises(UsageError, match="datastore name"):
            make_spec(bad, loop="1x1GiB")
    assert parse_loop("2X512MiB") == (2, 512 * 1024**2)


def test_spares_are_loop_devices_or_named_devices():
    spec = make_spec("r", raid="raid1", loop="3x1GiB", spares="1")
    assert (spec.spare_loops, spec.spares) == (1, ())
    assert spec.describe() == "btrfs raid1/default on 3 loop devices of 1GiB, 1 spare"
    spec = make_spec("r", raid="raid1", devices="/dev/a,/dev/b", spares="/dev/c")
    assert spec.spares == (Path("/dev/c"),) and spec.spare_loops == 0


def test_duperemove_shared_reads_its_summary_line():
    from oltplab.datastores.service import duperemove_shared
    out = ("Total files:  2\nFound 2 identical extents.\n"
           "Comparison of extent info shows a net change in shared extents of: 16777216\n")
    assert duperemove_shared(out) == 16777216
    assert duperemove_shared("Total files: 0\n") is None
    assert duperemove_shared("net change in shared extents of: -4096") == -4096
