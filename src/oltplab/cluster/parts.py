"""Parts of one experiment on the cluster's hosts: on each host a process of its own, which a
Dask task places, supervises and relays; the folder it writes is fetched at its end.

    parts = Parts(client, {"h1": (fn, kwargs), "h2": (fn, kwargs)})
    parts.start()
    while parts.running:
        for host, event in parts.events(1.0):   # what each part emitted, as dicts
            ...
        parts.send("h1", "go")                  # an order, one line, to a part
    results = parts.finish()   # host -> {"status", "error", "files": a tar.gz's bytes or None}
    parts.close()

``fn(link, out, **kwargs)`` runs in ``python -m oltplab.cluster.partmain`` on its host
(partmain.Link: ``emit`` events, ``on`` orders, ``wait_for`` one). What it writes under
``out`` comes back in ``files``; what it returns, in its last event (``{"event": "end"}``).

On the host, ``serve`` (the Dask task, placed by cluster.placement: that host only, never
retried, holding the host's resource) relays both ways through two Dask queues. Liveness is
watched both ways and at each link:

- (the relay protocol, protocol.py: its limits, TaskLink there and Relays here)
- the coordinator and the task send each other a heartbeat every second: the coordinator
  fails a host it has not heard for ``SILENCE_S`` (its worker hangs or is cut off) or whose
  task erred (KilledWorker: its worker died); the task stops its part when the coordinator
  has been silent that long, or when the task is cancelled;
- the task sends its process a heartbeat every second: the process stops its part when its
  input ends (the task's worker died), when it has not heard the task for ``SILENCE_S``
  (the worker hangs), or when told ``cancel``.

A part stops as on Ctrl-C (SIGINT to itself), so its own cleanup runs (a managed server is
stopped, its record kept as far as it got). The task gives it ``STOP_TIMEOUT_S``, then
interrupts it again, then kills its process group.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import queue
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

from .client import forward_lines, put_quietly, submit_on
from .protocol import PART_STOP_TIMEOUT_S as STOP_TIMEOUT_S
from .protocol import SILENCE_S, Relays, died, serve_orders

# where a part's output stays on its host until the coordinator has it: a host marked failed
# keeps what its part measured there (a later fetch_kept brings it back)
KEEP_ROOT = Path("/var/tmp/oltplab-parts")


# --------------------------------------------------------------------------- on the host

def serve(host: str, up_name: str, down_name: str, payload: bytes,
          silence_s: float = SILENCE_S, keep: str | None = None) -> dict:
    """The host's side (a Dask task there): run the part's process, relay, return how it
    ended and its output folder packed: ``{"host", "ended", "code", "error", "files",
    "kept"}``. With ``keep`` (a folder name under KEEP_ROOT) the output stays there until the
    coordinator, once it has the files, drops it (``drop_kept``)."""
    from distributed import Queue
    up, down = Queue(up_name), Queue(down_name)
    if keep is not None:
        KEEP_ROOT.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder = str(KEEP_ROOT / keep)
        os.mkdir(folder, 0o700)
    else:
        folder = tempfile.mkdtemp(prefix="oltplab-part-")
    out = os.path.join(folder, "out")
    os.mkdir(out)
    part = os.path.join(folder, "part.pickle")
    with open(part, "wb") as f:
        f.write(payload)
    err = open(os.path.join(folder, "stderr"), "w+b")
    proc = subprocess.Popen([sys.executable, "-m", "oltplab.cluster.partmain", part, out],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                            text=True, bufsize=1, start_new_session=True)
    Path(folder, "pid").write_text(f"{proc.pid}\n")  # collect_kept leaves a live part alone
    forward = threading.Thread(target=forward_lines, args=(proc, up), daemon=True,
                               name=f"oltplab-part-{host}")
    forward.start()

    def beat() -> None:
        _tell(proc, "hb")
        put_quietly(up, '{"hb": 1}')

    def order(text: str) -> None:
        if text != "hb":
            _tell(proc, text)

    ended = "?"
    try:
        ended = serve_orders(down, silence_s, order,
                             lambda: "done" if proc.poll() is not None else None,
                             poll_s=0.2, beat=beat)
    finally:
        code = _stop(proc)
        forward.join(5.0)
        err.seek(0)
        tail = err.read().decode("utf-8", "replace").strip().splitlines()[-1:]
        err.close()
        files = _pack(out)
        if keep is None or files is None:
            shutil.rmtree(folder, ignore_errors=True)
        else:  # the output stays until the coordinator has it
            for name in ("part.pickle", "stderr", "pid"):
                Path(folder, name).unlink(missing_ok=True)
    error = None if code == 0 else (tail[0] if tail else f"its process exited with code {code}")
    return {"host": host, "ended": ended, "code": code, "error": error, "files": files,
            "kept": folder if keep is not None and files is not None else None}


def collect_kept(prefix: str) -> list[tuple[str, bytes | None]]:
    """(A task on a host.) Each kept output folder named ``prefix``-... under KEEP_ROOT whose
    part no longer runs: (its path, its output packed)."""
    import psutil
    out = []
    for folder in sorted(KEEP_ROOT.glob(f"{prefix}-*")) if KEEP_ROOT.is_dir() else ():
        try:
            pid = int((folder / "pid").read_text())
            if "oltplab.cluster.partmain" in " ".join(psutil.Process(pid).cmdline()):
                continue  # its part still runs (its task was lost, not its process)
        except (OSError, ValueError, psutil.Error):
            pass
        if (folder / "out").is_dir():
            out.append((str(folder), _pack(str(folder / "out"))))
    return out


def drop_kept(folder: str) -> None:
    """(A task on a host.) Remove a kept output folder, once its files are safe elsewhere."""
    path = Path(folder)
    if path.parent == KEEP_ROOT:
        shutil.rmtree(path, ignore_errors=True)


def fetch_kept(client, hosts, prefix: str, into: Path) -> dict[str, list[tuple[str, list[str]]]]:
    """What the hosts kept of earlier parts named ``prefix``: unpacked under ``into``, then
    dropped there; host -> (the folder it was in, the names brought back) per folder."""
    got: dict[str, tuple[str, list[str]]] = {}
    for host in hosts:
        for folder, files in submit_on(client, host, collect_kept, prefix).result(60):
            names = unpack(files, into)
            submit_on(client, host, drop_kept, folder).result(60)
            got.setdefault(host, []).append((folder, names))
    return got


def _tell(proc: subprocess.Popen, line: str) -> None:
    try:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
    except (OSError, ValueError):
        pass


def _stop(proc: subprocess.Popen) -> int | None:
    """The part's exit code, once it has stopped: asked (cancel, the end of its input), then
    interrupted again, then its process group killed."""
    if proc.poll() is None:
        _tell(proc, "cancel")
    try:
        proc.stdin.close()
    except OSError:
        pass
    for sig, wait in ((None, STOP_TIMEOUT_S), (signal.SIGINT, 10.0), (signal.SIGKILL, 10.0)):
        if sig is not None:
            try:
                os.killpg(proc.pid, sig)
            except OSError:
                pass
        try:
            return proc.wait(wait)
        except subprocess.TimeoutExpired:
            continue
    return proc.poll()


def _pack(folder: str) -> bytes | None:
    """Everything under ``folder`` as a tar.gz (None when empty)."""
    if not os.listdir(folder):
        return None
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in sorted(os.listdir(folder)):
            tar.add(os.path.join(folder, name), arcname=name)
    return buf.getvalue()


def unpack(files: bytes | None, into: Path) -> list[str]:
    """A part's files (``serve``'s ``files``) under ``into``; the names at the top."""
    if not files:
        return []
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(files), mode="r:gz") as tar:
        tar.extractall(into, filter="data")
        return sorted({m.name.split("/", 1)[0] for m in tar.getmembers()})


# --------------------------------------------------------------------------- here

class Parts:
    """The parts of one experiment on the cluster's hosts, seen from here."""

    def __init__(self, client, parts: dict[str, tuple[Callable, dict]],
                 silence_s: float = SILENCE_S, keep_as: str | None = None):
        self.client = client
        self.hosts = list(parts)
        stamp = time.strftime("%Y%m%dT%H%M%S")
        # each host's output folder there (under KEEP_ROOT), kept until ``release``
        self.kept = ({h: f"{keep_as}-{h}-{stamp}-{os.getpid()}" for h in self.hosts}
                     if keep_as else {})
        self.payload = {h: pickle.dumps((*p, list(sys.argv)), protocol=pickle.HIGHEST_PROTOCOL)
                        for h, p in parts.items()}  # the command line its records name
        self.silence_s = silence_s
        self.results: dict[str, dict] = {}
        self.failed: dict[str, str] = {}
        self.ended: dict[str, dict] = {}  # the part's last event
        self._told: set[str] = set()
        self._lines: queue.Queue = queue.Queue()
        self._relays = Relays(client, "part", self.hosts,
                              lambda host, line: self._lines.put((host, line)), "hb",
                              lambda host: host in self.running, silence_s, what="part",
                              silent_from_start=True)

    def start(self) -> None:
        self._relays.start(lambda h, up, down: submit_on(
            self.client, h, serve, h, up, down, self.payload[h], self.silence_s,
            self.kept.get(h)))

    @property
    def started(self) -> bool:
        return bool(self._relays.futures)

    @property
    def running(self) -> list[str]:
        """The hosts whose part has neither ended nor failed."""
        return [h for h in self.hosts if h not in self.ended and h not in self.failed]

    def send(self, host: str, order: str) -> None:
        if host in self.running:
            self._put(host, order)

    def send_all(self, order: str) -> None:
        for h in self.running:
            self._put(h, order)

    def events(self, timeout: float) -> list[tuple[str, dict]]:
        """What the parts emitted within ``timeout`` seconds, in order per host; a host
        that died or hangs comes once as ``{"event": "failed", "error": text}``, a part that
        ended as its own last event (``{"event": "end", ...}``)."""
        out: list[tuple[str, dict]] = []
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            left = deadline - time.monotonic()
            try:
                host, line = (self._lines.get(timeout=left) if left > 0 and not out
                              else self._lines.get_nowait())
            except queue.Empty:
                break
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if not isinstance(event, dict) or "hb" in event or host in self.failed:
                continue
            if event.get("event") == "end":
                self.ended[host] = event
            out.append((host, event))
        self._watch()
        for h, text in self.failed.items():
            if h not in self._told:
                self._told.add(h)
                out.append((h, {"event": "failed", "error": text}))
        return out

    def finish(self, timeout: float = STOP_TIMEOUT_S + 30.0) -> dict[str, dict]:
        """Wait for every task (a part told to stop has ``STOP_TIMEOUT_S``), then collect
        what each returned: host -> {"status": "ended" | "failed", "error", "files"}."""
        deadline = time.monotonic() + timeout
        for h in self.hosts:
            if h in self.results:
                continue
            fut = self._relays.futures.get(h)
            result, error = None, self.failed.get(h)
            if fut is not None and error is None:
                try:
                    result = fut.result(timeout=max(0.1, deadline - time.monotonic()))
                except Exception as e:  # noqa: BLE001 - its worker died or it hangs
                    error = died(h, "part", e)
            self.results[h] = {"status": "failed" if error else "ended",
                               "error": error or (result or {}).get("error"),
                               "files": (result or {}).get("files"),
                               "kept": (result or {}).get("kept")}
        return self.results

    def kept_path(self, host: str) -> str | None:
        """Where ``host`` keeps its part's output (when parts keep it)."""
        return str(KEEP_ROOT / self.kept[host]) if host in self.kept else None

    def release(self, host: str) -> None:
        """The host's output is safe here: its kept folder there goes."""
        kept = self.results.get(host, {}).get("kept")
        if kept:
            try:
                submit_on(self.client, host, drop_kept, kept).result(60)
            except Exception:  # noqa: BLE001 - it stays there; nothing is lost
                pass

    def close(self) -> None:
        """Cancel what still runs (a host that hangs stops its part when it runs again and
        hears nothing), stop the threads, close the queues."""
        self._relays.close()

    # -- inside --------------------------------------------------------------------------
    def _put(self, host: str, order: str) -> None:
        self._relays.put(host, order)

    def _watch(self) -> None:
        for h in self.running:
            why = self._relays.lost(h)
            if why:
                self.failed[h] = why
                self._relays.futures[h].cancel()
