"""Profiles as data, the option table, and the fio arguments built from one spec."""

from pathlib import Path

import click
import pytest

from oltplab.errors import UsageError
from oltplab.cli.fio import fio
from oltplab.fio.jobfile import read_job_file
from oltplab.fio.jobs import fio_time, job_file_job, precondition_job, profile_job
from oltplab.fio.profiles import GROUPS, PROFILES, parse_fio_size, resolve
from oltplab.fio.process import parse_eta
from oltplab.fio.spec import OPTIONS, JobFile, spec_from_options
from oltplab.fio.target import Target

MiB = 1024**2
EXAMPLE = Path(__file__).parents[3] / "examples" / "fio" / "oltp-8k.fio"


def spec(**kw):
    return spec_from_options({"target": "/tmp", **kw})


def test_named_profiles_from_the_issue():
    for name in ("4k-70r30w-random", "4k-randread", "4k-randwrite", "8k-50r50w-random",
                 "64k-70r30w-random", "128k-seqread", "128k-seqwrite", "256k-seqread",
                 "256k-seqwrite"):
        assert name in PROFILES
    p = PROFILES["8k-50r50w-random"]
    assert (p.bs_bytes, p.rw, p.rwmixread) == (8192, "randrw", 50)
    assert PROFILES["256k-seqwrite"].rw == "write"


def test_groups_expand_in_order():
    sweep = resolve(["bs-sweep"])
    assert [p.bs_bytes for p in sweep] == [4096 << i for i in range(7)]
    assert all(p.rw == "randrw" and p.rwmixread == 70 for p in sweep)
    easy = {p.name for p in resolve(["easy"])}
    assert easy == {"4k-randread", "4k-randwrite", "256k-seqread", "256k-seqwrite",
                    "4k-70r30w-random", "8k-50r50w-random"}
    assert len(GROUPS["easy"]) == 6


def test_unknown_profile_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown profile 'nope'"):
        spec(profiles=("nope",))


@pytest.mark.parametrize("text, expected", [("4k", 4096), ("4KB", 4096), ("1m", MiB),
                                            ("16MiB", 16 * MiB), ("512", 512), ("50%", None),
                                            ("${SIZE}", None), ("4k,8k", None)])
def test_fio_sizes_are_binary(text, expected):
    assert parse_fio_size(text) == expected


def test_defaults_come_from_the_table():
    s = spec()
    assert [p.name for p in s.steps] == ["4k-70r30w-random"]
    assert (s.size, s.duration, s.ramp) == (4 * 1024**3, 60.0, 10.0)
    assert (s.jobs, s.iodepth, s.jobs_for_profiles, s.iodepth_for_profiles) == (None, None, 4, 8)
    assert s.name == "fio" and s.results_dir == Path("results") and not s.precondition


def test_every_table_option_is_on_the_command_line_with_its_help():
    text = fio.get_command(click.Context(fio), "run").get_help(click.Context(fio))
    for o in OPTIONS:
        assert o.flag in text
    assert "4k-70r30w-random" in text and "4GiB" in text


@pytest.mark.parametrize("kw, needle", [
    ({"size": "lots"}, "--size"), ({"duration": "0"}, "--duration"),
    ({"ramp": "-1s"}, "negative"), ({"jobs": "0"}, "--jobs"), ({"iodepth": "x"}, "--iodepth"),
    ({"name": "a b"}, "--name"), ({"steady_state": "fast"}, "--steady-state"),
    ({"steady_window": "5s"}, "only with --steady-state"),
    ({"steady_state": "iops:5%", "duration": "3s"}, "--steady-window"),
    ({"steady_state": "iops:5%", "steady_window": "2m"}, "--steady-window"),
    ({"size": "2MiB"}, "too small"), ({"ioengine": "Lib AIO"}, "--ioengine"),
    ({"profiles": ("/no/such.fio",)}, "does not exist"), ({"target": None}, "--target"),
])
def test_bad_options(kw, needle):
    with pytest.raises(UsageError, match=needle.replace("-", r"\-")):
        spec(**kw)


def test_steady_window_defaults_to_half_the_duration():
    assert spec(steady_state="iops:5%", duration="10s").window_s == 5
    assert spec(steady_state="iops:5%", duration="1h").window_s == 60


def test_profile_values_that_are_paths_are_job_files():
    s = spec(profiles=(str(EXAMPLE), "easy"))
    assert isinstance(s.steps[0], JobFile) and s.steps[0].name == "oltp-8k"
    assert len(s.steps) == 7


def _dir_target(tmp_path):
    return Target(path=tmp_path, kind="directory", workdir=tmp_path / "w", capacity_bytes=10**12)


