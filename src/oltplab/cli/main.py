"""The ``oltplab`` command: its groups, and the one place where errors become exit codes."""

from __future__ import annotations

import os
import signal
import sys

import click

from .. import __version__
from ..errors import Interrupted, OltplabError


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="oltplab")
def cli():
    """oltplab: storage and database performance experiments.

    A managed PostgreSQL or MariaDB, a TPC-C-derived workload with HammerDB-comparable TPM and
    NOPM, and every result kept.
    """


from .backup import backup  # noqa: E402
from .brokerage import brokerage  # noqa: E402
from .cluster import cluster  # noqa: E402
from .datastore import datastore  # noqa: E402
from .db import db  # noqa: E402
from .dvds import dvds  # noqa: E402
from .fio import fio  # noqa: E402
from .neighbours import neighbours  # noqa: E402
from .plan import plan  # noqa: E402
from .report import report  # noqa: E402
from .results import results  # noqa: E402
from .tpcc import quickstart, tpcc  # noqa: E402

for _command in (db, tpcc, dvds, brokerage, backup, quickstart, fio, datastore, neighbours, plan,
                 results, report, cluster):
    cli.add_command(_command)


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
