"""The race's tie-break under single-path routings: :func:`libtopomap.fluid.phase_time` (CM02 fluid sharing).

Exact values on a 4-host fat tree worked by hand, the race's key (the current placement wins ties of objective and
phase time), and on a 16-host fat tree under ``dmodk`` two placements that tie on maximum congestion which the
phase time orders as SMPI's deterministic simulated time does (hop-bytes orders them the other way).
"""

import shutil

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.commgraph import CommGraph
from libtopomap.errors import TopologyError
from libtopomap.fluid import demand_routes, phase_time
from libtopomap.portfolio import MappingProblem, make_candidates, run_portfolio, selection_key


def _tiny():
    """fattree(2, 2) (hosts n0 n1 under one leaf, n2 n3 under the other) and 4 unit messages among 3 processes:
    0 -> 1 and 1 -> 0 inside a leaf when 0, 1 sit on n0, n1; 2 -> 1 and 2 -> 0 cross the spines."""
    t = ltm.fattree(2, 2)
    ix = {n: i for i, n in enumerate(t.names)}
    g = CommGraph(3, [0, 2, 2, 1], [1, 1, 0, 0], [1.0] * 4)
    near = np.array([ix["n0"], ix["n1"], ix["n2"]])  # hop-bytes 2 + 4 + 4 + 2 = 12
    far = np.array([ix["n0"], ix["n2"], ix["n1"]])   # hop-bytes 4 + 4 + 2 + 4 = 14
    return t, g, near, far


def test_phase_time_by_hand():
    # near: the 2-hop flows 0->1 and 1->0 take 2/3 of the links into n1 and n0, so both flows of n2's uplink
    # (4 hops) run at 1/3 and that link idles a third of the time: at t = 1.5 the short flows are done and
    # each long one has 1/2 left, at rate 1/2 on the shared uplink -> 2.5.  far: 2.0, the maximum congestion.
    t, g, near, far = _tiny()
    for p in (near, far):
        assert ltm.evaluate(t, g, p, routing="dmodk")["max_congestion"] == 2.0
    assert phase_time(t, g, near, routing="dmodk") == pytest.approx(2.5, rel=1e-12)
    assert phase_time(t, g, far, routing="dmodk") == pytest.approx(2.0, rel=1e-12)
    # the work bound: no round played, everything drains at link capacity (the maximum congestion)
    assert phase_time(t, g, near, routing="dmodk", work=0) == 2.0
    assert phase_time(t, g, near, routing="ecmp") is None


def test_demand_routes_follow_dmodk():
    t, _, _, _ = _tiny()
    ix = {n: i for i, n in enumerate(t.names)}
    ptr, arcs = demand_routes(t, [ix["n0"], ix["n1"]], [ix["n2"], ix["n1"]], routing="dmodk")
    assert ptr.tolist() == [0, 4, 4]
    hops = [(t.names[t.arc_source[a]], t.names[t.indices[a]]) for a in arcs]
    assert hops == [("n0", "sw-l1-0"), ("sw-l1-0", "sw-l0-0"), ("sw-l0-0", "sw-l1-1"), ("sw-l1-1", "n2")]
    with pytest.raises(TopologyError, match="several paths"):
        demand_routes(t, [0], [1], routing="ecmp")


def test_race_key_breaks_ties_by_phase_time():
    t, g, near, far = _tiny()
    problem = MappingProblem(t, g, placement=near, routing="dmodk")
    k_near, m_near = problem.score(near)
    k_far, _ = problem.score(far)
    assert k_near == (2.0, 2.5, 12.0) and k_far == (2.0, 2.0, 14.0) and m_near["phase_time"] == 2.5
    # the current placement wins full ties only: here the far placement is better where it matters
    assert selection_key(k_far, "greedy", 1) < selection_key(k_near, "current", 0)
    # under ECMP (multipath) the tie-break stays the average congestion (sum of loads over the 16 arcs)
    e_near, m = MappingProblem(t, g, placement=near, routing="ecmp").score(near)
    assert e_near == (2.0, 12.0 / 16, 12.0) and m["phase_time"] is None


