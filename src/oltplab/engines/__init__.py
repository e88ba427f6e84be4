"""The database engines behind one interface (engines/base.py), found by name.

``get(name)`` imports ``engines/<name>`` when first asked and returns its ``ENGINE``;
``engine_of_dsn`` tells the engine from a DSN's scheme. Adding an engine is adding its folder
with the same modules and its name to ``ENGINES``.
"""

from __future__ import annotations

import importlib
from urllib.parse import urlsplit

from ..errors import UsageError

ENGINES = ("postgres", "mariadb")
DEFAULT = "postgres"

_SCHEMES = {"postgresql": "postgres", "postgres": "postgres",
            "mysql": "mariadb", "mariadb": "mariadb"}


def get(name: str):
    """The ``ENGINE`` object of engine ``name``; UsageError for a name that is not one."""
    if name not in ENGINES:
        raise UsageError(f"engine {name!r} is not one of {', '.join(ENGINES)}")
    return importlib.import_module(f"{__name__}.{name}").ENGINE


def engine_of_dsn(dsn: str) -> str:
    """The engine a DSN's scheme names: postgresql:// and postgres:// are PostgreSQL,
    mysql:// and mariadb:// MariaDB; UsageError otherwise."""
    scheme = urlsplit(str(dsn).strip()).scheme.lower() if "://" in str(dsn) else ""
    if scheme not in _SCHEMES:
        raise UsageError("--dsn must be a URI starting postgresql:// (PostgreSQL) or "
                         "mariadb:// or mysql:// (MariaDB)")
    return _SCHEMES[scheme]


def resolve(engine: str | None, dsn: str | None, flag: str = "--") -> str:
    """The engine of a command: the DSN's when one is given (a different ``engine`` is
    refused), else ``engine``, else PostgreSQL. ``flag`` prefixes option names in messages."""
    if engine is not None and engine not in ENGINES:
        raise UsageError(f"{flag}engine {engine!r} is not one of {', '.join(ENGINES)}")
    if not dsn:
        return engine or DEFAULT
    of_dsn = engine_of_dsn(dsn)
    if engine is not None and engine != of_dsn:
        raise UsageError(f"{flag}engine {engine} does not match {flag}dsn, which names a "
                         f"{of_dsn} server")
    return of_dsn
