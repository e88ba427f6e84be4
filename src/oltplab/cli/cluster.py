"""``oltplab cluster``: a Dask scheduler here and an oltplab worker on each host of a
hosts.toml, started, shown and stopped."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..options import CLUSTER, CLUSTER_UP
from .options import table_options


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
def cluster():
    """Several hosts: a scheduler here and a worker on each host (TLS, certificates of its own)."""


def _say(text: str) -> None:
    click.echo(f"cluster: {text}", err=True)


@cluster.command("up")
@click.argument("hosts_file", type=click.Path(path_type=Path))
@table_options(CLUSTER, CLUSTER_UP)
def cluster_up(hosts_file: Path, cluster_dir: Path, timeout: float):
    """Start a scheduler here and a worker on each host of HOSTS_FILE (over ssh where it
    has an ssh table); attach to those that run already."""
    from ..cluster import service
    from ..cluster.hosts import load_hosts
    spec = load_hosts(hosts_file)
    state = service.up(spec, cluster_dir, timeout=timeout, on_step=_say)
    _print(service.status(state))


@cluster.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@table_options(CLUSTER)
def cluster_status(as_json: bool, cluster_dir: Path):
    """The scheduler, and each host's worker: alive or not, its address, its resources,
    its clock against this machine's."""
    from ..cluster import service
    from ..cluster.state import load_state
    status = service.status(load_state(cluster_dir))
    if as_json:
        click.echo(json.dumps(_doc(status), indent=2))
    else:
        _print(status)


@cluster.command("down")
@table_options(CLUSTER)
def cluster_down(cluster_dir: Path):
    """Stop every host's worker, then the scheduler."""
    from ..cluster import service
    service.down(cluster_dir, on_step=_say)
    click.echo(f"cluster in {cluster_dir}: down")


def _doc(status) -> dict:
    return {"dir": str(status.folder), "hosts_file": status.hosts_file,
            "scheduler": {"address": status.scheduler_address, "alive": status.scheduler_alive},
            "hosts": [{"name": h.name, "via": h.via, "alive": h.alive, "address": h.address,
                       "resources": h.resources, "clock": _clock_doc(h.clock)}
                      for h in status.hosts]}


def _clock_doc(clock):
    if clock is None or isinstance(clock, str):
        return None if clock is None else {"error": clock}
    return {**clock.to_json(), "warning": clock.warning()}


def _clock_text(clock) -> str:
    """``clock +0.213 ms ±1.402 ms`` (the host's wall clock against this one's), with
    chrony's bound where chrony runs there."""
    if clock is None:
        return "clock -"
    if isinstance(clock, str):
        return f"clock unknown ({clock})"
    text = f"clock {clock.wall_offset_ns / 1e6:+.3f} ms ±{clock.bound_ns / 1e6:.3f} ms"
    if clock.chrony is not None:
        text += f" (chrony ±{1000 * clock.chrony.bound_s:.3f} ms)"
    return text


def _print(status) -> None:
    click.echo(f"scheduler\t{status.scheduler_address or '-'}\t"
               f"{'alive' if status.scheduler_alive else 'DEAD'}")
    for h in status.hosts:
        resources = " ".join(f"{k}={v:g}" for k, v in h.resources.items())
        click.echo(f"{h.name}\t{h.address or '-'}\t{'alive' if h.alive else 'DEAD'}\t{h.via}\t"
                   f"{resources}\t{_clock_text(h.clock)}")
    for h in status.hosts:
        warning = h.clock.warning() if h.clock is not None and not isinstance(h.clock, str) \
            else None
        if warning:
            click.echo(f"warning: {warning}")