def test_race_keeps_the_current_placement_on_ties_of_objective_and_phase_time():
    # a 4-host ring, one unit message each way: at distance 2 (current) or 1 (greedy, rcm) every link carries one
    # message and each flow is alone on its links, so max congestion and phase time are 1 for both; hop-bytes (4 vs
    # 2) no longer moves ranks (SMPI's 2:1 tree CG: such a winner was 0.8% slower, benchmarks/results/smpi_ties.md)
    t = ltm.torus("4")
    g = CommGraph(2, [0, 1], [1, 0], [1.0, 1.0])
    problem = MappingProblem(t, g, placement=[0, 2], routing="dimension-order")
    res = run_portfolio(problem, make_candidates(["greedy", "rcm"], seed=0))
    assert [o.key for o in res.outcomes] == [(1.0, 1.0, 4.0), (1.0, 1.0, 2.0), (1.0, 1.0, 2.0)]
    assert res.winner.candidate.baseline and not res.improved
    # without the current placement, hop-bytes still orders the others
    assert selection_key((1.0, 1.0, 2.0), "rcm", 2) < selection_key((1.0, 1.0, 4.0), "greedy", 1)


def _halo16():
    """The 2-D halo proxy's graph on 16 ranks (4 x 4 periodic, 64 KiB to each of 4 neighbours)."""
    src, dst = [], []
    for r in range(16):
        i, j = divmod(r, 4)
        for di, dj in ((0, 1), (0, -1), (1, 0), (-1, 0)):
            src.append(r)
            dst.append(((i + di) % 4) * 4 + (j + dj) % 4)
    return CommGraph(16, src, dst, [65536.0] * len(src))


# two placements of the halo on fattree(4, 2) with the same maximum congestion under dmodk (4 messages)
FASTER = ["n12", "n1", "n15", "n10", "n9", "n8", "n2", "n3", "n0", "n13", "n11", "n14", "n5", "n4", "n7", "n6"]
SLOWER = ["n2", "n7", "n11", "n14", "n0", "n8", "n6", "n1", "n9", "n5", "n4", "n13", "n15", "n3", "n10", "n12"]


def test_phase_time_orders_tied_placements():
    t, g = ltm.fattree(4, 2), _halo16()
    ix = {n: i for i, n in enumerate(t.names)}
    fast, slow = np.array([ix[h] for h in FASTER]), np.array([ix[h] for h in SLOWER])
    ef, es = ltm.evaluate(t, g, fast, routing="dmodk"), ltm.evaluate(t, g, slow, routing="dmodk")
    assert ef["max_congestion"] == es["max_congestion"] == 4 * 65536
    assert ef["hop_bytes"] > es["hop_bytes"]  # hop-bytes (the old tie-break) prefers the slower one
    assert phase_time(t, g, fast, routing="dmodk") == pytest.approx(65536 * 103 / 24, rel=1e-12)
    assert phase_time(t, g, slow, routing="dmodk") == pytest.approx(65536 * 71 / 14, rel=1e-12)
    assert phase_time(t, g, np.array([ix[f"n{i}"] for i in range(16)]), routing="dmodk") == 4 * 65536


@pytest.mark.skipif(shutil.which("smpirun") is None or shutil.which("smpicc") is None,
                    reason="SimGrid's SMPI (smpicc, smpirun) is not installed: apt-get install libsimgrid-dev")
def test_smpi_agrees_with_phase_time(tmp_path):
    from libtopomap.smpi import build, run_once, write_platform

    t = ltm.fattree(4, 2)
    exe = build(["halo"], outdir=str(tmp_path / "bin"))["halo"]
    info = write_platform(t, str(tmp_path / "tree.xml"), routing="dmodk")
    times = []
    for hosts in (FASTER, SLOWER):
        hf = tmp_path / "hosts"
        hf.write_text("".join(f"{h}\n" for h in hosts))
        # one exchange of the 2-D halo, no Allreduce: SimGrid 3.32, CM02, 100 Gb/s and 100 ns per link
        times.append(run_once(exe, ["2", "65536", "1", "0"], platform=info.path, hostfile=str(hf), nprocs=16).time)
    assert times[0] == pytest.approx(2.286169e-05, rel=1e-6)
    assert times[1] == pytest.approx(2.682091e-05, rel=1e-6)