def test_profile_args(tmp_path):
    s = spec(size="64MiB", duration="3s", ramp="1.5s", iodepth="16")
    job = profile_job(s, _dir_target(tmp_path), PROFILES["4k-70r30w-random"])
    a = job.args
    assert f"--directory={tmp_path / 'w'}" in a and "--direct=1" in a
    assert {"--rw=randrw", "--rwmixread=70", "--bs=4k", "--iodepth=16", "--numjobs=4",
            f"--size={16 * MiB}", "--runtime=3s", "--ramp_time=1500ms", "--time_based",
            "--ioengine=libaio", "--name=oltplab"} <= set(a)
    assert (job.jobs, job.iodepth, job.size_bytes) == (4, 16, 64 * MiB)
    seq = profile_job(s, _dir_target(tmp_path), PROFILES["128k-seqread"])
    assert not any(x.startswith("--rwmixread") for x in seq.args)


def test_block_device_is_split_into_regions(tmp_path):
    t = Target(path=Path("/dev/loopX"), kind="block", device=Path("/dev/loopX"),
               capacity_bytes=10**9)
    job = profile_job(spec(size="100MiB", jobs="3"), t, PROFILES["4k-randread"])
    per = 33 * MiB  # 100/3 MiB rounded down to whole MiB
    assert "--filename=/dev/loopX" in job.args
    assert f"--offset_increment={per}" in job.args and f"--size={per}" in job.args
    assert job.size_bytes == 3 * per


def test_steady_state_and_precondition_args(tmp_path):
    s = spec(size="64MiB", duration="10s", steady_state="iops_slope:0.5%")
    a = profile_job(s, _dir_target(tmp_path), PROFILES["4k-randread"]).args
    assert "--steadystate=iops_slope:0.5%" in a and "--steadystate_duration=5s" in a
    pre = precondition_job(s, _dir_target(tmp_path))
    assert {"--rw=write", "--numjobs=4", f"--size={16 * MiB}", "--name=oltplab"} <= set(pre.args)
    assert not any(x.startswith("--runtime") for x in pre.args)


def test_job_file_args_share_the_working_set(tmp_path):
    info = read_job_file(EXAMPLE)
    assert [n for n, _ in info.jobs] == ["data", "wal"] and info.clones() == 3
    job = job_file_job(spec(size="63MiB"), _dir_target(tmp_path), info)
    assert job.args[-1] == str(EXAMPLE) and f"--size={21 * MiB}" in job.args
    assert not any(x.startswith(("--numjobs", "--iodepth", "--ioengine")) for x in job.args)
    assert job.size_bytes == 2 * 21 * MiB + 16 * MiB and job.jobs == 3
    job = job_file_job(spec(size="64MiB", jobs="2", iodepth="4"), _dir_target(tmp_path), info)
    assert "--numjobs=2" in job.args and "--iodepth=4" in job.args


@pytest.mark.parametrize("body, needle", [
    ("[a]\nfilename=/dev/sda\n", "filename is not allowed"),
    ("[global]\ndirectory=/etc\n[a]\n", "directory is not allowed"),
    ("[a]\ndirect=0\n", "direct IO"),
    ("[a]\nbuffered\n", "direct IO"),
    ("[a]\nwrite_iops_log=x\n", "write_iops_log"),
    ("rw=read\n[a]\n", "outside a [section]"),
    ("[global]\nrw=read\n", "defines no job"),
    ("include other.fio\n[a]\n", "include"),
])
def test_job_file_refusals(tmp_path, body, needle):
    f = tmp_path / "j.fio"
    f.write_text(body)
    with pytest.raises(UsageError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        read_job_file(f)


def test_job_file_comments_and_flags(tmp_path):
    f = tmp_path / "j.fio"
    f.write_text("; comment\n# another\n[global]\nnumjobs=2\n[a]\ntime_based\n[b]\nnumjobs=3\n")
    info = read_job_file(f)
    assert info.jobs[0] == ("a", {"time_based": ""}) and info.clones() == 5


@pytest.mark.parametrize("seconds, text", [(3, "3s"), (0, "0s"), (1.5, "1500ms"), (60, "60s")])
def test_fio_time(seconds, text):
    assert fio_time(seconds) == text


def test_eta_lines():
    e = parse_eta("Jobs: 4 (f=4): [m(4)][57.1%][r=166MiB/s,w=70.6MiB/s]"
                  "[r=42.4k,w=18.1k IOPS][eta 00m:03s]")
    assert e == {"percent": 57.1, "read_iops": 42400.0, "write_iops": 18100.0, "eta_s": 3}
    e = parse_eta("Jobs: 1 (f=1): [R(1)][10.0%][r=1024MiB/s][r=1.2M IOPS][eta 01h:02m:03s]")
    assert (e["read_iops"], e["write_iops"], e["eta_s"]) == (1.2e6, None, 3723)
    assert parse_eta("Jobs: 2 (f=0)")["percent"] is None
