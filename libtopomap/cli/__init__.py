"""The ``libtopomap`` command line: ``libtopomap generate|info|ingest|map|collective|bench|demo|...``.

Each subcommand lives in its own module ``_<name>.py`` with ``add_parser(subparsers)`` and
``run(args) -> int``; exit status 0, 2 on usage errors, 1 with a one-line message on bad input.
:func:`main` imports only the module of the command given (summaries in :data:`COMMAND_HELP`).  The
rules: docs/internals.rst, "The command line".
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
import warnings

from .._limits import edge_limit, vertex_limit
from ..errors import ArgumentError, LibTopoMapError
from ._options import add_size_limits

__all__ = ["main", "build_parser", "COMMANDS", "COMMAND_HELP"]

#: Command -> the one-line help its module's ``add_parser`` gives (shown by ``libtopomap --help``).
COMMAND_HELP = {
    "generate": "write a generated topology (torus, fat tree, dragonfly, PERCS, ...)",
    "info": "print vertices, hosts, slots, switches, links, degrees, diameter, ASPL",
    "ingest": "convert an ibnetdiscover / ibnetdiscover -p / Slurm topology.conf / ibdiagnet .lst file",
    "map": "map a communication graph onto a topology and report congestion, dilation, hop-bytes",
    "collective": "place the ranks of a Bcast/Allreduce/Alltoall/Allgather to cut their hops",
    "bench": "benchmark collectives on the original and the reordered communicator (run under mpiexec)",
    "demo": "reorder a badly placed halo exchange on a bundled torus (run under mpiexec -n 4 or 8)",
    "simulate": "SimGrid-simulated time of the original and the mapped placement",
    "plot": "draw adjacency matrices, link loads, hop histograms or simulated times",
    "smpi": ("SimGrid SMPI: export a platform that routes as a routing model, build the proxy codes, "
             "measure-map-rerun an MPI program"),
}
COMMANDS = list(COMMAND_HELP)
#: Commands that read topologies or graphs: they get ``--max-vertices`` and ``--max-edges``
#: (``generate`` adds them to each kind).
_SIZE_LIMITED = ("info", "ingest", "map", "collective", "bench", "simulate", "plot")


def build_parser(commands=None):
    """The argument parser; ``commands`` (default: all) are built from their modules, the others are
    placeholders that only carry their one-line help."""
    from .._version import __version__

    parser = argparse.ArgumentParser(
        prog="libtopomap",
        description="Topology-aware MPI rank reordering: generate and inspect topologies, map "
                    "communication graphs, reorder mpi4py communicators.")
    parser.add_argument("--version", action="version", version=f"libtopomap {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    full = COMMANDS if commands is None else commands
    for name in COMMANDS:
        if name in full:
            mod = importlib.import_module(f"{__name__}._{name}")
            p = mod.add_parser(sub)
            p.set_defaults(_run=mod.run)
            if name in _SIZE_LIMITED:
                add_size_limits(p)
        else:
            sub.add_parser(name, help=COMMAND_HELP[name], add_help=False)
    return parser


def _command_of(argv):
    """The command named on the command line: the first word that is not an option (the top-level
    parser has no options that take a value), else None."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word if word in COMMAND_HELP else None
    return None


def _one_line_warning(prefix, message, category, filename, lineno, file=None, line=None):
    """``warnings.showwarning`` of the command line: ``libtopomap CMD: warning: MESSAGE``, one line."""
    text = " ".join(str(message).split())
    print(f"{prefix}: warning: {text}", file=sys.stderr if file is None else file)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if any("\x00" in a for a in argv):  # no file name or value can hold one (open() would raise ValueError)
        print("libtopomap: error: an argument contains a NUL byte", file=sys.stderr)
        return 2
    command = _command_of(argv)
    parser = build_parser([command] if command else [])
    args = parser.parse_args(argv)
    try:
        with vertex_limit(getattr(args, "max_vertices", None)), edge_limit(getattr(args, "max_edges", None)), \
                warnings.catch_warnings():
            warnings.showwarning = functools.partial(_one_line_warning, f"libtopomap {args.command}")
            return int(args._run(args) or 0)
    except ArgumentError as e:
        # a bad option value found after parsing: a usage error, like argparse's own (exit 2)
        print(f"libtopomap {args.command}: error: {e}", file=sys.stderr)
        return 2
    except LibTopoMapError as e:
        print(f"libtopomap {args.command}: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        where = f" {e.filename}" if getattr(e, "filename", None) else ""
        print(f"libtopomap {args.command}: error:{where} {e.strerror or e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:  # Ctrl-C, or libtopomap.errors.Interrupted: a signal during a simulation
        signum = getattr(e, "signum", 2)  # SIGINT
        print(f"libtopomap {args.command}: {e or 'SIGINT received'}", file=sys.stderr)
        return 128 + signum


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
