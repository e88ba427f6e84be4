"""Plan files: expansion into cells and strict validation before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from oltplab.errors import UsageError
from oltplab.plans.model import load_plan

EXAMPLE = Path(__file__).parents[3] / "examples" / "plans" / "modes.toml"
BASE = """
[plan]
name = "p"
repeat = 2
[defaults]
users = [1, 2]
duration = "5s"
[matrix]
mode = ["procedures", "sql"]
db_memory = ["128MiB", "1GiB"]
[targets.a]
datadir = "/tmp/a"
"""


def plan_of(tmp_path: Path, text: str):
    f = tmp_path / "plan.toml"
    f.write_text(text)
    return load_plan(f, tmp_path / "results")


def test_every_combination_is_a_cell_with_its_specs(tmp_path):
    p = plan_of(tmp_path, BASE)
    assert (p.name, p.repeat, p.varied) == ("p", 2, ("mode", "db_memory"))
    assert [c.name for c in p.cells] == [
        "mode=procedures,db_memory=128MiB", "mode=procedures,db_memory=1GiB",
        "mode=sql,db_memory=128MiB", "mode=sql,db_memory=1GiB"]
    last = p.cells[-1]
    assert last.run.mode == "sql" and last.run.users == (1, 2) and last.run.duration == 5.0
    assert last.db.db_memory == 1024**3 and last.label == "p.mode-sql_db_memory-1GiB"
    assert last.run.name == last.label and last.run.results_dir == tmp_path / "results"


def test_the_example_plan_expands(tmp_path):
    p = load_plan(EXAMPLE, tmp_path)
    assert [c.name for c in p.cells] == ["mode=procedures", "mode=sql"] and p.repeat == 2
    assert all(c.warehouses == 1 and str(c.db.datadir) == "oltplab-data/postgres"
               for c in p.cells)


@pytest.mark.parametrize("change, needle", [
    (("[matrix]", "[matrix]\nbogus = [1]"), "unknown key matrix.bogus"),
    (("[defaults]", "[defaults]\nwarehouse = 2"), "unknown key defaults.warehouse"),
    (('duration = "5s"', "duration = true"), "defaults.duration: True is the wrong type"),
    (("users = [1, 2]", 'users = "1,x"'), "defaults.users: 'x'"),
    (('mode = ["procedures", "sql"]', "mode = []"), "matrix.mode: the list is empty"),
    (('mode = ["procedures", "sql"]', 'mode = "sql"'), "matrix.mode: give a list"),
    (("[defaults]", '[defaults]\ntarget = "b"'), "defaults.target: unknown target 'b'"),
    (("[matrix]", '[matrix]\ntarget = ["a", "c"]'), "matrix.target: unknown target 'c'"),
    (('datadir = "/tmp/a"', 'datadir = "/tmp/a"\nusers = 3'), "unknown key targets.a.users"),
    (("repeat = 2", "repeat = 0"), "plan.repeat: must be at least 1"),
    (('name = "p"', 'name = "a b"'), "plan.name"),
    (("[plan]", "bogus = 1\n[plan]"), "unknown key 'bogus'"),
    (("[targets.a]", "[[step]]\nkind = 'fi'\n[targets.a]"), "step.1.kind: unknown kind 'fi'"),
    (("[targets.a]", "[[step]]\nkind = 'backup'\ncycle = 2\n[targets.a]"),
     "unknown key step.1.cycle (a backup step takes: cycles"),
    (("[targets.a]", "[[step]]\nkind = 'backup'\ncycles = '2'\n[targets.a]"),
     "step.1.cycles: '2' is the wrong type"),
    (("[targets.a]", "[[step]]\nkind = 'fio'\ntarget = 'z'\n[targets.a]"),
     "step.1.target: unknown target 'z'"),
    (("[targets.a]", "[[step]]\nkind = 'fio'\nprofile = 'nope'\n[targets.a]"),
     "step.1 (fio) in cell mode=procedures,db_memory=128MiB: --profile: unknown profile"),
    (("[matrix]", "[matrix\n"), "not valid TOML"),
    (("[matrix]", "[matrix]\nbackup = [0, 1]"), "matrix.backup: only a neighbours step takes it"),
    (("[targets.a]", "[[step]]\nkind = 'neighbours'\n[targets.a]"),
     "step.1 (neighbours) in cell mode=procedures,db_memory=128MiB: cell.users: a neighbours "
     "step runs one user count"),
    (("[targets.a]", "[[step]]\nkind = 'neighbours'\nusers = 1\ninstances = 2\nbackup = 2\n"
                     "[targets.a]"), "--backup 2: give 0 to 1 backup instances"),
])
def test_malformed_plan_is_refused_naming_file_and_key(tmp_path, change, needle):
    with pytest.raises(UsageError) as e:
        plan_of(tmp_path, BASE.replace(*change, 1))
    msg = str(e.value)
    assert msg.startswith(str(tmp_path / "plan.toml") + ": ") and needle in msg, msg
    assert "\n" not in msg


def test_missing_plan_file_is_one_line(tmp_path):
    with pytest.raises(UsageError, match="no such plan file"):
        load_plan(tmp_path / "none.toml", tmp_path)


STEPS = """
[plan]
name = "s"
repeat = 2
[defaults]
warehouses = 1
[matrix]
target = ["a", "b"]
mode = ["procedures", "sql"]
[targets.a]
datadir = "/tmp/ds-a/pg"
[targets.b]
datadir = "/tmp/ds-b/pg"
[[step]]
kind = "fio"
profile = ["4k-randread", "4k-randwrite"]
size = "16MiB"
[[step]]
kind = "tpcc"
duration = "7s"
[[step]]
kind = "backup"
cycles = 2
"""


def test_steps_expand_to_items_per_cell_and_fio_once_per_datastore(tmp_path):
    p = plan_of(tmp_path, STEPS)
    assert [s.kind for s in p.steps] == ["fio", "tpcc", "backup"]
    got = [(i.cell.name, i.step.index, i.name, i.label) for i in p.items]
    assert got == [
        ("target=a,mode=procedures", 1, "target=a", "s.target_a.fio"),
        ("target=a,mode=procedures", 2, "target=a,mode=procedures", "s.target-a_mode-procedures"),
        ("target=a,mode=procedures", 3, "target=a,mode=procedures",
         "s.target-a_mode-procedures.backup"),
        ("target=a,mode=sql", 2, "target=a,mode=sql", "s.target-a_mode-sql"),
        ("target=a,mode=sql", 3, "target=a,mode=sql", "s.target-a_mode-sql.backup"),
        ("target=b,mode=procedures", 1, "target=b", "s.target_b.fio"),
        ("target=b,mode=procedures", 2, "target=b,mode=procedures", "s.target-b_mode-procedures"),
        ("target=b,mode=procedures", 3, "target=b,mode=procedures",
         "s.target-b_mode-procedures.backup"),
        ("target=b,mode=sql", 2, "target=b,mode=sql", "s.target-b_mode-sql"),
        ("target=b,mode=sql", 3, "target=b,mode=sql", "s.target-b_mode-sql.backup")]
    fio = p.items[0].spec
    assert str(fio.target) == "/tmp/ds-a" and [s.name for s in fio.steps] == [
        "4k-randread", "4k-randwrite"] and fio.size == 16 * 1024**2
    assert fio.results_dir == tmp_path / "results" and fio.name == "s.target_a.fio"
    tpcc, backup = p.items[1].spec, p.items[2].spec
    assert tpcc.duration == 7.0 and tpcc.mode == "procedures" and tpcc.name == p.items[1].label
    assert backup.cycles == 2 and backup.name == p.items[2].label


def test_a_plan_without_steps_has_one_tpcc_step(tmp_path):
    p = plan_of(tmp_path, BASE)
    assert [(s.index, s.kind) for s in p.steps] == [(1, "tpcc")]
    assert [i.label for i in p.items] == [c.label for c in p.cells]
    assert all(i.spec == i.cell.run for i in p.items)


def test_set_overrides_defaults_narrows_the_matrix_and_reaches_steps(tmp_path):
    f = tmp_path / "plan.toml"
    f.write_text(STEPS)
    p = load_plan(f, tmp_path, ("duration=2s", "mode=sql", "users=[1,3]", "plan.repeat=1",
                                "targets.b.datadir=/tmp/elsewhere/pg", "step.3.cycles=1",
                                "step.1.duration=1"))
    assert p.repeat == 1 and [c.name for c in p.cells] == ["target=a,mode=sql",
                                                           "target=b,mode=sql"]
    assert all(c.run.duration == 2.0 and c.run.users == (1, 3) for c in p.cells)
    assert str(p.cells[1].db.datadir) == "/tmp/elsewhere/pg"
    assert p.items[-1].spec.cycles == 1 and p.items[0].spec.duration == 1.0
    assert p.items[1].spec.duration == 7.0  # the step's own value wins over the default


@pytest.mark.parametrize("override, needle", [
    ("duration", "--set 'duration': give KEY=VALUE"),
    ("step.9.cycles=1", "--set step.9.cycles: give step.N.KEY with N from 1 to 3"),
    ("plan.name.x=1", "--set plan.name.x: name is not a table"),
    ("bogus=1", "unknown key defaults.bogus"),
])
def test_bad_set_is_one_line(tmp_path, override, needle):
    f = tmp_path / "plan.toml"
    f.write_text(STEPS)
    with pytest.raises(UsageError) as e:
        load_plan(f, tmp_path, (override,))
    assert needle in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_a_plan_may_inject_faults_and_a_bad_event_names_its_key(tmp_path):
    one_step = BASE.replace("users = [1, 2]", "users = [2]")
    p = plan_of(tmp_path, one_step.replace("[defaults]",
                                           '[defaults]\ninject = ["at=2s,kill-backend"]'))
    assert all(c.run.inject[0].kind == "kill-backend" for c in p.cells)
    with pytest.raises(UsageError, match=r"defaults.inject: --inject 'at=2s': give an action"):
        plan_of(tmp_path, BASE.replace("[defaults]", '[defaults]\ninject = ["at=2s"]'))


NEIGHBOURS = """
[plan]
name = "nb"
[defaults]
instances = 3
warehouses = 2
users = [4]
duration = "9s"
db_memory = "96MiB"
port = 6000
[matrix]
backup = [0, 1]
[[step]]
kind = "neighbours"
backup_interval = "2s"
root = "/tmp/nb"
"""


def test_a_neighbours_step_takes_the_cell_options_and_its_own(tmp_path):
    plan = plan_of(tmp_path, NEIGHBOURS)
    assert [c.name for c in plan.cells] == ["backup=0", "backup=1"]
    base, noisy = (i.spec for i in plan.items)
    assert (base.instances, base.backup, noisy.backup) == (3, 0, 1)
    assert (noisy.warehouses, noisy.users, noisy.duration, noisy.port) == (2, 4, 9.0, 6000)
    assert (noisy.backup_interval, noisy.root) == (2.0, Path("/tmp/nb"))
    assert noisy.db_memory == 96 * 2**20
    assert noisy.name == "nb.backup-1.neighbours" and noisy.results_dir == tmp_path / "results"
    assert not plan.items[0].kind.needs_db  # it starts servers of its own


def test_a_plan_takes_an_engine_and_a_dsn_names_its_own(tmp_path):
    p = plan_of(tmp_path, "[plan]\nname = \"e\"\n[matrix]\nengine = [\"postgres\", \"mariadb\"]\n")
    pg, maria = (c.db for c in p.cells)
    assert (pg.engine, pg.port, pg.datadir) == ("postgres", 5432, Path("oltplab-data/postgres"))
    assert (maria.engine, maria.port, maria.datadir) == ("mariadb", 3306,
                                                         Path("oltplab-data/mariadb"))
    by_dsn = plan_of(tmp_path, "[plan]\nname = \"d\"\n[defaults]\ndsn = \"mysql://u@h/tpcc\"\n")
    assert by_dsn.cells[0].db.engine == "mariadb"
    with pytest.raises(UsageError, match="engine postgres does not match dsn"):
        plan_of(tmp_path, "[plan]\nname = \"m\"\n[defaults]\nengine = \"postgres\"\n"
                          "dsn = \"mariadb://u@h/tpcc\"\n")
    with pytest.raises(UsageError, match="engine: 'oracle' is not one of postgres, mariadb"):
        plan_of(tmp_path, "[plan]\nname = \"o\"\n[defaults]\nengine = \"oracle\"\n")


INJECT_STEP = """
[plan]
name = "i"
[defaults]
{cell}
users = [1]
duration = "10s"
[[step]]
kind = "tpcc"
inject = ["{event}"]
"""


@pytest.mark.parametrize("cell, event, needle", [
    ('engine = "mariadb"', "at=30s,kill-server",
     "at= lies beyond the measured window (--duration 10 s)"),
    ('dsn = "postgresql://u@h/tpcc"', "at=2s,kill-server",
     "kill-server needs a managed server; it does not go with --dsn"),
    ("", "at=30s,kill-backend", "at= lies beyond the measured window (--duration 10 s)"),
])
def test_step_inject_is_checked_as_a_cell_inject_is(tmp_path, cell, event, needle):
    with pytest.raises(UsageError) as e:
        plan_of(tmp_path, INJECT_STEP.format(cell=cell, event=event))
    assert needle in str(e.value) and "\n" not in str(e.value), str(e.value)
    assert str(e.value).startswith(f"{tmp_path / 'plan.toml'}: step.1 (tpcc) in cell all: ")


@pytest.mark.parametrize("event", ["at=2s,kill-server", "at=2s,kill-backend"])
def test_step_inject_on_mariadb_is_planned_as_on_postgres(tmp_path, event):
    plan = plan_of(tmp_path, INJECT_STEP.format(cell='engine = "mariadb"', event=event))
    [item] = plan.items
    assert item.cell.db.engine == "mariadb" and [e.text for e in item.spec.inject] == [event]


def test_fio_step_refuses_a_missing_path_as_fio_run_does(tmp_path):
    missing = tmp_path / "not-mounted" / "data"
    text = f'[plan]\nname = "f"\n[[step]]\nkind = "fio"\npath = "{missing}"\n'
    with pytest.raises(UsageError) as e:
        plan_of(tmp_path, text)
    assert str(e.value) == (f"{tmp_path / 'plan.toml'}: step.1 (fio) in cell all: "
                            f"--target: {missing} does not exist")
    assert not missing.parent.exists()
    (tmp_path / "not-mounted").mkdir()
    assert str(plan_of(tmp_path, text.replace(str(missing), str(missing.parent)))
               .items[0].spec.target) == str(missing.parent)


def test_step_users_auto_with_repeats_is_refused_as_a_cell_users_auto_is(tmp_path):
    text = '[plan]\nname = "a"\nrepeat = 2\n[[step]]\nkind = "tpcc"\nusers = "auto:8"\n'
    with pytest.raises(UsageError, match=r"searches for the best user count in one run; give "
                                         r"plan.repeat = 1$"):
        plan_of(tmp_path, text)
    once = plan_of(tmp_path, text.replace("repeat = 2", "repeat = 1"))
    assert once.items[0].spec.users_auto == 8


@pytest.mark.parametrize("extra, message", [
    ('engine = "mariadb"\npg_bin = "/usr/lib/postgresql/18/bin"', "--pg-bin names PostgreSQL"),
    ('dsn = "postgresql://u@h/tpcc"\nlisten = "127.0.0.1"', "--listen configures a managed"),
    ('dsn = "postgresql://u@h/tpcc"\nhost_memory = "1GiB"', "--host-memory limits a managed"),
])
def test_cell_database_options_are_checked_as_a_command_checks_them(tmp_path, extra, message):
    """One set of rules for the database spec of a command and of a plan's cell."""
    with pytest.raises(UsageError, match=message):
        plan_of(tmp_path, f"[plan]\nname = \"p\"\n[defaults]\n{extra}\n")


