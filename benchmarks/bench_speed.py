"""Time of small and medium jobs: ``libtopomap map --strategy all --refine ta`` at 512 to 4,224 processes,
and the MPI race at 1,728 processes under ``mpiexec -n 8`` (issues 19 and 11).

Usage::

    python benchmarks/bench_speed.py                       # serial instances + MPI, writes results/speed.{md,json}
    python benchmarks/bench_speed.py --repeat 3 --src /tmp/old-tree --src .  --out benchmarks/results/speed_s6
                                                           # before/after: each source tree's libtopomap in turn
    python benchmarks/bench_speed.py --only torus-12 --no-mpi

What is timed, for every instance (the topology is generated, written as JSON so that the command sees
the generator's structure, as a user's generated file would):

* ``serial``: the whole command ``libtopomap map --topology T.json --graph G --strategy all --refine ta
  --json --quiet`` as a child process (interpreter start and imports included): wall seconds and CPU
  seconds (user + system of the child), the winner, its maximum congestion and hop-bytes, and the
  seconds of every candidate as the command reports them (construction, scoring and refinement);
* ``mpi`` (``--mpi-ranks``, default 8, on the 12x12x12 torus): ``mpiexec -n N libtopomap map ...``
  (whole command, wall) and, in a separate ``mpiexec`` run of this script in worker mode, the race
  itself: from the call of :func:`libtopomap.mpi.driver.race` to its result, the slowest rank, plus
  the time each rank spent before it (interpreter start, imports, reading the inputs).

With several ``--src`` trees, the trees take turns within every repetition (``PYTHONPATH`` set to
each tree, so the same venv runs either version), so that before/after numbers share the machine's
conditions; the load average is recorded with every run.  Times on a shared 2-core machine are noisy:
compare only runs of the same table.  Results: a Markdown table and JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent

# name -> (generator call (libtopomap names), graph pattern, processes)
INSTANCES = {
    "torus-8": ("torus('8x8x8')", "torus-scrambled:8x8x8:0", 512),
    "torus-12": ("torus('12x12x12')", "torus-scrambled:12x12x12:0", 1728),
    "torus-16": ("torus('16x16x16')", "torus-scrambled:16x16x16:0", 4096),
    "fattree-8-4": ("fattree(8, 4)", "torus-scrambled:64x64:0", 4096),
    "dragonfly-544": ("dragonfly(17, 8, 4, 2)", "torus-scrambled:8x8x8:0", 512),
    "dragonfly-4224": ("dragonfly(33, 16, 8, 2)", "torus-scrambled:16x16x16:0", 4096),
}
MPI_INSTANCE = "torus-12"


def _load():
    return round(os.getloadavg()[0], 2)


# Runs libtopomap's CLI from the tree in $BENCH_SPEED_SRC (if set) even when another tree is installed
# in editable mode (its import hook would otherwise win over sys.path).
_BOOT = ("import os, sys\n"
         "src = os.environ.get('BENCH_SPEED_SRC')\n"
         "if src:\n"
         "    sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in getattr(f, '__module__', '')\n"
         "                        and '__editable__' not in repr(f)]\n"
         "    sys.path.insert(0, src)\n"
         "from libtopomap.cli import main\n"
         "sys.exit(main())\n")


def _boot_source():
    """In worker mode: the same switch of source tree as :data:`_BOOT`."""
    src = os.environ.get("BENCH_SPEED_SRC")
    if src:
        sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")
                            and "__editable__" not in repr(f)]
        sys.path.insert(0, src)


def _env(src):
    env = dict(os.environ)
    env.pop("BENCH_SPEED_SRC", None)
    if src is not None:
        env["BENCH_SPEED_SRC"] = str(pathlib.Path(src).resolve())
    for k in list(env):  # a plain process, not a rank of an outer mpiexec
        if k.startswith(("PMI_", "OMPI_", "PMIX_", "MPI_LOCAL", "HYDRA", "MPIR_")):
            del env[k]
    return env


def _write_topologies(where, names):
    code = "import sys, libtopomap as ltm\n" + "".join(
        f"ltm.save({str(where / (n + '.json'))!r}, ltm.{INSTANCES[n][0]})\n" for n in names)
    subprocess.run([sys.executable, "-c", code], check=True, env=_env(None))


def _child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_serial(src, topo_file, graph, timeout):
    """Wall and CPU seconds of one ``map --strategy all --refine ta`` command, and its records."""
    cmd = [sys.executable, "-c", _BOOT, "map", "--topology", str(topo_file), "--graph", graph,
           "--strategy", "all", "--refine", "ta", "--json", "--quiet"]
    load = _load()
    cpu0 = _child_cpu()
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=_env(src), timeout=timeout)
    wall = time.perf_counter() - t0
    cpu = _child_cpu() - cpu0
    if out.returncode != 0:
        return {"error": out.stderr[-2000:], "wall": wall, "cpu": cpu, "load": load}
    recs = json.loads(out.stdout)
    win = next(r for r in recs if r.get("chosen"))
    return {"wall": wall, "cpu": cpu, "load": load, "winner": win["strategy"], "congestion": win["congestion"],
            "hopbytes": win["hopbytes"],
            "candidates": {r["strategy"]: (round(r["seconds"], 3) if "seconds" in r else "skipped") for r in recs}}


def run_mpi(src, topo_file, graph, ranks, timeout):
    """Wall seconds of ``mpiexec -n ranks libtopomap map ...``, and of the race alone (worker mode)."""
    mpiexec = str(pathlib.Path(sys.executable).parent / "mpiexec")
    base = ["--topology", str(topo_file), "--graph", graph, "--strategy", "all", "--refine", "ta"]
    load = _load()
    t0 = time.perf_counter()
    out = subprocess.run([mpiexec, "-n", str(ranks), sys.executable, "-c", _BOOT, "map", *base, "--json",
                          "--quiet"], capture_output=True, text=True, env=_env(src), timeout=timeout)
    wall = time.perf_counter() - t0
    res = {"ranks": ranks, "command_wall": wall, "load": load}
    if out.returncode != 0:
        res["error"] = out.stderr[-2000:]
        return res
    win = next(r for r in json.loads(out.stdout) if r.get("chosen"))
    res.update(winner=win["strategy"], congestion=win["congestion"])
    env = _env(src)
    env["BENCH_SPEED_T0"] = repr(time.time())
    out = subprocess.run([mpiexec, "-n", str(ranks), sys.executable, str(pathlib.Path(__file__).resolve()),
                          "--race-worker", *base], capture_output=True, text=True, env=env, timeout=timeout)
    if out.returncode != 0:
        res["error"] = out.stderr[-2000:]
        return res
    res.update(json.loads(out.stdout.strip().splitlines()[-1]))
    return res


def race_worker(argv):
    """Under mpiexec: time the race itself on every rank (rank 0 prints one JSON line)."""
    t_start = time.time()
    _boot_source()
    import argparse as ap

    from mpi4py import MPI

    from libtopomap.cli import _map
    from libtopomap.mpi.driver import race
    from libtopomap.mpi.agreement import collective_call

    comm = MPI.COMM_WORLD
    p = ap.ArgumentParser()
    _map.add_parser(p.add_subparsers())
    args = p.parse_args(["map", *argv])
    topo, problem, cands, budget, _ = collective_call(comm, _map._prepare_job, args, what="reading the inputs")
    comm.Barrier()
    t0 = time.perf_counter()
    t_ready = time.time()
    result = race(comm, problem, lambda n: cands, max_memory=budget, what="mapping")
    race_s = time.perf_counter() - t0
    t0_launch = float(os.environ.get("BENCH_SPEED_T0", t_start))
    rows = comm.gather((race_s, t_start - t0_launch, t_ready - t0_launch), root=0)
    if comm.Get_rank() == 0:
        print(json.dumps({"race": max(r[0] for r in rows), "race_per_rank": [round(r[0], 3) for r in rows],
                          "interpreter_start": max(r[1] for r in rows), "ready_for_race": max(r[2] for r in rows),
                          "race_winner": result.winner.label}))


def markdown(results, args):
    lines = ["# Time of `map --strategy all --refine ta` (small and medium jobs) and of the MPI race", "",
             f"Machine: {os.cpu_count()} cores; load average (1 min) at the start of each run in the tables.  "
             "Times on a shared machine are noisy: compare rows of the same table (the source trees took "
             f"turns in every repetition; {args.repeat} repetition(s), each cell: min / median).", ""]
    srcs = list(results["serial"])
    lines += ["## Serial: whole command (interpreter start and imports included)", "",
              "| instance | P | source | wall s (min / median) | CPU s (min / median) | load | winner | max cong | "
              "hop-bytes |", "|---|---:|---|---:|---:|---:|---|---:|---:|"]

    def mm(xs):
        xs = sorted(xs)
        return f"{xs[0]:.2f} / {xs[len(xs) // 2]:.2f}" if xs else "-"
    for name in results["instances"]:
        for src in srcs:
            runs = [r for r in results["serial"][src].get(name, []) if "error" not in r]
            if not runs:
                lines.append(f"| {name} | {INSTANCES[name][2]} | {src} | error | | | | | |")
                continue
            last = runs[-1]
            lines.append(f"| {name} | {INSTANCES[name][2]:,} | {src} | {mm([r['wall'] for r in runs])} | "
                         f"{mm([r['cpu'] for r in runs])} | {mm([r['load'] for r in runs])} | {last['winner']} | "
                         f"{last['congestion']:.4g} | {last['hopbytes']:.6g} |")
    lines += ["", "Seconds per candidate (last repetition, as the command reports them):", ""]
    for name in results["instances"]:
        for src in srcs:
            runs = [r for r in results["serial"][src].get(name, []) if "error" not in r]
            if runs:
                cands = ", ".join(f"{k} {v}" for k, v in runs[-1]["candidates"].items())
                lines.append(f"- {name}, {src}: {cands}")
    if results.get("mpi"):
        lines += ["", f"## MPI: {MPI_INSTANCE} under mpiexec", "",
                  "| source | ranks | command wall s (min / median) | race s, slowest rank (min / median) | "
                  "ranks ready for the race after s | load | winner |", "|---|---:|---:|---:|---:|---:|---|"]
        for src, runs in results["mpi"].items():
            ok = [r for r in runs if "error" not in r and "race" in r]
            if not ok:
                lines.append(f"| {src} | | error | | | | |")
                continue
            lines.append(f"| {src} | {ok[-1]['ranks']} | {mm([r['command_wall'] for r in ok])} | "
                         f"{mm([r['race'] for r in ok])} | {mm([r['ready_for_race'] for r in ok])} | "
                         f"{mm([r['load'] for r in ok])} | {ok[-1]['winner']} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--race-worker":
        race_worker(argv[1:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", choices=list(INSTANCES), help="instances (default: all)")
    ap.add_argument("--src", action="append", help="source tree whose libtopomap to time (repeatable; default: "
                                                   "the installed one)")
    ap.add_argument("--repeat", type=int, default=1, help="repetitions (the trees take turns in each)")
    ap.add_argument("--mpi-ranks", type=int, default=8)
    ap.add_argument("--no-mpi", action="store_true", help="skip the mpiexec runs")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per command")
    ap.add_argument("--out", default=str(HERE / "results" / "speed"), help="output prefix (.md and .json)")
    args = ap.parse_args(argv)
    names = args.only or list(INSTANCES)
    srcs = args.src or [None]
    label = {s: ("installed" if s is None else s) for s in srcs}
    results = {"instances": names, "serial": {label[s]: {} for s in srcs}, "mpi": {}, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        where = pathlib.Path(tmp)
        need = set(names) | ({MPI_INSTANCE} if not args.no_mpi else set())
        _write_topologies(where, sorted(need))
        # one untimed run per tree and instance: numba's kernel cache is filled, not timed
        for s in srcs:
            for name in names:
                run_serial(s, where / f"{name}.json", INSTANCES[name][1], args.timeout)
        for rep in range(args.repeat):
            for name in names:
                for s in srcs:
                    r = run_serial(s, where / f"{name}.json", INSTANCES[name][1], args.timeout)
                    results["serial"][label[s]].setdefault(name, []).append(r)
                    print(f"[{rep}] {name:16s} {label[s]:24s} wall {r['wall']:6.2f} s cpu {r['cpu']:6.2f} s "
                          f"load {r['load']:5.2f} {r.get('winner', r.get('error', '')[:200])}", flush=True)
            if not args.no_mpi:
                for s in srcs:
                    r = run_mpi(s, where / f"{MPI_INSTANCE}.json", INSTANCES[MPI_INSTANCE][1], args.mpi_ranks,
                                args.timeout)
                    results["mpi"].setdefault(label[s], []).append(r)
                    print(f"[{rep}] mpi -n {args.mpi_ranks} {label[s]:24s} command {r['command_wall']:6.2f} s "
                          f"race {r.get('race', float('nan')):6.2f} s load {r['load']:5.2f} "
                          f"{r.get('winner', r.get('error', '')[:300])}", flush=True)
    md = markdown(results, args)
    print(md)
    print(json.dumps(results))
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".md").write_text(md)
    out.with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
