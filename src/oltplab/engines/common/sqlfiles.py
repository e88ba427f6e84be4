"""The SQL files of a dialect package (engines/<engine>/<workload>/sql/*.sql), read as text
or as statements."""

from __future__ import annotations

from importlib import resources


def sql_text(package: str, name: str) -> str:
    """The text of ``sql/<name>.sql`` shipped in ``package``."""
    return resources.files(package).joinpath("sql", f"{name}.sql").read_text("utf-8")


def has_file(package: str, name: str) -> bool:
    """Whether ``package`` ships ``sql/<name>.sql``."""
    return resources.files(package).joinpath("sql", f"{name}.sql").is_file()


def sql_statements(package: str, name: str) -> list[str]:
    """The statements of a plain ``sql/<name>.sql`` file of ``package`` (no procedure
    bodies): comments dropped, split at the semicolons that end lines."""
    lines = [ln for ln in sql_text(package, name).splitlines()
             if not ln.lstrip().startswith("--")]
    return [s.strip() for s in ("\n".join(lines) + "\n").split(";\n") if s.strip()]
