"""What code that places work on the cluster uses: a TLS client, and placement on one host.

    from oltplab import cluster
    with cluster.connect() as client:                  # the cluster in ./oltplab-cluster
        host = cluster.load_state().host_with("fast")  # the host that has datastore fast
        future = cluster.submit_on(client, host, fn, arg)
        result = future.result()

A placed task runs on its host's worker and nowhere else: no other worker may take it, the
scheduler steals no work, and it is not retried, on that host or another (a task whose worker
dies fails with KilledWorker). Each host runs one placed task at a time (the task holds the
host's resource ``host-<name>``, of which the worker has 1); others wait in line. A task
places, supervises and relays: it starts the host's own processes (the C loop's workers, a
managed server, fio, the sampler) and waits for them, and never runs the hot loop in its
thread.
"""

from __future__ import annotations

import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

from ..errors import OltplabError
from .state import DEFAULT_DIR, load_state

if TYPE_CHECKING:
    from distributed import Client, Future, Security


def security(certs_folder: Path) -> Security:
    """Dask's TLS settings of the cluster's client: its certificate and the cluster's CA."""
    from distributed import Security
    folder = Path(certs_folder)
    for f in ("ca.pem", "client.pem", "client-key.pem"):
        if not (folder / f).is_file():
            raise OltplabError(f"{folder / f}: missing; oltplab cluster up makes it")
    return Security(tls_ca_file=str(folder / "ca.pem"), tls_client_cert=str(folder / "client.pem"),
                    tls_client_key=str(folder / "client-key.pem"), require_encryption=True)


def connect(state_dir: Path = DEFAULT_DIR, timeout: float = 10.0) -> Client:
    """A Dask client of the cluster that ``cluster up`` started in ``state_dir``, over TLS
    with the cluster's client certificate. The caller closes it (or uses ``with``)."""
    state = load_state(state_dir)
    if not state.scheduler_address:
        raise OltplabError(f"the scheduler of the cluster in {state_dir} never listened; "
                           "oltplab cluster down, then up")
    return client_of(state.scheduler_address, state.certs_folder, timeout)


def client_of(address: str, certs_folder: Path, timeout: float) -> Client:
    """A Dask client of the scheduler at ``address`` with the certificates of
    ``certs_folder``; OltplabError when it cannot be reached in ``timeout`` seconds."""
    from distributed import Client
    try:
        return Client(address, security=security(certs_folder), timeout=timeout,
                      set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise OltplabError(f"cannot reach the scheduler at {address}: {e}") from None


@contextmanager
def open_hosts(names: tuple[str, ...], state_dir: Path, flag: str) -> Iterator[tuple]:
    """A client of the cluster in ``state_dir`` and the specs of its hosts ``names``, each
    known (a UsageError naming the hosts there are) and with a live worker (OltplabError
    naming ``flag``, the option that asked for them, otherwise)."""
    state = load_state(state_dir)
    specs = [state.worker(n).host for n in names]
    with connect(state_dir) as client:
        known = {str(w["name"]) for w in client.scheduler_info()["workers"].values()}
        dead = [n for n in names if n not in known]
        if dead:
            raise OltplabError(f"{flag}: the worker of {', '.join(dead)} is not alive "
                               f"(oltplab cluster status --dir {state_dir})")
        yield client, specs


def placement(host: str, resources: Mapping[str, float] | None = None) -> dict[str, Any]:
    """The keywords of ``Client.submit`` that place a task on ``host`` and nowhere else;
    ``resources`` adds what else the task holds there, such as ``{"datastore-fast": 1}``."""
    return {"workers": [host], "allow_other_workers": False, "retries": 0, "pure": False,
            "resources": {f"host-{host}": 1, **(resources or {})}}


def submit_on(client: Client, host: str, fn: Callable, *args: Any, **kwargs: Any) -> Future:
    """``fn(*args, **kwargs)`` on ``host``'s worker, never on another, never retried."""
    return client.submit(fn, *args, **kwargs, **placement(host))


def where_am_i() -> dict[str, Any]:
    """What a task sees of where it runs: its worker's name, address and pid."""
    import os

    from distributed import get_worker
    worker = get_worker()
    return {"host": worker.name, "address": worker.address, "pid": os.getpid()}


def task_cancelled(worker, key) -> bool:
    """Inside a task: it was cancelled (or its result is no longer wanted)."""
    ts = worker.state.tasks.get(key)
    return ts is None or ts.state not in ("executing", "long-running")


def put_quietly(q, item) -> None:
    """``item`` into the Dask queue ``q``; a scheduler out of reach is let be (the other side
    stops hearing from this one and decides what that means)."""
    try:
        q.put(item)
    except Exception:  # noqa: BLE001
        pass


def forward_lines(proc, q) -> None:
    """Each line the process ``proc`` writes (text mode) into ``q`` as it comes, until its
    output ends."""
    for line in proc.stdout:
        put_quietly(q, line.rstrip("\n"))


def queue_pairs(client: Client, kind: str, hosts) -> tuple[dict, dict]:
    """Two new Dask queues per host, one each way: ``(up, down)``, host -> queue, named
    ``oltplab-KIND-<tag>-<host>-up`` and ``-down``."""
    from distributed import Queue
    tag = uuid.uuid4().hex[:12]
    up = {h: Queue(f"oltplab-{kind}-{tag}-{h}-up", client=client) for h in hosts}
    down = {h: Queue(f"oltplab-{kind}-{tag}-{h}-down", client=client) for h in hosts}
    return up, down


def release(client: Client, futures, queues) -> None:
    """Cancel the ``futures`` not done and close the ``queues``, whatever the client's state
    (it may be closing)."""
    try:
        client.cancel([f for f in futures if not f.done()])
    except Exception:  # noqa: BLE001 - a closing client
        pass
    for q in queues:
        try:
            q.close()
        except Exception:  # noqa: BLE001
            pass


def read_queue(q, stopping: threading.Event, on_item: Callable[[Any], None]) -> None:
    """Hand each item of the Dask queue ``q`` to ``on_item`` as it comes, until ``stopping``
    is set (looked at every second). A scheduler out of reach is waited out: the side that
    stops hearing from the other decides what that means."""
    while not stopping.is_set():
        try:
            item = q.get(timeout=1.0)
        except TimeoutError:
            continue
        except Exception:  # noqa: BLE001 - the scheduler is away
            time.sleep(0.5)
            continue
        on_item(item)
