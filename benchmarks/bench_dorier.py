"""Dorier et al.'s broadcasts on the 16,512-terminal dragonfly (CLUSTER 2016, sections III-E and IV-B, Fig. 2-3).

Setup of section IV-B: ``g = 129`` groups of ``a = 16`` routers, ``p = 8`` terminals and ``h = 8`` global
links per router; for each allocation size ``n`` (64 .. 10,240), 20 random allocations (seeds 0-19;
rank ``i`` on the ``i``-th drawn terminal, root rank 0, so the root terminal is random too).  For TREE,
LLF, GLF and FOREST (:mod:`libtopomap.collectives.dorier`) the table gives, as mean over the runs:

* link traversals under minimal routing: global and local (terminal links are ``2(n - 1)`` for all);
  for TREE next to the section III-E expectations, for the topology-aware algorithms with a check that
  every run used exactly ``groups involved - 1`` global links and at most ``2(g-1) + g(a-1) = 2,191``
  local links;
* the makespan of section IV-B (a send lasts as many time units as links it crosses; a sender waits;
  last arrival), mean and range; the reference of a rough sketch of the same algorithms at
  ``n = 10,240`` is TREE 69, GLF 58, LLF 54, FOREST 46.

With ``--simgrid`` it simulates the four broadcasts instead with SimGrid (:mod:`libtopomap.simulate`)
on the full platform (one host per terminal, 100 Gbps and 100 ns per link), for 1 KiB and 1 MiB
messages, over a few sizes (``--simgrid-sizes``, default 64, 512, 4,096) and random allocations
(``--simgrid-runs``, default 3; seeds 0, 1, ...).  SimGrid routes every message along the dragonfly's
minimal route (``routing="minimal"``: explicit routes from :meth:`Dragonfly.route
<libtopomap.collectives.dragonfly.Dragonfly.route>`, one global link between groups); each rank
enters step ``t + 1`` of the schedule once its messages of step ``t`` are done.  The table gives
the mean simulated seconds per algorithm and size and the ratio to TREE; results go to
``dorier_simgrid.json`` / ``.md``.  Each simulation runs in its own subprocess, which builds only
the part of the platform the broadcast uses (the placement's terminals and the links on its routes):
on a loaded 2-core machine about 0.1-0.6 s per simulation at n = 64, 5-13 s at n = 4,096 (0.45 GB),
35 s at n = 10,240 (1.5 GB peak; ``--simgrid-sizes 10240 --simgrid-runs 1 --out
benchmarks/results/dorier_simgrid_10240.json``).  Allocations are the outer loop, ``--simgrid-budget S``
starts no new allocation once a size has run ``S`` seconds, and the results are written after every
allocation.  ``--simgrid-resume`` continues the JSON of ``--out``: a size found there starts at its next
seed (up to ``--simgrid-runs`` allocations; the times of an allocation do not depend on when it ran),
sizes not found are added, and each row lists its parts (seeds, load, start) and the ``.md`` the
commands.

Where a simulation's time goes (cProfile and timers, TREE at n = 4,096, 1 KiB, load 2-5): in this
process 0.3-0.4 s (the 4,095 minimal routes 0.27 s, the JSON job); in the worker the platform XML
0.03 s and SimGrid's ``load_platform`` 0.28 s, then creating the 4,096 actors (SimGrid's Python
bindings run each in a thread) 0.6-2.1 s and ``engine.run`` 1.4-1.7 s.  Building the platform and
its routes is about 0.6 s of 3-5 s; SimGrid's actors and run dominate, so the platform is not shared
between the eight simulations of an allocation (SimGrid's engine lives once per process anyway).

With ``--mpi`` (under ``mpiexec -n N``) it times :func:`libtopomap.bcast` (the four schedules run with
point-to-point messages, ranks placed on ``N`` random terminals of ``--mpi-topology``, default the
72-terminal dragonfly ``g=9, a=4, p=2, h=2``, by ``placement=``; root 0) against ``comm.Bcast`` for
1 KiB and 1 MiB buffers: ``--mpi-iterations`` calls each (after one warm-up), mean seconds per call
over the ranks' maxima (and their median: the mean of an oversubscribed run is dominated by a few slow
calls), and every call's buffer checked on every rank.  Each call passes the algorithm,
the topology and the placement, as an application repeating a broadcast would: the first call builds
the plan and the duplicate communicator, which ``ltm.bcast`` keeps on the communicator, so the timed
calls pay one ``Allreduce`` (the ranks agree on the arguments) and the schedule's messages.  On one machine (every rank
on the same host) this measures the cost of the schedules' point-to-point messages against the MPI
library's own broadcast, not the network's topology.  Results go to ``dorier_mpi.json`` / ``.md``.

Usage::

    python benchmarks/bench_dorier.py [--runs 20] [--sizes 64,128,...] [--out benchmarks/results/dorier.json]
    python benchmarks/bench_dorier.py --simgrid [--simgrid-sizes 64,512,4096] [--simgrid-runs 3] [--jobs 1]
        [--simgrid-budget S] [--simgrid-resume] [--out benchmarks/results/dorier_simgrid.json]
    mpiexec -n 8 python benchmarks/bench_dorier.py --mpi [--mpi-iterations 200]

Prints a Markdown table and writes it next to the JSON (``.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

from libtopomap.collectives import BCAST_ALGORITHMS, dragonfly_bcast, dragonfly_link_use, evaluate_bcast
from libtopomap.collectives.allocation import random_allocation
from libtopomap.generators import dragonfly

G, A, P, H = 129, 16, 8, 8
SIZES = (64, 128, 256, 512, 1024, 2048, 4096, 8192, 10240)
REFERENCE = {"tree": 69, "glf": 58, "llf": 54, "forest": 46}  # rough sketch, n = 10,240


def run(sizes, runs):
    topo = dragonfly(G, A, P, H)
    rows = []
    for n in sizes:
        per = {alg: {"global": [], "local": [], "terminal": [], "makespan": [], "groups": [], "seconds": []}
               for alg in BCAST_ALGORITHMS}
        for seed in range(runs):
            nodes = random_allocation(topo, n, seed=seed)
            for alg in BCAST_ALGORITHMS:
                t0 = time.perf_counter()
                r = evaluate_bcast(topo, nodes, alg)
                per[alg]["seconds"].append(time.perf_counter() - t0)
                for k in ("global", "local", "terminal"):
                    per[alg][k].append(r["links"][k])
                per[alg]["makespan"].append(r["makespan"])
                per[alg]["groups"].append(r["groups"])
        expect = dragonfly_link_use(G, A, P, H, n)
        row = {"n": n, "runs": runs, "expected_tree": {k: expect[k] for k in ("terminal", "local", "local_paper",
                                                                                "global")},
               "bounds": {k: expect[k] for k in ("bound_local", "bound_global")}, "algorithms": {}}
        for alg, d in per.items():
            arr = {k: np.asarray(v, dtype=float) for k, v in d.items()}
            groups = arr["groups"]
            row["algorithms"][alg] = {
                "global_mean": float(arr["global"].mean()), "global_sem": float(arr["global"].std(ddof=1) /
                                                                               np.sqrt(runs)) if runs > 1 else 0.0,
                "local_mean": float(arr["local"].mean()), "local_max": int(arr["local"].max()),
                "local_sem": float(arr["local"].std(ddof=1) / np.sqrt(runs)) if runs > 1 else 0.0,
                "terminal": int(arr["terminal"].max()),
                "global_is_groups_minus_1": bool(np.all(arr["global"] == groups - 1)),
                "makespan_mean": float(arr["makespan"].mean()), "makespan_min": float(arr["makespan"].min()),
                "makespan_max": float(arr["makespan"].max()), "groups_mean": float(groups.mean()),
                "seconds_mean": float(arr["seconds"].mean()), "raw": {k: v for k, v in d.items() if k != "seconds"}}
        rows.append(row)
        print(f"n={n}: " + ", ".join(f"{a} {row['algorithms'][a]['makespan_mean']:.1f}" for a in BCAST_ALGORITHMS),
              file=sys.stderr, flush=True)
    return rows


SIMGRID_SIZES = (64, 512, 4096)
MESSAGE_SIZES = (1024, 1024 * 1024)


def run_simgrid(topo, sizes, runs, *, message_sizes=MESSAGE_SIZES, jobs=1, algorithms=BCAST_ALGORITHMS,
                progress=True, budget=None, on_row=None, previous=None):
    """SimGrid times of the broadcasts: ``{"rows": [{"n", "runs", "load", "parts", "algorithms": {alg:
    {"times": [[s per message size] per run], "mean": [...], "ratio_to_tree": [...], "wall_s"}}}], ...}``.

    Allocations are the outer loop (seeds 0, 1, ...; the four algorithms of one allocation run one
    after the other), so with ``budget`` (seconds per size) no new allocation starts once the size
    has used it, and ``runs`` of a row is the number of allocations done (at least one).  ``load``:
    the 1-minute load average before and after the size; ``parts``: one entry per invocation that
    ran allocations of the size (``seeds`` [first, end), ``load``, ``wall_s``, ``started`` UTC).
    ``previous``: rows of an earlier result (``--simgrid-resume``); a size found there continues at
    seed ``runs`` of that row (its times are kept), up to ``runs`` allocations in all, and rows of
    sizes not asked for are kept.  ``on_row(rows)`` is called after every allocation (the benchmark
    writes its results there, so a stopped run keeps the allocations it finished)."""
    from libtopomap.simulate import simulate_many

    previous = {r["n"]: r for r in (previous or ())}
    done_rows = dict(previous)
    version = None

    def rows_now():
        return [done_rows[k] for k in sorted(done_rows)]

    for n in sizes:
        t_size = time.perf_counter()
        load0 = os.getloadavg()[0]
        prev = previous.get(n)
        if prev is not None:
            per = {alg: {"times": [list(t) for t in prev["algorithms"][alg]["times"]],
                         "wall_s": prev["algorithms"][alg]["wall_s"]} for alg in algorithms}
            start = prev["runs"]
            parts = list(prev.get("parts") or [{"seeds": [0, start], "load": prev.get("load"),
                                                "wall_s": prev.get("wall_s")}])
            wall0 = prev.get("wall_s", 0.0)
        else:
            per = {alg: {"times": [], "wall_s": 0.0} for alg in algorithms}
            start, parts, wall0 = 0, [], 0.0
        part = {"seeds": [start, start], "load": [load0, load0], "wall_s": 0.0,
                "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
        done = start
        for seed in range(start, runs):
            if budget is not None and done and time.perf_counter() - t_size >= budget:
                break
            nodes = random_allocation(topo, n, seed=seed)
            for alg in algorithms:
                t0 = time.perf_counter()
                steps = dragonfly_bcast(topo, nodes, alg)
                r = simulate_many(topo, steps, [nodes], sizes=list(message_sizes), routing="minimal",
                                  load_routing="minimal", jobs=jobs)[0]
                per[alg]["times"].append([float(x) for x in r.times])
                per[alg]["wall_s"] += time.perf_counter() - t0
                version = r.simgrid_version
            done += 1
            part.update(seeds=[start, done], load=[load0, os.getloadavg()[0]], wall_s=time.perf_counter() - t_size)
            done_rows[n] = _simgrid_row(n, per, algorithms, parts + [part], wall0 + part["wall_s"])
            if on_row is not None:
                on_row(rows_now())
        if progress and n in done_rows:
            per = done_rows[n]["algorithms"]
            print(f"simgrid n={n} ({done} allocations): "
                  + ", ".join(f"{a} {per[a]['mean'][-1]:.3g} s ({per[a]['wall_s']:.0f} s wall)" for a in algorithms),
                  file=sys.stderr, flush=True)
    return {"message_sizes": list(message_sizes), "routing": "minimal", "simgrid_version": version,
            "bandwidth": "100Gbps", "latency": "100ns", "model": "CM02", "rows": rows_now()}


def _simgrid_row(n, per, algorithms, parts, wall_s):
    """One row of :func:`run_simgrid` from the per-allocation times in ``per``."""
    out = {}
    for alg in algorithms:
        arr = np.asarray(per[alg]["times"])
        out[alg] = {"times": per[alg]["times"], "wall_s": per[alg]["wall_s"], "mean": arr.mean(0).tolist(),
                    "min": arr.min(0).tolist(), "max": arr.max(0).tolist()}
    ref = out.get("tree", out[algorithms[0]])["mean"]
    for alg in algorithms:
        out[alg]["ratio_to_tree"] = [a / b if b > 0 else float("nan") for a, b in zip(out[alg]["mean"], ref)]
    runs = len(per[algorithms[0]]["times"])
    return {"n": n, "runs": runs, "load": [parts[0]["load"][0], parts[-1]["load"][1]], "parts": parts,
            "wall_s": wall_s, "algorithms": out}


def _us(x):
    return f"{x * 1e6:.2f}"


def simgrid_table(res):
    """Markdown: mean simulated microseconds per algorithm and message size, ratio to TREE in parentheses,
    and the mean wall seconds per simulation."""
    algs = list(res["rows"][0]["algorithms"]) if res["rows"] else []
    labels = {1024: "1 KiB", 1024 * 1024: "1 MiB"}
    cols = [f"{a.upper()} {labels.get(m, f'{m} B')}" for m in res["message_sizes"] for a in algs]
    out = ["| n | runs | " + " | ".join(cols) + " | wall s / simulation | load (1 min) |",
           "|---:|---:|" + "---:|" * (len(cols) + 1) + "---|"]
    for r in res["rows"]:
        cells = []
        for i, _ in enumerate(res["message_sizes"]):
            for a in algs:
                d = r["algorithms"][a]
                cells.append(_us(d["mean"][i]) + ("" if a == "tree" else f" ({d['ratio_to_tree'][i]:.2f})"))
        per_sim = sum(d["wall_s"] for d in r["algorithms"].values()) / (len(algs) * r["runs"]
                                                                         * len(res["message_sizes"]))
        load = "; ".join("-".join(f"{x:.1f}" for x in part["load"]) for part in r.get("parts") or [r]
                         if part.get("load")) or "?"
        out.append(f"| {r['n']} | {r['runs']} | " + " | ".join(cells) + f" | {per_sim:.1f} | {load} |")
    return "\n".join(out)


def simgrid_losses(res):
    """One line per topology-aware algorithm: the (n, size) where its mean time exceeds TREE's."""
    labels = {1024: "1 KiB", 1024 * 1024: "1 MiB"}
    out = []
    for a in [a for a in (res["rows"][0]["algorithms"] if res["rows"] else ()) if a != "tree"]:
        lost = [f"n={r['n']} {labels.get(m, f'{m} B')}" for r in res["rows"]
                for m, x in zip(res["message_sizes"], r["algorithms"][a]["ratio_to_tree"]) if x > 1]
        out.append(f"* {a.upper()} slower than TREE at: {', '.join(lost) if lost else 'none'}.")
    return "\n".join(out)


