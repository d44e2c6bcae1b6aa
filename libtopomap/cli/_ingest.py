"""``libtopomap ingest FILE [--format F] [--hostmap MAP] [--slots N] [--strict] -o OUT [--format-out ltm|json]``.

Reads a real fabric description (ibnetdiscover, ibnetdiscover -p, Slurm topology.conf), writes it
as a libtopomap topology and prints what was read: switches, hosts, CAs left out and why, cables and
links, the link-speed histogram and every warning (``file:line: message``).
"""

import re
import sys

from ..errors import FormatError
from .._textio import open_text
from ..formats import read, sniff, write
from ..vocabulary import FABRIC_FORMATS
from ._options import positive_float, positive_int


def add_parser(sub):
    p = sub.add_parser("ingest",
                       help="convert an ibnetdiscover / ibnetdiscover -p / Slurm topology.conf / ibdiagnet .lst file",
                       description="Read a real fabric description, write it as a libtopomap topology and "
                                   "print a summary (switches, hosts, excluded CAs, links, speeds, warnings).")
    p.add_argument("file", help="fabric description")
    p.add_argument("--format", choices=FABRIC_FORMATS, help="input format (default: sniffed from the content)")
    p.add_argument("--hostmap", metavar="MAP", help="GUID -> hostname map ('H-<guid> host' or '0x<guid> host' lines)")
    p.add_argument("--slots", type=positive_int, default=1, metavar="N", help="slots (processes) per host (default 1)")
    p.add_argument("--unknown-capacity", type=positive_float, metavar="GBPS",
                   help="capacity of cables of unknown speed (default: the fabric's most common capacity)")
    p.add_argument("--rates", choices=("linux", "signal", "effective"), default="linux",
                   help="per-lane rate table: Linux/ibstat (default), signalling, or payload after encoding")
    p.add_argument("--strict", action="store_true", help="fail at the first problem instead of warning")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="output topology file")
    p.add_argument("--format-out", choices=("ltm", "json"), help="output format (default: from OUT's extension, "
                                                                  "json for .json, else ltm)")
    p.add_argument("--quiet", action="store_true", help="print nothing on success")
    return p


def run(args):
    from ..adapters import ingest_report
    from ..formats.ltm import DEFAULT_SWITCH_PATTERN

    fmt = args.format
    if fmt is None:
        with open_text(args.file) as fh:  # refuses a device or a FIFO (no end, or no writer)
            fmt = sniff(fh.read(65536), args.file)
        if fmt not in FABRIC_FORMATS:
            raise FormatError(f"not a fabric description (looks like {fmt!r}); name the input format with --format",
                              path=args.file)
    topo = read(args.file, format=fmt, strict=args.strict, slots=args.slots, hostmap=args.hostmap,
                unknown_capacity=args.unknown_capacity, rates=args.rates)
    report = ingest_report(topo)
    fmt_out = args.format_out or ("json" if args.output.lower().endswith(".json") else "ltm")
    write(args.output, topo, format=fmt_out)
    if not args.quiet:
        print(report.summary())
        print(f"wrote         {args.output} ({fmt_out}: {topo.n_vertices} vertices, {topo.n_links} links)")
        if fmt_out == "ltm":
            rx = re.compile(DEFAULT_SWITCH_PATTERN, re.IGNORECASE)
            odd = [n for n, k in zip(topo.names, topo.kinds) if k != "host" and not rx.search(n)]
            if odd:
                print(f"note          {len(odd)} switch names (e.g. {odd[0]!r}) do not match the LTM switch rule "
                      f"{DEFAULT_SWITCH_PATTERN!r}: read {args.output} back with switches=, or use --format-out json",
                      file=sys.stderr)
    return 0
