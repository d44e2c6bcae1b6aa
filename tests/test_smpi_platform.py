"""libtopomap.smpi.platform: every host pair's route in SimGrid equals the routing model's path.

SimGrid loads each exported platform in a subprocess (its engine is once per process) and lists
``Host.route_to`` for every ordered pair; the model's path of each pair comes from
:func:`libtopomap.routing.route_traffic` called for that pair alone (the exporter reads one call per
destination), walked from the source (``check_routes`` of ``tests/_helpers.py``).  Links compare as (from
vertex, to vertex) arcs, so a route that takes the right link the wrong way fails.
"""

import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.smpi import nexthops
from libtopomap.errors import ArgumentError, TopologyError
from libtopomap.smpi import platform, write_platform
from libtopomap.smpi.platform import DEFAULT_MAX_ROUTES

from _helpers import FABRIC, FABRICS, check_routes, needs_simgrid, simgrid_routes


needs_gxx = pytest.mark.skipif(shutil.which("g++") is None or not os.path.exists("/usr/include/simgrid/s4u.hpp"),
                               reason="the platform library needs g++ and SimGrid's headers (apt-get install g++ "
                                      "libsimgrid-dev)")


# ---------------------------------------------------------------------------------------------- route equality
@needs_simgrid
@pytest.mark.parametrize("dims, kind", [("3x5", "TORUS"), ("5x3x3", "TORUS"), ("3x2x5", "TORUS"),
                                        ("4x4", "Full"), ("6x3", "Full"), ("4x2x3", "Full")])
def test_torus_dimension_order(dims, kind, tmp_path):
    check_routes(ltm.torus(dims), "dimension-order", tmp_path, zone_kind=kind)


@needs_simgrid
@pytest.mark.parametrize("dims, kind", [("3x5", "TORUS"), ("4x4", "Full")])
def test_torus_read_from_ltm_exports_as_generated(dims, kind, tmp_path):
    """A torus saved as .ltm keeps its generator and dims: read back, it exports the same platform as the
    generated torus (the TORUS zone where that routes as dimension-order), not next-hop tables."""
    made = ltm.torus(dims)
    ltm.save(tmp_path / "t.ltm", made)
    read = ltm.load(tmp_path / "t.ltm")
    check_routes(read, "dimension-order", tmp_path, zone_kind=kind)
    a, b = write_platform(made, tmp_path / "made.xml"), write_platform(read, tmp_path / "read.xml")  # default routing
    assert (a.zone, a.routing, a.hostnames) == (b.zone, b.routing, b.hostnames) == (kind, "dimension-order",
                                                                                    a.hostnames)
    assert (tmp_path / "made.xml").read_text() == (tmp_path / "read.xml").read_text()


@needs_simgrid
def test_torus_explicit_routes_on_an_odd_torus(tmp_path):
    check_routes(ltm.torus("3x5"), "dimension-order", tmp_path, zone_kind="Full", zone="full")


@needs_simgrid
def test_hypercube_ecube_is_a_torus_zone(tmp_path):
    check_routes(ltm.hypercube(4), "dimension-order", tmp_path, zone_kind="TORUS")


@needs_simgrid
def test_mesh_dimension_order(tmp_path):
    check_routes(ltm.mesh("4x3"), "dimension-order", tmp_path, zone_kind="Full")


@needs_simgrid
def test_fat_tree_table(tmp_path):
    check_routes(ltm.fattree(4, 3), "table", tmp_path, zone_kind="Full", bandwidth="25Gbps", latency="1us")


@needs_simgrid
def test_dragonfly_minimal(tmp_path):
    check_routes(ltm.dragonfly(5, 4, 2, 1), "minimal", tmp_path, zone_kind="Full")


@needs_simgrid
def test_rt_twisted_torus(tmp_path):
    check_routes(ltm.rt(3), "rt", tmp_path, zone_kind="Full")


@needs_simgrid
def test_ingested_fabric_table(tmp_path):
    topo = ltm.load(FABRIC)
    assert len(set(topo.capacity.tolist())) >= 1
    check_routes(topo, "table", tmp_path, zone_kind="Full")


@needs_simgrid
def test_allocation_restricts_routes(tmp_path):
    topo = ltm.load(FABRIC)
    rng = np.random.default_rng(3)
    hosts = [topo.names[v] for v in rng.choice(topo.hosts, 20, replace=False)]
    info = check_routes(topo, "table", tmp_path, zone_kind="Full", hosts=hosts)
    assert info.hostnames == tuple(hosts) and info.routes == 20 * 19


