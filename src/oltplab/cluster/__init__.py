"""Experiments over several hosts, on Dask distributed: ``oltplab cluster up | status | down``
and what code that places work on the hosts uses.

    connect(state_dir=DEFAULT_DIR, timeout=10.0) -> distributed.Client
    submit_on(client, host, fn, *args, **kwargs) -> distributed.Future
    placement(host, resources=None) -> dict   (Client.submit's keywords, for map and others)
    load_state(state_dir=DEFAULT_DIR) -> ClusterState   (.workers, .worker(name),
                                                         .host_with(datastore))
    load_hosts(path) -> ClusterSpec   (hosts.toml, checked)

Modules: hosts.py (hosts.toml), certs.py (the cluster's CA and certificates), state.py (the
state file), launch.py (processes here and over ssh), service.py (up, status, down),
client.py (connect, placement). Importing this package does not import Dask.
"""

from .client import connect, placement, submit_on, where_am_i
from .hosts import ClusterSpec, HostSpec, SshSpec, load_hosts
from .state import DEFAULT_DIR, ClusterState, load_state

__all__ = ["DEFAULT_DIR", "ClusterSpec", "ClusterState", "HostSpec", "SshSpec", "connect",
           "load_hosts", "load_state", "placement", "submit_on", "where_am_i"]
