"""InnoDB's page size (``innodb_page_size``), which a MariaDB data directory gets when it is
created and keeps: a server given another size than its data files' does not start.

A managed server's data directory is created with the size that ``-c innodb_page_size=...``
gives (``--innodb-page-size`` of ``brokerage build`` adds it: ``with_page_size``), 16 KiB
otherwise. At each start the size of the data directory's system tablespace (``ibdata1``,
read by ``datadir_page_kib``) is the one the server is given; a size asked for that differs
from it is refused in one line before anything changes (``checked_page_size``).
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

from ...errors import UsageError

#: The sizes offered, in KiB: the paper's 8 KiB pages and InnoDB's default.
PAGE_KIB = (8, 16)
DEFAULT_KIB = 16
#: Where the system tablespace's flags sit on its first page: the FSP header (at 38) + 16.
_FLAGS_AT = 54
#: MariaDB's full_crc32 format (10.5 and later) marks its flags with bit 4 and keeps the page
#: size's shift in bits 0-3; the older format keeps it in bits 6-9 (0 there: 16 KiB).
_FCRC32_MARKER = 1 << 4


def parse_page_kib(value, what: str = "--innodb-page-size") -> int:
    """KiB of a page size given as 8k, 8K, 8, 8KiB, 16k, 16 (or in bytes: 8192, 16384);
    UsageError in one line for another size."""
    text = str(value).strip()
    m = re.fullmatch(r"(\d+)\s*(k|K|KiB)?", text)
    kib = None
    if m:
        n = int(m.group(1))
        kib = n // 1024 if not m.group(2) and n >= 1024 and n % 1024 == 0 else n
    if kib not in PAGE_KIB:
        raise UsageError(f"{what} {text}: give " + " or ".join(f"{k}k" for k in PAGE_KIB)
                         + " (InnoDB's page size in KiB)")
    return kib


def page_kib_of_flags(flags: int) -> int:
    """KiB of the page size that a tablespace's FSP flags give."""
    if flags & _FCRC32_MARKER:
        shift = flags & 0xF
    else:
        shift = (flags >> 6) & 0xF
        if shift == 0:
            return DEFAULT_KIB
    return (512 << shift) // 1024


def datadir_page_kib(datadir: Path) -> int | None:
    """KiB of the pages of the data directory's system tablespace; None when it has none or
    it cannot be read."""
    try:
        with open(Path(datadir) / "ibdata1", "rb") as f:
            head = f.read(_FLAGS_AT + 4)
    except OSError:
        return None
    if len(head) < _FLAGS_AT + 4:
        return None
    return page_kib_of_flags(struct.unpack(">I", head[_FLAGS_AT:])[0])


def checked_page_size(datadir: Path, initialized: bool, requested: str | None,
                      recorded: str | None = None) -> str | None:
    """The innodb_page_size a managed server is given (None: InnoDB's default, 16 KiB).

    ``requested``: the -c value, if any; ``recorded``: the value of the settings file of the
    server's last start (what an unreadable data directory was given). A new data directory
    gets the size requested; an existing one keeps its own, and a request for another size is
    a UsageError naming the size it was created with."""
    want = parse_page_kib(requested, "innodb_page_size") if requested else None
    have = None
    if initialized:
        have = datadir_page_kib(datadir)
        if have is None and recorded:
            have = parse_page_kib(recorded, "innodb_page_size")
    if have is not None and want is not None and want != have:
        raise UsageError(f"innodb_page_size {want}k: the data directory {datadir} was created "
                         f"with {have} KiB pages, and InnoDB's page size is set only when a "
                         f"data directory is created; give a new --datadir for {want} KiB pages")
    kib = have if have is not None else want
    return f"{kib}k" if kib is not None and kib != DEFAULT_KIB else None


def with_page_size(spec, kib: int | None):
    """The DbSpec that asks for ``kib`` KiB pages (``--innodb-page-size``): a managed MariaDB
    gets them through ``-c innodb_page_size`` (checked at its start); with --dsn the spec is
    as it was (the build compares the server's own size). UsageError on PostgreSQL, whose page
    size is fixed when it is compiled."""
    if kib is None:
        return spec
    if spec.engine != "mariadb":
        raise UsageError("--innodb-page-size is MariaDB's: PostgreSQL's page size is fixed when "
                         "it is compiled (8 KiB blocks)")
    if spec.dsn is not None:
        return spec
    kept = tuple((k, v) for k, v in spec.settings
                 if k.lower().replace("-", "_") != "innodb_page_size")
    return spec.with_(settings=(*kept, ("innodb_page_size", f"{kib}k")))
