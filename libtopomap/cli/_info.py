"""``libtopomap info FILE [--format F] [--json]``: size and distance properties of a topology."""

import json

from ..formats import read


def add_parser(sub):
    p = sub.add_parser("info", help="print vertices, hosts, slots, switches, links, degrees, diameter, ASPL",
                       description="Print the properties of a topology file (any registered format, sniffed); for a "
                       "regular graph of hosts only, also its Moore bound (the most nodes its degree and "
                       "diameter allow).")
    p.add_argument("file", help="topology file (LibTopoMap text, JSON, ibnetdiscover, ...)")
    p.add_argument("--format", help="input format (default: sniffed from the content)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def run(args):
    from ..metrics import properties  # numba: imported only when the command runs

    from ..generators.ldr import moore_bound

    topo = read(args.file, format=args.format)
    props = properties(topo)
    if props["degree_min"] == props["degree_max"] and props["hosts"] == props["vertices"] > 1:
        # a regular graph of hosts only (LDR, hypercube, Petersen...): the most nodes its degree and
        # diameter allow (seed 001, equation 4.1); equal to "vertices" for a Moore graph
        props["moore_bound"] = moore_bound(props["degree_max"], props["diameter"])
    if args.json:
        print(json.dumps(props))
    else:
        width = max(len(k) for k in props)
        for k, v in props.items():
            v = f"{v:.4f}" if isinstance(v, float) else v
            print(f"{k:<{width}}  {v}")
    return 0
