"""Rows of samples kept in a temporary file as they are taken, read back once at the end.

A sampler takes one row a second for as long as the run lasts (300 minutes of 1 s samples
over 60 columns is 8.6 MB as 8-byte values, and more as Python lists); the timeline needs
them only when the run ends. ``RowSpool`` packs each row into bytes (a struct of 8-byte
cells: ``q`` for integers, ``d`` for floats), holds at most ``CHUNK_BYTES`` of them in memory
and appends the rest to an unnamed temporary file, so the memory it holds does not grow with
the run's length. ``columns()`` reads everything back, one array per cell.

A file that cannot be written keeps its rows in memory instead (nothing is lost) and says
why in ``error``.
"""

from __future__ import annotations

import os
import struct
import tempfile
from array import array

CHUNK_BYTES = 64 * 1024  # rows held in memory before they go to the file


class RowSpool:
    """Fixed-width rows, appended in order; ``kinds`` names each cell's type (``q``: a signed
    64-bit integer, ``d``: a float)."""

    def __init__(self, kinds: str, chunk_bytes: int = CHUNK_BYTES):
        if not kinds or set(kinds) - {"q", "d"}:
            raise ValueError(f"cell kinds must be 'q' or 'd', not {kinds!r}")
        self.kinds = kinds
        self._row = struct.Struct("=" + kinds)
        self._chunk = chunk_bytes
        self._pending = bytearray()
        self._fd: int | None = None
        self._written = 0  # bytes in the file
        self._next = chunk_bytes  # spill when this many bytes are held
        self.rows = 0
        self.error: str | None = None  # the last write that failed (its rows stay in memory)

    def __len__(self) -> int:
        return self.rows

    @property
    def held_bytes(self) -> int:
        """Bytes of rows held in memory, not yet in the file."""
        return len(self._pending)

    def append(self, row) -> None:
        """One row: a value per cell, in the order of ``kinds``."""
        self._pending += self._row.pack(*row)
        self.rows += 1
        if len(self._pending) >= self._next:
            self._spill()

    def _spill(self) -> None:
        try:
            if self._fd is None:
                self._fd = _unnamed_file()
            with memoryview(self._pending) as view:
                done = 0
                while done < len(view):
                    done += os.write(self._fd, view[done:])
        except OSError as e:
            self.error = f"cannot keep the samples in a temporary file: {e}"
            self._next = len(self._pending) + self._chunk  # try again a chunk later
            if self._fd is not None:
                try:  # a row cut in two is written again with the next try
                    os.ftruncate(self._fd, self._written)
                    os.lseek(self._fd, self._written, os.SEEK_SET)
                except OSError:
                    self._into_memory()
            return
        self._written += done
        self._pending = bytearray()
        self._next = self._chunk

    def _into_memory(self) -> None:
        """The file is given up: what it holds comes back to memory."""
        fd, self._fd = self._fd, None
        try:
            self._pending[:0] = _read_all(fd, self._written)
        except OSError as e:
            self.error = f"samples lost with their temporary file: {e}"
            self.rows -= self._written // self._row.size
        finally:
            self._written = 0
            os.close(fd)

    def _bytes(self) -> bytes:
        """Every row so far, in order."""
        head = b""
        if self._fd is not None:
            try:
                head = _read_all(self._fd, self._written)
            except OSError as e:
                self.error = f"samples lost with their temporary file: {e}"
        return head + bytes(self._pending)

    def columns(self) -> list[array]:
        """One array per cell (``array('q')`` or ``array('d')``), every row so far."""
        data = self._bytes()
        width = len(self.kinds)
        out = []
        whole: dict[str, array] = {}
        for j, kind in enumerate(self.kinds):
            if kind not in whole:
                whole[kind] = array(kind)
                whole[kind].frombytes(data)
            out.append(whole[kind][j::width])
        return out

    def close(self) -> None:
        """Let the file go, and every row with it."""
        if self._fd is not None:
            try:
                os.close(self._fd)
            finally:
                self._fd = None
                self._written = 0
        self._pending = bytearray()
        self.rows = 0


def _unnamed_file() -> int:
    """A file descriptor on a new temporary file that has no name (gone when closed)."""
    f = tempfile.TemporaryFile(prefix="oltplab-samples-")
    try:
        return os.dup(f.fileno())
    finally:
        f.close()


def _read_all(fd: int, size: int) -> bytes:
    parts, offset = [], 0
    while offset < size:
        chunk = os.pread(fd, size - offset, offset)
        if not chunk:
            raise OSError(f"the temporary file of samples ends at {offset} of {size} bytes")
        parts.append(chunk)
        offset += len(chunk)
    return b"".join(parts)
