"""A/B of the race's tie-break on bench_smpi's 64-host instances: average congestion (before) vs phase time (now).

``python benchmarks/bench_smpi_tiebreak_ab.py NETWORK:ALLOC:APP ...`` (e.g. ``fattree:whole:halo "(2:1):whole:cg"``;
NETWORK a substring of a bench_smpi label, ALLOC whole or frag, APP halo or cg)

The race of ``map --strategy all`` (objective congestion, refinement ta, the platform's routing) runs twice with no
time budget (moves bound the refinements, so the winner does not depend on the machine's load, unlike bench_smpi's
2-second races): once with :func:`libtopomap.fluid.phase_time` replaced by a stub returning None (the score's second
entry is then the average congestion, as before the change) and once as is; each winner is simulated with SMPI.
Prints one line per instance: launcher time, then per variant the winner, its key, phase time and SMPI time (us).
"""
import math, os, sys, tempfile, numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_smpi as B
import libtopomap.fluid as F
from libtopomap.portfolio import STRATEGY_ORDER, MappingProblem, make_candidates, run_portfolio
from libtopomap.rankfiles import Allocation, allocation_topology
from libtopomap.smpi import build, datatype_sizes, read_ti_trace, run_once, write_platform
from libtopomap.vocabulary import STRATEGIES
want = sys.argv[1:]  # e.g. "torus:whole:halo"
tmp = tempfile.mkdtemp(prefix="ltm-bench-ab-"); proxies = os.path.join(tmp, "proxies")
exe = build(["halo", "cg"], outdir=proxies); dt = datatype_sizes(proxies)
orig = F.phase_time
for w in want:
    net, alloc_kind, app = w.rsplit(":", 2)
    label, family, make, routing = next(n for n in B.networks(64) if net in n[0])
    topo = make()
    rng = np.random.default_rng(12345 + 64)
    hv = [int(v) for v in topo.hosts]
    if family == "fabric":  # as bench_smpi: the fabric's first 64 hosts
        hv = hv[:64]
    if alloc_kind == "frag":
        hv = sorted(rng.choice(hv, size=len(hv) // 2, replace=False).tolist())
    alloc = Allocation(tuple(topo.names[v] for v in hv), tuple(1 for _ in hv))
    restricted, launch = allocation_topology(topo, alloc); launch = np.asarray(launch[:len(hv)], np.int64)
    info = write_platform(topo, os.path.join(tmp, "platform"), routing=routing, hosts=list(alloc.hosts), format="auto", outdir=proxies)
    args = B.app_args(app, len(hv))
    def sim(p, trace=None):
        hf = os.path.join(tmp, "hosts"); open(hf, "w").write("".join(f"{restricted.names[int(v)]}\n" for v in p))
        return run_once(exe[app], args, platform=info.path, hostfile=hf, nprocs=len(hv), trace=trace).time
    tr = os.path.join(tmp, "trace", "ti.txt"); os.makedirs(os.path.dirname(tr), exist_ok=True)
    tl = sim(launch, tr); g, _ = read_ti_trace(tr, len(hv), dt)
    out = [f"{label} {alloc_kind} {app}: launcher {tl*1e6:.1f}"]
    for name, fn in (("old", lambda *a, **k: None), ("new", orig)):
        F.phase_time = fn
        problem = MappingProblem(restricted, g, placement=launch, objective="congestion", routing=routing, total_budget=math.inf)
        cands = make_candidates([x for x in STRATEGY_ORDER if x in STRATEGIES], seed=0, refine="ta", starts=np.flatnonzero(problem.slots))
        res = run_portfolio(problem, cands)
        p = np.asarray(res.winner.payload, np.int64)
        F.phase_time = orig
        out.append(f"{name} {res.winner.label} key={tuple(round(x, 1) for x in res.winner.key)} phase={orig(restricted, g, p, routing=routing):.6g} smpi {sim(p)*1e6:.1f}")
    print(" | ".join(out), flush=True)
