"""libtopomap.smpi.zone: the next-hop table zone (a SimGrid platform library) routes exactly as the model.

Every ordered host pair's route, read back from SimGrid (``Host.route_to`` after ``Engine.load_platform("P.so")``
in a subprocess), equals the model's path link by link and direction by direction, as for the XML export
(helpers in ``tests/_helpers.py``); SMPI gives the halo the same simulated time, to the last digit, on the
Full-XML and table platforms of one topology and routing.
"""

import os
import random
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.smpi import nexthops
from libtopomap.errors import ArgumentError
from libtopomap.smpi import write_platform
from libtopomap.smpi.zone import NotDestinationBased, table_bytes

from _helpers import FABRIC, check_routes, needs_simgrid, simgrid_routes

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None or not os.path.exists("/usr/include/simgrid/s4u.hpp"),
                               reason="the platform library needs g++ and SimGrid's headers (apt-get install g++ "
                                      "libsimgrid-dev)")
needs_smpi = pytest.mark.skipif(shutil.which("smpirun") is None or shutil.which("smpicc") is None,
                                reason="SimGrid's SMPI (smpicc, smpirun) is not installed: "
                                       "apt-get install libsimgrid-dev")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    """One compiled platform library for the whole module."""
    monkeypatch.setenv("LIBTOPOMAP_SMPI_DIR", str(tmp_path_factory.getbasetemp() / "smpi-cache"))


# ---------------------------------------------------------------------------------------------- route equality
@needs_gxx
@needs_simgrid
@pytest.mark.parametrize("make, routing", [
    (lambda: ltm.torus("4x4"), "dimension-order"), (lambda: ltm.torus("3x5"), "dimension-order"),
    (lambda: ltm.torus("4x2x3"), "dimension-order"), (lambda: ltm.mesh("4x3"), "dimension-order"),
    (lambda: ltm.hypercube(4), "dimension-order"), (lambda: ltm.fattree(4, 3), "table"),
    (lambda: ltm.dragonfly(5, 4, 2, 1), "minimal"), (lambda: ltm.rt(3), "rt"), (lambda: ltm.load(FABRIC), "table")],
    ids=["torus4x4", "torus3x5", "torus4x2x3", "mesh4x3", "hypercube4", "fattree4-3", "dragonfly", "rt3", "fabric"])
def test_table_zone_routes_equal_the_model(make, routing, tmp_path):
    info = check_routes(make(), routing, tmp_path, zone_kind="table", filename="p.so", bandwidth="25Gbps",
                         latency="1us")
    assert info.path.endswith("p.so") and info.table == info.path + ".table"
    assert info.routes == 0 and info.table_bytes == os.path.getsize(info.table)


@needs_gxx
@needs_simgrid
def test_table_zone_allocation_and_cores(tmp_path):
    topo = ltm.load(FABRIC)
    rng = np.random.default_rng(3)
    hosts = [topo.names[v] for v in rng.choice(topo.hosts, 20, replace=False)]
    info = check_routes(topo, "table", tmp_path, zone_kind="table", hosts=hosts, filename="p.so")
    assert info.hostnames == tuple(hosts)
    topo = ltm.Topology(["a", "b", "s"], [(0, 2), (1, 2)], slots=[2, 3, 0])
    check_routes(topo, "table", tmp_path, zone_kind="table", filename="q.so", zone="table")


@needs_gxx
@needs_simgrid
def test_shared_links_have_no_direction(tmp_path):
    topo = ltm.Topology(["a", "b", "s"], [(0, 2), (1, 2)], slots=[1, 1, 0])
    info = write_platform(topo, tmp_path / "p.so", routing="table", sharing="SHARED")
    got = simgrid_routes(info.path)
    assert got["routes"] == {"a b": ["l0", "l1"], "b a": ["l1", "l0"]}


