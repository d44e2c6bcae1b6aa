"""The bundled halo exchange (examples/halo_exchange.py) placed three ways, and the cost of tracing it.

Usage::

    python benchmarks/bench_launch.py                    # both parts, writes benchmarks/results/launch.{md,json}
    python benchmarks/bench_launch.py --skip-large       # only the 8-rank run under mpiexec
    python benchmarks/bench_launch.py --overhead-only --reference old_trace.py --out benchmarks/results/trace_overhead
                                                         # only the tracing overhead per call; old_trace.py (e.g.
                                                         # `git show REV:libtopomap/mpi/tracing.py`) timed in the
                                                         # same run

Placements of the example's periodic 2-D grid (``MPI.Compute_dims(P, 2)``, one halo message per face
neighbour and sweep):

(a) ``launch order``: the launcher fills the job's hosts in the order they are listed, and that order is
    bad (a random permutation of the machine's hosts at 32,768 processes; the bundled bad layout
    ``topology_files/demo_torus_4x2.names`` at 8);
(b) ``map --emit``: ``libtopomap map --topology T --graph stencil:DIMS --allocation HOSTS --emit
    mpich-rank-order -o FILE`` is run as a command (default strategy, greedy; and (b') with
    ``--strategy all`` at 32,768); the rank order file is read back with an independent parser and
    gives each rank's host, as a launcher honouring it would (its time is the command's wall time,
    start-up included);
(c) ``Create_cart``: the program calls ``ltm.Create_cart(comm, dims, periods, topology=T)`` from
    placement (a).  At 32,768 processes this is emulated without MPI: the serial portfolio of
    ``Create_cart``'s default strategies (one candidate each; a real job races one candidate per rank
    on top) on the same problem, which is what :func:`libtopomap.mpi.pipeline.reorder_ranks` races.
(d) ``trace + reorder`` (8 ranks only): the program runs once on ``ltm.trace(comm)``, the measured graph
    goes to ``ltm.reorder`` from placement (a), and the program runs on the result.

Part 1, mapping metrics on a generated machine of 32,768 processes: a 16x16x16 torus with 8 slots per
host; no MPI run (the model's max/avg congestion, avg dilation, hop-bytes of the halo graph).

Part 2, under ``mpiexec -n 8`` on this machine (fake host names give the placement; all ranks really
share one node, so the times cannot show a network effect, only that every variant runs the same
program to the same checksum at the same speed, and what the reordering calls cost): time per sweep
(slowest rank, median of the repetitions; the variants take turns in every repetition), the exact
per-block checksum against (a), and the
tracing overhead: the example's ``Neighbor_alltoall`` sweeps and a ``Sendrecv`` ring, untraced and
traced, alternated in the same run.

Part 3, the tracing overhead per call (also alone with ``--overhead-only``): under ``mpiexec -n 2`` both
ranks exchange with the other (real peers), for 512 B and 1 MiB, buffer and pickled point-to-point calls
(``Isend`` + ``Recv``, ``Sendrecv``, ``isend`` + ``recv``, ``sendrecv``) and neighbour collectives
(``Neighbor_alltoall``, ``neighbor_alltoall``); and serially on ``COMM_SELF`` (a message to itself, the
cheapest MPI call, so the largest relative overhead; short loops, many rounds: the minimum is the cost
without scheduling noise).  Untraced and traced rounds alternate; ``--reference`` adds another version of
``libtopomap/mpi/tracing.py`` as a third variant in the same rounds, for a before/after comparison under the
same conditions.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
TOPO8 = ROOT / "topology_files" / "demo_torus_4x2.topo"
NAMES8 = ROOT / "topology_files" / "demo_torus_4x2.names"


def _example():
    spec = importlib.util.spec_from_file_location("halo_exchange", ROOT / "examples" / "halo_exchange.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ----------------------------------------------------------------------------------- rank files
def parse_rank_order(text, hosts, slots):
    """Host of every rank from an ``MPICH_RANK_ORDER`` text (independent of libtopomap.rankfiles): the
    listed ranks fill the hosts' slots in launch order."""
    order = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        for item in filter(None, (x.strip() for x in line.split(","))):
            a, _, b = item.partition("-")
            order += list(range(int(a), int(b or a) + 1))
    if sorted(order) != list(range(len(order))) or len(order) > sum(slots):
        raise ValueError("the rank order file does not list every rank once within the slots")
    slot_host = [h for h, s in zip(hosts, slots) for _ in range(s)]
    where = {}
    for pos, r in enumerate(order):
        where[r] = slot_host[pos]
    return [where[r] for r in range(len(order))]