STORES = """
[plan]
name = "s"
baseline = "r1"
[defaults]
users = [1]
[matrix]
datastore = ["r1", "x"]
[datastores.r1]
raid = "raid1"
loop = "4x1GiB"
[datastores.x]
fs = "xfs"
loop = "1x1GiB"
keep = true
"""


def test_cells_on_datastores_put_their_data_in_its_mount(tmp_path, monkeypatch):
    monkeypatch.setattr("os.geteuid", lambda: 0)
    plan = plan_of(tmp_path, STORES)
    r1, x = plan.cells
    assert r1.db.datadir == Path("oltplab-data/datastores/r1/mnt/postgres")
    assert (r1.datastore.raid, r1.datastore.loop_count, x.datastore.fs) == ("raid1", 4, "xfs")
    assert [(s.name, keep) for s, keep in plan.datastores] == [("r1", False), ("x", True)]
    assert plan.baseline == "s.datastore-r1"
    inject = STORES.replace('users = [1]', 'users = [1]\nduration = "20s"\n'
                            'inject = ["at=5s,remove-device=2"]')
    with pytest.raises(UsageError, match="xfs; device faults need btrfs"):
        plan_of(tmp_path, inject)
    ok = inject.replace('datastore = ["r1", "x"]', 'datastore = ["r1"]')
    assert plan_of(tmp_path, ok).cells[0].run.inject[0].arg == "2"
    with pytest.raises(UsageError, match="raid1 raid needs 2 devices; 1 would be left"):
        plan_of(tmp_path, ok.replace('"4x1GiB"', '"2x1GiB"'))


