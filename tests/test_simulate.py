"""SimGrid simulation: platform, worker, closed-form checks, ECMP vs single path, errors."""

import numpy as np
import pytest

from libtopomap import Mapping, Topology, torus
from libtopomap.errors import CommGraphError, MappingError
from libtopomap.simulate import (INSTALL_HINT, SimGridUnavailable, SimulationError, build_platform, compare,
                                 message_steps, parse_bandwidth, parse_latency, parse_size, parse_sizes,
                                 simgrid_available, simulate)
import libtopomap.simulate as simmod

needs_simgrid = pytest.mark.skipif(
    not simgrid_available(),
    reason="SimGrid's Python bindings are not installed (apt-get install python3-simgrid; see "
           "libtopomap.simulate.INSTALL_HINT)")


def line(n, switch_at=()):
    """Vertices 0..n-1 in a row; the ones in ``switch_at`` are switches (routers)."""
    slots = [0 if i in switch_at else 2 for i in range(n)]
    return Topology([f"n{i}" for i in range(n)], [(i, i + 1) for i in range(n - 1)], slots=slots)


def ring(n):
    return Topology([f"n{i}" for i in range(n)], [(i, (i + 1) % n) for i in range(n)])


# ------------------------------------------------------------------------------------------- no SimGrid
def test_units():
    assert parse_size("1K") == 1024 and parse_size("64KiB") == 65536 and parse_size("1MB") == 1 << 20
    assert parse_sizes("1K, 64K,1M") == [1024, 65536, 1 << 20]
    assert parse_bandwidth("100Gbps") == 12.5e9 and parse_bandwidth("2GBps") == 2e9
    assert parse_bandwidth("8 b/s") == 1.0
    assert parse_latency("100ns") == pytest.approx(1e-7) and parse_latency("1.5us") == pytest.approx(1.5e-6)
    for bad, fn in [("1X", parse_size), ("-1", parse_size), ("fast", parse_bandwidth), ("0bps", parse_bandwidth),
                    ("1 hour", parse_latency)]:
        with pytest.raises(ValueError):
            fn(bad)


def test_message_steps_sizes():
    # Bruck alltoall on 8 ranks moves 4 blocks per message in each of its 3 steps.
    steps = message_steps("alltoall", 8, 10)
    assert [len(s) for s in steps] == [8, 8, 8]
    assert all(np.all(s[:, 2] == 40) for s in steps)
    # On 6 ranks: blocks with bit k set among 0..5 -> 3, 2, 2.
    assert [int(s[0, 2]) for s in message_steps("alltoall", 6, 1)] == [3, 2, 2]
    assert all(np.all(s[:, 2] == 7) for s in message_steps("allreduce", 8, 7))
    # A halo graph: the heaviest edge carries `size`, others in proportion.
    halo = message_steps([(0, 1, 4.0), (1, 0, 2.0), (2, 3, 1.0)], 4, 1000)
    assert len(halo) == 1 and sorted(halo[0][:, 2].tolist()) == [250, 500, 1000]
    # A schedule with a multiplier column.
    sched = message_steps([np.array([[0, 1, 3], [1, 0, 1]])], 2, 5)
    assert sched[0].tolist() == [[0, 1, 15], [1, 0, 5]]
    with pytest.raises(CommGraphError):
        message_steps([np.array([[0, 9]])], 4, 1)
    with pytest.raises(CommGraphError):
        message_steps([(0, 1), (1, 2)], 2, 1)  # a 3-process graph for 2 ranks


def test_platform_routes_are_shortest_and_directed():
    t = ring(6)
    p = build_platform(t, bandwidth="8bps", latency=0, routing="explicit")
    assert np.allclose(p.bandwidth, 1.0)
    (s, d, path), = p.routes([0], [3])
    assert (s, d) == (0, 3) and len(path) == 3
    # consecutive arcs chain from 0 to 3
    pos = 0
    for k in path:
        j = abs(k) - 1
        u, v = (int(t.link_u[j]), int(t.link_v[j]))
        a, b = (u, v) if k > 0 else (v, u)
        assert a == pos
        pos = b
    assert pos == 3
    with pytest.raises(ValueError):
        build_platform(t, routing="magic")


def test_missing_simgrid_gives_install_hint(monkeypatch):
    monkeypatch.setitem(simmod._SIMGRID, "version", None)
    with pytest.raises(SimGridUnavailable) as e:
        simulate(ring(4), "allreduce", [0, 1, 2, 3], sizes=[8])
    assert "apt-get install" in str(e.value) and "python3-simgrid" in INSTALL_HINT