def emit_rank_order(topo_path, graph_spec, hosts, slots, workdir, *, strategy=None):
    """Run ``libtopomap map ... --emit mpich-rank-order`` as a command; the placement (host per rank), the
    command's wall seconds (start-up included) and the command line."""
    alloc = pathlib.Path(workdir) / "allocation.txt"
    alloc.write_text("".join(f"{h} slots={s}\n" for h, s in zip(hosts, slots)))
    out = pathlib.Path(workdir) / "rank_order"
    cmd = [sys.executable, "-m", "libtopomap", "map", "--topology", str(topo_path), "--graph", graph_spec,
           "--allocation", str(alloc), "--emit", "mpich-rank-order", "-o", str(out)]
    if strategy:
        cmd += ["--strategy", strategy]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "OMPI_", "PMIX_"))}
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, text=True, env=env, cwd=ROOT)
    seconds = time.perf_counter() - t
    return parse_rank_order(out.read_text(), hosts, slots), seconds, " ".join(cmd[1:])


def _metrics(topo, graph, vertices):
    import libtopomap as ltm

    m = ltm.evaluate(topo, graph, np.asarray(vertices, dtype=np.int64))
    return {k: float(m[k]) for k in ("max_congestion", "avg_congestion", "avg_dilation", "hop_bytes")}


# ----------------------------------------------------------------------------------- part 1
def large(nprocs=32768, torus="16x16x16", per_host=8, seed=1):
    """Mapping metrics of placements (a), (b), (c) on a generated machine of ``nprocs`` processes."""
    import libtopomap as ltm
    from libtopomap.cartesian import cart_graph
    from libtopomap.mpi.distgraph import DEFAULT_STRATEGIES
    from libtopomap.mappers import STRATEGIES
    from libtopomap.portfolio import MappingProblem, make_candidates, run_portfolio
    from libtopomap.rankfiles import Allocation, allocation_topology

    machine = ltm.torus(torus)
    hosts_all = [machine.names[int(v)] for v in machine.hosts]
    if len(hosts_all) * per_host != nprocs:
        raise SystemExit(f"{torus} with {per_host} per host is not {nprocs} processes")
    dims = [int(x) for x in _compute_dims(nprocs)]
    graph = cart_graph(dims, [True, True])
    rng = np.random.default_rng(seed)
    hosts = [hosts_all[i] for i in rng.permutation(len(hosts_all))]
    allocation = Allocation(tuple(hosts), (per_host,) * len(hosts))
    topo, launch = allocation_topology(machine, allocation)
    rows = []

    def row(name, vertices, seconds, how):
        rows.append({"placement": name, "processes": nprocs, "machine": f"torus {torus}, {per_host} per host",
                     "grid": "x".join(map(str, dims)), **_metrics(topo, graph, vertices), "seconds": seconds,
                     "how": how})
        print(f"  {name}: {rows[-1]['max_congestion']:.3g} max congestion, {seconds:.1f} s", flush=True)
    row("(a) launch order", launch, 0.0, f"hosts in a random order (seed {seed}), ranks fill them in order")
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "machine.ltm"
        ltm.save(str(path), machine)
        for strategy, label in ((None, "(b) map --emit mpich-rank-order"),
                                ("all", "(b') map --emit mpich-rank-order --strategy all")):
            placement, seconds, cmd = emit_rank_order(path, f"stencil:{'x'.join(map(str, dims))}", hosts,
                                                      [per_host] * len(hosts), tmp, strategy=strategy)
            row(label, [topo.index(h) for h in placement], seconds, "`" + cmd.replace(tmp, "$TMP") + "`")
    strats = tuple(s for s in DEFAULT_STRATEGIES if s in STRATEGIES)
    t = time.perf_counter()
    problem = MappingProblem(topo, graph, placement=launch, objective="congestion")
    result = run_portfolio(problem, make_candidates(strats, seed=0, starts=np.flatnonzero(problem.slots)))
    row("(c) Create_cart (serial portfolio)", result.winner.payload, time.perf_counter() - t,
        f"portfolio of {', '.join(strats)} from (a); winner {result.winner.label}")
    return rows


