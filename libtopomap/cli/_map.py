"""``libtopomap map``: map a communication graph onto a topology and compare strategies.

Runs the portfolio driver of :mod:`libtopomap.portfolio`: candidate 0 is the current placement (the
usable slots filled in vertex order), then one candidate per strategy (with ``--refine``), scored by
``(objective, tie-break, hop-bytes)`` (the tie-break: :func:`libtopomap.fluid.phase_time` under a single-path
routing, average congestion under a multipath one) and chosen in that order, then by a fixed strategy
order.  Under ``mpiexec -n N`` (N > 1) the candidates are raced over the ranks by the same driver as
the MPI layer (:func:`libtopomap.mpi.driver.race`), so the winner is the same as serially; rank 0
prints, and any failure on any rank ends every rank with exit status 1.  Without mpiexec nothing
imports mpi4py.
"""

from __future__ import annotations

import json
import os
import re

from ..errors import ArgumentError, MappingError
from ..rankfiles import EMITTERS
from ..vocabulary import OBJECTIVES, REFINEMENTS, STRATEGIES, TWISTED_STRATEGIES, describe
from ._options import add_routing_option, non_negative_int, positive_float, positive_int, refinement_moves
from ._progress import add_quiet, for_command

__all__ = ["add_parser", "run", "launched_by_mpiexec", "parse_bytes"]

# Environment variables with the number of processes that MPI launchers set (MPICH/Hydra, Intel MPI,
# Slurm's PMI, Open MPI, PMIx).
_SIZE_VARS = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS")


def launched_by_mpiexec(environ=None):
    """Whether this process is one of several started by an MPI launcher (from its environment).

    Examples
    --------
    >>> launched_by_mpiexec({"PMI_SIZE": "4"}), launched_by_mpiexec({"PMI_SIZE": "1"}), launched_by_mpiexec({})
    (True, False, False)
    """
    env = os.environ if environ is None else environ
    for var in _SIZE_VARS:
        try:
            if int(env.get(var, "0")) > 1:
                return True
        except ValueError:
            continue
    return False


def parse_bytes(text):
    """``"512M"``, ``"1.5G"``, ``"1000000"`` -> bytes (binary suffixes K, M, G, T).

    Raises
    ------
    ArgumentError
        (a :class:`ValueError`) Not a size, or not positive.

    Examples
    --------
    >>> parse_bytes("1G"), parse_bytes("1500")
    (1073741824, 1500)
    """
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kKmMgGtT]?)i?[bB]?\s*", str(text))
    if not m:
        raise ArgumentError(f"not a size in bytes: {text!r} (e.g. 512M, 2G)")
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2).lower()]
    value = int(float(m.group(1)) * scale)
    if value <= 0:
        raise ArgumentError(f"a size must be positive, got {text!r}")
    return value