# ---------------------------------------------------------------------------------------------- the XML itself
def test_torus_zone_parameters():
    xml = platform(ltm.torus("3x5"), routing="dimension-order", latency="2us", bandwidth="1GBps")
    m = re.search(r'<cluster [^>]*radical="([^"]+)"[^>]*topology="TORUS" topo_parameters="3,5"', xml)
    assert m, xml
    # position p = c0 + 3 c1 holds the vertex of coordinates (c0, c1), C-order index 5 c0 + c1
    assert m.group(1) == "0,5,10,1,6,11,2,7,12,3,8,13,4,9,14"
    assert 'bw="1000000000.0Bps"' in xml and 'lat="2e-06s"' in xml and 'sharing_policy="SPLITDUPLEX"' in xml


def test_full_zone_directions_and_cores():
    topo = ltm.Topology(["a", "b", "s"], [(0, 2), (1, 2)], slots=[2, 3, 0])
    xml = platform(topo, routing="table")
    assert '<host id="a" speed="100Gf" core="2"/>' in xml and '<host id="b" speed="100Gf" core="3"/>' in xml
    assert ('<route src="a" dst="b" symmetrical="NO"><link_ctn id="l0" direction="UP"/>'
            '<link_ctn id="l1" direction="DOWN"/></route>') in xml
    assert ('<route src="b" dst="a" symmetrical="NO"><link_ctn id="l1" direction="UP"/>'
            '<link_ctn id="l0" direction="DOWN"/></route>') in xml
    shared = platform(topo, routing="table", sharing="SHARED")
    assert '<link_ctn id="l0"/><link_ctn id="l1"/>' in shared and "direction" not in shared


def test_default_routing_and_native():
    info_xml = platform(ltm.torus("3x3"))            # native ecmp -> dimension-order on a grid
    assert "routing dimension-order" in info_xml
    assert "routing dmodk" in platform(ltm.fattree(4, 2))     # d-mod-k, as OpenSM ftree and SimGrid FAT_TREE
    assert "routing table" in platform(ltm.circulant(8, [1, 2]))
    assert "routing minimal" in platform(ltm.dragonfly(3, 2, 1, 1), routing="native")


def test_write_platform_info(tmp_path):
    topo = ltm.fattree(4, 2)
    info = write_platform(topo, tmp_path / "f.xml", routing="table")
    assert info.routes == 16 * 15 and info.zone == "Full" and info.routing == "table"
    assert info.bytes == os.path.getsize(tmp_path / "f.xml") and info.seconds > 0
    assert info.hostnames == tuple(topo.names[v] for v in topo.hosts)
    assert (tmp_path / "f.xml").read_text() == platform(topo, routing="table")


def test_per_pair_fallback_gives_the_same_routes(monkeypatch):
    """A model that is single-path but not destination-based is read one pair at a time."""
    topo = ltm.dragonfly(4, 3, 2, 1)
    fast = platform(topo, routing="minimal")
    monkeypatch.setattr(nexthops, "next_arcs", lambda topology, flow: None)
    assert platform(topo, routing="minimal") == fast


def test_a_model_that_splits_a_pair_is_refused(monkeypatch):
    """A model under a single-path name that splits flows (here ECMP's) is refused, naming the pair."""
    import libtopomap.routing as routing

    real = routing.route_traffic
    monkeypatch.setattr(routing, "route_traffic", lambda t, s, d, w=None, *, routing=None: real(t, s, d, w,
                                                                                               routing="ecmp"))
    with pytest.raises(ArgumentError) as e:
        platform(ltm.fattree(4, 2), routing="table")
    assert "\n" not in str(e.value) and "splits the messages of n4 -> n0 over several paths" in str(e.value)


# ---------------------------------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("routing", ["ecmp", "oblivious", "valiant"])
def test_multipath_routing_is_refused(routing):
    with pytest.raises(ArgumentError) as e:
        platform(ltm.dragonfly(3, 2, 1, 1), routing=routing)
    msg = str(e.value)
    assert "\n" not in msg and "one path per pair" in msg and "dimension-order" in msg and "minimal" in msg


