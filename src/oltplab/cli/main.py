"""The ``oltplab`` command: its groups, and the one place where errors become exit codes."""

from __future__ import annotations

import importlib
import os
import signal
import sys

import click

from .. import __version__
from ..errors import Interrupted, OltplabError


#: Each command group of the CLI and the module that defines it. A command line imports its
#: own group's module only (imports are most of a short command's time: all the groups take
#: about twice as long as one); ``oltplab --help`` imports them all.
COMMANDS = {"db": "db", "tpcc": "tpcc", "dvds": "dvds", "brokerage": "brokerage",
            "backup": "backup", "quickstart": "tpcc", "fio": "fio", "datastore": "datastore",
            "neighbours": "neighbours", "plan": "plan", "results": "results",
            "report": "report", "cluster": "cluster"}


class LazyGroup(click.Group):
    """The top-level group: a command is imported from its module (COMMANDS) when it is
    named."""

    def list_commands(self, ctx) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx, cmd_name: str):
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in COMMANDS:
            module = importlib.import_module(f"{__package__}.{COMMANDS[cmd_name]}")
            command = getattr(module, cmd_name)
            self.add_command(command)
        return command


@click.group(cls=LazyGroup,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="oltplab")
def cli():
    """oltplab: storage and database performance experiments.

    A managed PostgreSQL or MariaDB, a TPC-C-derived workload with HammerDB-comparable TPM and
    NOPM, and every result kept.
    """


# --------------------------------------------------------------------------- entry point

def _sigterm(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _sigterm)
    try:
        cli.main(args=argv, prog_name="oltplab", standalone_mode=False)
        return 0
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.exceptions.UsageError as e:
        if type(e).__name__ == "NoArgsIsHelpError" and e.ctx is not None:
            click.echo(e.ctx.get_help())
            return 0
        cmd = e.ctx.command_path if e.ctx else "oltplab"
        click.echo(f"{cmd}: error: {e.format_message()}", err=True)
        return 2
    except click.exceptions.Abort:
        click.echo("oltplab: interrupted", err=True)
        return 130
    except Interrupted as e:
        click.echo(f"oltplab: {e}", err=True)
        return 130
    except KeyboardInterrupt:
        click.echo("oltplab: interrupted", err=True)
        return 130
    except OltplabError as e:
        click.echo(f"oltplab: error: {e}", err=True)
        return e.exit_code
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 1
    except OSError as e:
        click.echo(f"oltplab: error: {e.strerror or e}: {e.filename or ''}".rstrip(": "), err=True)
        return 1
    except Exception as e:  # the last line of defence: one line, never a traceback
        if os.environ.get("OLTPLAB_DEBUG"):
            raise
        click.echo(f"oltplab: internal error: {type(e).__name__}: {e} "
                   "(OLTPLAB_DEBUG=1 shows more)", err=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
