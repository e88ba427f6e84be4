"""A plan's datastore set against the record of one that exists: the policies the file system
has (not the words it was made with), its devices, and whether a fault changed it since the
plan made it."""

from __future__ import annotations

import json

import pytest

from oltplab.config import parse_inject
from oltplab.datastores.spec import Difference, altering, make_spec
from oltplab.errors import OltplabError, UsageError
from oltplab.plans.datastores import check_at_start, made_as_asked, mark_altering, why_restore
from oltplab.plans.model import load_plan

GiB = 1024**3


def record(name: str = "r1two", loops: int = 2, asked: dict | None = None, **top) -> dict:
    """A datastore.json as ``datastore create NAME --raid raid1 --loop 2x1GiB`` writes it:
    metadata not asked, mkfs chose raid1 over two devices."""
    doc = {"format": "oltplab-datastore", "name": name, "fs": "btrfs", "dedupe": False,
           "asked": asked or {"fs": "btrfs", "raid": "raid1", "metadata": None,
                              "checksum": None, "compress": None},
           "raid": "raid1", "metadata": "raid1", "checksum": "crc32c", "compress": "none",
           "mount_options": [], "devices": [f"/dev/loop{i}" for i in range(loops)],
           "spares": [], "loop": {"count": loops, "bytes": GiB}}
    doc.update(top)
    return doc


def test_a_datastore_made_as_the_readme_shows_has_what_the_plan_asks():
    spec = make_spec("r1two", raid="raid1", metadata="raid1", loop="2x1GiB")
    doc = record()
    assert spec.differences(doc) == []  # metadata raid1 is what btrfs chose by itself
    assert not made_as_asked(spec, doc) and why_restore(spec, doc) is None
    # keys the plan leaves unset are the file system's choice, not compared
    assert make_spec("r1two", loop="2x1GiB").differences(doc) == []
    # a compression without a level is btrfs' default level
    assert make_spec("z", compress="zstd", loop="2x1GiB").differences(
        record(compress="zstd:3")) == []


def test_each_differing_key_is_named_with_what_the_file_system_has():
    doc = record()
    diffs = make_spec("r1two", raid="raid1", metadata="dup", loop="2x1GiB").differences(doc)
    assert diffs == [Difference("metadata", "metadata raid1", "dup")]
    assert diffs[0].text("r1two") == "datastore 'r1two' has metadata raid1, the plan asks dup"
    spec = make_spec("r1two", raid="raid5", checksum="xxhash", compress="zstd:3", dedupe=True,
                     loop="3x2GiB")
    assert [d.key for d in spec.differences(doc)] == ["raid", "checksum", "compress", "dedupe",
                                                      "devices", "loop"]
    assert [d.text("r1two") for d in spec.differences(doc)][-2:] == [
        "datastore 'r1two' has 2 devices, the plan asks 3",
        "datastore 'r1two' has loop devices of 1GiB, the plan asks loop devices of 2GiB"]
    xfs = make_spec("b", fs="xfs", loop="1x1GiB")
    assert xfs.differences(record(loops=1)) == [Difference("fs", "file system btrfs", "xfs")]


def test_a_device_removed_from_the_plans_datastore_makes_it_again():
    spec = make_spec("r1", raid="raid1", metadata="raid1", loop="3x1GiB")
    asked = spec.policy()
    made = record("r1", loops=3, asked=asked)
    assert made_as_asked(spec, made) and why_restore(spec, made) is None
    removed = record("r1", loops=3, asked=asked, devices=["/dev/loop1", "/dev/loop2"],
                     removed=["/dev/loop0"])
    assert why_restore(spec, removed) == "datastore 'r1' has 2 devices, the plan asks 3"
    assert spec.differences(removed)[0].text("r1", "the cell asks for") == \
        "datastore 'r1' has 2 devices, the cell asks for 3"
    # a plan's fault marked it: made again even where the record shows nothing else
    failed = record("r1", loops=3, asked=asked, altered=["at=5s,fail-device=2"])
    assert why_restore(spec, failed) == "changed by --inject at=5s,fail-device=2"
    # converted back and forth by hand, made otherwise: the plan does not take it
    other = record("r1", loops=3, raid="raid5")
    assert not made_as_asked(spec, other) and why_restore(spec, other) is None
    assert spec.differences(other) == [Difference("raid", "raid raid5", "raid1")]