def test_bad_inputs_are_one_line():
    topo = ltm.fattree(4, 2)
    cases = [(ArgumentError, dict(routing="bogus")), (TopologyError, dict(routing="dimension-order")),
             (ArgumentError, dict(routing="table", sharing="FULL")), (ArgumentError, dict(routing="table", speed="x")),
             (ArgumentError, dict(routing="table", bandwidth="fast")), (ArgumentError, dict(routing="table", zone="x")),
             (ArgumentError, dict(routing="table", hosts=[])), (TopologyError, dict(routing="table", hosts=["nope"])),
             (ArgumentError, dict(routing="table", hosts=["n0", "n0"])),
             (ArgumentError, dict(routing="table", hosts=[topo.names[-1]])),       # a switch
             (ArgumentError, dict(routing="table", zone="cluster"))]
    for exc, kw in cases:
        with pytest.raises(exc) as e:
            platform(topo, **kw)
        assert "\n" not in str(e.value), kw
    with pytest.raises(ArgumentError, match="even length 4"):
        platform(ltm.torus("4x3"), routing="dimension-order", zone="cluster")


def test_route_limit_is_checked_before_building():
    topo = ltm.torus("64x64")                       # even rings: explicit routes, 4,096 x 4,095 of them
    t0 = time.perf_counter()
    with pytest.raises(ArgumentError) as e:
        platform(topo, routing="dimension-order")
    assert time.perf_counter() - t0 < 5
    msg = str(e.value)
    assert "\n" not in msg and "16,773,120 routes" in msg and f"{DEFAULT_MAX_ROUTES:,}" in msg
    with pytest.raises(ArgumentError, match="limit of 100"):
        platform(ltm.fattree(4, 2), routing="table", max_routes=100)
    assert platform(ltm.fattree(4, 2), routing="table", max_routes=240)


# ---------------------------------------------------------------------------------------------- link rates
AVAKAS = os.path.join(os.path.dirname(FABRIC), "open-mpi__hwloc__avakas-ib-subnet-fe80.txt")
_LANE_GBPS = {"SDR": 2.5, "DDR": 5.0, "QDR": 10.0, "FDR10": 10.0, "FDR": 14.0, "EDR": 25.0, "HDR": 50.0, "NDR": 100.0}
_PORT = re.compile(r"(CA|SW)\s+\d+\s+(\d+)\s+0x([0-9a-f]{16})\s+(\d+)x\s+(\w+)\s+-\s+(CA|SW)\s+\d+\s+(\d+)\s+"
                   r"0x([0-9a-f]{16})\s+\(\s+'(.*)'\s+-\s+'(.*)'\s+\)\s*")


def _dump_rates(path):
    """``{(name, name): Gb/s}`` of the cables of an ``ibnetdiscover -p`` report, read here without the adapter:
    a CA is named by the first word of its description (``node179 HCA-1``), a switch ``S-`` + its port-0
    GUID; each cable (listed from both ends) counted once, parallel cables between two vertices summed."""
    cables = {}
    for line in open(path):
        m = _PORT.fullmatch(line.rstrip("\n"))
        if m is None:
            continue
        kind, port, guid, lanes, speed, rkind, rport, rguid, desc, rdesc = m.groups()
        a = desc.split()[0] if kind == "CA" else f"S-{guid}"
        b = rdesc.split()[0] if rkind == "CA" else f"S-{rguid}"
        cables[frozenset([(guid, port), (rguid, rport)])] = (tuple(sorted((a, b))), int(lanes) * _LANE_GBPS[speed])
    rates = {}
    for pair, gbps in cables.values():
        rates[pair] = rates.get(pair, 0.0) + gbps
    return rates


def _xml_link_bandwidths(xml):
    return {int(j): float(bw) for j, bw in re.findall(r'<link id="l(\d+)" bandwidth="([^"]+)Bps"', xml)}


def test_ingested_fabric_links_run_at_the_dump_rates():
    topo = ltm.load(AVAKAS)
    rates = _dump_rates(AVAKAS)
    assert len(rates) == topo.n_links == 425 and set(rates.values()) == {20.0, 40.0, 80.0}   # 4xDDR, 4xQDR, 2 x 4xQDR
    xml = platform(topo, routing="table", hosts=[topo.names[v] for v in topo.hosts[:4]])
    assert "capacity 1 = 125000000.0 B/s" in xml
    got = _xml_link_bandwidths(xml)
    assert sorted(got) == list(range(topo.n_links))
    for j, bw in got.items():
        pair = tuple(sorted((topo.names[topo.link_u[j]], topo.names[topo.link_v[j]])))
        assert bw == rates[pair] * 1e9 / 8, pair
    # an explicit bandwidth is per unit of capacity, as before
    again = _xml_link_bandwidths(platform(topo, routing="table", hosts=[topo.names[topo.hosts[0]]], bandwidth="1GBps"))
    assert all(again[j] == 1e9 * topo.capacity[j] for j in again)