# ---------------------------------------------------------------------------------------------- choice of zone
@needs_gxx
def test_auto_format_picks_cluster_table_or_full(tmp_path, monkeypatch):
    info = write_platform(ltm.torus("3x5"), tmp_path / "a", routing="dimension-order", format="auto")
    assert info.zone == "TORUS" and info.path == str(tmp_path / "a.xml")
    info = write_platform(ltm.torus("4x4"), tmp_path / "b.xml", routing="dimension-order", format="auto")
    assert info.zone == "table" and info.path == str(tmp_path / "b.so") and os.path.exists(info.table)
    # 16 hosts x 16 vertices, one byte a port
    assert table_bytes(ltm.torus("4x4"), 16) == 256 and info.table_bytes > 256
    # a routing that is not destination-based: explicit routes in XML (auto), an error when a table is asked for
    monkeypatch.setattr(nexthops, "next_arcs", lambda topology, flow: None)
    info = write_platform(ltm.fattree(4, 2), tmp_path / "c", routing="table", format="auto")
    assert info.zone == "Full" and info.path == str(tmp_path / "c.xml") and info.routes == 16 * 15
    for kw in (dict(format="auto", zone="table"), dict(format="so")):
        with pytest.raises(NotDestinationBased) as e:
            write_platform(ltm.fattree(4, 2), tmp_path / "d.so", routing="table", **kw)
        msg = str(e.value)
        assert "\n" not in msg and "not destination-based" in msg and "explicit routes" in msg
    assert not os.path.exists(tmp_path / "d.so") and not os.path.exists(tmp_path / "d.so.table")


def test_zone_and_format_mismatch_are_one_line(tmp_path):
    topo = ltm.fattree(4, 2)
    cases = [dict(zone="table"),                                   # XML cannot hold the table
             dict(zone="full", format="so"), dict(zone="cluster", format="so"), dict(format="pdf")]
    for kw in cases:
        path = tmp_path / ("p.so" if kw.get("format") == "so" else "p.xml")
        with pytest.raises(ArgumentError) as e:
            write_platform(topo, path, routing="table", **kw)
        assert "\n" not in str(e.value), kw


def test_table_limit_is_checked_before_building(tmp_path):
    topo = ltm.fattree(4, 6)            # 4,096 hosts x 10,240 vertices: 41,943,040 bytes of ports
    t0 = time.perf_counter()
    with pytest.raises(ArgumentError) as e:
        write_platform(topo, tmp_path / "p.so", routing="table", max_table_bytes=1 << 20)
    assert time.perf_counter() - t0 < 5
    msg = str(e.value)
    assert "\n" not in msg and "41,943,040 bytes" in msg and "1,048,576" in msg
    assert not os.path.exists(tmp_path / "p.so")