def test_only_faults_that_change_a_datastore_mark_it():
    events = [parse_inject(t) for t in ("at=1s,kill-server", "at=2s,remove-device=1",
                                        "at=3s,scrub", "at=4s,convert=raid5",
                                        "at=5s,for=2s,throttle=write:1MiB/s",
                                        "at=6s,replace-device=2", "at=7s,fail-device=1")]
    assert altering(events) == ["at=2s,remove-device=1", "at=4s,convert=raid5",
                                "at=6s,replace-device=2", "at=7s,fail-device=1"]
    assert altering(()) == []


def test_a_run_starts_only_on_the_datastore_its_cell_asks_for(tmp_path):
    spec = make_spec("r1", raid="raid1", metadata="raid1", loop="3x1GiB", root=tmp_path)
    (tmp_path / "r1").mkdir()
    doc = record("r1", loops=3, asked=spec.policy(), mount=str(tmp_path / "r1" / "mnt"))
    (tmp_path / "r1" / "datastore.json").write_text(json.dumps(doc))
    check_at_start(spec)  # as made
    assert mark_altering(spec, [parse_inject("at=1s,kill-server")]) == []
    assert "altered" not in json.loads((tmp_path / "r1" / "datastore.json").read_text())
    assert mark_altering(spec, [parse_inject("at=2s,remove-device=1")]) == [
        "at=2s,remove-device=1"]
    marked = json.loads((tmp_path / "r1" / "datastore.json").read_text())
    assert marked["altered"] == ["at=2s,remove-device=1"]
    with pytest.raises(OltplabError, match="changed by --inject at=2s,remove-device=1 and "
                                           "not made again"):
        check_at_start(spec)
    gone = {**doc, "devices": doc["devices"][1:], "removed": doc["devices"][:1]}
    (tmp_path / "r1" / "datastore.json").write_text(json.dumps(gone))
    with pytest.raises(OltplabError) as e:
        check_at_start(spec)
    assert str(e.value) == "datastore 'r1' has 2 devices, the cell asks for 3"


TARGET = """
[plan]
name = "t"
repeat = 2
[defaults]
target = "mine"
users = [1]
duration = "20s"
inject = ["at=5s,remove-device=1"]
[targets.mine]
datadir = "/srv/ds/r1/mnt/postgres"
"""


def test_a_changing_fault_on_a_datastore_the_plan_does_not_make_is_run_once(tmp_path,
                                                                            monkeypatch):
    """The plan cannot make a datastore it did not declare again: a second run would measure
    what the first left."""
    monkeypatch.setattr("oltplab.faults.datastore.service.holding", lambda path: {
        "name": "r1", "fs": "btrfs", "raid": "raid1", "metadata": "raid1", "mount": "/srv/ds",
        "devices": ["/dev/loop0", "/dev/loop1", "/dev/loop2"], "spares": []})
    monkeypatch.setattr("oltplab.faults.datastore.service.mounted", lambda doc: True)
    plan = tmp_path / "t.toml"
    plan.write_text(TARGET)
    with pytest.raises(UsageError, match=r"inject 'at=5s,remove-device=1' in all changes the "
                                         r"datastore under /srv/ds/r1/mnt/postgres, and "
                                         r"plan.repeat = 2: declare it as a \[datastores.NAME\]"):
        load_plan(plan, tmp_path / "results")
    plan.write_text(TARGET.replace("repeat = 2", "repeat = 1") + '[matrix]\nusers = [1, 2]\n')
    with pytest.raises(UsageError, match="and users=2 runs after it"):
        load_plan(plan, tmp_path / "results")
    plan.write_text(TARGET.replace("repeat = 2", "repeat = 1"))
    assert load_plan(plan, tmp_path / "results").items[0].spec.inject[0].kind == "remove-device"
    plan.write_text(TARGET.replace("remove-device=1", "scrub"))
    assert load_plan(plan, tmp_path / "results").repeat == 2
