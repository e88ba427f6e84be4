"""The per-IO latency source times only the devices it is given: their numbers as the block
tracepoints give them (a partition's requests are its disk's), in the program's filter."""

from __future__ import annotations

import os

from oltplab.telemetry.iolatency import device_number, program


def _block(sys_root, name: str, dev: str, parent: str | None = None) -> None:
    real = sys_root / "devices" / (f"{parent}/{name}" if parent else name)
    real.mkdir(parents=True)
    (real / "dev").write_text(dev + "\n")
    if parent:
        (real / "partition").write_text("1\n")
    link = sys_root / "class" / "block" / name
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(real, link)


def test_a_device_and_a_partition_have_the_numbers_their_requests_carry(tmp_path):
    _block(tmp_path, "sdb", "8:16")
    _block(tmp_path, "sdb1", "8:17", parent="sdb")
    _block(tmp_path, "loop12", "7:12")
    assert device_number("sdb", str(tmp_path)) == (8 << 20) | 16
    assert device_number("sdb1", str(tmp_path)) == (8 << 20) | 16
    assert device_number("loop12", str(tmp_path)) == (7 << 20) | 12
    assert device_number("gone", str(tmp_path)) is None


def test_the_program_filters_on_the_numbers_given_and_on_none_without_a_list():
    some = program([(8 << 20) | 16, (7 << 20) | 12], 250)
    assert ("/args->nr_sector > 0 && (args->dev == 8388624 || args->dev == 7340044)/"
            in some)
    assert "interval:ms:250 {" in some and 'printf("T %lld\\n", nsecs)' in some
    every = program(None, 100)
    assert "/args->nr_sector > 0/" in every and "interval:ms:100 {" in every
    assert every.count("args->dev ==") == 0 and some.count("args->dev ==") == 2