def _compute_dims(n):
    from mpi4py import MPI

    return MPI.Compute_dims(n, 2)


# ----------------------------------------------------------------------------------- part 2 (worker)
def _sweeps(grid, n, steps, dims, send_order, recv_order, k):
    """The example's Jacobi sweeps on ``grid`` (a topology communicator) playing block ``k``; returns (seconds,
    seconds in Neighbor_alltoall, this block's sum)."""
    from mpi4py import MPI

    ex = _example()
    u = np.zeros((n + 2, n + 2))
    u[1:-1, 1:-1] = ex.initial_block(k, dims, n)
    send = np.empty((4, n))
    recv = np.empty((4, n))
    rows = {"top": lambda: u[1, 1:-1], "bottom": lambda: u[n, 1:-1], "left": lambda: u[1:-1, 1],
            "right": lambda: u[1:-1, n]}
    grid.Barrier()
    t0 = MPI.Wtime()
    in_calls = 0.0
    for _ in range(steps):
        for i, side in enumerate(send_order):
            send[i] = rows[side]()
        t = MPI.Wtime()
        grid.Neighbor_alltoall(send, recv)
        in_calls += MPI.Wtime() - t
        for i, side in enumerate(recv_order):  # halo received from the neighbour on that side
            if side == "top":
                u[0, 1:-1] = recv[i]
            elif side == "bottom":
                u[n + 1, 1:-1] = recv[i]
            elif side == "left":
                u[1:-1, 0] = recv[i]
            else:
                u[1:-1, n + 1] = recv[i]
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return MPI.Wtime() - t0, in_calls, float(u[1:-1, 1:-1].sum())


# the example's dist graph: to (down, up, right, left), from (up, down, left, right)
DIST_SEND, DIST_RECV = ("bottom", "top", "right", "left"), ("top", "bottom", "left", "right")
# a Cartesian communicator's neighbours: (-1, +1) per dimension, the same order both ways
CART_SEND, CART_RECV = ("top", "bottom", "left", "right"), ("top", "bottom", "left", "right")