def simgrid_markdown(res):
    runs = sorted({r["runs"] for r in res["rows"]})
    if len(runs) == 1:
        which = f"{runs[0]} random allocations per size (seeds 0-{runs[0] - 1})"
    else:  # a size stopped by --simgrid-budget
        which = "random allocations per size as in the `runs` column (seeds 0, 1, ...)"
    return "\n".join([
        "# Dorier et al. broadcasts in SimGrid on dragonfly g=129 a=16 p=8 h=8 (16,512 terminals)", "",
        f"SimGrid {res['simgrid_version']} ({res['model']}), {res['bandwidth']} and {res['latency']} per link, "
        "messages routed along the dragonfly's minimal routes (`routing=\"minimal\"`: one global link between "
        f"groups); {which}, root rank 0. Mean simulated "
        "completion time in microseconds; in parentheses the ratio to TREE (below 1: faster). The last columns: "
        "wall seconds per simulation (one broadcast at one message size, set-up included) and the machine's "
        "1-minute load average before and after the size.", "",
        simgrid_table(res), "", simgrid_losses(res), "",
        f"{res['seconds']:.0f} s wall with {res['jobs']} simulation(s) at a time on {res['host']} "
        "(shared with other work: wall times are noisy)."
        + ("  Several load ranges in a row: the size was run in parts (`--simgrid-resume`), one range per part."
           if any(len(r.get("parts") or ()) > 1 for r in res["rows"]) else "")]
        + ([""] + [f"* `{c['command']}` ({c['started']} - {c['ended']})" for c in res["commands"]]
           if res.get("commands") else []))