def _bytes_arg(text):
    import argparse

    try:
        return parse_bytes(text)
    except ArgumentError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_parser(sub):
    from ..portfolio import DEFAULT_TOTAL_BUDGET

    p = sub.add_parser(
        "map", help="map a communication graph onto a topology and report congestion, dilation, hop-bytes",
        description="Map a communication graph (edge list 'src dst [weight]', Matrix Market file, dense N x N "
                    "matrix (matrix:FILE, .mat), the prefix or directory of Open MPI monitoring files "
                    "PREFIX.<rank>.prof, or a pattern: stencil:16x16x16, stencil:64x64, torus-scrambled:8x8:SEED, "
                    "random:P:DEGREE:SEED) "
                    "onto a topology with one strategy or all of them, and print the quality of each next to "
                    "the current placement (slots filled in vertex order).  The winner has the lowest objective, "
                    "then the shortest fluid phase time (single-path routings; average congestion under ecmp, "
                    "oblivious and valiant), then hop-bytes.  With --refine, only the best constructions are "
                    "refined, and a construction at the lower bound ends the race.  Under 'mpiexec -n N' the "
                    "strategies are raced over the ranks (same winner as serially); rank 0 prints.  With "
                    "--allocation the job's hosts (launch order) are the only slots, and --emit writes a launcher "
                    "file (MPICH_RANK_ORDER, Open MPI rankfile, a host per rank for srun, Hydra or smpirun) that "
                    "starts every rank where the mapping put it.")
    p.add_argument("--topology", required=True, metavar="FILE", help="topology file (any registered format)")
    p.add_argument("--graph", required=True, metavar="GRAPH", help="communication graph file or pattern")
    add_routing_option(p)
    p.add_argument("--strategy", default="greedy", choices=[*STRATEGIES, *TWISTED_STRATEGIES, "all"],
                   help=f"mapping strategy ({describe('strategy', STRATEGIES + TWISTED_STRATEGIES)}), or 'all' to "
                        "race every one but diagonal-shift (default: greedy)")
    p.add_argument("--concentration", metavar="FUNCS",
                   help="with --strategy identity or diagonal-shift on a twisted torus RT(a)/RTT(a): Camarero et al.'s "
                        "concentration functions for a 2D process torus, outermost first (v, h, t, t+h, ...)")
    p.add_argument("--refine", choices=list(REFINEMENTS),
                   help=f"refine the best constructions (the best two of --strategy all): {describe('refinement')}")
    p.add_argument("--objective", default="congestion", choices=list(OBJECTIVES),
                   help=f"what the refinement minimises and how the best is chosen (default: congestion): "
                        f"{describe('objective')}")
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="base seed; each candidate derives its own (default 0)")
    p.add_argument("--time-budget", type=positive_float, metavar="SEC", help="seconds per refinement")
    p.add_argument("--budget", type=positive_float, metavar="SECONDS",
                   help="seconds for the whole race (per rank under mpiexec): constructions estimated beyond what "
                        "is left of their share are skipped with the reason, refinements stop at it "
                        f"(default {DEFAULT_TOTAL_BUDGET:g})")
    p.add_argument("--iterations", type=refinement_moves, metavar="N",
                   help="moves per refinement (default: the refinement's); on a graph of mean degree d "
                        "above 16 a move counts as d/16, so the budget is edge work")
    p.add_argument("--max-memory", type=_bytes_arg, metavar="BYTES",
                   help="per node: skip strategies estimated above it and, under mpiexec, let only as many ranks "
                        "of a node map as fit (e.g. 2G; default a quarter of the physical memory)")
    p.add_argument("--json", action="store_true", help="print a JSON list of records")
    add_quiet(p)
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the chosen mapping: 'process vertex-name' lines (FILE.json: JSON with the hosts it "
                        "was computed for, for ltm.apply_mapping), or the --emit format")
    p.add_argument("--messages", choices=["external", "internal", "all"], default="external",
                   help="for an Open MPI monitoring graph: the program's messages (E lines, default), the "
                        "library's internal ones (I lines) or both")
    p.add_argument("--allocation", metavar="HOSTS",
                   help="the job's hosts in launch order: a hostfile ('host', 'host slots=N', 'host:N') or a "
                        "Slurm node list such as nid[0001-0004,0010] (default with --emit: $SLURM_JOB_NODELIST "
                        "if set, else every host of the topology); only these hosts are used and the current "
                        "placement is the launcher's (ranks fill the hosts in order)")
    p.add_argument("--ranks-per-host", type=positive_int, metavar="N",
                   help="slots of each allocation host a hostfile does not size (default "
                        "$SLURM_NTASKS_PER_NODE, else processes / hosts rounded up)")
    p.add_argument("--emit", choices=["mapping", *EMITTERS], default="mapping",
                   help="format of --output: 'mapping' (process vertex-name lines, default); "
                        + describe("launcher-format"))
    return p


def _prepare(args):
    """(topology, problem, candidates, memory budget) of a ``map`` command line."""
    return _prepare_job(args)[:4]


def _prepare_job(args):
    """:func:`_prepare` and the allocation (``None`` without ``--allocation`` / ``--emit``)."""
    import numpy as np

    from ..patterns import load_graph
    from ..loading import as_topology
    from ..portfolio import STRATEGY_ORDER, MappingProblem, check_memory, make_candidates

    for opt, default in (("emit", "mapping"), ("messages", "external"), ("allocation", None),
                         ("ranks_per_host", None), ("output", None), ("budget", None), ("concentration", None)):
        if not hasattr(args, opt):  # a Namespace made by hand before these options existed
            setattr(args, opt, default)
    if args.emit != "mapping" and not args.output:
        raise ArgumentError(f"--emit {args.emit} needs --output FILE")
    if args.concentration is not None and args.strategy not in ("identity", *TWISTED_STRATEGIES):
        raise ArgumentError(f"--concentration applies to --strategy identity or diagonal-shift, not {args.strategy}")
    topo = as_topology(args.topology)
    graph = load_graph(args.graph, messages=args.messages)
    allocation = _allocation(args, topo, graph.n)
    current = None
    if allocation is not None:
        from ..rankfiles import allocation_topology

        topo, current = allocation_topology(topo, allocation)
        if graph.n > current.size:
            raise MappingError(f"{graph.n} processes but the allocation has {current.size} slots "
                                  f"({len(allocation.hosts)} hosts); raise --ranks-per-host")
        current = current[:graph.n]
    problem = MappingProblem(topo, graph, placement=current, objective=args.objective,
                             time_budget=args.time_budget, iterations=args.iterations, total_budget=args.budget,
                             routing=getattr(args, "routing", "ecmp"), concentration=args.concentration)
    # 'all' in the race's strategy order (structured constructions first, as the MPI layer's
    # defaults): under a tight or loaded budget the skipped ones are rcm, random and identity
    names = [x for x in STRATEGY_ORDER if x in STRATEGIES] if args.strategy == "all" else [args.strategy]
    cands = make_candidates(names, seed=args.seed, refine=args.refine, starts=np.flatnonzero(problem.slots))
    return topo, problem, cands, check_memory(args.max_memory), allocation


