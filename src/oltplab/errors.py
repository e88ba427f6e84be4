"""One exception hierarchy. Library code raises these; only the CLI turns them into exit codes."""


class OltplabError(Exception):
    """A runtime failure the user can act on (exit code 1)."""

    exit_code = 1


class UsageError(OltplabError):
    """Bad input: a flag, a value or a file the user gave (exit code 2)."""

    exit_code = 2


class DatabaseError(OltplabError):
    """The database could not be reached, started, or answered with an error."""


class SchemaError(OltplabError):
    """The TPC-C-derived schema is missing, incomplete or too small for the request."""


class Interrupted(OltplabError):
    """The user interrupted the work (Ctrl-C or SIGTERM)."""

    exit_code = 130