@pytest.mark.parametrize("change, needle", [
    (('datastore = ["r1", "x"]', 'datastore = ["r1", "y"]'), "unknown datastore 'y'"),
    (('users = [1]', 'users = [1]\ndatadir = "/d"'), "it does not go with datadir"),
    (('raid = "raid1"\nloop = "4x1GiB"', 'raid = "raid6"\nloop = "2x1GiB"'),
     "datastores.r1: --raid raid6 needs at least 3"),
    (('keep = true', 'keep = 1'), "datastores.x.keep: 1 is the wrong type"),
    (('keep = true', 'size = 1'), "unknown key datastores.x.size"),
])
def test_bad_datastores_are_refused_naming_the_key(tmp_path, monkeypatch, change, needle):
    monkeypatch.setattr("os.geteuid", lambda: 0)
    with pytest.raises(UsageError, match=needle.replace("(", r"\(")):
        plan_of(tmp_path, STORES.replace(*change))


def test_datastores_need_root(tmp_path, monkeypatch):
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    with pytest.raises(UsageError, match="needs root"):
        plan_of(tmp_path, STORES)


@pytest.mark.parametrize("key, value", [("pct_new_members", 5), ("reviews", 2),
                                        ("pct_new_reviews", 10), ("pct_new_helpfulness", 20)])
