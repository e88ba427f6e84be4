"""`oltplab datastore` as a user runs it, on loop devices: btrfs RAID-1 and RAID-5 with zstd
beside an xfs baseline, their space figures, refusals that touch nothing, and a destroy that
leaves no mount, loop device or backing file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import free_port

from ..conftest import datastore as ds
from ..conftest import loops_over as _loops_over
from ..conftest import mounts_under as _mounts_under
from ..conftest import oltplab, saved_runs

MiB = 1024**2


def _fill(mount: Path, compressible: bool, mib: int = 48) -> None:
    data = mount / "data"
    data.mkdir()
    with open(data / "table", "wb") as f:
        for i in range(mib):
            f.write((f"row {i:08d} customer name street city " * 30000)[:MiB].encode()
                    if compressible else os.urandom(MiB))
    os.sync()


def test_raid1_raid5_zstd_and_an_xfs_baseline_then_nothing_left(root):
    p = ds(root, "create", "r1", "--raid", "raid1", "--metadata", "raid1", "--loop", "2x320MiB")
    assert "loop devices over files of one disk measure the storage stack" in p.stderr
    assert "mounted at" in p.stdout
    p = ds(root, "create", "r5z", "--raid", "raid5", "--metadata", "raid1", "--checksum",
           "xxhash", "--compress", "zstd:3", "--loop", "4x320MiB")
    assert "RAID-5/6 is marked unstable upstream" in p.stderr
    ds(root, "create", "base", "--fs", "xfs", "--loop", "1x320MiB")
    listed = ds(root, "list").stdout
    assert [line.split("\t")[0] for line in listed.splitlines()] == ["base", "r1", "r5z"]
    assert listed.count("\tmounted\t") == 3

    docs = {n: json.loads(ds(root, "show", n, "--json").stdout) for n in ("r1", "r5z", "base")}
    r1, r5z, base = docs["r1"], docs["r5z"], docs["base"]
    assert (r1["fs"], r1["raid"], r1["metadata"], r1["checksum"], r1["compress"]) == \
        ("btrfs", "raid1", "raid1", "crc32c", "none")
    assert (r5z["raid"], r5z["checksum"], r5z["compress"]) == ("raid5", "xxhash", "zstd:3")
    assert (base["fs"], base["raid"], base["compress"]) == ("xfs", None, None)
    assert len(r5z["devices"]) == 4 and all(d["loop"]["backing_file"] for d in r5z["devices"])
    assert all(d["size_bytes"] == 320 * MiB for d in r5z["devices"])
    assert "compress=zstd:3" in r5z["mount_options"]
    for doc in docs.values():
        assert set(doc["space"]) >= {"logical_bytes", "apparent_bytes", "allocated_bytes",
                                     "data_ratio", "compression_ratio", "dedupe_saved_bytes"}

    _fill(Path(r1["mount"]), compressible=False)
    _fill(Path(base["mount"]), compressible=False)
    _fill(Path(r5z["mount"]), compressible=False)
    space = {n: json.loads(ds(root, "show", n, "--json").stdout)["space"] for n in docs}
    assert space["r1"]["logical_bytes"] == 48 * MiB
    assert 1.9 <= space["r1"]["data_ratio"] <= 2.15, space["r1"]
    assert 1.25 <= space["r5z"]["data_ratio"] <= 1.45, space["r5z"]  # 4/3: random data stays
    assert space["r5z"]["compression_ratio"] == pytest.approx(1.0, abs=0.02)
    assert 0.95 <= space["base"]["data_ratio"] <= 1.1, space["base"]
    assert space["base"]["compression_ratio"] is None
    assert space["base"]["dedupe_saved_bytes"] is None

    (Path(r5z["mount"]) / "data" / "table").unlink()
    os.sync()
    text = Path(r5z["mount"]) / "text"
    text.mkdir()
    _fill(text, compressible=True)
    z = json.loads(ds(root, "show", "r5z", "--json").stdout)["space"]
    assert z["compression_ratio"] > 3, z  # repeated rows compress well with zstd
    assert z["data_ratio"] < 0.5, z

    for name in ("r1", "r5z", "base"):
        ds(root, "destroy", name)
    assert _mounts_under(root) == [] and _loops_over(root) == []
    assert list(root.iterdir()) == []


def _fingerprint(device: str) -> bytes:
    with open(device, "rb") as f:
        return f.read(1024 * 1024)


@pytest.fixture
def root(datastore_root):
    return datastore_root


@pytest.fixture
def free_loops(root):
    """Two loop devices outside any datastore (over files beside the root), detached after."""
    loops = []
    for i in range(2):
        image = root.parent / f"free{i}.img"
        with open(image, "wb") as f:
            f.truncate(320 * MiB)
        loops.append(subprocess.run(["losetup", "--find", "--show", str(image)],
                                    capture_output=True, text=True, check=True).stdout.strip())
    yield loops
    for loop in loops:
        subprocess.run(["losetup", "--detach", loop])


def test_bad_input_is_one_line_and_touches_no_device(root, free_loops, tmp_path):
    ds(root, "create", "a", "--loop", "1x320MiB")
    [loop] = json.loads(ds(root, "show", "a", "--json").stdout)["devices"]
    # a free loop device with an ext4 signature, and one with nothing on it
    signed, blank = free_loops
    subprocess.run(["mkfs.ext4", "-q", signed], check=True)
    before = {d: _fingerprint(d) for d in (signed, blank)}  # the mounted one changes by itself
    cases = [
        (["create", "a", "--loop", "1x320MiB"], 2, "datastore 'a' exists"),
        (["create", "b", "--devices", loop["path"]], 2, "is part of datastore 'a'"),
        (["create", "b", "--devices", signed], 2,
         "carries a signature (ext4); --force overwrites it"),
        (["create", "b", "--devices", f"{blank},{signed}", "--raid", "raid1"], 2,
         "carries a signature (ext4)"),
        (["create", "b", "--devices", blank, "--raid", "raid1"], 2,
         "--raid raid1 needs at least 2 devices; 1 given"),
        (["create", "b", "--devices", str(tmp_path)], 2, "is not a block device"),
        (["create", "b", "--devices", "/dev/no-such-disk"], 2, "No such file"),
        (["create", "b", "--loop", "16x64TiB"], 2, "is more than the"),
        (["create", "b", "--fs", "ext4", "--devices", blank, "--checksum", "off"], 2,
         "--checksum is a btrfs policy"),
        (["show", "nothing"], 2, "no datastore 'nothing'"),
        (["destroy", "nothing"], 2, "no datastore 'nothing'"),
        (["create", "../up", "--devices", blank], 2, "datastore name '../up'"),
    ]
    for args, rc, message in cases:
        p = ds(root, *args, rc=rc)
        assert message in p.stderr and len(p.stderr.strip().splitlines()) == 1, (args, p.stderr)
    assert {d: _fingerprint(d) for d in before} == before
    assert sorted(p.name for p in root.iterdir()) == ["a"]
    # a mounted member cannot be taken even with --force
    mount = Path(json.loads(ds(root, "show", "a", "--json").stdout)["mount"])
    p = oltplab("datastore", "create", "b", "--devices", loop["path"], "--force", "--root",
                str(tmp_path / "elsewhere"), check_rc=2)
    assert "is in use" in p.stderr or "mounted at" in p.stderr, p.stderr
    # --force takes a device with a signature
    ds(root, "create", "b", "--fs", "ext4", "--devices", signed, "--force")
    ds(root, "destroy", "b")
    assert subprocess.run(["blkid", "-p", signed], capture_output=True).returncode == 2
    busy = subprocess.Popen(["sleep", "60"], cwd=mount)
    try:
        p = ds(root, "destroy", "a", rc=1)
        [error] = [line for line in p.stderr.splitlines() if "error" in line]
        assert error.endswith(f"cannot unmount {mount}: target is busy (stop what uses it: a "
                              "server, a shell inside it)"), error
    finally:
        busy.kill()
        busy.wait()
    ds(root, "destroy", "a")


def test_a_run_on_a_datastore_records_the_policy_and_the_space(root, built_w1):
    ds(root, "create", "r5z", "--raid", "raid5", "--metadata", "raid1", "--compress", "zstd:3",
       "--loop", "4x320MiB")
    mount = Path(json.loads(ds(root, "show", "r5z", "--json").stdout)["mount"])
    flags = ["--datadir", str(built_w1("postgres", mount / "pg")), "--port", str(free_port()),
             "--db-memory", "64MiB"]
    try:
        oltplab("tpcc", "run", *flags, "--users", "1", "--rampup", "1s", "--duration", "3s",
                "--power", "none", cwd=root.parent, check_rc=0)
    finally:
        oltplab("db", "stop", *flags, cwd=root.parent)
    run = json.loads(oltplab("results", "show", "latest", "--json", cwd=root.parent,
                             check_rc=0).stdout)
    store = run["datastores"]["datadir"]
    assert (store["name"], store["fs"], store["raid"], store["metadata"], store["compress"]) == \
        ("r5z", "btrfs", "raid5", "raid1", "zstd:3")
    assert "compress=zstd:3" in store["mount_options"]
    assert len(store["devices"]) == 4 and store["devices"][0]["size_bytes"] == 320 * MiB
    before, after = store["space_before"], store["space_after"]
    assert before["logical_bytes"] > 50 * MiB  # a W=1 schema and its WAL
    assert before["compression_ratio"] > 1.5, before  # PostgreSQL's pages compress
    assert before["data_ratio"] < 4 / 3, before  # parity, less what compression saved
    assert after["logical_bytes"] >= before["logical_bytes"] * 0.9
    ds(root, "destroy", "r5z")


def built_dedupe_ran(root, name) -> bool:
    [run] = json.loads(ds(root, "show", name, "--json").stdout)["dedupe_runs"]
    return run["seconds"] > 0 and run["dedupe_saved_bytes"] is not None


def test_dedupe_shares_duplicate_extents_after_a_build_and_on_demand(root):
    ds(root, "create", "dd", "--loop", "2x400MiB", "--raid", "raid1", "--dedupe")
    mount = Path(json.loads(ds(root, "show", "dd", "--json").stdout)["mount"])
    flags = ["--datadir", str(mount / "pg"), "--port", str(free_port())]
    try:
        p = oltplab("tpcc", "build", *flags, "-w", "1", "--build-users", "2", cwd=root.parent,
                    check_rc=0)
    finally:
        oltplab("db", "stop", *flags, cwd=root.parent)
    assert "dedupe: duperemove took" in p.stdout, p.stdout
    [built] = json.loads(ds(root, "show", "dd", "--json").stdout)["builds"]
    assert built["space"]["logical_bytes"] > 50 * MiB and built["datadir"] == str(mount / "pg")
    # fio in the mount records the datastore under its target too
    oltplab("fio", "run", "--target", str(mount), "--size", "16MiB", "--duration", "1s",
            "--ramp", "0s", "--profile", "4k-randread", "--sample-interval", "0",
            "--results-dir", str(root.parent / "fio"), check_rc=0)
    [fio] = saved_runs(root.parent / "fio")
    assert fio["datastores"]["target"]["name"] == "dd"
    assert built_dedupe_ran(root, "dd")
    shutil.rmtree(mount / "pg")  # the on-demand run below reads the two copies alone
    blob = os.urandom(8 * MiB)
    before = json.loads(ds(root, "show", "dd", "--json").stdout)["space"]
    # the same 8 MiB twice, still in the page cache: dedupe itself must write them out first
    # (duperemove finds no extents of data not yet on disk and shares nothing)
    for name in ("a", "b"):
        (mount / name).write_bytes(blob)
    out = ds(root, "dedupe", "dd").stdout
    assert "shared" in out
    doc = json.loads(ds(root, "show", "dd", "--json").stdout)
    assert doc["dedupe"] is True and len(doc["dedupe_runs"]) == 2  # the build's, then ours
    saved = doc["space"]["dedupe_saved_bytes"] - before["dedupe_saved_bytes"]
    # duperemove shares whole blocks of its own size; an extent partly shared stays allocated
    assert saved >= 4 * MiB, (out, before["dedupe_saved_bytes"], doc["dedupe_runs"][-1])
    assert doc["dedupe_runs"][-1]["duperemove_shared_bytes"] >= 4 * MiB, out
    # the two copies take one copy's blocks (and some metadata), on RAID-1 twice: allocated
    # counts both mirrors, so 16 MiB shared and 32 MiB not
    grown = doc["space"]["allocated_bytes"] - before["allocated_bytes"]
    assert grown <= 2 * 8 * MiB + 2 * MiB, (before, doc["space"])
    p = ds(root, "create", "e", "--fs", "ext4", "--loop", "1x320MiB", "--dedupe", rc=2)
    assert "ext4 has none" in p.stderr
