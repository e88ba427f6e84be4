"""The C part's tests again, on a build of the extension with AddressSanitizer and
UndefinedBehaviorSanitizer: an out-of-bounds write, a use after free or undefined behaviour in
the Terminal draws (TPC-C's and the DVD-Store-derived shopper's), the brokerage's market
emulator, the error paths or the procedures loop (64 users in one worker with a tiny bulk,
against the suite's PostgreSQL; the shoppers' orders and the loop's unit row on both servers,
and their --mode sql statements on both; MariaDB's loop, procedures and --mode sql, against a
MariaDB the child starts; the brokerage's users and market actors on both loops, whose answers'
rows the loop hands over, on builds this test makes unsanitized) aborts the child and fails
this test.

The sanitized module is built with gcc into a temporary directory and imported, in a child
Python with the sanitizer runtime preloaded, as ``oltplab._native`` before anything else
imports it. Python's own allocator is switched to malloc so that every buffer is checked.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from glob import glob
from pathlib import Path

import pytest

from oltplab.engines.mariadb.instance import find_binary

from .test_brokerage_loop import build_mariadb, build_postgres

ROOT = Path(__file__).resolve().parents[3]
FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer",
         "-O1", "-g", "-std=gnu11", "-shared", "-fPIC"]
# The tests that run in the child: those that drive the C part in their own process.
I, MARIA = "tests/integration", "tests/integration/engines/mariadb"
TESTS = ["tests/unit/native/test_native_safety.py", "tests/unit/native/test_dvds_terminal.py",
         "tests/unit/native/test_dvds_terminal_ds3.py",
         "tests/unit/native/test_brokerage_market.py",
         "tests/unit/native/test_brokerage_terminal.py",
         "tests/unit/native/test_brokerage_actors.py",
         "tests/unit/workloads/test_inputs.py",
         "tests/unit/workloads/test_brokerage_trades_c.py",
         "tests/unit/workloads/test_mix.py", f"{I}/native/test_native_loop.py",
         f"{I}/native/test_dvds_loop.py", f"{I}/native/test_dvds_sql_loop.py",
         f"{I}/loadgen/test_driver.py::test_procedures_loop_hands_over_response_times_in_bulk",
         f"{I}/loadgen/test_driver.py::"
         "test_procedures_loop_retries_counts_errors_and_stops_on_a_lost_connection",
         f"{I}/faults/test_inject_loop.py", f"{MARIA}/test_mariadb_driver.py",
         f"{MARIA}/test_mariadb_sql_mode.py", f"{I}/native/test_brokerage_loop.py"]
# Of those, tests whose C paths others in the list already take (or that run no C at all):
# left out of the sanitized run, which is several times slower than the plain one.
ALREADY_COVERED = [
    f"{MARIA}/test_mariadb_driver.py::test_without_libmariadb_the_module_imports_and_"
    "mariadb_says_why",  # a child process of its own
    f"{MARIA}/test_mariadb_driver.py::test_bad_dsn_is_one_line",  # no server reached
    f"{MARIA}/test_mariadb_sql_mode.py::test_the_reference_does_what_the_procedures_do",
    f"{MARIA}/test_mariadb_sql_mode.py::test_a_sql_mode_run_agrees_with_the_server_and_"
    "keeps_consistency",  # the whole CLI run; the C-path test drives the same statements
    f"{MARIA}/test_mariadb_sql_mode.py::test_retried_errors_are_rolled_back_and_counted_once_"
    "by_the_server",  # its retries: test_forced_deadlocks_are_retried_and_counted[sql]
]

SHADOW = """
import sys
sys.path.insert(0, "tests")
from native_module import use
use(sys.argv[1])
import pytest
code = pytest.main(sys.argv[2:])
assert sys.modules["oltplab._native"].__file__ == sys.argv[1]
sys.exit(code)
"""


def build_sanitized(out: Path) -> Path:
    """The extension, built with the sanitizers into ``out``."""
    target = out / ("_native" + sysconfig.get_config_var("EXT_SUFFIX"))
    native = ROOT / "src/oltplab/native"
    sources = sorted(glob(str(native / "*.c")) + glob(str(native / "*/*.c")))
    folders = [f for d in sorted(glob(str(native / "*/"))) for f in ("-I", d)]
    cmd = ["gcc", *FLAGS, "-I", sysconfig.get_paths()["include"], *folders, *sources,
           "-o", str(target), "-ldl", "-lm"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return target


def runtime(name: str) -> str:
    path = subprocess.run(["gcc", f"-print-file-name={name}"], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert os.path.isabs(path), f"gcc has no {name}: install its sanitizer runtime"
    return os.path.realpath(path)


def sanitizer_report(stderr: str) -> str:
    """The sanitizer's report (where it starts) or the end of stderr."""
    starts = [i for i in (stderr.find("ERROR: AddressSanitizer"), stderr.find("runtime error"))
              if i >= 0]
    return stderr[min(starts):][:6000] if starts else stderr[-4000:]


# The child runs in about 200 s alone, twice that beside the suite's other processes on 2
# cores; its limit leaves room for a host that runs slower than that.
@pytest.mark.timeout(1080)  # the build and the child have limits of their own: 120 + 900 s
def test_c_part_under_address_and_undefined_behaviour_sanitizers(tmp_path, pg, loaded_w1,
                                                                 request):
    module = build_sanitized(tmp_path)
    # the brokerage's builds, made here unsanitized (the child's loop runs on them)
    brokerage = {"OLTPLAB_TEST_BK_DSN": build_postgres(pg)}
    if find_binary("mariadbd") is not None:
        brokerage["OLTPLAB_TEST_BK_MARIADB_DSN"] = build_mariadb(
            request.getfixturevalue("mariadb"))
    env = {**os.environ, "LD_PRELOAD": f"{runtime('libasan.so')} {runtime('libubsan.so')}",
           "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1",
           "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
           "PYTHONMALLOC": "malloc", "OLTPLAB_TEST_DSN": pg.admin_dsn,
           "OLTPLAB_TEST_SANITIZED": "1",  # tests leave out their parts that run no C
           "OLTPLAB_TEST_W1_DSN": loaded_w1, **brokerage}
    p = subprocess.run([sys.executable, "-c", SHADOW, str(module), "-q", "-p", "no:cacheprovider",
                        "-p", "no:faulthandler", "--capture=sys",  # reports reach stderr
                        "--basetemp", str(tmp_path / "child"),  # not a numbered one to clean up
                        "-x", *TESTS, *(f"--deselect={t}" for t in ALREADY_COVERED)],
                       cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=900)
    report = p.stdout[-4000:] + sanitizer_report(p.stderr)
    assert p.returncode == 0, report
    assert "AddressSanitizer" not in report and "runtime error" not in report, report
    summary = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    assert re.search(r"\b\d+ passed\b", summary) and not re.search(r"failed|error", summary), \
        report
