"""MariaDB as a managed engine: instance, settings, access, client, counters (see
engines/base.py for the interface and docs/design.md for the choices)."""
