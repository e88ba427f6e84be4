"""The user sequence of a run: the counts given, or ``auto`` (the best user count, E9).

With ``--users auto[:MAX]`` the steps run 1, 2, 4, 8 ... users (config.auto_users). After
each step the manager asks ``next_users``; the search stops after the first step whose TPM
grew by less than ``GAIN_PCT`` over the previous step's (or fell), or when doubling would
exceed MAX. The summary names the peak (the step with the highest TPM) and the knee (the
first step whose gain was below ``GAIN_PCT``: the step that stopped the search).

The TPM compared is the step's workload TPM (``workload_tpm``: the workload database's
commits and rollbacks per minute, without the monitor's and the sampler's own), the figure
the rigor checks compare with the client's and the step line prints; the instance TPM
counts every database on the server, so a neighbour's activity would move the decision.
A step without server snapshots falls back to the instance TPM, then to the client's.

Everything here is pure: records in, decisions and summaries out.
"""

from __future__ import annotations

GAIN_PCT = 5.0
METRIC = "workload_tpm"
FELL, FLAT, MAX = "tpm-fell", "gain-below-threshold", "max-users"


def step_tpm(step: dict) -> float | None:
    """The TPM the search compares (see the module's docstring)."""
    for key in (METRIC, "tpm", "client_tpm"):
        if step.get(key) is not None:
            return step[key]
    return None


def gain_pct(before: float | None, after: float | None) -> float | None:
    """Growth of ``after`` over ``before`` in percent; None when it has no finite value
    (``before`` zero or unknown)."""
    if before is None or after is None or before <= 0:
        return None
    return (after - before) * 100.0 / before


def slowed(before: float | None, after: float | None, threshold: float = GAIN_PCT
           ) -> str | None:
    """``FELL`` or ``FLAT`` when ``after`` grew by less than ``threshold`` percent over
    ``before``, else None. Growth from zero TPM counts as growth; zero TPM twice as flat."""
    if before is None or after is None:
        return None
    gain = gain_pct(before, after)
    if gain is None:
        gain = 0.0 if after <= before else None
    if gain is None or gain >= threshold:
        return None
    return FELL if gain < 0 else FLAT


def stop_reason(tpms: list[float | None], planned: int, threshold: float = GAIN_PCT
                ) -> str | None:
    """Why the search stops after the steps measured so far (TPMs in step order), or None
    to run the next one. ``planned`` is the number of steps up to MAX."""
    if len(tpms) >= 2 and (reason := slowed(tpms[-2], tpms[-1], threshold)):
        return reason
    if len(tpms) >= planned:
        return MAX
    return None


def next_users(users: tuple[int, ...], auto_max: int | None, steps: list[dict]
               ) -> tuple[int | None, str | None]:
    """The next step's user count (None: the run ends) and, for ``auto``, why it stops."""
    if auto_max is not None:
        reason = stop_reason([step_tpm(s) for s in steps], len(users))
        if reason is not None:
            return None, reason
    return (users[len(steps)] if len(steps) < len(users) else None), None


def summary(steps: list[dict], auto_max: int, stopped_because: str | None,
            threshold: float = GAIN_PCT, unit_key: str = "nopm") -> dict:
    """``users_auto`` of run.json: the bound, the rule, each step's TPM and gain, the peak
    (with the workload's own figure, ``unit_key`` of its steps: the shop's "opm"), the knee
    (None when no step's gain fell below the threshold) and why the search ended. Partial
    steps (an interrupted measurement) take no part."""
    done = [s for s in steps if not s.get("partial")]
    table, knee = [], None
    for i, s in enumerate(done):
        tpm = step_tpm(s)
        gain = gain_pct(step_tpm(done[i - 1]), tpm) if i else None
        table.append({"users": s.get("users"), "tpm": tpm,
                      "gain_pct": None if gain is None else round(gain, 2)})
        if i and knee is None and slowed(step_tpm(done[i - 1]), tpm, threshold):
            knee = table[-1]
    peak = None
    if done:
        best = max(range(len(done)), key=lambda k: (table[k]["tpm"] or 0, -k))
        peak = {"users": done[best].get("users"), "tpm": table[best]["tpm"],
                unit_key: done[best].get(unit_key)}
    return {"max": auto_max, "threshold_pct": threshold, "metric": METRIC, "unit": unit_key,
            "steps": table, "peak": peak, "knee": dict(knee) if knee else None,
            "stopped_because": stopped_because}


def describe(auto: dict) -> str:
    """One line: the peak and the knee (the CLI's line and the report's sentence)."""
    peak, knee = auto.get("peak"), auto.get("knee")
    if not peak:
        return "best user count: no step completed"
    unit = auto.get("unit", "nopm")  # the workload's own figure (records before it: NOPM)
    text = (f"best user count: peak at {_users(peak['users'])} (TPM {_int(peak['tpm'])}, "
            f"{unit.upper()} {_int(peak.get(unit))})")
    if knee:
        users = [s.get("users") for s in auto.get("steps") or []]
        k = users.index(knee["users"]) if knee["users"] in users else 0
        before = f" over {_users(users[k - 1])}" if k > 0 else ""
        text += (f"; knee at {_users(knee['users'])} (TPM {_int(knee['tpm'])}, "
                 f"{_pct(knee.get('gain_pct'))}{before})")
    else:
        text += f"; no knee up to {_users(auto.get('max'))}"
    return text + f"; stopped: {_why(auto.get('stopped_because'), auto)}"


def _users(n) -> str:
    return f"{n} user{'' if n == 1 else 's'}"


def _why(reason: str | None, auto: dict) -> str:
    return {FELL: "TPM fell", FLAT: f"TPM grew less than {auto.get('threshold_pct', GAIN_PCT):g}%",
            MAX: f"doubling would exceed {auto.get('max')} users"}.get(reason, reason or "?")


def _int(x) -> str:
    return "-" if x is None else f"{x:,.0f}"


def _pct(x) -> str:
    return "-" if x is None else f"{x:+.1f}%"
