"""A shop is reused only when it is the one the run needs: its size, and DVD Store 3's parts
or none (a DS2 plan cell on a DS3 shop of its size would run DS3's steps); and a run records
the parameters it ran (DS3's steps on a DS3 build, with or without --ds3)."""

from __future__ import annotations

import random

import pytest

from oltplab.config import RunSpec
from oltplab.errors import SchemaError
from oltplab.loadgen.manager import effective_spec
from oltplab.runs import schema
from oltplab.workloads.dvds.inputs import draw_constants
from oltplab.workloads.dvds.params import DvdsParams
from oltplab.workloads.dvds.schema import DvdsSchema
from oltplab.workloads.dvds.sizes import parse_size

SIZE = parse_size("10MB")


def shop(ds3: bool) -> DvdsSchema:
    return DvdsSchema(size="10MB", customers=20_000, products=10_000, orders=12_000,
                      functions_installed=True, ds3=ds3, reviews=50_000 if ds3 else 0)


class Engine:
    """A server holding ``info``; ``built`` the build specs it was given."""

    def __init__(self, info):
        self.info, self.built = info, []

    def schema_info(self, dsn, workload):
        return self.info

    def dialect_for(self, workload):
        return self

    def build(self, dsn, spec, progress=None):
        self.built.append(spec)


@pytest.fixture
def engine(monkeypatch):
    def make(info):
        e = Engine(info)
        monkeypatch.setattr(schema.engines, "get", lambda name: e)
        return e
    return make


def test_a_shop_of_the_size_and_build_is_reused(engine):
    for ds3 in (False, True):
        e = engine(shop(ds3))
        assert schema.ensure_schema("postgres", "dsn", None, size=SIZE, ds3=ds3) == "reused"
        assert e.built == []


def test_a_ds3_shop_is_rebuilt_for_a_ds2_cell(engine):
    e = engine(shop(True))
    assert schema.ensure_schema("postgres", "dsn", None, size=SIZE) == "built"
    [spec] = e.built
    assert spec.size == SIZE and spec.ds3 is False and spec.force


def test_a_ds3_shop_at_a_dsn_is_refused_for_a_ds2_cell_in_one_line(engine):
    e = engine(shop(True))
    with pytest.raises(SchemaError) as err:
        schema.ensure_schema("postgres", "dsn", None, size=SIZE, managed=False)
    assert str(err.value) == ("the schema at dsn has size 10MB with DS3, not 10MB; only a "
                              "managed server is rebuilt")
    assert e.built == []


def test_the_run_records_the_ds3_steps_a_ds3_build_runs():
    spec = RunSpec(users=(1,), workload="dvds", params=DvdsParams())
    ran = effective_spec(spec, draw_constants(random.Random(1), shop(True), spec))
    assert ran.params.ds3 is True and ran.params == DvdsParams(ds3=True)
    plain = effective_spec(spec, draw_constants(random.Random(1), shop(False), spec))
    assert plain is spec
