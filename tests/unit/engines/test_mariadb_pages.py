"""InnoDB's page size: the sizes a user may give, the size a data directory's system
tablespace says it has, and what a managed server is given (engines/mariadb/pages.py)."""

from __future__ import annotations

import struct

import pytest

from oltplab.config import DbSpec
from oltplab.engines.mariadb.pages import (checked_page_size, datadir_page_kib,
                                           page_kib_of_flags, parse_page_kib, with_page_size)
from oltplab.errors import UsageError


@pytest.mark.parametrize("text, kib", [("8k", 8), ("8K", 8), ("8", 8), ("8KiB", 8),
                                       ("8192", 8), ("16k", 16), ("16", 16), ("16384", 16)])
def test_page_sizes_a_user_gives(text, kib):
    assert parse_page_kib(text) == kib


@pytest.mark.parametrize("text", ["4k", "32k", "8KB", "8m", "", "x", "12k", "1000"])
def test_other_page_sizes_are_refused_in_one_line(text):
    with pytest.raises(UsageError, match=r"^--innodb-page-size .*: give 8k or 16k \("):
        parse_page_kib(text)


def test_the_flags_of_both_tablespace_formats():
    # full_crc32 (bit 4), as mariadb-install-db 10.11 wrote them for 4, 8 and 16 KiB pages
    assert [page_kib_of_flags(f) for f in (0x13, 0x14, 0x15)] == [4, 8, 16]
    # the older format: the shift in bits 6-9, 0 for the default 16 KiB
    assert [page_kib_of_flags(f) for f in (0, 0x21, 4 << 6, 5 << 6)] == [16, 16, 8, 16]


def _ibdata(folder, flags: int) -> None:
    page = bytearray(8192)
    page[54:58] = struct.pack(">I", flags)
    (folder / "ibdata1").write_bytes(bytes(page))


def test_a_data_directory_keeps_its_size(tmp_path):
    assert datadir_page_kib(tmp_path) is None
    _ibdata(tmp_path, 0x14)
    assert datadir_page_kib(tmp_path) == 8
    # an existing 8 KiB directory: its size at every start, asked for or not
    assert checked_page_size(tmp_path, True, None) == "8k"
    assert checked_page_size(tmp_path, True, "8192") == "8k"
    with pytest.raises(UsageError, match=f"^innodb_page_size 16k: the data directory "
                                         f"{tmp_path} was created with 8 KiB pages"):
        checked_page_size(tmp_path, True, "16k")
    _ibdata(tmp_path, 0x15)
    assert checked_page_size(tmp_path, True, None) is None  # InnoDB's default: not written
    with pytest.raises(UsageError, match="was created with 16 KiB pages"):
        checked_page_size(tmp_path, True, "8k")
    # a new directory gets what is asked for; an unreadable one what its last start was given
    assert checked_page_size(tmp_path / "new", False, "8k") == "8k"
    assert checked_page_size(tmp_path / "new", False, "16k") is None
    assert checked_page_size(tmp_path / "new", True, None, recorded="8k") == "8k"


def test_the_option_on_each_engine():
    maria = DbSpec.of(engine="mariadb", settings=(("innodb-page-size", "16k"), ("a", "1")))
    assert with_page_size(maria, None) is maria
    assert with_page_size(maria, 8).settings == (("a", "1"), ("innodb_page_size", "8k"))
    remote = DbSpec.of(dsn="mariadb://u@localhost/x")
    assert with_page_size(remote, 8) == remote
    with pytest.raises(UsageError, match="^--innodb-page-size is MariaDB's: PostgreSQL's page "
                                         "size is fixed when it is compiled"):
        with_page_size(DbSpec.of(engine="postgres"), 8)
