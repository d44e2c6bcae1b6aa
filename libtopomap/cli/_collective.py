"""``libtopomap collective``: hops of a collective before and after rank placement (Cui 2024, ch. 3-4)."""

import json

from ..errors import ArgumentError
from ..vocabulary import ALLOCATIONS, BCAST_ALGORITHMS, COLLECTIVE_OBJECTIVES, COLLECTIVES, OPTIMIZERS, describe
from ._options import add_deprecated_alias, add_routing_option, non_negative_int, positive_int
from ._progress import add_quiet, for_command


def add_parser(sub):
    p = sub.add_parser(
        "collective", help="place the ranks of a Bcast/Allreduce/Alltoall/Allgather to cut their hops",
        description="Allocate --procs hosts of the topology (--allocation), start from the ascending rank "
                    "order and improve it (--optimizer); print total hops, contention and the step model "
                    "before and after.  'before' is the allocation with ascending rank order.")
    p.add_argument("--topology", required=True, help="topology file (any registered format)")
    p.add_argument("--format", help="topology format (default: sniffed)")
    p.add_argument("--collective", choices=COLLECTIVES, default="allreduce",
                   help=f"{describe('collective')} (default allreduce)")
    p.add_argument("--procs", type=positive_int, required=True, help="number of processes (one per node)")
    allocation = p.add_argument(
        "--allocation", choices=ALLOCATIONS, default="random",
        help=f"which hosts the job gets: {describe('allocation')} (default random)")
    add_deprecated_alias(p, "--placement", allocation)
    p.add_argument("--optimizer", choices=OPTIMIZERS, default="two-opt",
                   help=f"the rank order: {describe('collective-order')} (default two-opt)")
    p.add_argument("--objective", choices=COLLECTIVE_OBJECTIVES, default="hops",
                   help=f"what to minimise: {describe('collective-objective')} (default hops)")
    p.add_argument("--iterations", type=non_negative_int, default=200_000, help="swaps tried (default 200000)")
    p.add_argument("--root", type=non_negative_int, default=0, help="bcast root (default 0)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed for allocation and swaps (default 0)")
    p.add_argument("--algorithm", choices=BCAST_ALGORITHMS,
                   help="with --collective bcast on a dragonfly: run Dorier et al.'s broadcast (tree, llf, glf, "
                        "forest) on the allocation instead of placing ranks; report terminal/local/global link "
                        "traversals under minimal routing, involved groups and the makespan model (section IV-B)")
    add_routing_option(p)
    p.add_argument("--no-paths", action="store_true", help="skip contention/step model (they route every message)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_quiet(p)
    return p


def run(args):
    from ..collectives import collective_placement
    from ..loading import load as read

    if args.root >= args.procs:
        raise ArgumentError(f"--root {args.root} is outside 0..{args.procs - 1} (--procs {args.procs})")
    topo = read(args.topology, format=args.format)
    if args.algorithm is not None:
        return _run_algorithm(args, topo)
    from ..routing import get_routing

    routing = get_routing(getattr(args, "routing", "ecmp"), topo)
    routing.check(topo)
    with for_command(args, "collective") as progress:
        progress.stage(f"{args.optimizer} placement of {args.collective}, {args.iterations} swaps")
        res = collective_placement(topo, args.allocation, args.collective, nprocs=args.procs,
                                   objective=args.objective, optimizer=args.optimizer, iterations=args.iterations,
                                   seed=args.seed, root=args.root, evaluate_paths=not args.no_paths)
    # "placement": the key's old name, kept for readers of earlier output
    out = {"topology": topo.name, "allocation": args.allocation, "placement": args.allocation, **res.as_dict(),
           "seed": args.seed}
    if not routing.shortest:  # hops of the routes the network takes (the search minimised hop distances)
        from ..collectives.objectives import total_hops
        from ..collectives.schedules import schedule

        steps = schedule(args.collective, args.procs, root=args.root)
        out["hops_before"] = total_hops(topo, steps, res.nodes, routing=routing)
        out["hops_after"] = total_hops(topo, steps, res.vertices, routing=routing)
    out["routing"] = routing.name
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"{args.collective} on {args.procs} of {topo.hosts.size} nodes of {topo.name or args.topology}, "
          f"{args.allocation} allocation, {args.optimizer} ({out['iterations']} iterations, objective "
          f"{args.objective})")
    for k in ("hops", "contention", "step"):
        b, a = out[f"{k}_before"], out[f"{k}_after"]
        if b is None:
            continue
        change = f"  ({100.0 * (a - b) / b:+.1f}%)" if b else ""
        print(f"  {k:<11} {b:>10} -> {a:<10}{change}")
    print(f"  seconds     {out['seconds']:.3f}")
    return 0


def _run_algorithm(args, topo):
    """``--algorithm``: one of Dorier et al.'s broadcasts on the allocation, in allocation order (rank i on node i)."""
    from ..collectives import allocate
    from ..collectives.dorier import evaluate_bcast

    if args.collective != "bcast":
        raise ArgumentError(f"--algorithm {args.algorithm} is a broadcast: it needs --collective bcast, "
                            f"not {args.collective}")
    if getattr(args, "routing", "ecmp") not in ("ecmp", "native", "minimal"):
        raise ArgumentError(f"--algorithm counts links under dragonfly minimal routing (Dorier et al.); "
                            f"--routing {args.routing} does not apply")
    nodes = allocate(topo, args.procs, args.allocation, seed=args.seed)
    res = evaluate_bcast(topo, nodes, args.algorithm, root=args.root)
    out = {"topology": topo.name, "collective": "bcast", "allocation": args.allocation, "seed": args.seed, **res}
    if args.json:
        print(json.dumps(out))
        return 0
    links = res["links"]
    print(f"bcast ({args.algorithm}) from rank {args.root} on {args.procs} of {topo.hosts.size} nodes of "
          f"{topo.name or args.topology}, {args.allocation} allocation (seed {args.seed}), {res['groups']} groups")
    print(f"  links      terminal {links['terminal']}  local {links['local']}  global {links['global']}")
    print(f"  makespan   {res['makespan']} (link units, Dorier et al., section IV-B)")
    print(f"  messages   {res['messages']} in {res['steps']} steps")
    return 0