@pytest.mark.parametrize("make", [lambda: ltm.fattree(4, 2), lambda: ltm.torus("4x3"),
                                  lambda: ltm.load(str(FABRICS / "ibsim" / "ftree-4-3.net"))],
                         ids=["fattree", "torus", "ibsim-net-without-speeds"])
def test_relative_capacity_1_is_100_gbps(make):
    topo = make()
    assert "capacity_unit" not in topo.attrs
    got = _xml_link_bandwidths(platform(topo, routing="table", hosts=[topo.names[v] for v in topo.hosts[:2]]))
    assert got and all(bw == 12.5e9 * topo.capacity[j] for j, bw in got.items())


@needs_gxx
@needs_simgrid
def test_table_zone_links_run_at_the_dump_rates(tmp_path):
    """What SimGrid loads from the table zone (``bench_smpi``'s platform for the fabric) on the routes of 24 hosts."""
    topo = ltm.load(AVAKAS)
    rates = _dump_rates(AVAKAS)
    rng = np.random.default_rng(5)
    hosts = [topo.names[v] for v in rng.choice(topo.hosts, 24, replace=False)]
    info = write_platform(topo, tmp_path / "p.so", routing="table", hosts=hosts)
    assert info.zone == "table"
    got = simgrid_routes(info.path)
    seen = set()
    for nm, (bw, _) in got["links"].items():
        j = int(re.fullmatch(r"l(\d+)_(UP|DOWN)", nm).group(1))
        seen.add(j)
        assert bw == pytest.approx(rates[tuple(sorted((topo.names[topo.link_u[j]], topo.names[topo.link_v[j]])))]
                                   * 1e9 / 8, rel=1e-12)
    assert any(topo.capacity[j] == 80 for j in seen) and any(topo.capacity[j] == 40 for j in seen)


# ---------------------------------------------------------------------------------------------- command line
def _cli(*argv):
    return subprocess.run([sys.executable, "-m", "libtopomap", *argv], capture_output=True, text=True, timeout=300)


def test_cli_platform(tmp_path):
    topo_file = tmp_path / "t.json"
    ltm.save(topo_file, ltm.torus("3x5"))
    out = _cli("smpi", "platform", "--topology", str(topo_file), "--routing", "dimension-order", "-o",
               str(tmp_path / "p.xml"))
    assert out.returncode == 0, out.stderr
    assert "zone TORUS" in out.stderr
    assert (tmp_path / "p.xml").read_text() == platform(ltm.load(str(topo_file)), routing="dimension-order")
    hostfile = tmp_path / "hosts"
    hostfile.write_text("n3\nn1\nn7\n")
    out = _cli("smpi", "platform", "--topology", str(topo_file), "--routing", "dimension-order", "--zone", "full",
               "--allocation", str(hostfile))
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("<route ") == 6 and out.stdout.index('id="n3"') < out.stdout.index('id="n1"')


@pytest.mark.parametrize("topo, extra, status, needle", [
    ("fattree", ("--routing", "ecmp"), 2, "one path per pair"),
    ("fattree", ("--routing", "bogus"), 2, "unknown routing 'bogus'"),
    ("fattree", ("--routing", "table", "--max-routes", "10"), 2, "limit of 10"),
    ("fattree", ("--routing", "dimension-order"), 1, "dimension-order routing needs"),
    ("torus", ("--routing", "dimension-order", "--zone", "cluster"), 2, "even length 4"),
    ("torus", ("--allocation", "n1,n99"), 1, "n99")])
def test_cli_errors_are_one_line(tmp_path, topo, extra, status, needle):
    topo_file = tmp_path / "t.json"
    ltm.save(topo_file, ltm.fattree(4, 2) if topo == "fattree" else ltm.torus("4x3"))
    out = _cli("smpi", "platform", "--topology", str(topo_file), *extra, "-o", str(tmp_path / "p.xml"))
    assert out.returncode == status and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and needle in out.stderr, out.stderr
    assert not (tmp_path / "p.xml").exists()
