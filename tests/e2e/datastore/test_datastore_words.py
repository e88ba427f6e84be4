"""What `oltplab datastore` says: that dedupe is on for a datastore made with --dedupe, and
that there is none in a root without any."""

from __future__ import annotations

from ..conftest import datastore as ds


def test_show_says_dedupe_is_on_and_list_says_when_there_is_none(datastore_root):
    root = datastore_root
    listed = ds(root, "list")
    assert listed.stdout == f"no datastores in {root}\n", listed.stdout
    made = ds(root, "create", "dd", "--loop", "1x320MiB", "--dedupe")
    assert "dedupe on" in made.stdout, made.stdout
    ds(root, "create", "plain", "--loop", "1x320MiB")
    shown = ds(root, "show", "dd").stdout
    assert shown.splitlines()[0].endswith(", dedupe on (duperemove after each build)"), shown
    assert "dedupe" not in ds(root, "show", "plain").stdout
    lines = ds(root, "list").stdout.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["dd", "plain"]
    assert "dedupe on" in lines[0] and "dedupe" not in lines[1]
    for name in ("dd", "plain"):
        ds(root, "destroy", name)
    assert ds(root, "list").stdout == f"no datastores in {root}\n"