# ------------------------------------------------------------------------------------------- SimGrid
@needs_simgrid
@pytest.mark.parametrize("routing", ["explicit", "dijkstra", "floyd"])
def test_one_flow_on_a_line_is_latency_plus_size_over_bandwidth(routing):
    # 5 vertices, the middle one a switch: 4 links of 1e9 B/s and 1 us each.
    t = line(5, switch_at=(2,))
    size = 1_000_000
    r = simulate(t, [np.array([[0, 1]])], [0, 4], sizes=[size], bandwidth=1e9, latency=1e-6, routing=routing)
    assert r.times[0] == pytest.approx(4 * 1e-6 + size / 1e9, rel=1e-9)
    assert r.avg_hops == 4.0
    # a link of capacity 2 is twice as fast; the bottleneck decides
    t2 = Topology(t.names, np.stack([t.link_u, t.link_v], 1), capacities=[2, 2, 2, 2], slots=t.slots)
    r2 = simulate(t2, [np.array([[0, 1]])], [0, 4], sizes=[size], bandwidth=1e9, latency=1e-6, routing=routing)
    assert r2.times[0] == pytest.approx(4 * 1e-6 + size / 2e9, rel=1e-9)


@needs_simgrid
def test_two_flows_sharing_a_link_take_twice_as_long_and_duplex_does_not_share():
    t = line(3)
    size = 4_000_000
    one = simulate(t, [np.array([[0, 2]])], [0, 1, 2], sizes=[size], bandwidth=1e9, latency=0)
    # ranks 0 and 1 on vertices 0 and 1 both send to rank 2 on vertex 2: link 1-2 carries both
    two = simulate(t, [np.array([[0, 2], [1, 2]])], [0, 1, 2], sizes=[size], bandwidth=1e9, latency=0)
    assert one.times[0] == pytest.approx(size / 1e9, rel=1e-9)
    assert two.times[0] == pytest.approx(2 * one.times[0], rel=1e-9)
    assert two.max_link_load == 2.0 and two.max_congestion == 2.0
    # opposite directions of a full-duplex link do not share bandwidth
    duplex = simulate(t, [np.array([[0, 2], [2, 0]])], [0, 1, 2], sizes=[size], bandwidth=1e9, latency=0)
    assert duplex.times[0] == pytest.approx(one.times[0], rel=1e-9)
    assert duplex.max_link_load == 1.0


@needs_simgrid
def test_steps_repeat_and_colocated_ranks():
    t = line(3)
    size = 1_000_000
    sched = [np.array([[0, 1]]), np.array([[1, 0]])]
    r = simulate(t, sched, [0, 2], sizes=[size], bandwidth=1e9, latency=1e-6, repeat=3)
    per_step = 2e-6 + size / 1e9
    assert r.times[0] == pytest.approx(6 * per_step, rel=1e-9)
    assert np.allclose(np.diff([0.0] + r.step_times[0]), per_step, rtol=1e-9)
    # two ranks on one vertex exchange over the loopback, not over the links
    loop = simulate(t, sched, [1, 1], sizes=[size], bandwidth=1e9, latency=1e-6, loopback_bandwidth=1e10)
    assert loop.times[0] == pytest.approx(2 * size / 1e10, rel=1e-6)
    assert loop.max_link_load == 0.0


@needs_simgrid
def test_ring_allgather_bad_mapping_is_slower_than_identity():
    n = 16
    t = ring(n)
    ident = np.arange(n)
    bad = (np.arange(n) * 5) % n  # neighbours in the ring of ranks land 5 hops apart
    # our own ring schedule (rank i -> i+1, n-1 steps) and the library's
    own = [np.stack([np.arange(n), (np.arange(n) + 1) % n], 1)] * (n - 1)
    for comm in (own, "allgather"):
        c = compare(t, comm, Mapping(t, bad), ident, sizes=[64 * 1024], bandwidth="100Gbps", latency="100ns")
        assert c["mapped"].times[0] < c["original"].times[0]
        assert c["speedup"][0] == pytest.approx(c["original"].times[0] / c["mapped"].times[0])
        assert c["speedup"][0] > 2.0
        assert c["mapped"].avg_hops == 1.0 and c["original"].avg_hops == 5.0
        # identity: each arc i -> i+1 carries one message per step
        assert c["mapped"].max_link_load == n - 1