def worker(args):
    from mpi4py import MPI

    import libtopomap as ltm
    from libtopomap.mpi import last_report
    from libtopomap.mpi.location import read_fake_names

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    ex = _example()
    topo = ltm.load(args.topology)
    dims = MPI.Compute_dims(size, 2)
    graph = ltm.cart_graph(dims, [True, True])
    names = {"a": args.names_a, "b": args.names_b}
    where = {}
    for key, path in names.items():
        table = read_fake_names(path, n_ranks=size)
        where[key] = [topo.index(table[r]) for r in range(size)]
    n, steps, reps = args.block, args.steps, args.reps
    out = {"ranks": size, "grid": "x".join(map(str, dims)), "block": n, "steps": steps, "reps": reps, "rows": []}

    variants = []  # (label, communicator, send order, receive order, vertices, reorder seconds, how)

    # (a) launched in the bad order, the example's plain dist graph
    sources, destinations = ex.neighbours(rank, dims)
    grid_a = comm.Create_dist_graph_adjacent(sources, destinations, reorder=False)
    variants.append(("(a) launch order", grid_a, DIST_SEND, DIST_RECV, where["a"], 0.0, f"fake names {NAMES8.name}"))
    # (b) launched in the emitted rank order: the same plain program, its ranks on other hosts
    variants.append(("(b) map --emit mpich-rank-order", comm.Create_dist_graph_adjacent(sources, destinations,
                                                                                         reorder=False),
                     DIST_SEND, DIST_RECV, where["b"], args.emit_seconds,
                     "rank order file from `libtopomap map --emit` (command wall time), read back by an "
                     "independent parser"))
    # (c) Create_cart in the program, from (a)
    comm.Barrier()
    t = time.perf_counter()
    cart = ltm.Create_cart(comm, dims, [True, True], topology=topo, fake_names=args.names_a, seed=0)
    secs = comm.allreduce(time.perf_counter() - t, op=MPI.MAX)
    rep = last_report(cart)
    variants.append(("(c) Create_cart", cart, CART_SEND, CART_RECV, rep.vertices_after, secs,
                     f"ltm.Create_cart from (a): {rep.strategy}"))
    # (d) trace the plain program for 2 sweeps, reorder for the measured graph, run on the result
    comm.Barrier()
    t = time.perf_counter()
    with ltm.trace(grid_a) as tg:
        _sweeps(tg, n, 2, dims, DIST_SEND, DIST_RECV, grid_a.Get_rank())
    measured = tg.graph()
    new = ltm.reorder(comm, measured, topology=topo, fake_names=args.names_a, seed=0)
    secs = comm.allreduce(time.perf_counter() - t, op=MPI.MAX)
    rep = last_report(new)
    s2, d2 = ex.neighbours(new.Get_rank(), dims)
    variants.append(("(d) trace + reorder", new.Create_dist_graph_adjacent(s2, d2, reorder=False), DIST_SEND,
                     DIST_RECV, rep.vertices_after, secs, f"ltm.trace (2 sweeps) -> graph -> ltm.reorder from (a): "
                                                          f"{rep.strategy}"))
    new.Free()

    # every variant once per repetition, in turn, so that they share the machine's conditions
    times = {v[0]: [] for v in variants}
    sums = {}
    for _ in range(reps):
        for label, grid, send_order, recv_order, *_ in variants:
            t, _, sums[label] = _sweeps(grid, n, steps, dims, send_order, recv_order, grid.Get_rank())
            times[label].append(comm.allreduce(t, op=MPI.MAX) / steps)
    for label, grid, _, _, vertices, secs, how in variants:
        blocks = [x for _, x in sorted(comm.allgather((grid.Get_rank(), sums[label])))]
        out["rows"].append({"placement": label, "us_per_sweep": float(np.median(times[label])) * 1e6,
                            "us_per_sweep_min": min(times[label]) * 1e6, "reorder_s": secs,
                            **_metrics(topo, graph, vertices), "checksum": blocks, "how": how})

    # tracing overhead on communicator (a), untraced and traced alternated
    over = {"neighbor_alltoall": {"plain": [], "traced": []}, "sendrecv": {"plain": [], "traced": []}}
    ring_send, ring_recv = np.ones(n), np.empty(n)
    for _ in range(args.overhead_reps):
        for mode in ("plain", "traced"):
            ctx = ltm.trace(grid_a) if mode == "traced" else _Null(grid_a)
            with ctx as g:
                _, calls, _ = _sweeps(g, n, steps, dims, DIST_SEND, DIST_RECV, grid_a.Get_rank())
                g.Barrier()
                t = MPI.Wtime()
                for _ in range(steps):
                    g.Sendrecv(ring_send, dest=(rank + 1) % size, recvbuf=ring_recv, source=(rank - 1) % size)
                ring = MPI.Wtime() - t
            over["neighbor_alltoall"][mode].append(comm.allreduce(calls, op=MPI.MAX) / steps)
            over["sendrecv"][mode].append(comm.allreduce(ring, op=MPI.MAX) / steps)
    for v in variants:
        v[1].Free()

    ref = out["rows"][0]["checksum"]
    for r in out["rows"]:
        r["checksum_same_as_a"] = r.pop("checksum") == ref
    out["overhead"] = {}
    for what, d in over.items():
        plain, traced = float(np.median(d["plain"])), float(np.median(d["traced"]))
        out["overhead"][what] = {"plain_us": plain * 1e6, "traced_us": traced * 1e6,
                                 "overhead_pct": (traced / plain - 1) * 100 if plain else None,
                                 "samples": len(d["plain"])}
    if rank == 0:
        with open(args.worker_json, "w") as f:
            json.dump(out, f)


