"""``libtopomap generate KIND [params] -o FILE [--format ltm|json] [--concentration C]``."""

import argparse

from ..errors import ArgumentError, TopologyError
from ..formats import write
from ._options import add_size_limits, non_negative_int, positive_int


def _gen():
    """:mod:`libtopomap.generators`, imported when a topology is built (it loads scipy), not with the parser."""
    from .. import generators

    return generators


def _jump_list(text):
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers like 1,3; got {text!r}") from None


# option -> (dest, type, help); a kind's options are (option, required) pairs
_OPTIONS = {
    "--dims": ("dims", str, "sizes per dimension, e.g. 8x8x8"),
    "--dim": ("dim", non_negative_int, "dimension"),
    "--k": ("k", positive_int, "arity"),
    "--n": ("n", positive_int, "levels"),
    "--groups": ("groups", positive_int, "number of groups g"),
    "--routers": ("routers", positive_int, "routers per group a"),
    "--terminals": ("terminals", non_negative_int, "terminals per router p"),
    "--global": ("global_links", non_negative_int, "global links per router h"),
    "--supernodes": ("supernodes", positive_int, "number of supernodes"),
    "--dlinks": ("dlinks", non_negative_int, "D links per node (0..16)"),
    "--nodes": ("nodes", positive_int, "number of nodes"),
    "--degree": ("degree", non_negative_int, "degree of every node"),
    "--jumps": ("jumps", _jump_list, "comma-separated jumps, e.g. 1,3"),
    "--trials": ("trials", positive_int, "graphs drawn, best ASPL kept (default 100)"),
    "--a": ("a", positive_int, "side a"),
    "--seed": ("seed", non_negative_int, "random seed"),
    "--component-size": ("component_size", positive_int, "nodes per direct component D"),
    "--component": ("component", str, "direct component: hypercube (default) or ldr"),
}

# kind -> (help, [(option, required)], builder(args) -> Topology)
_KINDS = {
    "torus": ("k-ary n-cube torus, e.g. --dims 8x8x8", [("--dims", True)], lambda a: _gen().torus(a.dims)),
    "mesh": ("n-dimensional mesh, e.g. --dims 4x4", [("--dims", True)], lambda a: _gen().mesh(a.dims)),
    "hypercube": ("binary hypercube with 2**dim nodes", [("--dim", True)], lambda a: _gen().hypercube(a.dim)),
    "fattree": ("k-ary n-tree fat tree (k**n hosts, n*k**(n-1) switches)", [("--k", True), ("--n", True)],
                lambda a: _gen().fattree(a.k, a.n)),
    "dragonfly": ("dragonfly: g groups of a routers, p terminals and h global links per router",
                  [("--groups", True), ("--routers", True), ("--terminals", True), ("--global", True)],
                  lambda a: _gen().dragonfly(a.groups, a.routers, a.terminals, a.global_links)),
    "percs": ("PERCS: drawers of 8 nodes, supernodes of 4 drawers, random D links",
              [("--supernodes", True), ("--dlinks", True), ("--seed", False)],
              lambda a: _gen().percs(a.supernodes, a.dlinks, seed=a.seed)),
    "shortcut": ("ring plus random shortcuts up to the requested degree",
                 [("--nodes", True), ("--degree", True), ("--seed", False)],
                 lambda a: _gen().random_shortcut_ring(a.nodes, a.degree, seed=a.seed)),
    "circulant": ("circulant graph C(n; jumps); default jumps 2**i, i.e. G(n, log2 n)",
                  [("--nodes", True), ("--jumps", False)], lambda a: _gen().circulant(a.nodes, a.jumps)),
    "ldr": ("low diameter regular graph (best ASPL of several random draws)",
            [("--nodes", True), ("--degree", True), ("--seed", False), ("--trials", False)],
            lambda a: _gen().ldr(a.nodes, a.degree, seed=a.seed, trials=a.trials if a.trials is not None else 100)),
    "hybrid": ("hybrid: T/D hypercube or LDR components of D nodes, one fat tree per position (--k arity)",
               [("--nodes", True), ("--component-size", True), ("--component", False), ("--k", False),
                ("--degree", False), ("--seed", False), ("--trials", False)],
               lambda a: _gen().hybrid(a.nodes, a.component_size, component=a.component or "hypercube", arity=a.k,
                                       degree=a.degree, seed=a.seed, trials=a.trials or 100)),
    "rtt": ("rectangular twisted torus RTT(a) over a 2a x a rectangle", [("--a", True)], lambda a: _gen().rtt(a.a)),
    "rt": ("rectangular torus RT(a), the 2a x a torus", [("--a", True)], lambda a: _gen().rt(a.a)),
}


def add_parser(sub):
    p = sub.add_parser("generate", help="write a generated topology (torus, fat tree, dragonfly, PERCS, ...)",
                       description="Generate a topology and write it as LibTopoMap text (ltm) or JSON.")
    kinds = p.add_subparsers(dest="kind", metavar="KIND")
    kinds.required = True
    for kind, (help_text, params, _build) in _KINDS.items():
        k = kinds.add_parser(kind, help=help_text, description=help_text)
        for flag, required in params:
            dest, typ, h = _OPTIONS[flag]
            k.add_argument(flag, dest=dest, type=typ, required=required, help=h, metavar=flag.lstrip("-").upper())
        k.add_argument("-o", "--output", required=True, help="output file")
        k.add_argument("--format", choices=["ltm", "json"],
                       help="output format (default: from the extension, .json -> json, else ltm)")
        k.add_argument("--concentration", type=positive_int, metavar="C",
                       help="attach C hosts to every slot vertex, which becomes a router")
        add_size_limits(k)
    return p


def run(args):
    try:
        topo = _KINDS[args.kind][2](args)
        if args.concentration is not None:
            topo = _gen().concentrate(topo, args.concentration)
    except TopologyError as e:
        # every number of a generated topology comes from an option: a bad one is a usage error
        raise ArgumentError(str(e)) from None
    write(args.output, topo, format=args.format)
    print(f"wrote {args.output}: {topo.n_vertices} vertices, {topo.hosts.size} hosts, {topo.n_links} links")
    return 0
