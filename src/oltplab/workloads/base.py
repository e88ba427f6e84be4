"""The contract of a workload: what the load generator, the engines, the records and the reports
need to know of one (the TPC-C-derived one today; a DVD-Store-derived shop and a TPC-E-derived
brokerage next), declared once in ``workloads/<name>/__init__.py`` as ``WORKLOAD``.

The load generator counts what the C loop reports per *transaction type* (``transactions``, in
the loop's order) and knows nothing else of them: the headline unit (NOPM, OPM ...), the
inputs worth counting and the rigor checks of a step are the workload's. Per engine, the
workload's dialect package ``engines/<engine>/<name>/`` holds its schema, loader, procedures
and checks (``engines.base.Dialect``).

How the next workloads fit:

- a unit of several calls with think time between them (a DVD-Store-derived order: login or
  new customer, browse, purchase): each call is a transaction type, the order is the unit the
  headline counts (``unit_transaction`` names the call that completes it), and ``phases``
  group the types whose latency a report shows together;
- transactions partly caused by others (a TPC-E-derived brokerage: trade results arrive from a
  market emulator after a delay, some on a timer): ``actors`` names what runs beside the
  users in each worker and issues transactions of its own, counted like the users'.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(frozen=True)
class Workload:
    """One workload.

    - ``name``: as commands, plans and records name it ("tpcc"); ``label`` as people write it;
    - ``transactions``: the transaction types, in the C loop's order;
    - ``unit`` and ``unit_transaction``: the headline metric ("NOPM") and the transaction
      type whose committed count per minute it is;
    - ``phases``: {phase: transaction types} whose latency is reported together (empty: each
      type alone);
    - ``actors``: what issues transactions beside the virtual users (empty for TPC-C);
    - ``input_keys``, ``share_keys``: the raw counts of the users' drawn inputs and the shares
      derived from them, as records hold them (``zero_inputs``, ``add_inputs``);
    - ``step_rigor(counts, inputs, ...)``: the shares and warnings of one step;
    - ``draw_constants(rng, schema, spec)``: the constants of a run, drawn once (TPC-C's
      run-time C of NURand; the shop's size and parameters), from the schema's record of the
      build (the dialect's ``schema_info``) and the RunSpec;
    - ``assign_users(rng, users, warehouses, spread)``: each user's home and inputs' seed;
    - ``terminal(user, w_max, constants)``: the object that draws one user's transactions in
      the C loop (the loop takes the workload by ``name``: ``_native.WORKLOADS``);
    - ``caveat``: the sentence every report of it carries;
    - ``unit_row``: the last of ``transactions`` is not a call but the unit the calls make up
      (the shop's order): the C loop records it from the calls' response times;
    - ``unit_key``: the headline's key in a step's record ("nopm", "opm"; the client's is
      ``client_<key>``);
    - ``server_unit_key``: the key of the server's count of units in a step's ``server``;
    - ``step_fields(counts, hists)``: fields of its own a step's record adds;
    - ``schema_record(info, database)``: what a run records of the schema it ran on (the
      dialect's ``schema_info``), as ``schema``, or (``database``) the part ``database``
      repeats;
    - ``optional``: transaction types only some runs draw (the shop's DVD Store 3 calls): a
      step's record leaves them out when it has no attempt of them;
    - ``actors_for(users)``: connections a worker of ``users`` users opens for its actors
      (``actors``: the transactions they issue), and ``market(terminals, plans, constants,
      actors)`` binds the users' terminals to the worker's emulator and returns the actors'
      terminals (the brokerage's market emulator), which the C loop drives as users;
      ``market_counts(terminals)`` adds the emulator's state at the step's end to its inputs.
    """

    name: str
    label: str
    transactions: tuple[str, ...]
    unit: str
    unit_transaction: str
    input_keys: tuple[str, ...]
    share_keys: tuple[str, ...]
    step_rigor: Callable[..., dict]
    caveat: str
    draw_constants: Callable[..., Any] = lambda rng, schema, spec=None: None
    assign_users: Callable[..., list] = lambda rng, users, warehouses, spread: []
    terminal: Callable[[Any, int, Any], Any] | None = None
    phases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    actors: tuple[str, ...] = ()
    unit_row: bool = False
    unit_key: str = "nopm"
    server_unit_key: str = "d_next_o_id_delta"
    step_fields: Callable[[dict, dict], dict] = lambda counts, hists: {}
    schema_record: Callable[..., dict] = lambda info, database=False: {}
    optional: tuple[str, ...] = ()
    market: Callable[..., list] | None = None
    actors_for: Callable[[int], int] = lambda users: 0
    market_counts: Callable[[list], dict] = lambda terminals: {}

    @property
    def throughput_name(self) -> str:
        """What a step's completions per interval count, per minute: TPM (transactions), or
        for a workload with a unit row its unit (the shop's OPM)."""
        return self.unit if self.unit_row else "TPM"

    @property
    def calls(self) -> tuple[str, ...]:
        """The transaction types the users send (all of them but a unit row)."""
        return self.transactions[:-1] if self.unit_row else self.transactions

    def zero_inputs(self) -> dict[str, int]:
        return {k: 0 for k in self.input_keys}

    def add_inputs(self, total: dict[str, int], more: dict) -> None:
        for k in self.input_keys:
            total[k] += int(more.get(k, 0))

    def type_index(self, name: str) -> int:
        return self.transactions.index(name)


@dataclass(frozen=True)
class User:
    """A virtual user with no home warehouse (the shop's, the brokerage's): the fields the step
    expects of a TPC-C terminal are 0, and its inputs' seed is the step's (loadgen/step.py)."""

    index: int
    w_id: int = 0
    stock_d_id: int = 0
    warehouses: tuple[int, ...] = ()


def assign_users(rng, users: int, warehouses: int = 0, spread: bool = False) -> tuple[User, ...]:
    """``users`` users without a home, for a workload whose inputs ignore warehouses."""
    if users < 1:
        raise ValueError("need at least one user")
    return tuple(User(i) for i in range(users))
