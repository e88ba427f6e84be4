"""fio on a datastore: the I/Os fio issued (its front end) beside those every member device
served (the back end), and their ratio: a two-way mirror writes each block on two devices, so
its write amplification is near 2, one device's near 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oltplab.runs.timeline import issued
from oltplab.telemetry.derive import bytes_amplification

from ..conftest import datastore as ds
from ..conftest import oltplab, saved_runs


def _fio_on(root: Path, name: str, *create: str) -> dict:
    """The step of fio's 4k random writes (direct IO) on a new datastore ``name``."""
    ds(root, "create", name, *create)
    mount = json.loads(ds(root, "show", name, "--json").stdout)["mount"]
    results = root.parent / f"fio-{name}"
    try:
        oltplab("fio", "run", "--target", mount, "--size", "64MiB", "--duration", "3s",
                "--ramp", "1s", "--profile", "4k-randwrite", "--jobs", "2", "--power", "none",
                "--io-latency", "off", "--results-dir", str(results), cwd=root.parent,
                check_rc=0)
    finally:
        ds(root, "destroy", name)
    [run] = saved_runs(results)
    return run


@pytest.mark.parametrize("policy, copies", [(("--raid", "raid1", "--loop", "2x1GiB"), 2),
                                            (("--raid", "single", "--loop", "1x1GiB"), 1)])
def test_fio_writes_are_multiplied_by_the_policy_s_copies(datastore_root, policy, copies):
    run = _fio_on(datastore_root, f"c{copies}", *policy)
    [step] = run["steps"]
    io = step["io"]
    assert io["front_write_iops"] == step["write"]["iops"] > 0, io
    members = step["telemetry"]["datastore"]["devices"]
    assert len(members) == copies, members
    # each byte written once per copy, plus the file system's own (metadata at its commits);
    # counted in I/Os the ratio is lower where the devices' queues merge requests (btrfs
    # writes fio's random blocks next to each other: more of them on a loaded machine)
    written = bytes_amplification(step["telemetry"], issued(step))
    assert copies * 0.9 <= written <= copies * 1.3, (written, io)
    assert 0.5 * copies <= io["amplification"] <= written * 1.05, (written, io)
    assert io["amplification"] == pytest.approx(io["back_write_iops"] / io["front_write_iops"])
    out = datastore_root.parent / f"report-{copies}"
    oltplab("report", "latest", "--results-dir", str(datastore_root.parent / f"fio-c{copies}"),
            "--out", str(out), cwd=datastore_root.parent, check_rc=0)
    html = (out / "report.html").read_text()
    assert "fio&#x27;s I/Os and the devices&#x27; I/Os" in html or \
        "fio's I/Os and the devices' I/Os" in html
    assert "write amplification" in html
