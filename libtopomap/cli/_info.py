"""``libtopomap info FILE [--format F] [--json]``: size and distance properties of a topology."""

import json

from ..formats import read


def add_parser(sub):
    p = sub.add_parser("info", help="print vertices, hosts, slots, switches, links, degrees, diameter, ASPL",
                       description="Print the properties of a topology file (any registered format, sniffed).")
    p.add_argument("file", help="topology file (LibTopoMap text, JSON, ibnetdiscover, ...)")
    p.add_argument("--format", help="input format (default: sniffed from the content)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def run(args):
    from ..metrics import properties  # numba: imported only when the command runs

    topo = read(args.file, format=args.format)
    props = properties(topo)
    if args.json:
        print(json.dumps(props))
    else:
        width = max(len(k) for k in props)
        for k, v in props.items():
            v = f"{v:.4f}" if isinstance(v, float) else v
            print(f"{k:<{width}}  {v}")
    return 0
