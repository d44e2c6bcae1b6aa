"""The ``libtopomap`` command line: ``libtopomap generate|info|ingest|map|collective|bench|demo|...``.

Each subcommand lives in its own module ``_<name>.py`` with ``add_parser(subparsers)`` and
``run(args) -> int``.  Exit status: 0 on success, 2 on usage errors (argparse), 1 with a one-line
message on bad input (any :class:`~libtopomap.LibTopoMapError` or unreadable file).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from ..errors import LibTopoMapError

__all__ = ["main", "COMMANDS"]

COMMANDS = ["generate", "info", "ingest", "map", "collective", "bench", "demo", "simulate", "plot"]


def build_parser():
    parser = argparse.ArgumentParser(
        prog="libtopomap",
        description="Topology-aware MPI rank reordering: generate and inspect topologies, map "
                    "communication graphs, reorder mpi4py communicators.")
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"libtopomap {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:
        mod = importlib.import_module(f"{__name__}._{name}")
        p = mod.add_parser(sub)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except LibTopoMapError as e:
        print(f"libtopomap {args.command}: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        where = f" {e.filename}" if getattr(e, "filename", None) else ""
        print(f"libtopomap {args.command}: error:{where} {e.strerror or e}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