class _Null:
    def __init__(self, comm):
        self.comm = comm

    def __enter__(self):
        return self.comm

    def __exit__(self, *exc):
        return False


# ----------------------------------------------------------------------------------- tracing overhead
def _stats(per_round):
    v = np.asarray(per_round)
    return {"min_us": float(v.min()) * 1e6, "median_us": float(np.median(v)) * 1e6}


def _tracers(path):
    """``{label: trace function}``: this tree's ``ltm.trace``, and, given ``path`` (another version of
    ``libtopomap/mpi/tracing.py``, e.g. ``git show REV:libtopomap/mpi/tracing.py > old.py``), that one too, loaded
    inside the package so that both run in the same process, rounds alternated."""
    import libtopomap as ltm

    out = {"traced": ltm.trace}
    if path:
        spec = importlib.util.spec_from_file_location("libtopomap.mpi._trace_reference", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        out = {"reference": mod.trace, **out}
    return out


def _overhead_row(name, plain, traced, reference=None, **extra):
    p, q = _stats(plain), _stats(traced)
    row = {"call": name, "plain": p, "traced": q,
            "overhead_ns_min": (q["min_us"] - p["min_us"]) * 1e3,
            "overhead_pct_min": (q["min_us"] / p["min_us"] - 1) * 100,
            "overhead_pct_median": (q["median_us"] / p["median_us"] - 1) * 100, **extra}
    if reference:
        r = _stats(reference)
        row["reference"] = r
        row["reference_overhead_ns_min"] = (r["min_us"] - p["min_us"]) * 1e3
        row["reference_overhead_pct_min"] = (r["min_us"] / p["min_us"] - 1) * 100
        row["reference_overhead_pct_median"] = (r["median_us"] / p["median_us"] - 1) * 100
    return row


def self_overhead(calls=1000, rounds=200, reference=None):
    """Per-call time on ``COMM_SELF`` (a message to itself: the cheapest MPI call there is, so the largest
    relative overhead), untraced and traced alternated in short loops; the minimum over ``rounds`` is the
    cost without scheduling noise (the machine is loaded), the median shows the noise."""
    import contextlib
    import timeit

    from mpi4py import MPI

    comm = MPI.COMM_SELF
    a, b = np.ones(64), np.empty(64)
    spec, obj = [a, MPI.DOUBLE], {"k": list(range(8))}

    def isend_recv(c):
        r = c.Isend(a, 0)
        c.Recv(b, 0)
        r.Wait()

    def pickled(c):
        r = c.isend(obj, 0)
        c.recv(source=0)
        r.wait()
    cases = (("Sendrecv 512 B ndarray", lambda c: c.Sendrecv(a, dest=0, recvbuf=b, source=0)),
             ("Sendrecv 512 B [buf, MPI.DOUBLE]", lambda c: c.Sendrecv(spec, dest=0, recvbuf=b, source=0)),
             ("Isend+Recv 512 B", isend_recv),
             ("isend+recv dict", pickled))
    rows = []
    tracers = _tracers(reference)
    for name, fn in cases:
        times = {"plain": [], **{k: [] for k in tracers}}
        with contextlib.ExitStack() as stack:
            comms = {"plain": comm, **{k: stack.enter_context(tr(comm)) for k, tr in tracers.items()}}
            for _ in range(rounds):
                for k, c in comms.items():
                    times[k].append(timeit.timeit(lambda: fn(c), number=calls) / calls)
        rows.append(_overhead_row(name, times["plain"], times["traced"], times.get("reference"), calls=calls,
                                  rounds=rounds, where="COMM_SELF"))
    return rows


def pair_worker(args):
    """Under ``mpiexec -n 2``: both ranks exchange with the other (real peers, shared memory), every call kind
    untraced and traced in alternating rounds; per round the slowest rank's time per call."""
    import contextlib

    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, peer = comm.Get_rank(), 1 - comm.Get_rank()
    tracers = _tracers(args.reference)
    if comm.Get_size() != 2:
        raise SystemExit("the pair benchmark runs on exactly 2 ranks")
    dg = comm.Create_dist_graph_adjacent([peer], [peer], reorder=False)
    rows = []
    for nbytes in (512, 1 << 20):
        a, b = np.ones(nbytes // 8), np.empty(nbytes // 8)
        obj = np.ones(nbytes // 8)  # pickled: its bytes and a small header

        def isend_recv(c):
            r = c.Isend(a, peer)
            c.Recv(b, peer)
            r.Wait()

        def isend_recv_obj(c):
            r = c.isend(obj, peer)
            c.recv(source=peer)
            r.wait()
        kinds = (("Isend+Recv", "point-to-point, buffer", comm, isend_recv),
                 ("Sendrecv", "point-to-point, buffer", comm, lambda c: c.Sendrecv(a, peer, recvbuf=b, source=peer)),
                 ("isend+recv", "point-to-point, pickle", comm, isend_recv_obj),
                 ("sendrecv", "point-to-point, pickle", comm, lambda c: c.sendrecv(obj, peer, source=peer)),
                 ("Neighbor_alltoall", "neighbour collective, buffer", dg, lambda c: c.Neighbor_alltoall(a, b)),
                 ("neighbor_alltoall", "neighbour collective, pickle", dg, lambda c: c.neighbor_alltoall([obj])))
        for name, kind, base, fn in kinds:
            calls = args.pair_calls if nbytes < 4096 else max(1, args.pair_calls // 50)
            times = {"plain": [], **{k: [] for k in tracers}}
            with contextlib.ExitStack() as stack:
                comms = {"plain": base, **{k: stack.enter_context(tr(base)) for k, tr in tracers.items()}}
                for c in comms.values():  # warm up
                    for _ in range(calls):
                        fn(c)
                for _ in range(args.pair_rounds):
                    for k, c in comms.items():
                        base.Barrier()
                        t = time.perf_counter()
                        for _ in range(calls):
                            fn(c)
                        times[k].append(base.allreduce((time.perf_counter() - t) / calls, op=MPI.MAX))
            rows.append(_overhead_row(f"{name} {_size(nbytes)}", times["plain"], times["traced"],
                                      times.get("reference"), kind=kind, calls=calls, rounds=args.pair_rounds,
                                      where="mpiexec -n 2"))
    dg.Free()
    if rank == 0:
        with open(args.worker_json, "w") as f:
            json.dump(rows, f)


def _size(n):
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n} B"


def pair_overhead(args):
    with tempfile.TemporaryDirectory() as tmp:
        wjson = pathlib.Path(tmp) / "pair.json"
        mpiexec = pathlib.Path(sys.executable).parent / "mpiexec"
        cmd = [str(mpiexec), "-n", "2", sys.executable, __file__, "--pair-worker", "--worker-json", str(wjson),
               "--pair-calls", str(args.pair_calls), "--pair-rounds", str(args.pair_rounds)]
        if args.reference:
            cmd += ["--reference", str(pathlib.Path(args.reference).resolve())]
        subprocess.run(cmd, check=True, cwd=ROOT, timeout=args.timeout)
        return json.loads(wjson.read_text())


def overhead_markdown(rows, title="Tracing overhead per call"):
    out = [f"### {title}", "",
           "Untraced and traced rounds alternated; per round the time per call (slowest rank under mpiexec); "
           "min over rounds = the cost without scheduling noise, median = with it.", "",
           "| call | where | untraced us (min / median) | traced us (min / median) | overhead ns (min) | "
           "overhead % (min) | overhead % (median) | calls x rounds |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r['call']} | {r['where']} | {r['plain']['min_us']:.2f} / {r['plain']['median_us']:.2f} | "
                   f"{r['traced']['min_us']:.2f} / {r['traced']['median_us']:.2f} | {r['overhead_ns_min']:+.0f} | "
                   f"{r['overhead_pct_min']:+.1f}% | {r['overhead_pct_median']:+.1f}% | {r['calls']} x {r['rounds']} |")
    return out


# ----------------------------------------------------------------------------------- driver
def small(args):
    """Part 2: emit the rank order for 8 ranks, then run the worker under mpiexec."""
    from libtopomap.mpi.location import read_fake_names

    bad = read_fake_names(NAMES8, n_ranks=args.ranks)
    hosts = [bad[r] for r in range(args.ranks)]  # launch order: rank r on the r-th listed host
    with tempfile.TemporaryDirectory() as tmp:
        dims = _compute_dims(args.ranks)
        placement, seconds, _ = emit_rank_order(TOPO8, f"stencil:{dims[0]}x{dims[1]}", hosts, [1] * len(hosts), tmp)
        names_b = pathlib.Path(tmp) / "emitted.names"
        names_b.write_text("".join(f"{r} {h}\n" for r, h in enumerate(placement)))
        wjson = pathlib.Path(tmp) / "worker.json"
        mpiexec = pathlib.Path(sys.executable).parent / "mpiexec"
        cmd = [str(mpiexec), "-n", str(args.ranks), sys.executable, __file__, "--worker",
               "--topology", str(TOPO8), "--names-a", str(NAMES8), "--names-b", str(names_b),
               "--emit-seconds", str(seconds), "--worker-json", str(wjson), "--block", str(args.block),
               "--steps", str(args.steps), "--reps", str(args.reps), "--overhead-reps", str(args.overhead_reps)]
        subprocess.run(cmd, check=True, cwd=ROOT, timeout=args.timeout)
        return json.loads(wjson.read_text())


def _load():
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def markdown(res):
    title = ("Tracing overhead of ltm.trace" if not res.get("large") and not res.get("small")
             else "Launch-time and in-process reordering of examples/halo_exchange.py")
    out = [f"# {title}", ""]
    if res.get("large"):
        out += ["## Mapping metrics, 32,768 processes (model, no run)", "",
                "| placement | machine | grid | max congestion | avg congestion | avg dilation | hop-bytes "
                "| mapping s |",
                "|---|---|---|---:|---:|---:|---:|---:|"]
        for r in res["large"]:
            out.append(f"| {r['placement']} | {r['machine']} | {r['grid']} | {r['max_congestion']:.3g} | "
                       f"{r['avg_congestion']:.3g} | {r['avg_dilation']:.3f} | {r['hop_bytes']:.6g} | "
                       f"{r['seconds']:.1f} |")
        out += [""] + [f"- {r['placement']}: {r['how']}" for r in res["large"]] + [""]
    s = res.get("small")
    if s:
        out += [f"## Under mpiexec -n {s['ranks']} on this machine (fake host names; grid {s['grid']}, block "
                f"{s['block']}x{s['block']}, {s['steps']} sweeps x {s['reps']} repetitions)", "",
                "| placement | max congestion | avg dilation | hop-bytes | us per sweep (median) | min | reorder s | "
                "checksum = (a) |", "|---|---:|---:|---:|---:|---:|---:|---|"]
        for r in s["rows"]:
            out.append(f"| {r['placement']} | {r['max_congestion']:.3g} | {r['avg_dilation']:.3f} | "
                       f"{r['hop_bytes']:.6g} | {r['us_per_sweep']:.0f} | {r['us_per_sweep_min']:.0f} | "
                       f"{r['reorder_s']:.2f} | {'yes' if r['checksum_same_as_a'] else 'NO'} |")
        out += ["", "### Tracing overhead (same run, untraced and traced alternated; slowest rank per call, median)",
                "",
                "| traced call | untraced us | traced us | overhead | samples |", "|---|---:|---:|---:|---:|"]
        for k, v in s["overhead"].items():
            out.append(f"| {k} ({s['ranks']} ranks) | {v['plain_us']:.1f} | {v['traced_us']:.1f} | "
                       f"{v['overhead_pct']:+.1f}% | {v['samples']} |")
    if res.get("overhead"):
        out += [""] + overhead_markdown(res["overhead"], "Tracing overhead per call (mpiexec -n 2 and COMM_SELF)")
    ref_rows = [r for r in res.get("overhead", ()) if "reference" in r]
    if ref_rows:
        out += ["", f"### Reference ({res.get('reference', '?')}) and this tree, same run, rounds alternated", "",
                "| call | where | untraced us (min) | reference traced us (min) | this tree traced us (min) | "
                "overhead ns reference / this (min) | overhead % reference / this (min) | "
                "overhead % reference / this (median) |", "|---|---|---:|---:|---:|---:|---:|---:|"]
        for r in ref_rows:
            out.append(f"| {r['call']} | {r['where']} | {r['plain']['min_us']:.2f} | {r['reference']['min_us']:.2f} | "
                       f"{r['traced']['min_us']:.2f} | {r['reference_overhead_ns_min']:+.0f} / "
                       f"{r['overhead_ns_min']:+.0f} | {r['reference_overhead_pct_min']:+.1f}% / "
                       f"{r['overhead_pct_min']:+.1f}% | {r['reference_overhead_pct_median']:+.1f}% / "
                       f"{r['overhead_pct_median']:+.1f}% |")
    out += ["", res["conditions"], ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--block", type=int, default=64)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--overhead-reps", type=int, default=10)
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--skip-large", action="store_true", help="skip the 32,768-process metrics")
    ap.add_argument("--skip-small", action="store_true", help="skip the mpiexec run")
    ap.add_argument("--out", default=str(RESULTS / "launch"), help="results prefix (.md and .json)")
    # worker (under mpiexec)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    for opt in ("--topology", "--names-a", "--names-b", "--worker-json"):
        ap.add_argument(opt, help=argparse.SUPPRESS)
    ap.add_argument("--emit-seconds", type=float, default=0.0, help=argparse.SUPPRESS)
    ap.add_argument("--overhead-only", action="store_true",
                    help="only the tracing overhead per call (mpiexec -n 2 pair and COMM_SELF)")
    ap.add_argument("--pair-calls", type=int, default=200, help="calls per round of 512 B (1 MiB: 1/50 of it)")
    ap.add_argument("--pair-rounds", type=int, default=40, help="alternated untraced/traced rounds per call kind")
    ap.add_argument("--reference", help="another version of libtopomap/mpi/tracing.py to time in the same run, "
                                        "rounds alternated (e.g. git show REV:libtopomap/mpi/tracing.py > old.py)")
    ap.add_argument("--reference-label", default="", help="a word for the --reference version")
    ap.add_argument("--pair-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    if args.pair_worker:
        return pair_worker(args)
    import libtopomap as ltm

    load0 = _load()
    res = {}
    if not args.skip_large and not args.overhead_only:
        print("part 1: 32,768 processes (metrics only)", flush=True)
        res["large"] = large()
    if not args.skip_small and not args.overhead_only:
        print(f"part 2: mpiexec -n {args.ranks}", flush=True)
        res["small"] = small(args)
    print("tracing overhead: mpiexec -n 2, then COMM_SELF", flush=True)
    res["overhead"] = pair_overhead(args) + self_overhead(reference=args.reference)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    res["conditions"] = (f"{os.cpu_count()} CPUs, load {load0:.2f} at start, {_load():.2f} at end (a loaded machine: "
                         f"other jobs were running; times are noisy); Python {platform.python_version()}, "
                         f"numpy {np.__version__}; libtopomap {ltm.__version__} ({commit}); "
                         f"{time.strftime('%Y-%m-%d %H:%M')}")
    if args.reference:
        res["reference"] = args.reference_label or pathlib.Path(args.reference).name
    text = markdown(res)
    print(text)
    pathlib.Path(args.out + ".md").write_text(text)
    pathlib.Path(args.out + ".json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