def test_a_plan_with_ds3_keys_is_refused_in_one_line(tmp_path, key, value):
    """A plan's cells build DS2 shops: DVD Store 3's percentages would not be run."""
    text = ("[plan]\nname = \"p\"\n[defaults]\nworkload = \"dvds\"\nsize = \"1MB\"\n"
            f"{key} = {value}\n[targets.a]\ndatadir = \"/tmp/a\"\n")
    with pytest.raises(UsageError) as e:
        plan_of(tmp_path, text)
    assert key in str(e.value) and "DS2" in str(e.value) and "\n" not in str(e.value)


HOSTS = STORES.replace('[matrix]\ndatastore = ["r1", "x"]',
                       '[matrix]\ndatastore = ["r1", "x"]\nmode = ["sql", "procedures"]') + """
[hosts]
names = ["h1", "h2"]
cluster_dir = "/srv/cluster"
"""


def test_hosts_place_each_cell_on_its_datastores_host_or_in_turn(tmp_path, monkeypatch):
    from oltplab.plans.hosts import placement
    monkeypatch.setattr("os.geteuid", lambda: 0)
    plan = plan_of(tmp_path, HOSTS)
    assert plan.hosts.names == ("h1", "h2") and plan.hosts.cluster_dir == Path("/srv/cluster")
    # the datastores' hosts decide where their cells run
    assert placement(plan, {"r1": "h2", "x": "h1"}) == {0: "h2", 1: "h2", 2: "h1", 3: "h1"}
    with pytest.raises(UsageError, match="cell datastore=x,mode=sql: no host of hosts.names "
                                         r"\(h1, h2\) offers datastore 'x'"):
        placement(plan, {"r1": "h2", "x": "h9"})
    # cells on no datastore: to the hosts in turn
    plain = plan_of(tmp_path, '[plan]\nname = "p"\n[matrix]\nusers = [[1], [2], [4]]\n'
                              '[hosts]\nnames = ["a", "b"]\n')
    assert placement(plain, {}) == {0: "a", 1: "b", 2: "a"}


