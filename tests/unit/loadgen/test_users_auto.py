"""``--users auto[:MAX]``: parsing, the stop rule on made-up TPM sequences, the summary, and
``users = "auto"`` in plans."""

from __future__ import annotations

from pathlib import Path

import pytest

from oltplab.config import AUTO_MAX_USERS, RunSpec, auto_users, parse_user_option, parse_users
from oltplab.errors import UsageError
from oltplab.plans.model import load_plan
from oltplab.loadgen import sequence
from oltplab.loadgen.sequence import FELL, FLAT, MAX, next_users, stop_reason, summary


def steps_of(tpms, users=None, nopm=None):
    users = users or [2 ** i for i in range(len(tpms))]
    return [{"users": u, "workload_tpm": t, "tpm": t + 7, "client_tpm": t - 3,
             "nopm": (nopm or {}).get(u, t // 2), "partial": False}
            for u, t in zip(users, tpms)]


def search(tpms_by_users: dict[int, int], auto_max: int) -> tuple[list[dict], str]:
    """Run the manager's loop over made-up step TPMs: the steps it runs and why it stops."""
    users = auto_users(auto_max)
    steps, nxt, why = [], users[0], None
    while nxt is not None:
        steps += steps_of([tpms_by_users[nxt]], [nxt])
        nxt, why = next_users(users, auto_max, steps)
    return steps, why


# ---------------------------------------------------------------- parsing

def test_auto_parses_to_the_doubling_steps_up_to_max():
    assert parse_user_option("auto") == {"users": auto_users(AUTO_MAX_USERS),
                                         "users_auto": AUTO_MAX_USERS}
    assert auto_users(64) == (1, 2, 4, 8, 16, 32, 64)
    assert parse_user_option("auto:100") == {"users": (1, 2, 4, 8, 16, 32, 64),
                                             "users_auto": 100}
    assert parse_user_option("AUTO:1") == {"users": (1,), "users_auto": 1}
    assert parse_user_option("1,2,4") == {"users": (1, 2, 4), "users_auto": None}


@pytest.mark.parametrize("bad", ["auto:0", "auto:x", "auto:", "auto,4", "4,auto", "auto:-2",
                                 "auto:99999", "autox"])
def test_bad_auto_is_one_usage_error(bad):
    with pytest.raises(UsageError) as e:
        parse_user_option(bad)
    assert str(e.value).startswith("--users: ") and "\n" not in str(e.value)


def test_a_list_parser_refuses_auto_with_its_own_message():
    with pytest.raises(UsageError, match="auto stands alone"):
        parse_users("1,auto")


def test_runspec_keeps_users_and_bound_consistent():
    assert RunSpec(**parse_user_option("auto:8")).users == (1, 2, 4, 8)
    with pytest.raises(UsageError, match="auto:8 runs 1,2,4,8 at most"):
        RunSpec(users=(1, 2), users_auto=8)


# ---------------------------------------------------------------- the stop rule

def test_grows_then_flattens_stops_at_the_knee():
    steps, why = search({1: 1000, 2: 1900, 4: 3500, 8: 3600, 16: 9999}, 64)
    assert [s["users"] for s in steps] == [1, 2, 4, 8] and why == FLAT
    s = summary(steps, 64, why)
    assert s["peak"] == {"users": 8, "tpm": 3600, "nopm": 1800}
    assert s["knee"] == {"users": 8, "tpm": 3600, "gain_pct": round(100 / 35, 2)}
    assert [x["gain_pct"] for x in s["steps"]] == [None, 90.0, 84.21, 2.86]


def test_a_fall_stops_and_the_peak_is_the_step_before():
    steps, why = search({1: 1000, 2: 2000, 4: 1500, 8: 9999}, 64)
    assert [s["users"] for s in steps] == [1, 2, 4] and why == FELL
    s = summary(steps, 64, why)
    assert s["peak"]["users"] == 2 and s["knee"]["users"] == 4 and s["knee"]["gain_pct"] == -25.0


def test_reaching_max_stops_without_a_knee():
    steps, why = search({1: 100, 2: 200, 4: 400, 8: 800}, 6)
    assert [s["users"] for s in steps] == [1, 2, 4] and why == MAX
    s = summary(steps, 6, why)
    assert s["peak"]["users"] == 4 and s["knee"] is None and s["max"] == 6


def test_the_threshold_is_a_strict_five_percent():
    assert stop_reason([1000, 1050], 7) is None  # exactly 5% is growth
    assert stop_reason([1000, 1049], 7) == FLAT
    assert stop_reason([1000, 1000], 7) == FLAT
    assert stop_reason([1000], 7) is None and stop_reason([1000], 1) == MAX


def test_growth_from_zero_goes_on_and_zero_twice_is_flat():
    assert stop_reason([0, 10], 7) is None
    assert stop_reason([0, 0], 7) == FLAT


def test_the_compared_tpm_is_the_workload_tpm_then_instance_then_client():
    assert sequence.step_tpm({"workload_tpm": 5, "tpm": 9, "client_tpm": 7}) == 5
    assert sequence.step_tpm({"workload_tpm": None, "tpm": 9, "client_tpm": 7}) == 9
    assert sequence.step_tpm({"workload_tpm": None, "tpm": None, "client_tpm": 7}) == 7
    # the workload TPM decides even where the instance TPM would say otherwise
    steps = steps_of([1000, 1010])
    steps[1]["tpm"] = 5000
    assert next_users((1, 2, 4), 4, steps) == (None, FLAT)


def test_a_fixed_sequence_runs_every_count():
    assert next_users((1, 3), None, steps_of([100])) == (3, None)
    assert next_users((1, 3), None, steps_of([100, 50], [1, 3])) == (None, None)


def test_partial_steps_take_no_part_and_ties_go_to_fewer_users():
    steps = steps_of([1000, 1000, 1200], [1, 2, 4])
    steps[2]["partial"] = True
    s = summary(steps, 8, "interrupted")
    assert s["peak"]["users"] == 1 and s["knee"]["users"] == 2 and len(s["steps"]) == 2
    assert s["stopped_because"] == "interrupted"


def test_describe_names_peak_and_knee_in_one_line():
    steps, why = search({1: 1000, 2: 2000, 4: 2010}, 64)
    line = sequence.describe(summary(steps, 64, why))
    assert line.startswith("best user count: peak at 4 users (TPM 2,010, NOPM 1,005)")
    assert "knee at 4 users (TPM 2,010, +0.5% over 2 users)" in line and "\n" not in line
    assert "stopped: TPM grew less than 5%" in line
    steps, why = search({1: 10, 2: 9}, 64)
    assert "peak at 1 user (TPM 10," in sequence.describe(summary(steps, 64, why))
    steps, why = search({1: 10, 2: 20}, 2)
    assert sequence.describe(summary(steps, 2, why)).endswith(
        "no knee up to 2 users; stopped: doubling would exceed 2 users")


# ---------------------------------------------------------------- plans

E9 = Path(__file__).parents[3] / "examples" / "plans" / "e9-best-users.toml"


def test_plans_accept_auto_in_defaults_and_matrix(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text('[plan]\nname = "p"\n[defaults]\nusers = "auto"\n'
                 '[matrix]\nmode = ["sql"]\nusers = ["auto:4", [1, 2]]\n')
    p = load_plan(f, tmp_path)
    assert [(c.run.users, c.run.users_auto) for c in p.cells] == [((1, 2, 4), 4), ((1, 2), None)]
    f.write_text('[plan]\nname = "p"\n[defaults]\nusers = "auto"\n')
    assert load_plan(f, tmp_path).cells[0].run.users_auto == AUTO_MAX_USERS


@pytest.mark.parametrize("text, needle", [
    ('[plan]\nname = "p"\n[defaults]\nusers = "auto:0"\n', "defaults.users: 'auto:0'"),
    ('[plan]\nname = "p"\nrepeat = 2\n[defaults]\nusers = "auto"\n', "plan.repeat = 1"),
])
def test_plans_refuse_bad_auto_in_one_line(tmp_path, text, needle):
    f = tmp_path / "p.toml"
    f.write_text(text)
    with pytest.raises(UsageError, match=needle):
        load_plan(f, tmp_path)


def test_the_e9_example_plan_expands(tmp_path):
    p = load_plan(E9, tmp_path)
    assert p.repeat == 1 and all(c.run.users_auto for c in p.cells)