@needs_gxx
@needs_simgrid
def test_missing_table_is_a_clear_error(tmp_path):
    info = write_platform(ltm.torus("3x3"), tmp_path / "p.so", routing="dimension-order")
    os.unlink(info.table)
    out = subprocess.run([sys.executable, "-c", "import simgrid as sg, sys; e = sg.Engine(['x']); "
                          "e.load_platform(sys.argv[1])", info.path], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "cannot open the routing table" in out.stderr and info.table in out.stderr


# ---------------------------------------------------------------------------------------------- SMPI: same times
@pytest.fixture(scope="module")
def halo(tmp_path_factory):
    if shutil.which("smpicc") is None:
        pytest.skip("SimGrid's SMPI (smpicc, smpirun) is not installed: apt-get install libsimgrid-dev")
    from libtopomap.smpi import build

    return build(["halo"], outdir=str(tmp_path_factory.mktemp("halo")), helpers=False)["halo"]


@needs_gxx
@needs_smpi
@pytest.mark.parametrize("make, routing, per_host", [(lambda: ltm.torus("4x4"), "dimension-order", 1),
                                                     (lambda: ltm.fattree(4, 3), "table", 1),
                                                     (lambda: ltm.fattree(4, 3), "table", 2)],
                         ids=["torus4x4", "fattree4-3", "fattree4-3-two-per-host"])
def test_smpi_times_equal_full_xml(halo, make, routing, per_host, tmp_path):
    """Same routes, same links: the halo's simulated time is identical to the last digit (scrambled
    placement, so messages share links; two ranks per host also exercise the loopback)."""
    from libtopomap.smpi import run_once

    topo = make()
    xml = write_platform(topo, tmp_path / "p.xml", routing=routing, zone="full")
    so = write_platform(topo, tmp_path / "p.so", routing=routing)
    assert (xml.zone, so.zone) == ("Full", "table")
    hosts = [topo.names[v] for v in topo.hosts] * per_host
    random.Random(7).shuffle(hosts)
    hf = tmp_path / "hosts"
    hf.write_text("".join(f"{h}\n" for h in hosts))
    args = ["2", "65536", "5", "1"]
    a = run_once(halo, args, platform=xml.path, hostfile=str(hf), nprocs=len(hosts))
    b = run_once(halo, args, platform=so.path, hostfile=str(hf), nprocs=len(hosts))
    assert a.time > 0 and a.time == b.time and a.simulated_end == b.simulated_end


# ---------------------------------------------------------------------------------------------- command line
def _cli(*argv):
    return subprocess.run([sys.executable, "-m", "libtopomap", *argv], capture_output=True, text=True, timeout=300)


@needs_gxx
def test_cli_platform_so(tmp_path):
    topo_file = tmp_path / "t.json"
    ltm.save(topo_file, ltm.fattree(4, 2))
    out = _cli("smpi", "platform", "--topology", str(topo_file), "--routing", "table", "-o", str(tmp_path / "p.so"))
    assert out.returncode == 0, out.stderr
    assert "zone table" in out.stderr and "next-hop table of" in out.stderr
    assert (tmp_path / "p.so").exists() and (tmp_path / "p.so.table").exists()
    out = _cli("smpi", "platform", "--topology", str(topo_file), "--routing", "table", "--format", "so")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1 and "-o P.so" in out.stderr
    out = _cli("smpi", "platform", "--topology", str(topo_file), "--routing", "table", "--zone", "table", "-o",
               str(tmp_path / "p.xml"))
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1 and "write a .so" in out.stderr


def test_forest_check_rejects_strands_and_cycles():
    from libtopomap.smpi.nexthops import next_arcs as _next_arcs
    from libtopomap.smpi.zone import _forest_to

    topo = ltm.torus((5,))                       # ring n0 - n1 - n2 - n3 - n4 - n0
    arc = {(int(u), int(v)): a for a, (u, v) in enumerate(zip(topo.arc_source, topo.indices))}

    def flow(*arcs):
        f = np.zeros(topo.n_arcs)
        for u, v, w in arcs:
            f[arc[u, v]] += w
        return f

    srcs = np.array([2, 3])
    good = flow((3, 2, 1), (2, 1, 2), (1, 0, 2))
    assert _forest_to(topo, _next_arcs(topo, good), srcs, 0, good)
    strand = flow((3, 2, 1), (2, 1, 2))          # stops at n1
    assert not _forest_to(topo, _next_arcs(topo, strand), srcs, 0, strand)
    cycle = flow((3, 2, 1), (2, 1, 2), (1, 0, 2), (4, 3, 1), (3, 4, 1))   # a circulation n3 <-> n4: two arcs out of n3
    assert _next_arcs(topo, cycle) is None
    loop = flow((2, 1, 1), (1, 2, 1), (3, 4, 1), (4, 0, 1))   # n2 -> n1 -> n2 ... never reaches n0
    assert not _forest_to(topo, _next_arcs(topo, loop), srcs, 0, loop)


@needs_gxx
@needs_smpi
def test_smpi_run_uses_the_table_zone(halo, tmp_path):
    from libtopomap.smpi import run

    topo = ltm.torus("4x4")
    hosts = [f"n{i}" for i in range(16)]
    random.Random(7).shuffle(hosts)
    alloc = tmp_path / "alloc"
    alloc.write_text("".join(f"{h}\n" for h in hosts))
    res = run(halo, ["2", "65536", "5", "1"], topology=topo, nprocs=16, allocation=str(alloc), ranks_per_host=1,
              workdir=str(tmp_path / "wd"))
    assert res.platform["zone"] == "table" and res.platform["path"].endswith("platform.so")
    assert res.platform["table_bytes"] > 0 and res.after.time < res.before.time
