"""dvds run --users auto: the search's line after the step table names the shop's own figure,
OPM, as the record's peak has it."""

from __future__ import annotations

from ..conftest import oltplab, saved_runs
from .steps import pg_shop


def test_the_shops_best_user_count_is_named_with_its_opm(tmp_path):
    with pg_shop(tmp_path) as (flags, _):
        p = oltplab("dvds", "run", *flags, "--users", "auto:2", "--rampup", "0s", "--duration",
                    "3s", "--sample-interval", "0", "--power", "none", "--results-dir",
                    str(tmp_path / "results"), cwd=tmp_path, check_rc=0)
    [run] = saved_runs(tmp_path / "results")
    auto = run["users_auto"]
    peak = auto["peak"]
    assert auto["unit"] == "opm" and peak["opm"] > 0 and "nopm" not in peak, auto
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("best user count:"))
    assert f"(TPM {peak['tpm']:,.0f}, OPM {peak['opm']:,.0f})" in line, line
    assert "NOPM" not in line