def _allocation(args, topo, nprocs):
    """The job's hosts (``--allocation``; with ``--emit`` and none given: ``$SLURM_JOB_NODELIST``, else
    every slot vertex of the topology in vertex order), or ``None`` for the topology's own slots."""
    from ..rankfiles import Allocation, read_allocation

    if args.allocation is not None or (args.emit != "mapping" and os.environ.get("SLURM_JOB_NODELIST")):
        return read_allocation(args.allocation, ranks_per_host=args.ranks_per_host, nprocs=nprocs)
    if args.emit != "mapping":
        hosts = [int(v) for v in topo.hosts]
        return Allocation(tuple(topo.names[v] for v in hosts), tuple(int(topo.slots[v]) for v in hosts))
    if args.ranks_per_host is not None:
        raise ArgumentError("--ranks-per-host needs --allocation")
    return None


def _records(result, with_rank):
    recs = []
    for o in result.outcomes:
        m = o.metrics
        r = {"strategy": o.label, "congestion": m["max_congestion"], "avg_congestion": m["avg_congestion"],
             "dilation": m["avg_dilation"], "max_dilation": m["max_dilation"], "hopbytes": m["hop_bytes"],
             "seconds": o.seconds, "objective": m["objective"],
             "chosen": o.candidate.index == result.winner.candidate.index,
             "seed": o.candidate.seed, "note": o.note}
        if with_rank:
            r["rank"] = o.rank
        recs.append(r)
    for s in result.skipped:
        recs.append({"strategy": s.candidate.label, "skipped": s.reason, "chosen": False, "seed": s.candidate.seed})
    return recs


def _print(args, recs, result, with_rank):
    if args.json:
        print(json.dumps(recs))
        return
    who = f" {'rank':>4}" if with_rank else ""
    print(f"{'strategy':<20} {'max cong':>10} {'avg cong':>10} {'avg dil':>8} {'max dil':>7} "
          f"{'hop-bytes':>12} {'seconds':>9}{who}")
    for r in recs:
        if "skipped" in r:
            print(f"{r['strategy']:<20} {r['skipped']}")
            continue
        mark = " *" if r["chosen"] else ""
        rk = f" {r['rank']:>4}" if with_rank else ""
        note = f"  ({r['note']})" if r["note"] else ""
        print(f"{r['strategy']:<20} {r['congestion']:>10.4g} {r['avg_congestion']:>10.4g} {r['dilation']:>8.3f} "
              f"{r['max_dilation']:>7d} {r['hopbytes']:>12.6g} {r['seconds']:>9.3f}{rk}{mark}{note}")
    print(f"chosen (lowest {args.objective}, then avg congestion, hop-bytes): {result.winner.label}")


def _write_output(args, topo, vertices, allocation, winner=None):
    if args.emit == "mapping" and str(args.output).endswith(".json"):
        from ..mapping import Mapping

        # with the hosts it was computed for, for ltm.apply_mapping
        Mapping(topo, vertices, strategy=getattr(winner, "label", None)).save(
            args.output, metrics=getattr(winner, "metrics", None))
        return
    if args.emit == "mapping":
        text = "".join(f"{p} {topo.names[int(v)]}\n" for p, v in enumerate(vertices))
    else:
        from ..rankfiles import emit

        names = topo.names
        text = emit(args.emit, [names[int(v)] for v in vertices], allocation)
    with open(args.output, "w") as f:
        f.write(text)


def run(args):
    if launched_by_mpiexec():
        from ._mpi_command import run_on_every_rank

        return run_on_every_rank(_run_mpi, args)
    return _run_serial(args)


def _run_serial(args):
    from ..portfolio import run_portfolio

    with for_command(args, "map", objective=args.objective) as progress:
        progress.stage("reading the inputs")
        topo, problem, cands, budget, allocation = _prepare_job(args)
        result = run_portfolio(problem, cands, max_memory=budget, progress=progress.portfolio)
    recs = _records(result, False)
    if args.output:
        _write_output(args, topo, result.winner.payload, allocation, result.winner)
    _print(args, recs, result, False)
    return 0


def _run_mpi(args):
    from mpi4py import MPI

    from ..mpi.driver import race
    from ..mpi.agreement import collective_call

    comm = MPI.COMM_WORLD
    with for_command(args, "map", objective=args.objective, rank=comm.Get_rank()) as progress:
        progress.stage("reading the inputs")
        topo, problem, cands, budget, allocation = collective_call(comm, _prepare_job, args,
                                                                   what="reading the inputs")
        progress.stage(f"racing {len(cands)} candidates on {comm.Get_size()} ranks")
        result = race(comm, problem, lambda n: cands, max_memory=budget, what="mapping",
                      progress=progress.portfolio if progress.enabled else None)

    def finish():
        if comm.Get_rank() != 0:
            return None
        recs = _records(result, True)
        if args.output:
            _write_output(args, topo, result.winner.payload, allocation, result.winner)
        return recs
    recs = collective_call(comm, finish, what="writing the result")
    if comm.Get_rank() == 0:
        _print(args, recs, result, True)
    return 0
