import pytest

from oltplab.config import (RunSpec, format_size, parse_duration, parse_setting, parse_size,
                            parse_users)
from oltplab.errors import UsageError


@pytest.mark.parametrize("text, expected", [
    ("2GiB", 2 * 1024**3), ("2G", 2 * 1024**3), ("2GB", 2 * 10**9), ("512MiB", 512 * 1024**2),
    ("1.5GiB", int(1.5 * 1024**3)), ("4096", 4096), ("64k", 65536),
])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "lots", "0", "-1G", "2XB", "G"])
def test_parse_size_rejects(text):
    with pytest.raises(UsageError):
        parse_size(text)


@pytest.mark.parametrize("text, expected", [
    ("30s", 30), ("2m", 120), ("1h", 3600), ("90", 90), ("1.5m", 90), ("250ms", 0.25), ("0", 0),
])
def test_parse_duration(text, expected):
    assert parse_duration(text) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["-5s", "-1", "soon", "5 fortnights", ""])
def test_parse_duration_rejects(text):
    with pytest.raises(UsageError):
        parse_duration(text)


def test_parse_users():
    assert parse_users("1,2,4,8,89,512") == (1, 2, 4, 8, 89, 512)
    assert parse_users(" 3 ") == (3,)
    for bad in ("0", "0,abc", "1,,2", "-1", "1.5", ""):
        with pytest.raises(UsageError):
            parse_users(bad)


def test_parse_setting():
    assert parse_setting("synchronous_commit=off") == ("synchronous_commit", "off")
    assert parse_setting("search_path = a,b") == ("search_path", "a,b")
    for bad in ("nonsense", "=x", "1abc=2"):
        with pytest.raises(UsageError):
            parse_setting(bad)


def test_format_size():
    assert format_size(2 * 1024**3) == "2GiB"
    assert format_size(1536) == "1536B"


def test_run_spec_validates():
    with pytest.raises(UsageError):
        RunSpec(mode="turbo")
    with pytest.raises(UsageError):
        RunSpec(duration=0)
    with pytest.raises(UsageError):
        RunSpec(name="a b")
    assert RunSpec(users=(1, 2)).users == (1, 2)


def test_inject_events_parse_into_frozen_records():
    from oltplab.config import InjectEvent, parse_inject
    assert parse_inject("at=60s,kill-server") == InjectEvent("kill-server", 60.0,
                                                             text="at=60s,kill-server")
    e = parse_inject("at=30s, for=1m, throttle=write:10MiB/s")
    assert (e.kind, e.at_s, e.for_s, e.limit, e.value) == ("throttle", 30, 60, "write",
                                                           10 * 1024**2)
    e = parse_inject("throttle=read-iops:200,for=20s,at=0")
    assert (e.limit, e.value, e.at_s, e.for_s) == ("read-iops", 200, 0.0, 20.0)
    with pytest.raises(UsageError, match=r"^--inject 'at=1s,at=2s,kill-backend': at= is given"):
        parse_inject("at=1s,at=2s,kill-backend")
    with pytest.raises(UsageError, match="for=: '0s' must be longer than zero"):
        parse_inject("at=1s,for=0s,throttle=write:1MiB")