@needs_simgrid
def test_single_path_vs_ecmp_congestion_side_by_side():
    # 0 -> 2 on a 4-ring has two shortest paths: ECMP puts half on each, SimGrid uses one.
    t = ring(4)
    r = simulate(t, [np.array([[0, 1]])], [0, 2], sizes=[1000], bandwidth=1e9, latency=0)
    assert r.max_congestion == pytest.approx(0.5)
    assert r.max_link_load == pytest.approx(1.0)
    assert np.count_nonzero(r.link_load) == 2 and np.count_nonzero(r.ecmp_load) == 4
    assert r.link_load.sum() == pytest.approx(r.ecmp_load.sum())


@needs_simgrid
def test_halo_exchange_on_a_torus_matches_hand_calculation():
    # 4x4 torus, 4-point stencil on a 4x4 periodic grid of ranks placed identically: every message
    # is one hop and every arc carries exactly one message, so the step takes latency + size/bw.
    t = torus("4x4")
    idx = np.arange(16).reshape(4, 4)
    edges = []
    for ax in (0, 1):
        for sh in (1, -1):
            edges += list(zip(idx.ravel(), np.roll(idx, sh, axis=ax).ravel()))
    size = 1 << 20
    c = compare(t, edges, np.random.default_rng(3).permutation(16), np.arange(16), sizes=[size],
                bandwidth="100Gbps", latency="100ns")
    assert c["mapped"].times[0] == pytest.approx(1e-7 + size / 12.5e9, rel=1e-9)
    assert c["mapped"].max_link_load == 1.0 and c["mapped"].max_congestion == 1.0
    assert c["original"].times[0] > c["mapped"].times[0]
    assert c["original"].to_dict()["sizes"] == [size]


@needs_simgrid
def test_errors_are_reported():
    t = ring(4)
    with pytest.raises(MappingError):
        simulate(t, "allreduce", [0, 0, 1, 2], sizes=[8])  # vertex 0 has one slot
    with pytest.raises(SimulationError):
        simulate(t, "allreduce", [0, 1, 2, 3], sizes=[8], model="NoSuchModel")


# ------------------------------------------------------------------------------------------- CLI
def _cli(argv):
    from libtopomap.cli import main

    return main(argv)


def test_cli_without_simgrid_says_how_to_install(tmp_path, monkeypatch, capsys):
    from libtopomap import save

    topo = tmp_path / "ring.json"
    save(str(topo), ring(8))
    monkeypatch.setitem(simmod._SIMGRID, "version", None)
    assert _cli(["simulate", "--topology", str(topo), "--collective", "allreduce", "--procs", "4"]) == 1
    err = capsys.readouterr().err
    assert "apt-get install -y python3-simgrid" in err and "simgrid-debian.pth" in err


@needs_simgrid
def test_cli_simulate_json_and_text(tmp_path, capsys):
    import json

    from libtopomap import save

    topo = tmp_path / "ring.json"
    save(str(topo), ring(8))
    # mapped placement from a file in 'process vertex' lines: the identity ring order
    mfile = tmp_path / "m.txt"
    mfile.write_text("".join(f"{p} n{p}\n" for p in range(8)))
    # original: every rank 3 ring positions from its ring neighbour
    ofile = tmp_path / "o.json"
    ofile.write_text(json.dumps([f"n{(3 * p) % 8}" for p in range(8)]))
    argv = ["simulate", "--topology", str(topo), "--collective", "allgather", "--procs", "8",
            "--placement", str(ofile), "--mapping", str(mfile), "--sizes", "1K,64K", "--bandwidth", "8Gbps",
            "--latency", "1us"]
    assert _cli(argv + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sizes"] == [1024, 65536] and out["bandwidth_Bps"] == 1e9 and out["latency_s"] == 1e-6
    # identity ring: 7 steps of one hop, one message per arc -> 7 * (1 us + size / 1 GB/s)
    for s, t in zip(out["sizes"], out["mapped"]["times"]):
        assert t == pytest.approx(7 * (1e-6 + s / 1e9), rel=1e-9)
    assert all(x > 1.5 for x in out["speedup"])
    assert out["mapped"]["avg_hops"] == 1.0 and out["original"]["avg_hops"] == 3.0
    assert _cli(argv + ["--plot", str(tmp_path / "times")]) == 0
    text = capsys.readouterr().out
    assert "speed-up" in text and "ECMP" in text and "64 KiB" in text
    assert (tmp_path / "times.png").stat().st_size > 10_000 and (tmp_path / "times.svg").exists()
    # bad option values: one line per error, usage errors exit 2
    assert _cli(["simulate", "--topology", str(topo), "--collective", "allgather"]) == 2
    assert "needs --procs" in capsys.readouterr().err
    assert _cli(argv[:-6] + ["--sizes", "big"]) == 2
    assert "bad message size" in capsys.readouterr().err