def main_simgrid(args):
    from libtopomap.simulate import INSTALL_HINT, simgrid_available

    if not simgrid_available():
        print(INSTALL_HINT, file=sys.stderr)
        return 2
    sizes = [int(x) for x in args.simgrid_sizes.split(",") if x.strip()]
    out = args.out or os.path.join(os.path.dirname(__file__), "results", "dorier_simgrid.json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    t0 = time.perf_counter()
    meta = {"topology": {"g": G, "a": A, "p": P, "h": H}, "jobs": args.jobs, "python": sys.version.split()[0],
            "host": f"{platform.node()} ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)"}
    state = {}
    earlier, previous = {}, None
    if args.simgrid_resume and os.path.exists(out):
        with open(out) as f:
            earlier = json.load(f)
        previous = earlier.get("rows")
        if earlier.get("message_sizes", list(MESSAGE_SIZES)) != list(MESSAGE_SIZES) or \
                earlier.get("topology", meta["topology"]) != meta["topology"]:
            print(f"{out}: other message sizes or topology; cannot resume", file=sys.stderr)
            return 2
    command = {"command": "python " + " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:]),
               "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    commands = list(earlier.get("commands") or ())

    def save(rows):
        res = state.get("res") or {"message_sizes": list(MESSAGE_SIZES), "routing": "minimal", "bandwidth": "100Gbps",
                                   "latency": "100ns", "model": "CM02"}
        command["ended"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        res.update(meta, rows=rows, seconds=earlier.get("seconds", 0.0) + time.perf_counter() - t0,
                   commands=commands + [command])
        if "simgrid_version" not in res or res["simgrid_version"] is None:
            from libtopomap.simulate import simgrid_version

            res["simgrid_version"] = simgrid_version()
        text = simgrid_markdown(res)
        with open(out, "w") as f:
            json.dump(res, f, indent=1)
        with open(os.path.splitext(out)[0] + ".md", "w") as f:
            f.write(text + "\n")
        return text

    res = run_simgrid(dragonfly(G, A, P, H), sizes, args.simgrid_runs, jobs=args.jobs, budget=args.simgrid_budget,
                      on_row=save, previous=previous)
    state["res"] = res
    print(save(res["rows"]))
    return 0


def run_mpi(comm, topo, *, iterations=200, message_sizes=MESSAGE_SIZES, seed=0, algorithms=BCAST_ALGORITHMS):
    """Seconds per broadcast of ``ltm.bcast`` (each algorithm) and ``comm.Bcast`` on ``comm``: ``{"rows":
    [{"bytes", "variant", "seconds", "min", "max"}], ...}`` (the same on every rank)."""
    import libtopomap as ltm

    nodes = random_allocation(topo, comm.size, seed=seed)
    rows = []
    for nbytes in message_sizes:
        want = np.arange(nbytes, dtype=np.uint8)
        for variant in ("MPI_Bcast",) + tuple(algorithms):
            per_call = []
            for it in range(iterations + 1):
                buf = want.copy() if comm.rank == 0 else np.zeros(nbytes, np.uint8)
                comm.Barrier()
                t0 = time.perf_counter()
                if variant == "MPI_Bcast":
                    comm.Bcast(buf, root=0)
                else:
                    ltm.bcast(comm, buf, root=0, algorithm=variant, topology=topo, placement=nodes)
                el = comm.allreduce(time.perf_counter() - t0, op=_mpi_max())
                ok = comm.allreduce(int(np.array_equal(buf, want)), op=_mpi_min())
                if not ok:
                    raise SystemExit(f"{variant}: a rank received a wrong buffer ({nbytes} bytes)")
                if it:  # the first call warms up
                    per_call.append(el)
            a = np.asarray(per_call)
            rows.append({"bytes": nbytes, "variant": variant, "seconds": float(a.mean()),
                         "median": float(np.median(a)), "min": float(a.min()), "max": float(a.max())})
    return {"ranks": comm.size, "iterations": iterations, "placement": nodes.tolist(), "rows": rows}


def _mpi_max():
    from mpi4py import MPI

    return MPI.MAX


def _mpi_min():
    from mpi4py import MPI

    return MPI.MIN


def mpi_markdown(res, topo_label):
    labels = {1024: "1 KiB", 1024 * 1024: "1 MiB"}
    sizes = sorted({r["bytes"] for r in res["rows"]})
    variants = list(dict.fromkeys(r["variant"] for r in res["rows"]))
    get = {(r["bytes"], r["variant"]): r for r in res["rows"]}
    out = ["# ltm.bcast (Dorier et al.'s schedules) against comm.Bcast under mpiexec", "",
           f"{res['ranks']} ranks on {res['host']} ({res['mpi']}), placed on random terminals of {topo_label} "
           f"(`placement=`), root 0; {res['iterations']} calls per row after one warm-up; microseconds per call "
           "(the slowest rank's, median; mean [min-max]); in parentheses the ratio of the medians to "
           "`comm.Bcast`'s. Every call's buffer was checked on every rank. All ranks share one machine, so this is "
           "the cost of the schedules' "
           "point-to-point messages, not of the network's topology; the machine was shared with other work "
           f"(load {res['load'][0]:.1f}-{res['load'][1]:.1f}).", "",
           "| variant | " + " | ".join(labels.get(b, f"{b} B") for b in sizes) + " |",
           "|---|" + "---:|" * len(sizes)]
    for v in variants:
        cells = []
        for b in sizes:
            r, ref = get[b, v], get[b, "MPI_Bcast"]
            cells.append(f"{r['median'] * 1e6:.1f}; {r['seconds'] * 1e6:.1f} [{r['min'] * 1e6:.1f}-"
                         f"{r['max'] * 1e6:.1f}]"
                         + ("" if v == "MPI_Bcast" else f" ({r['median'] / ref['median']:.2f})"))
        out.append(f"| {v} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main_mpi(args):
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    g, a, p, h = (int(x) for x in args.mpi_topology.split(","))
    topo = dragonfly(g, a, p, h)
    load0 = os.getloadavg()[0]
    res = run_mpi(comm, topo, iterations=args.mpi_iterations)
    if comm.rank == 0:
        res.update(topology={"g": g, "a": a, "p": p, "h": h}, load=[load0, os.getloadavg()[0]],
                   mpi=MPI.Get_library_version().splitlines()[0].strip(),
                   host=f"{platform.node()} ({os.cpu_count()} cores)")
        text = mpi_markdown(res, f"the dragonfly g={g} a={a} p={p} h={h}")
        print(text)
        out = args.out or os.path.join(os.path.dirname(__file__), "results", "dorier_mpi.json")
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w") as f:
            json.dump(res, f, indent=1)
        with open(os.path.splitext(out)[0] + ".md", "w") as f:
            f.write(text + "\n")
    return 0


def table(rows):
    out = ["| n | groups | TREE global (E) | TREE local (E; paper) | LLF/GLF/FOREST global | "
           "LLF / GLF / FOREST local (max) | TREE | LLF | GLF | FOREST |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        al, e = r["algorithms"], r["expected_tree"]
        tree = al["tree"]
        aware = [al[a] for a in ("llf", "glf", "forest")]
        glob = aware[0]["global_mean"]
        ok = all(x["global_is_groups_minus_1"] for x in aware) and all(x["local_max"] <= r["bounds"]["bound_local"]
                                                                        for x in aware)
        ms = [f"{al[a]['makespan_mean']:.1f} [{al[a]['makespan_min']:.0f}-{al[a]['makespan_max']:.0f}]"
              for a in ("tree", "llf", "glf", "forest")]
        out.append(f"| {r['n']} | {al['tree']['groups_mean']:.1f} | {tree['global_mean']:.1f} ± "
                   f"{tree['global_sem']:.1f} ({e['global']:.1f}) | {tree['local_mean']:.1f} ± "
                   f"{tree['local_sem']:.1f} "
                   f"({e['local']:.1f}; {e['local_paper']:.1f}) | {glob:.1f} {'= groups-1' if ok else 'VIOLATED'} | "
                   + " / ".join(f"{x['local_mean']:.0f} ({x['local_max']})" for x in aware) + " | " + " | ".join(ms)
                   + " |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=20, help="random allocations per size (default 20)")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated allocation sizes")
    ap.add_argument("--out", help="JSON output (default benchmarks/results/dorier.json, or dorier_simgrid.json "
                                   "with --simgrid)")
    ap.add_argument("--simgrid", action="store_true", help="simulate the broadcasts with SimGrid (1 KiB, 1 MiB)")
    ap.add_argument("--simgrid-sizes", default=",".join(map(str, SIMGRID_SIZES)),
                    help="allocation sizes of --simgrid (default 64,512,4096)")
    ap.add_argument("--simgrid-runs", type=int, default=3, help="random allocations per size of --simgrid (default 3)")
    ap.add_argument("--simgrid-budget", type=float, default=None,
                    help="seconds per size of --simgrid after which no new allocation starts (default: none)")
    ap.add_argument("--simgrid-resume", action="store_true",
                    help="continue the results in --out: a size found there starts at its next seed, up to "
                         "--simgrid-runs allocations; its other sizes are kept")
    ap.add_argument("--jobs", type=int, default=1, help="SimGrid simulations at a time (default 1)")
    ap.add_argument("--mpi", action="store_true", help="under mpiexec: time ltm.bcast against comm.Bcast")
    ap.add_argument("--mpi-topology", default="9,4,2,2", help="g,a,p,h of the dragonfly of --mpi (default 9,4,2,2)")
    ap.add_argument("--mpi-iterations", type=int, default=200, help="calls per variant and size of --mpi")
    args = ap.parse_args()
    if args.mpi:
        return main_mpi(args)
    if args.simgrid:
        return main_simgrid(args)
    args.out = args.out or os.path.join(os.path.dirname(__file__), "results", "dorier.json")
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    t0 = time.perf_counter()
    rows = run(sizes, args.runs)
    md = ["# Dorier et al. broadcasts on dragonfly g=129 a=16 p=8 h=8 (16,512 terminals)", "",
          f"{args.runs} random allocations per size, root rank 0; link traversals under minimal routing "
          "(mean ± standard error; in parentheses the section III-E expectation, then the paper's printed "
          "formula); LLF/GLF/FOREST local: mean (max over runs), bound 2,191; makespans in the section IV-B "
          "model: mean [min-max].  Reference makespans at n = 10,240 (rough sketch): "
          + ", ".join(f"{k.upper()} {v}" for k, v in REFERENCE.items()) + ".", "", table(rows), "",
          f"{time.perf_counter() - t0:.0f} s on {platform.node()} ({platform.processor() or platform.machine()})."]
    text = "\n".join(md)
    print(text)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"topology": {"g": G, "a": A, "p": P, "h": H}, "reference_makespan_10240": REFERENCE,
                   "rows": rows, "seconds": time.perf_counter() - t0, "python": sys.version.split()[0]}, f, indent=1)
    with open(os.path.splitext(args.out)[0] + ".md", "w") as f:
        f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