@pytest.mark.parametrize("hosts, needle", [
    ('names = "h1"', "hosts.names: 'h1' is the wrong type"),
    ('names = []', "hosts.names: give the cluster's hosts"),
    ('names = ["h1", "h1"]', "hosts.names: give the cluster's hosts"),
    ('names = ["h1"]\nport = 1', "unknown key hosts.port"),
])
def test_bad_hosts_are_refused_naming_the_key(tmp_path, hosts, needle):
    with pytest.raises(UsageError, match=needle):
        plan_of(tmp_path, f'[plan]\nname = "p"\n[hosts]\n{hosts}\n')


def test_a_fio_step_on_each_of_several_datastores_has_a_label_of_its_own(tmp_path, monkeypatch):
    """Its runs' label names the path fio measures in: paths that differ only past the 64
    characters a label keeps were one label, so three datastores' fio runs were one group."""
    monkeypatch.setattr("os.geteuid", lambda: 0)
    names = ["r1", "r5-zstd", "r5-zstd-dedupe"]
    stores = "".join(f'[datastores.{n}]\nraid = "raid1"\nloop = "2x1GiB"\n' for n in names)
    plan = plan_of(tmp_path, f"""
[plan]
name = "acc-policies-fio-dvds"
[defaults]
users = [1]
[matrix]
datastore = {names}
{stores}
[[step]]
kind = "fio"
profile = "4k-randwrite"
[[step]]
kind = "tpcc"
""".replace("'", '"'))
    labels = [i.label for i in plan.items if i.step.kind == "fio"]
    assert len(labels) == 3 and len(set(labels)) == 3, labels
    assert all(len(x) <= 64 and x.startswith("acc-policies-fio-dvds.") and x.endswith(".fio")
               for x in labels), labels
    assert [n in x for n, x in zip(names, labels)] == [True, True, True], labels
