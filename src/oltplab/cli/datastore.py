"""``oltplab datastore``: make, describe, list and destroy the storage under test."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..config import format_size
from ..datastores import service
from ..datastores.spec import make_spec
from ..options import DATASTORE, DATASTORE_ROOT
from .options import table_options


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
def datastore():
    """Storage under test: btrfs with RAID profiles, checksums and compression, or ext4/xfs."""


def _say(text: str) -> None:
    click.echo(f"datastore: {text}", err=True)


@datastore.command("create")
@click.argument("name")
@table_options(DATASTORE, DATASTORE_ROOT)
def datastore_create(name: str, root: Path, **options):
    """Make datastore NAME on --devices or --loop and mount it under ROOT/NAME/mnt."""
    spec = make_spec(name, root=root, **options)
    doc = service.create(spec, on_step=_say)
    for line in doc["warnings"]:
        click.echo(f"warning: {line}", err=True)
    click.echo(f"{doc['name']}: {_policy(doc)} on {len(doc['devices'])} device(s), "
               f"mounted at {doc['mount']}")


def _policy(doc: dict) -> str:
    dedupe = ", dedupe on (duperemove after each build)" if doc.get("dedupe") else ""
    if doc["fs"] != "btrfs":
        return doc["fs"] + dedupe
    return (f"btrfs data {doc['raid']}, metadata {doc['metadata']}, checksum "
            f"{doc['checksum']}, compress {doc['compress']}{dedupe}")


@datastore.command("list")
@table_options(DATASTORE_ROOT)
def datastore_list(root: Path):
    """The datastores in ROOT, one line each."""
    if not service.names(root):
        click.echo(f"no datastores in {root}")
    for name in service.names(root):
        doc = service.load(name, root)
        state = "mounted" if service.mounted(doc) else "NOT MOUNTED"
        click.echo(f"{name}\t{_policy(doc)}\t{len(doc['devices'])} device(s)\t{state}\t"
                   f"{doc['mount']}")


@datastore.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the description as JSON.")
@table_options(DATASTORE_ROOT)
def datastore_show(name: str, as_json: bool, root: Path):
    """What datastore NAME is made of, its devices and the space its files take."""
    doc = service.show(name, root)
    if as_json:
        click.echo(json.dumps(doc, indent=2))
        return
    click.echo(f"{doc['name']}: {_policy(doc)}")
    click.echo(f"  mount: {doc['mount']} ({'mounted' if doc['mounted'] else 'NOT MOUNTED'}"
               f"{', ' + ','.join(doc['mount_options']) if doc['mount_options'] else ''})")
    for d in doc["devices"]:
        size = format_size(d["size_bytes"]) if d.get("size_bytes") else "?"
        kind = "rotational" if d.get("rotational") else "non-rotational"
        extra = f", over {d['loop']['backing_file']}" if d.get("loop") else ""
        click.echo(f"  device {d['path']}: {size}, {d.get('model') or 'no model'}, {kind}"
                   f"{extra}")
    space = doc["space"]
    if space:
        ratio = lambda x: "n/a" if x is None else f"{x:.2f}"  # noqa: E731
        allocated = (f"{space['allocated_bytes']:,} B" if space["allocated_bytes"] is not None
                     else "n/a")
        click.echo(f"  space: {space['logical_bytes']:,} B logical, "
                   f"{allocated} allocated, data ratio "
                   f"{ratio(space['data_ratio'])}, compression ratio "
                   f"{ratio(space['compression_ratio'])}")
        if space.get("reason"):
            click.echo(f"  space: allocated and data ratio unavailable: {space['reason']}")
    for line in doc["warnings"]:
        click.echo(f"  warning: {line}")


@datastore.command("dedupe")
@click.argument("name")
@table_options(DATASTORE_ROOT)
def datastore_dedupe(name: str, root: Path):
    """Run duperemove over NAME's files now (it runs after each build where --dedupe)."""
    from .tpcc import dedupe_line
    click.echo(dedupe_line(service.dedupe(name, root)))


@datastore.command("destroy")
@click.argument("name")
@table_options(DATASTORE_ROOT)
def datastore_destroy(name: str, root: Path):
    """Unmount NAME, wipe its devices' signatures, detach its loop devices, remove its files."""
    service.destroy(name, root, on_step=_say)
    click.echo(f"{name}: destroyed")
