"""topology="auto": recorded environments, ``scontrol show topology`` outputs, hwloc XML and sysfs trees
to every path of libtopomap.autotopo / libtopomap.nodeinside (no MPI here: tests/mpi/test_auto.py)."""

import json
import os
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.autotopo import (DEFAULT_BANDWIDTHS, HostRecord, ProcessRecord, build, host_records,
                                 launched_by_mpiexec, parse_scontrol)
from libtopomap.errors import ArgumentError, FormatError, TopologyError
from libtopomap.nodeinside import (NodeInside, format_cpulist, parse_cpulist, parse_hwloc_xml, read_node,
                                   read_sysfs)
from libtopomap.topology import source_of

DATA = pathlib.Path(__file__).parent / "data" / "auto"
ROOT = pathlib.Path(__file__).resolve().parents[1]
SLURM = "switch.switch.node"
_CLEAN = ("SLURMD_NODENAME", "SLURM_TOPOLOGY_ADDR", "SLURM_TOPOLOGY_ADDR_PATTERN", "LIBTOPOMAP_TOPOLOGY",
          "SLURM_JOB_ID", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK", "MPI_LOCALNRANKS")

# A realistic `scontrol show topology` (topology/tree): upper switches list every node below them.
SCONTROL = """\
SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=nid[0001-0004]
SwitchName=leaf2 Level=0 LinkSpeed=1 Nodes=nid[0005-0008]
SwitchName=leaf3 Level=0 LinkSpeed=1 Nodes=nid[0009-0012]
SwitchName=spine Level=1 LinkSpeed=1 Nodes=nid[0001-0012] Switches=leaf[1-3]
"""


def _hwloc2():
    return parse_hwloc_xml((DATA / "hwloc2_2pkg_16pu.xml").read_text())


def _small_node():
    """2 packages = 2 NUMA domains, one L3 each, 2 cores of 1 PU each: PUs 0-3."""
    return NodeInside((0, 1, 2, 3), {"package": (0, 0, 1, 1), "numa": (0, 0, 1, 1), "l3": (0, 0, 1, 1),
                                     "core": (0, 1, 2, 3)})


def _slurm_env(addr):
    return {"SLURMD_NODENAME": addr.rsplit(".", 1)[1], "SLURM_TOPOLOGY_ADDR": addr,
            "SLURM_TOPOLOGY_ADDR_PATTERN": SLURM}


@pytest.fixture
def clean_env(monkeypatch):
    for k in _CLEAN:
        monkeypatch.delenv(k, raising=False)
    return monkeypatch


# ------------------------------------------------------------------------------------------- node inside
def test_cpulists_round_trip():
    assert parse_cpulist("0-3,8,10-11") == [0, 1, 2, 3, 8, 10, 11]
    assert parse_cpulist("") == []
    assert format_cpulist([11, 0, 1, 2, 3, 8, 10]) == "0-3,8,10-11"
    for bad in ("3-1", "a", "1-"):
        with pytest.raises(FormatError, match="bad CPU list"):
            parse_cpulist(bad)


@pytest.mark.parametrize("name", ["hwloc2_2pkg_16pu.xml", "hwloc1_2pkg_16pu.xml"])
def test_hwloc_xml_both_versions_give_the_same_tree(name):
    node = parse_hwloc_xml((DATA / name).read_text())
    assert node.cpus == tuple(range(16)) and node.source == "hwloc"
    assert node.levels == ("package", "numa", "l3", "core")
    groups = {level: cpus for level, _, _, cpus in node.groups()}
    # core k has PUs k and k + 8; package p has cores 4p..4p+3; an L3 has two cores
    assert groups["core"] == [(k, k + 8) for k in range(8)]
    assert groups["package"] == [(0, 1, 2, 3, 8, 9, 10, 11), (4, 5, 6, 7, 12, 13, 14, 15)]
    assert groups["numa"] == groups["package"]
    assert groups["l3"] == [(0, 1, 8, 9), (2, 3, 10, 11), (4, 5, 12, 13), (6, 7, 14, 15)]
    parents = {level: parent for level, _, parent, _ in node.groups()}
    assert parents["l3"] == [0, 0, 1, 1] and parents["core"] == [0, 0, 1, 1, 2, 2, 3, 3]


def test_hwloc_xml_errors_name_the_problem():
    with pytest.raises(FormatError, match="not an hwloc XML"):
        parse_hwloc_xml("<topology><object")
    with pytest.raises(FormatError, match="no PU object"):
        parse_hwloc_xml('<topology><object type="Machine" cpuset="0x1"/></topology>')


def _fake_sysfs(root, *, packages=2, cores=2, threads=2):
    """A /sys/devices/system tree: PU = t * (packages*cores) + core number; NUMA and L3 per package."""
    ncores = packages * cores
    n = ncores * threads
    cpu = root / "cpu"
    cpu.mkdir(parents=True)
    (cpu / "online").write_text(f"0-{n - 1}\n")
    for c in range(n):
        core = c % ncores
        pkg = core // cores
        sib = [core + t * ncores for t in range(threads)]
        pkg_cpus = [x for x in range(n) if (x % ncores) // cores == pkg]
        top = cpu / f"cpu{c}" / "topology"
        top.mkdir(parents=True)
        (top / "physical_package_id").write_text(f"{pkg}\n")
        (top / "core_cpus_list").write_text(format_cpulist(sib) + "\n")
        for idx, (level, shared) in enumerate([(1, sib), (2, sib), (3, pkg_cpus)]):
            d = cpu / f"cpu{c}" / "cache" / f"index{idx}"
            d.mkdir(parents=True)
            (d / "level").write_text(f"{level}\n")
            (d / "shared_cpu_list").write_text(format_cpulist(shared) + "\n")
    for p in range(packages):
        d = root / "node" / f"node{p}"
        d.mkdir(parents=True)
        (d / "cpulist").write_text(format_cpulist([x for x in range(n) if (x % ncores) // cores == p]) + "\n")
    return root


def test_sysfs_tree(tmp_path):
    node = read_sysfs(str(_fake_sysfs(tmp_path)))
    assert node.source == "sysfs" and node.cpus == tuple(range(8))
    groups = {level: cpus for level, _, _, cpus in node.groups()}
    assert groups["package"] == [(0, 1, 4, 5), (2, 3, 6, 7)]
    assert groups["numa"] == groups["l3"] == groups["package"]
    assert groups["core"] == [(0, 4), (1, 5), (2, 6), (3, 7)]


def test_sysfs_without_numa_or_l3_leaves_those_levels_out(tmp_path):
    root = _fake_sysfs(tmp_path, packages=1, cores=2, threads=1)
    for d in (root / "node").iterdir():
        (d / "cpulist").unlink()
    for c in range(2):
        (root / "cpu" / f"cpu{c}" / "cache" / "index2" / "level").write_text("2\n")
    assert read_sysfs(str(root)).levels == ("package", "core")


def test_this_machine_is_read_and_covers_our_binding():
    node = read_node()
    if node is None:
        pytest.skip("neither hwloc nor sysfs on this machine")
    assert set(os.sched_getaffinity(0)) <= set(node.cpus)
    assert node.levels[-1] == "core" and node.levels[0] == "package"


def test_node_descriptions_are_checked_and_round_trip():
    node = _hwloc2()
    assert NodeInside.from_dict(json.loads(json.dumps(node.to_dict()))) == node
    with pytest.raises(FormatError, match="out of order"):
        NodeInside((1, 0), {"core": (0, 1)})
    with pytest.raises(FormatError, match="unknown node level 'die'"):
        NodeInside((0,), {"die": (0,), "core": (0,)})
    with pytest.raises(FormatError, match="needs the core"):
        NodeInside((0,), {"package": (0,)})
    with pytest.raises(FormatError, match="labels 1 processing units of 2"):
        NodeInside((0, 1), {"core": (0,)})


# ------------------------------------------------------------------------------------------- networks
def test_slurm_addresses_give_the_switch_tree_with_no_file():
    addrs = ["s0.s1.nid0001", "s0.s1.nid0002", "s0.s2.nid0003", "s0.s2.nid0004"]
    hosts = host_records([ProcessRecord(a.rsplit(".", 1)[1], None, _slurm_env(a)) for a in addrs])
    topo, placement, bindings = build(hosts)
    assert topo.attrs["source"] == "slurm" and topo.attrs["node_levels"] == [] and topo.attrs["tried"] == []
    edges = {frozenset((topo.names[u], topo.names[v])) for u, v in zip(topo.link_u, topo.link_v)}
    assert edges == {frozenset(e) for e in [("s0", "s1"), ("s0", "s2"), ("s1", "nid0001"), ("s1", "nid0002"),
                                            ("s2", "nid0003"), ("s2", "nid0004")]}
    assert [topo.names[v] for v in placement] == ["nid0001", "nid0002", "nid0003", "nid0004"]
    assert bindings == [None] * 4
    assert topo.distance(topo.index("nid0001"), topo.index("nid0003")) == 4
    assert [k for k in topo.kinds if k == "switch"] == ["switch"] * 3


def test_slurm_trees_without_a_common_root_are_joined():
    hosts = [HostRecord("a", _slurm_env("s1.a"), ranks=(0,)), HostRecord("b", _slurm_env("s2.b"), ranks=(1,))]
    for h in hosts:
        h.env["SLURM_TOPOLOGY_ADDR_PATTERN"] = "switch.node"
    topo = build(hosts).topology
    assert topo.distance(topo.index("a"), topo.index("b")) == 4 and "top" in topo


def test_slurm_address_that_does_not_match_its_pattern_names_the_host():
    env = {"SLURM_TOPOLOGY_ADDR": "s0.nid7", "SLURM_TOPOLOGY_ADDR_PATTERN": SLURM}
    with pytest.raises(TopologyError, match=r"host 'nid7': SLURM_TOPOLOGY_ADDR='s0.nid7' does not match"):
        build([HostRecord("nid7", env, ranks=(0,))])


def test_scontrol_output_gives_each_node_its_lowest_switch():
    paths = parse_scontrol(SCONTROL)
    assert paths["nid0001"] == ["spine", "leaf1"] and paths["nid0012"] == ["spine", "leaf3"]
    assert len(paths) == 12
    with pytest.raises(FormatError, match="scontrol show topology:2: expected SwitchName"):
        parse_scontrol("SwitchName=a Nodes=n1\nNodes=n2\n")


def test_scontrol_is_used_when_the_address_names_no_switch():
    # topology/tree not in the environment (pattern "node"): the scontrol output gives the tree
    hosts = [HostRecord(f"nid{i:04d}", {"SLURMD_NODENAME": f"nid{i:04d}", "SLURM_TOPOLOGY_ADDR": f"nid{i:04d}",
                                        "SLURM_TOPOLOGY_ADDR_PATTERN": "node"}, ranks=(k,))
             for k, i in enumerate([1, 2, 5, 9])]
    topo = build(hosts, scontrol=SCONTROL).topology
    assert topo.attrs["source"] == "slurm"
    assert sorted(n for n, k in zip(topo.names, topo.kinds) if k == "switch") == ["leaf1", "leaf2", "leaf3", "spine"]
    d = topo.distance
    assert d(topo.index("nid0001"), topo.index("nid0002")) == 2
    assert d(topo.index("nid0001"), topo.index("nid0009")) == 4
    with pytest.raises(TopologyError, match="node 'nid0099' is not in 'scontrol show topology'"):
        build([HostRecord("x", {"SLURMD_NODENAME": "nid0099"}, ranks=(0,))], scontrol=SCONTROL)


def test_xnames_give_a_dragonfly_of_cabinets_and_chassis():
    # 3 cabinets (groups) x 2 chassis (routers), 2 nodes per chassis; the host names are not xnames,
    # SLURMD_NODENAME is
    procs = []
    for cab in (1000, 1001, 1002):
        for ch in (0, 1):
            for s in (0, 1):
                x = f"x{cab}c{ch}s{s}b0n0"
                procs.append(ProcessRecord(f"nid{len(procs):04d}", None, {"SLURMD_NODENAME": x}))
    topo = build(host_records(procs)).topology
    assert topo.attrs["source"] == "xname"
    routers = [n for n, k in zip(topo.names, topo.kinds) if k == "switch"]
    assert routers == [f"x{c}c{k}" for c in (1000, 1001, 1002) for k in (0, 1)]
    deg = dict(zip(topo.names, topo.degree.tolist()))
    assert topo.n_links == 12 + 3 * 1 + 3  # host links, one local link per cabinet, one global link per pair
    assert sum(deg[r] for r in routers) == 2 * (3 + 3) + 12
    d = topo.distance
    assert d(topo.index("nid0000"), topo.index("nid0001")) == 2           # same chassis
    assert d(topo.index("nid0000"), topo.index("nid0002")) == 3           # same cabinet
    assert max(d(topo.index("nid0000"), topo.index(f"nid{i:04d}")) for i in range(12)) <= 5


def test_hostname_xname_is_enough():
    topo = build([HostRecord("x3000c0s7b1n1", {}, ranks=(0,))]).topology
    assert topo.attrs["source"] == "xname" and "x3000c0" in topo


def test_topology_file_named_by_the_environment(tmp_path):
    fabric = ROOT / "topology_files" / "small_fabric.ibnetdiscover"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        topo = build([HostRecord("nodeB", {"LIBTOPOMAP_TOPOLOGY": str(fabric)}, ranks=(0, 1))]).topology
        plain = ltm.load(fabric)
    assert topo.attrs["source"] == "ibnetdiscover" and source_of(topo) == "ibnetdiscover"
    assert topo.n_vertices == plain.n_vertices and topo.slots[topo.index("nodeB")] == 2
    ltm_file = ROOT / "topology_files" / "demo_torus_4x2.topo"
    topo = build([HostRecord("n0", {"LIBTOPOMAP_TOPOLOGY": str(ltm_file)}, ranks=(0,))]).topology
    assert topo.attrs["source"] == "file"
    with pytest.raises(TopologyError, match=r"host 'elsewhere' is not in \$LIBTOPOMAP_TOPOLOGY"):
        build([HostRecord("elsewhere", {"LIBTOPOMAP_TOPOLOGY": str(ltm_file)}, ranks=(0,))])
    with pytest.raises(FormatError, match="cannot open"):
        build([HostRecord("n0", {"LIBTOPOMAP_TOPOLOGY": str(tmp_path / "missing")}, ranks=(0,))])


def test_nothing_known_is_one_switch_and_says_what_was_tried():
    topo = build([HostRecord("a", {}, ranks=(0,)), HostRecord("b", {}, ranks=(1,))]).topology
    assert topo.attrs["source"] == "single-switch" and topo.names == ("a", "b", "switch")
    tried = " ".join(topo.attrs["tried"])
    for word in ("LIBTOPOMAP_TOPOLOGY", "SLURM_TOPOLOGY_ADDR", "scontrol", "xname"):
        assert word in tried
    # a host called "switch" does not clash with the switch
    topo = build([HostRecord("switch", {}, ranks=(0,))]).topology
    assert set(topo.names) == {"switch", "_switch"}


def test_bad_inputs():
    with pytest.raises(TopologyError, match="no host"):
        build([])
    with pytest.raises(TopologyError, match="not 0..P-1"):
        build([HostRecord("a", {}, ranks=(1,))])
    with pytest.raises(ArgumentError, match="unknown level 'socket'"):
        build([HostRecord("a", {}, ranks=(0,))], bandwidths={"socket": 1})
    with pytest.raises(ArgumentError, match=r"bandwidths\['core'\] = -1.0 must be positive"):
        build([HostRecord("a", {}, ranks=(0,))], bandwidths={"core": -1})
    with pytest.raises(TopologyError, match="disagree on"):
        build([HostRecord("a", {"LIBTOPOMAP_TOPOLOGY": "x"}, ranks=(0,)),
               HostRecord("b", {"LIBTOPOMAP_TOPOLOGY": "y"}, ranks=(1,))])


# ------------------------------------------------------------------------------------------- two levels
def test_node_levels_below_each_host_with_cores_as_slots():
    node = _hwloc2()
    addrs = ["s0.s1.nid0001", "s0.s2.nid0002"]
    # 3 ranks per host: bound to core 0 (PU 0), core 5 (PU 13), and unbound
    bindings = [(0,), (13,), None]
    procs = [ProcessRecord(a.rsplit(".", 1)[1], b, _slurm_env(a), node) for a in addrs for b in bindings]
    topo, placement, shown = build(host_records(procs))
    assert topo.attrs["node_levels"] == ["package", "numa", "l3", "core"]
    kinds = np.array(topo.kinds)
    assert (kinds == "host").sum() == 2 and (kinds == "core").sum() == 16 and (kinds == "package").sum() == 4
    assert (kinds == "numa").sum() == 4 and (kinds == "l3").sum() == 8 and (kinds == "switch").sum() == 3
    # the cores are the slot vertices (2 hardware threads each); the hosts keep kind "host", no slot
    assert set(kinds[topo.hosts]) == {"core"} and topo.total_slots == 32
    assert topo.slots[topo.index("nid0001")] == 0
    assert [topo.names[v] for v in placement] == ["nid0001:core-0", "nid0001:core-5", "nid0001:core-1",
                                                  "nid0002:core-0", "nid0002:core-5", "nid0002:core-1"]
    assert shown == ["0", "13", None] * 2
    # capacities: level bandwidth / network bandwidth x the host's network link (1)
    cap = {frozenset((topo.names[u], topo.names[v])): c for u, v, c in zip(topo.link_u, topo.link_v, topo.capacity)}
    b = DEFAULT_BANDWIDTHS
    assert cap[frozenset(("nid0001", "nid0001:package-1"))] == pytest.approx(b["package"] / b["network"])
    assert cap[frozenset(("nid0001:l3-3", "nid0001:core-7"))] == pytest.approx(b["core"] / b["network"])
    assert cap[frozenset(("s1", "nid0001"))] == 1.0
    # hops: same L3 2, same package 4, other package 8, other node 4 up, 4 across the switches, 4 down
    d, ix = topo.distance, topo.index
    assert d(ix("nid0001:core-0"), ix("nid0001:core-1")) == 2
    assert d(ix("nid0001:core-0"), ix("nid0001:core-2")) == 4
    assert d(ix("nid0001:core-0"), ix("nid0001:core-4")) == 8
    assert d(ix("nid0001:core-0"), ix("nid0002:core-0")) == 4 + 4 + 4


def test_bandwidths_can_be_overridden():
    h = [HostRecord("a", {}, _small_node(), ranks=(0,), bindings=(None,))]
    topo = build(h, bandwidths={"package": 10.0, "network": 5.0}).topology
    cap = {frozenset((topo.names[u], topo.names[v])): c for u, v, c in zip(topo.link_u, topo.link_v, topo.capacity)}
    assert cap[frozenset(("a", "a:package-0"))] == pytest.approx(2.0)
    assert cap[frozenset(("a:l3-0", "a:core-0"))] == pytest.approx(DEFAULT_BANDWIDTHS["core"] / 5.0)


def test_more_ranks_than_hardware_threads_get_more_slots():
    # 8 unbound ranks on a node of 4 one-thread cores: spread 2 per core, slots follow
    h = host_records([ProcessRecord("a", None, {}, _small_node())] + [ProcessRecord("a")] * 7)
    topo, placement, _ = build(h)
    assert np.bincount(placement).max() == 2 and topo.total_slots == 8
    assert np.all(np.bincount(placement, minlength=topo.n_vertices) <= topo.slots)


def test_a_host_without_a_node_description_stays_a_slot_vertex():
    h = host_records([ProcessRecord("a", None, {}, _small_node()), ProcessRecord("b"), ProcessRecord("b")])
    topo, placement, _ = build(h)
    assert topo.attrs["node_levels"] == ["package", "numa", "l3", "core"]
    assert topo.slots[topo.index("b")] == 2 and placement.tolist()[1:] == [topo.index("b")] * 2


@pytest.mark.slow
def test_every_strategy_maps_onto_the_two_level_machine():
    # 2 nodes x 4 cores, a ring of 8 processes: the best mappings keep ring neighbours inside a node
    hosts = [HostRecord(f"n{i}", _slurm_env(f"s0.n{i}"), _small_node(), ranks=tuple(range(4 * i, 4 * i + 4)),
                        bindings=tuple((c,) for c in range(4))) for i in range(2)]
    for h in hosts:
        h.env["SLURM_TOPOLOGY_ADDR_PATTERN"] = "switch.node"
    topo = build(hosts).topology
    g = ltm.stencil("8", periodic=True)
    # ring neighbours on alternating nodes: every ring edge crosses the network
    scattered = np.array([topo.index(f"n{i % 2}:core-{i // 2}") for i in range(8)])
    worst = ltm.max_congestion(topo, g, scattered)
    for s in ("greedy", "rcm", "recursive", "multisection", "dual-bisection", "scotch"):
        m = ltm.map_processes(topo, g, strategy=s, seed=1)
        assert set(np.array(topo.kinds)[m.vertices]) == {"core"}, s
        assert ltm.max_congestion(topo, g, m.vertices) < worst, s


def test_with_nodes_puts_the_node_below_every_host_of_a_generated_network():
    from libtopomap.autotopo import with_nodes

    net = ltm.fattree(2, 2)  # 4 hosts, 4 switches
    topo = with_nodes(net, _small_node())
    kinds = np.array(topo.kinds)
    assert topo.names[:net.n_vertices] == net.names and topo.attrs["node_levels"] == ["package", "numa", "l3", "core"]
    assert (kinds == "core").sum() == 16 and topo.total_slots == 16 and (kinds == "switch").sum() == 4
    assert topo.n_links == net.n_links + 4 * (2 + 2 + 2 + 4)
    # a host's levels are scaled by its network link: capacity 1 here
    cap = {frozenset((topo.names[u], topo.names[v])): c for u, v, c in zip(topo.link_u, topo.link_v, topo.capacity)}
    host = net.names[net.hosts[0]]
    assert cap[frozenset((host, f"{host}:package-0"))] == pytest.approx(64 / 25)
    assert ltm.properties(topo)["hosts"] == 4


# ------------------------------------------------------------------------------------------- entry points
def test_load_auto_is_this_process(clean_env):
    with pytest.warns(RuntimeWarning, match="no network description found .*using one switch"):
        topo = ltm.load("auto")
    assert topo.attrs["source"] == "single-switch" and sum(k == "host" for k in topo.kinds) == 1
    clean_env.setenv("SLURM_TOPOLOGY_ADDR", "top.leaf.mynode")
    clean_env.setenv("SLURM_TOPOLOGY_ADDR_PATTERN", SLURM)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        topo = ltm.load("auto")
    assert topo.attrs["source"] == "slurm" and "leaf" in topo and "top" in topo


def test_launched_by_mpiexec():
    assert launched_by_mpiexec({"OMPI_COMM_WORLD_SIZE": "4"}) and launched_by_mpiexec({"PMI_SIZE": "2"})
    assert not launched_by_mpiexec({"HOME": "/"})


def _info(env, *args):
    full = {k: v for k, v in os.environ.items() if k not in _CLEAN}
    full.update(env)
    proc = subprocess.run([sys.executable, "-m", "libtopomap", "info", "auto", *args], capture_output=True,
                          text=True, env=full, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_info_auto_json_contract():
    proc = _info({}, "--json")
    out = json.loads(proc.stdout)
    assert out["source"] == "single-switch" and out["hosts"] == 1 and out["switches"] == 1
    assert out["node_levels"][-1] == "core" and out["links"] == out["vertices"] - 1
    assert [r["rank"] for r in out["ranks"]] == [0] and out["ranks"][0]["binding"] == format_cpulist(
        os.sched_getaffinity(0))
    assert "warning: libtopomap auto: no network description found" in proc.stderr


@pytest.mark.slow
def test_info_auto_recorded_slurm_and_xname_environments():
    out = json.loads(_info(_slurm_env("core1.edge7.nid0042"), "--json").stdout)
    assert out["source"] == "slurm" and out["switches"] == 2 and out["hosts"] == 1
    text = _info({"SLURMD_NODENAME": "x1000c3s2b0n1"}).stdout
    assert "source       xname" in text and "rank 0: host" in text


def test_info_reports_the_contract_for_files_too():
    proc = subprocess.run([sys.executable, "-m", "libtopomap", "info", "topology_files/demo_torus_4x2.topo",
                           "--json"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    out = json.loads(proc.stdout)
    assert out["source"] == "file" and out["node_levels"] == [] and out["hosts"] == 8 and out["switches"] == 0


# ------------------------------------------------------------------------------------------- under mpiexec
_PER_RANK = ('R=${{OMPI_COMM_WORLD_RANK:-${{PMI_RANK:-0}}}}; H=$((R / 2)); {exports}; '
             'exec "$0" -m libtopomap info auto --json')


def _info_under(mpi, n, tmp_path, exports=None):
    env = {k: "" for k in _CLEAN if not k.startswith(("OMPI", "PMI", "MPI_"))}
    argv = [sys.executable, "-m", "libtopomap", "info", "auto"]
    if exports:
        names = tmp_path / "fake.names"
        names.write_text("".join(f"{r} nid{r // 2:04d}\n" for r in range(n)))
        env["LIBTOPOMAP_FAKE_NAMES"] = str(names)
        argv = ["sh", "-c", _PER_RANK.format(exports=exports), sys.executable]
    proc = mpi.run(n, *argv, timeout=300, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def test_mpiexec_info_auto_on_this_machine(mpi, tmp_path):
    proc = _info_under(mpi, 8, tmp_path)
    lines = proc.stdout.splitlines()
    props = dict(ln.split(None, 1) for ln in lines if not ln.startswith("rank "))
    assert props["source"] == "single-switch" and props["hosts"] == "1" and props["switches"] == "1"
    assert props["node_levels"].split()[:1] == ["package"] and props["node_levels"].split()[-1] == "core"
    ranks = [ln for ln in lines if ln.startswith("rank ")]
    assert [ln.split(":")[0] for ln in ranks] == [f"rank {r}" for r in range(8)]
    assert all("bound to cpus " in ln and ":core-" in ln for ln in ranks)
    assert proc.stderr.count("no network description found") == 1  # rank 0 alone warns


def test_mpiexec_info_auto_with_recorded_slurm_environment(mpi, tmp_path):
    exports = ("export SLURMD_NODENAME=nid000$H SLURM_TOPOLOGY_ADDR=spine.leaf$((H % 2)).nid000$H "
               "SLURM_TOPOLOGY_ADDR_PATTERN=switch.switch.node")
    out = json.loads(_info_under(mpi, 8, tmp_path, exports).stdout)
    assert out["source"] == "slurm" and out["hosts"] == 4 and out["switches"] == 3
    assert [r["host"] for r in out["ranks"]] == [f"nid{r // 2:04d}" for r in range(8)]


def test_mpiexec_info_auto_with_xname_environment(mpi, tmp_path):
    out = json.loads(_info_under(mpi, 4, tmp_path, "export SLURMD_NODENAME=x100${H}c0s$((R % 2))b0n0").stdout)
    assert out["source"] == "xname" and out["hosts"] == 2 and out["switches"] == 2


def test_a_failing_lstopo_falls_back_to_sysfs_with_a_warning(tmp_path):
    fake = tmp_path / "lstopo"
    fake.write_text("#!/bin/sh\necho broken >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.warns(RuntimeWarning, match="lstopo --of xml failed .*reading"):
        node = read_node(lstopo=str(fake), sysfs=str(_fake_sysfs(tmp_path / "sys")))
    assert node.source == "sysfs" and node.cpus == tuple(range(8))
    good = tmp_path / "lstopo-good"
    good.write_text(f"#!/bin/sh\ncat {DATA / 'hwloc2_2pkg_16pu.xml'}\n")
    good.chmod(0o755)
    assert read_node(lstopo=str(good)).source == "hwloc"
