"""``libtopomap generate KIND [params] -o FILE [--format ltm|json] [--concentration C]``."""

import argparse

from ..errors import TopologyError
from ..formats import write


def _gen():
    """:mod:`libtopomap.generators`, imported when a topology is built (it loads scipy), not with the parser."""
    from .. import generators

    return generators


def _int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    return v


def _jump_list(text):
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers like 1,3; got {text!r}") from None


# kind -> (help, [(flag, dest, type, required, help)], builder(args) -> Topology)
_KINDS = {
    "torus": ("k-ary n-cube torus, e.g. --dims 8x8x8",
              [("--dims", "dims", str, True, "sizes per dimension, e.g. 8x8x8")],
              lambda a: _gen().torus(a.dims)),
    "mesh": ("n-dimensional mesh, e.g. --dims 4x4",
             [("--dims", "dims", str, True, "sizes per dimension, e.g. 4x4")],
             lambda a: _gen().mesh(a.dims)),
    "hypercube": ("binary hypercube with 2**dim nodes",
                  [("--dim", "dim", _int, True, "dimension")],
                  lambda a: _gen().hypercube(a.dim)),
    "fattree": ("k-ary n-tree fat tree (k**n hosts, n*k**(n-1) switches)",
                [("--k", "k", _int, True, "arity"), ("--n", "n", _int, True, "levels")],
                lambda a: _gen().fattree(a.k, a.n)),
    "dragonfly": ("dragonfly: g groups of a routers, p terminals and h global links per router",
                  [("--groups", "groups", _int, True, "number of groups g"),
                   ("--routers", "routers", _int, True, "routers per group a"),
                   ("--terminals", "terminals", _int, True, "terminals per router p"),
                   ("--global", "global_links", _int, True, "global links per router h")],
                  lambda a: _gen().dragonfly(a.groups, a.routers, a.terminals, a.global_links)),
    "percs": ("PERCS: drawers of 8 nodes, supernodes of 4 drawers, random D links",
              [("--supernodes", "supernodes", _int, True, "number of supernodes"),
               ("--dlinks", "dlinks", _int, True, "D links per node (0..16)"),
               ("--seed", "seed", _int, False, "random seed for the D-link wiring")],
              lambda a: _gen().percs(a.supernodes, a.dlinks, seed=a.seed)),
    "shortcut": ("ring plus random shortcuts up to the requested degree",
                 [("--nodes", "nodes", _int, True, "number of nodes"),
                  ("--degree", "degree", _int, True, "degree of every node"),
                  ("--seed", "seed", _int, False, "random seed")],
                 lambda a: _gen().random_shortcut_ring(a.nodes, a.degree, seed=a.seed)),
    "circulant": ("circulant graph C(n; jumps); default jumps 2**i, i.e. G(n, log2 n)",
                  [("--nodes", "nodes", _int, True, "number of nodes"),
                   ("--jumps", "jumps", _jump_list, False, "comma-separated jumps, e.g. 1,3")],
                  lambda a: _gen().circulant(a.nodes, a.jumps)),
    "ldr": ("low diameter regular graph (best ASPL of several random draws)",
            [("--nodes", "nodes", _int, True, "number of nodes"),
             ("--degree", "degree", _int, True, "degree of every node"),
             ("--seed", "seed", _int, False, "random seed"),
             ("--trials", "trials", _int, False, "graphs drawn, best ASPL kept (default 100)")],
            lambda a: _gen().ldr(a.nodes, a.degree, seed=a.seed, trials=a.trials if a.trials is not None else 100)),
    "rtt": ("rectangular twisted torus RTT(a) over a 2a x a rectangle",
            [("--a", "a", _int, True, "side a")],
            lambda a: _gen().rtt(a.a)),
    "rt": ("rectangular torus RT(a), the 2a x a torus",
           [("--a", "a", _int, True, "side a")],
           lambda a: _gen().rt(a.a)),
}


def add_parser(sub):
    p = sub.add_parser("generate", help="write a generated topology (torus, fat tree, dragonfly, PERCS, ...)",
                       description="Generate a topology and write it as LibTopoMap text (ltm) or JSON.")
    kinds = p.add_subparsers(dest="kind", metavar="KIND")
    kinds.required = True
    for kind, (help_text, params, _build) in _KINDS.items():
        k = kinds.add_parser(kind, help=help_text, description=help_text)
        for flag, dest, typ, required, h in params:
            k.add_argument(flag, dest=dest, type=typ, required=required, help=h, metavar=flag.lstrip("-").upper())
        k.add_argument("-o", "--output", required=True, help="output file")
        k.add_argument("--format", choices=["ltm", "json"],
                       help="output format (default: from the extension, .json -> json, else ltm)")
        k.add_argument("--concentration", type=_int, metavar="C",
                       help="attach C hosts to every slot vertex, which becomes a router")
    return p


def run(args):
    topo = _KINDS[args.kind][2](args)
    if args.concentration is not None:
        if args.concentration < 1:
            raise TopologyError(f"--concentration must be >= 1, got {args.concentration}")
        topo = _gen().concentrate(topo, args.concentration)
    write(args.output, topo, format=args.format)
    print(f"wrote {args.output}: {topo.n_vertices} vertices, {topo.hosts.size} hosts, {topo.n_links} links")
    return 0
