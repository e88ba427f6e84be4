"""What a run's record keeps of its specs."""

from pathlib import Path

from oltplab.config import DbSpec
from oltplab.runs.lifecycle import spec_dict


def test_dsn_password_is_not_written_into_the_record():
    spec = DbSpec.of(dsn="postgresql://bench:s3cret@db.example:5432/tpcc")
    data = spec_dict(spec)
    assert "s3cret" not in str(data)
    assert data["dsn"] == "postgresql://bench:***@db.example:5432/tpcc"
    query = spec_dict(DbSpec.of(dsn="postgresql://db.example/tpcc?user=bench&password=s3cret"))
    assert "s3cret" not in query["dsn"] and "password=***" in query["dsn"]
    maria = spec_dict(DbSpec.of(dsn="mariadb://bench:s3cret@db.example:3306/tpcc"))
    assert "s3cret" not in maria["dsn"]


def test_paths_become_strings_and_a_managed_spec_keeps_its_fields():
    data = spec_dict(DbSpec.of(datadir=Path("/srv/data")))
    assert data["datadir"] == "/srv/data" and data["dsn"] is None
