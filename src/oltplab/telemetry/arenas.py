"""Which thread's malloc arena holds a process's memory: glibc's arenas named by thread.

For the driver's memory over a long run (bench/soak.py --arenas, and the tests that hold a
reader thread to a bound): RSS says that a process grew, not which thread's allocations did.
glibc gives a thread other than the main one an arena of its own, in heaps of 64 MiB of
address space aligned on 64 MiB (HEAP_MAX_SIZE on 64-bit), so the heap a block came from is
found from its address alone. ``probe()``, called in a thread, mallocs a few bytes, frees
them and remembers which heap the thread's arena is in (the main thread's is brk's
``[heap]``); ``resident()`` reads /proc/self/smaps for the resident KiB of every heap, named
by the threads probed in it. glibc only (Linux).
"""

from __future__ import annotations

import ctypes
import threading

HEAP_MAX = 64 * 1024 * 1024
_libc = ctypes.CDLL("libc.so.6")
_libc.malloc.restype = ctypes.c_void_p
_libc.malloc.argtypes = [ctypes.c_size_t]
_libc.free.argtypes = [ctypes.c_void_p]
_libc.malloc_trim.argtypes = [ctypes.c_size_t]

_names: dict[int, set[str]] = {}  # heap base -> names of the threads whose arena is there
_lock = threading.Lock()


def probe(name: str | None = None) -> int:
    """The base of the heap the calling thread's arena allocates from, remembered as
    ``name`` (default: the thread's name)."""
    p = _libc.malloc(64)
    _libc.free(p)
    base = p - p % HEAP_MAX
    with _lock:
        _names.setdefault(base, set()).add(name or threading.current_thread().name)
    return base


def probed(fn, name: str):
    """``fn`` probing its thread's arena as ``name`` the first time it runs."""
    done = []

    def wrapper(*args, **kw):
        if not done:
            done.append(probe(name))
        return fn(*args, **kw)
    return wrapper


def trim() -> None:
    """glibc's malloc_trim(0): the free memory of every arena given back to the kernel."""
    _libc.malloc_trim(0)


def _mappings():
    """(start address, path or '', resident KiB) of every mapping of this process."""
    start = path = None
    with open("/proc/self/smaps") as f:
        for line in f:
            first = line.split(None, 1)[0]
            if "-" in first and not first.endswith(":"):
                fields = line.split()
                start = int(first.split("-")[0], 16)
                path = fields[5] if len(fields) > 5 else ""
            elif first == "Rss:" and start is not None:
                yield start, path, int(line.split()[1])


def heap_kib(base: int) -> int:
    """Resident KiB of the arena heap at ``base`` (a ``probe()`` result)."""
    return sum(kib for start, path, kib in _mappings() if start == base and not path)


def resident() -> dict[str, int]:
    """Resident KiB per arena heap: 'main' for brk's [heap], the probed threads' names for
    theirs, 'heap 0x..' for a heap no probe named, and 'other anon' for the rest of the
    process's anonymous memory (Python's own arenas, large blocks mmapped alone)."""
    out: dict[str, int] = {}
    with _lock:
        names = {base: "+".join(sorted(n)) for base, n in _names.items()}
    for start, path, kib in _mappings():
        if path == "[heap]":
            name = "main"
        elif path:
            continue
        elif start % HEAP_MAX == 0:
            name = names.get(start) or f"heap {start:#x}"
        else:
            name = "other anon"
        out[name] = out.get(name, 0) + kib
    return out
