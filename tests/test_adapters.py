"""Tests of the fabric adapters (ibnetdiscover, ibnetdiscover -p, Slurm topology.conf).

The expected switch, host, cable and link counts of the shared dumps were counted independently of
the adapters, with awk over the raw files (node lines, port lines keyed by the sorted pair of
``node[port]`` ends, self-loops apart; distinct hostnames as the first word of the CA descriptions;
half-link speed tokens divided by two), and are written here as numbers.
"""

import io
import pathlib

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.errors import ArgumentError, ArgumentTypeError, FormatError
from libtopomap.formats import read_buffer, sniff

from libtopomap.adapters import hostname_from_description, ingest, ingest_report, link_capacity, read_hostmap
from libtopomap.adapters.slurm import expand_hostlist
from libtopomap.adapters.synthetic import fat_tree_ibnetdiscover
from libtopomap.cli import main

from _helpers import FABRICS, SHARED_ONLY

TOPO = FABRICS
FILES = pathlib.Path(__file__).resolve().parents[1] / "topology_files"
# GPL-only dumps are not copied into the repository (tests/data/fabrics/SOURCES.md); read from the shared folder.
GPL_ONLY = ("extras/cyberang3l__InfiniBand-Graphviz-ualization__k-4-n-3-Full.topo.txt",
            "extras/garyson__ib_flit_sim__ibnetdiscover.out.txt")


def _dump(rel):
    if rel in GPL_ONLY:
        if not (SHARED_ONLY / rel).is_file():
            pytest.skip(f"GPL-only dump {rel} is not in the repository and the shared topologies folder is absent")
        return SHARED_ONLY / rel
    return TOPO / rel

# (file, format, switches, hosts, cables, distinct links, self-loop cables, excluded CAs, total capacity)
SHARED_COUNTS = [
    ("jabl__ibtopotool__1.topo.txt", "ibnetdiscover", 2, 4, 7, 5, 0, 0, 4 * 10.0 + 2 * 2.5 + 10.0),
    ("loginoff__infiniband_topology__topo.txt", "ibnetdiscover", 8, 144, 192, 156, 0, 0, 192 * 40.0),
    ("ltaulell__HPC_toolset__X5.topofile.txt", "ibnetdiscover", 11, 89, 159, 113, 0, 0, 136 * 40.0 + 23 * 20.0),
    ("open-mpi__hwloc__avakas-ib-subnet-fe80.txt", "ibnetdiscover-ports", 25, 281, 569, 425, 0, 0,
     568 * 40.0 + 20.0),
    ("extras/cyberang3l__InfiniBand-Graphviz-ualization__k-4-n-3-Full.topo.txt", "ibnetdiscover", 80, 128, 384, 384,
     0, 0, 384 * 100.0),
    ("extras/garyson__ib_flit_sim__ibnetdiscover.out.txt", "ibnetdiscover", 1, 2, 2, 2, 0, 0, 2 * 56.0),
    ("extras/jabl__ibtopotool__2.topo.txt", "ibnetdiscover", 1, 2, 2, 2, 0, 0, 2 * 10.0),
    ("extras/jabl__ibtopotool__3.topo.txt", "ibnetdiscover", 2, 5, 7, 6, 3, 0, 100.0 + 3 * 56.0 + 2 * 40.0 + 10.0),
    ("extras/jabl__ibtopotool__4.topo.txt", "ibnetdiscover", 1, 1, 1, 1, 0, 0, 40.0),
    ("extras/linux-rdma__ibsim__net.2sw2path4hca2port.txt", "ibnetdiscover", 2, 2, 6, 3, 0, 0, 6.0),
    ("extras/open-mpi__hwloc__plafrim-ib-subnet-fe80.txt", "ibnetdiscover-ports", 9, 125, 201, 137, 0, 0,
     163 * 40.0 + 32 * 20.0 + 6 * 10.0),
    # trimmed fixtures: one-sided links, a second component (dropped), a SHARP AN (excluded)
    ("extras/treydock__infiniband_exporter__test.out.txt", "ibnetdiscover-ports", 2, 2, 3, 3, 0, 1, 300.0),
    ("extras/treydock__infiniband_exporter__test2.out.txt", "ibnetdiscover-ports", 1, 1, 1, 1, 0, 1, 200.0),
    ("extras/ltaulell__HPC_toolset__X5.topology.conf.txt", "slurm", 11, 89, 113, 113, 0, 0, 113.0),
    # OpenSM .lst: every line is one direction of a cable; no SPD -> SDR
    ("extras/nmorey__ibutils__subnet.lst.txt", "ibdiagnet-lst", 62, 3, 172, 172, 0, 0, 172 * 10.0),
]


@pytest.mark.parametrize("rel, fmt, switches, hosts, cables, links, loops, excluded, total_cap", SHARED_COUNTS,
                         ids=[c[0].split("/")[-1][:40] for c in SHARED_COUNTS])
def test_shared_dump_counts(rel, fmt, switches, hosts, cables, links, loops, excluded, total_cap):
    path = _dump(rel)
    assert sniff(path.read_text(errors="replace")[:65536], path) == fmt
    topo, rep = ingest(path)
    assert rep.format == fmt
    assert (rep.switches, rep.hosts, rep.cables, topo.n_links) == (switches, hosts, cables, links)
    assert sum(k == "switch" for k in topo.kinds) == switches
    assert topo.hosts.size == hosts and topo.total_slots == hosts
    assert rep.self_loops == loops and len(topo.attrs["warnings"]) >= loops
    assert len(rep.excluded) == excluded
    assert topo.capacity.sum() == pytest.approx(total_cap)
    # the named format gives the same result as sniffing
    assert ltm.load(path, format=fmt) == topo


def test_shared_clean_dumps_have_no_warnings():
    for rel in ("loginoff__infiniband_topology__topo.txt", "ltaulell__HPC_toolset__X5.topofile.txt",
                "open-mpi__hwloc__avakas-ib-subnet-fe80.txt", "jabl__ibtopotool__1.topo.txt"):
        topo = ltm.load(TOPO / rel, strict=True)
        assert topo.attrs["warnings"] == []


def test_speed_histograms_and_rates():
    rep = ingest(TOPO / "loginoff__infiniband_topology__topo.txt")[1]
    assert rep.link_speeds == {"4xFDR10": 47, "4xQDR": 145}
    rep = ingest(TOPO / "ltaulell__HPC_toolset__X5.topofile.txt")[1]
    assert rep.link_speeds == {"4xDDR": 23, "4xQDR": 136}
    t = ltm.load(TOPO / "loginoff__infiniband_topology__topo.txt", rates="effective")
    assert t.capacity.sum() == pytest.approx(47 * 40.0 + 145 * 32.0)


def test_man_page_example_capacities():
    # two switch-switch cables (1xSDR/4xSDR ends -> 2.5, and 10) and a dual-port CA with both ports
    # cabled to one switch (one end of one cable says 1xSDR) -> merged capacities 12.5
    t = ltm.load(TOPO / "jabl__ibtopotool__1.topo.txt")
    cap = {(t.names[u], t.names[v]): c for u, v, c in zip(t.link_u, t.link_v, t.capacity)}
    assert cap[("S-005442ba00003080", "S-0008f10400410015")] == 12.5
    assert cap[("S-005442ba00003080", "H-0008f10403960558")] == 12.5
    assert cap[("S-0008f10400410015", "H-005442b100004900")] == 10.0
    assert ingest_report(t).speed_mismatches == 2


def test_hostmap_names_x5():
    path = TOPO / "ltaulell__HPC_toolset__X5.topofile.txt"
    t, rep = ingest(path, hostmap=TOPO / "extras/ltaulell__HPC_toolset__X5.map.txt")
    assert rep.hosts == 89 and rep.unnamed_cas == 3 and t.n_links == 113
    assert {"x5570comp1", "r510gluster4", "H-003048c749450000"} <= set(t.names)
    # the Slurm file generated from the same fabric names the same hosts
    s = ltm.load(TOPO / "extras/ltaulell__HPC_toolset__X5.topology.conf.txt")
    assert {t.names[h] for h in t.hosts} == {s.names[h] for h in s.hosts}


def test_out_of_scope_files_raise_format_error():
    for rel in ("extras/ltaulell__HPC_toolset__X5.map.txt",):
        with pytest.raises(FormatError):
            ltm.load(TOPO / rel)
        for fmt in ("ibnetdiscover", "ibnetdiscover-ports", "slurm", "ibdiagnet-lst"):
            with pytest.raises(FormatError):
                ltm.load(TOPO / rel, format=fmt)


def test_stderr_line_and_self_loops_warn_with_line_numbers():
    path = TOPO / "extras/jabl__ibtopotool__3.topo.txt"
    w = ltm.load(path).attrs["warnings"]
    assert w[0].startswith(f"{path}:1: unrecognised line")
    assert sum("self-loop" in x for x in w) == 3
    with pytest.raises(FormatError, match=r"jabl__ibtopotool__3.topo.txt:1: "):
        ltm.load(path, strict=True)


# ---------------------------------------------------------------------------------- own small fabrics
SMALL_NAMES = ('S-0000000000000a01', 'S-0000000000000b01', 'S-0000000000000b02', 'nodeA', 'nodeB', 'nodeC',
               'H-000000000000c005', 'nodeD')


@pytest.mark.parametrize("fname, fmt", [("small_fabric.ibnetdiscover", "ibnetdiscover"),
                                        ("small_fabric_ibdiag.ibnetdiscover", "ibnetdiscover"),
                                        ("small_fabric.ports.txt", "ibnetdiscover-ports")])
def test_small_fabric_all_dialects(fname, fmt):
    t, rep = ingest(FILES / fname)
    assert rep.format == fmt
    assert t.names == SMALL_NAMES
    assert t.kinds == ("switch",) * 3 + ("host",) * 5
    # spine-leaf1: 2 x 4xHDR; spine-leaf2: 4xHDR + 2xNDR; nodeA: two HCAs; nodeD: 4x??? -> mode 200
    assert t.capacity.tolist() == [400.0, 400.0, 400.0, 200.0, 400.0, 200.0, 200.0]
    assert (rep.switches, rep.hosts, rep.cas, rep.cables, rep.self_loops) == (3, 5, 6, 10, 1)
    assert rep.excluded[0]["reason"] == "SHARP Aggregation Node"
    assert rep.unknown_speed_cables == 1 and rep.unknown_capacity == 200.0
    assert len(rep.warnings) == 1 and "self-loop" in rep.warnings[0]
    assert rep.link_speeds == {"2xNDR": 1, "4x???": 1, "4xHDR": 7, "4xNDR": 1}
    with pytest.raises(FormatError, match="self-loop"):
        ltm.load(FILES / fname, strict=True)


def _cap(t, a, b):
    u, v = sorted((t.index(a), t.index(b)))
    k = np.flatnonzero((t.link_u == u) & (t.link_v == v))
    assert k.size == 1, (a, b)
    return float(t.capacity[k[0]])


def test_small_fabric_options():
    path = FILES / "small_fabric.ibnetdiscover"
    t = ltm.load(path, hostmap=FILES / "small_fabric.hostmap", slots=4, unknown_capacity=7)
    assert "nodeE" in t.names and "H-000000000000c005" not in t.names
    assert t.total_slots == 20
    assert _cap(t, "S-0000000000000b02", "nodeD") == 7.0
    t = ltm.load(path, slots={"nodeA": 8})
    assert t.slots[t.index("nodeA")] == 8 and t.total_slots == 12
    t = ltm.load(FILES / "small_fabric.ports.txt", hostmap={"0xc005": "nodeE"})
    assert "nodeE" in t.names
    with pytest.raises(FormatError):
        ltm.load(path, slots=0)
    with pytest.raises(FormatError):
        ltm.load(path, unknown_capacity=-1)


def test_small_slurm():
    t, rep = ingest(FILES / "small_fabric.topology.conf")
    assert t.names == ("spine1", "leaf1", "leaf2", "node01", "node02", "node03", "node04", "node05", "nodeE")
    assert (rep.switches, rep.hosts, t.n_links) == (3, 6, 8)
    assert np.all(t.capacity == 1.0) and rep.warnings == []


def test_ltm_round_trip_keeps_switches():
    t = ltm.load(FILES / "small_fabric.ibnetdiscover")
    buf = io.StringIO()
    ltm.write_buffer(buf, t, "ltm")
    back = read_buffer(buf.getvalue(), "ltm")
    assert back.names == t.names and back.kinds == t.kinds
    assert np.allclose(back.capacity, t.capacity)


# ---------------------------------------------------------------------------------- robustness
def _small_text():
    return (FILES / "small_fabric.ibnetdiscover").read_text()


def test_bom_crlf_prompt_and_spaces():
    text = _small_text()
    ref = read_buffer(text, "ibnetdiscover")
    messy = "\ufeff[root@host dir]# ibnetdiscover \r\n" + text.replace("\t", "  ").replace("\n", "\r\n")
    t = read_buffer(messy, "ibnetdiscover", path="messy")
    assert t == ref
    assert t.attrs["warnings"][0].startswith("messy:1: ") and len(t.attrs["warnings"]) == 2  # + self-loop
    assert sniff(messy) == "ibnetdiscover"
    with pytest.raises(FormatError, match="^messy:1: "):
        read_buffer(messy, "ibnetdiscover", path="messy", strict=True)


def test_missing_speed_tokens_use_default_capacity():
    import re
    text = re.sub(r" (\d+x(?:HDR|NDR|\?\?\?))( s=.*)?$", "", _small_text(), flags=re.MULTILINE)
    t = read_buffer(text, "ibnetdiscover")
    rep = ingest_report(t)
    assert rep.unknown_speed_cables == 10 and rep.link_speeds == {"unknown": 10}
    assert t.capacity.tolist() == [2.0, 2.0, 2.0, 1.0, 1.0, 1.0, 1.0]
    t = read_buffer(text, "ibnetdiscover", unknown_capacity=100)
    assert t.capacity.tolist() == [200.0, 200.0, 200.0, 100.0, 100.0, 100.0, 100.0]


def test_lid_problems_warn():
    text = _small_text().replace("lid 11 lmc 0", "lid 10 lmc 0").replace("lid 12 lmc 0", "lid  lmc 0")
    w = read_buffer(text, "ibnetdiscover", path="f").attrs["warnings"]
    assert any("duplicate LID 10" in x for x in w)
    assert any("bad LID ''" in x or "bad LID" in x for x in w)


def test_partial_dump_keeps_what_is_valid():
    text = _small_text()
    cut = text[: text.index('Ca\t1 "H-000000000000c004"') + 10]  # ends inside a node line
    t = read_buffer(cut, "ibnetdiscover", path="cut")
    assert t.hosts.size == 5  # every host is still named from the switch side
    assert t.attrs["warnings"]  # the broken last line


def test_disconnected_fabric_keeps_largest_component():
    a = ('Switch\t8 "S-0000000000000001"\t\t# "s1" base port 0 lid 1 lmc 0\n'
         '[1]\t"H-0000000000000011"[1](11) \t\t# "h1 HCA-1" lid 2 4xEDR\n'
         '[2]\t"H-0000000000000012"[1](12) \t\t# "h2 HCA-1" lid 3 4xEDR\n\n'
         'Switch\t8 "S-0000000000000002"\t\t# "s2" base port 0 lid 4 lmc 0\n'
         '[1]\t"H-0000000000000021"[1](21) \t\t# "h3 HCA-1" lid 5 4xEDR\n')
    t = read_buffer(a, "ibnetdiscover", path="d")
    assert t.names == ("S-0000000000000001", "h1", "h2")
    rep = ingest_report(t)
    assert any("not connected" in w for w in rep.warnings)
    assert [e["node"] for e in rep.excluded] == ["h3"]
    with pytest.raises(FormatError, match="not connected"):
        read_buffer(a, "ibnetdiscover", path="d", strict=True)


def test_router_back_to_back_ext_ports_and_labels():
    text = ('Switch\t149 "S-b8e924030000b921"\t\t# "MF0;mamba:Q3400_RA/U2" enhanced port 0 lid 8 lmc 0\n'
            '[149](1/1/1/1)\t"R-b8e924030000b928"[2](b8e924030000b929) \t\t# "rtr" lid 9 1xXDR\n'
            '[3][ext 7]\t"H-0000000000000011"[1](11) \t\t# "h1 mlx5_0" lid 2 4xNDR\n\n'
            'Rt\t8 "R-b8e924030000b928"\t\t# "rtr"\n'
            '[2](b8e924030000b929) \t"S-b8e924030000b921"[149]\t\t# lid 9 lmc 0 "MF0;mamba" lid 8 1xXDR\n'
            '[1](b8e924030000b92a) \t"H-0000000000000012"[1] (12) \t\t# lid 9 lmc 0 "h2 HCA-1" lid 5 4xHDR\n\n'
            'Ca\t2 "H-0000000000000012"\t\t# "h2 HCA-1"\n'
            '[1](12) \t"R-b8e924030000b928"[1]\t\t# lid 5 lmc 0 "rtr" lid 9 4xHDR\n'
            '[2](13) \t"H-0000000000000011"[2] (11) \t\t# lid 6 lmc 0 "h1 mlx5_0" lid 2 4xHDR\n')
    t = read_buffer(text, "ibnetdiscover", path="r")
    assert set(t.names) == {"S-b8e924030000b921", "rtr-b8e924030000b928", "h1", "h2"}
    assert t.kinds[t.index("rtr-b8e924030000b928")] == "router"
    cap = {frozenset((t.names[u], t.names[v])): c for u, v, c in zip(t.link_u, t.link_v, t.capacity)}
    assert cap[frozenset(("S-b8e924030000b921", "rtr-b8e924030000b928"))] == 200.0  # 1xXDR
    assert cap[frozenset(("h1", "h2"))] == 200.0  # back-to-back CA link, one end printed
    assert cap[frozenset(("S-b8e924030000b921", "h1"))] == 400.0


def test_hostname_rule():
    assert hostname_from_description("node0254 HCA-1") == "node0254"
    assert hostname_from_description("pg-spd140 mlx5_9") == "pg-spd140"
    assert hostname_from_description("atlas35") == "atlas35"
    assert hostname_from_description("E993_H8 HCA-1 (Mellanox HCA)") == "E993_H8"
    assert hostname_from_description("MT25408 ConnectX Mellanox Technologies") is None
    assert hostname_from_description("MT4123 ConnectX6   Mellanox Technologies") is None
    assert hostname_from_description("MT23108 InfiniHost Mellanox Technologies") is None
    assert hostname_from_description("  ") is None


def test_link_capacity_table():
    cases = {("4", "EDR"): 100, ("4", "HDR"): 200, ("4", "NDR"): 400, ("2", "NDR"): 200, ("1", "XDR"): 200,
             ("4", "QDR"): 40, ("4", "FDR"): 56, ("12", "SDR"): 30, ("4", "FDR10"): 40, ("1", "SDR"): 2.5}
    for (w, s), c in cases.items():
        assert link_capacity(w, s) == c
    assert link_capacity("??", "QDR") is None and link_capacity("4", "???") is None
    assert link_capacity("4", "QDR", "effective") == 32.0 and link_capacity("4", "EDR", "signal") == 103.125


def test_hostmap_file_forms(tmp_path):
    p = tmp_path / "map"
    p.write_text('# c\nH-0002c90300080d28 r510gluster4\n0x0008f10400411a08 "node7 HCA-1"\nbad line\n\n')
    from libtopomap.adapters._fabric import Diagnostics
    d = Diagnostics("x")
    m = read_hostmap(p, diag=d)
    assert m == {0x2c90300080d28: "r510gluster4", 0x8f10400411a08: "node7"}
    assert len(d.warnings) == 1 and f"{p}:4:" in d.warnings[0]


# ---------------------------------------------------------------------------------- Slurm
def test_expand_hostlist():
    assert expand_hostlist("node[01-16]") == [f"node{i:02d}" for i in range(1, 17)]
    assert expand_hostlist("n[1-3,5]") == ["n1", "n2", "n3", "n5"]
    assert expand_hostlist("r[1-2]-n[1-2],x") == ["r1-n1", "r1-n2", "r2-n1", "r2-n2", "x"]
    assert expand_hostlist("tux[0-3,12]") == ["tux0", "tux1", "tux2", "tux3", "tux12"]
    for bad in ("n[1-", "n[3-1]", "n[a-b]", "n]", "a,,b", "n[0-99999999999]"):
        with pytest.raises(FormatError):
            expand_hostlist(bad)


def test_slurm_semantics():
    text = ("SwitchName=s0 Nodes=tux[0-3]\nSwitchName=s1 Nodes=tux[4-7] LinkSpeed=100\n"
            "SwitchName=s2 Switches=s[0-1],s9\nSwitchName=s0 Switches=s2\nSwitchName=s1 Nodes=s2 Bogus=1\n")
    t = read_buffer(text, "slurm", path="t.conf")
    assert sorted(t.names) == sorted(["s0", "s1", "s2", "s9"] + [f"tux{i}" for i in range(8)])
    assert (sum(k == "switch" for k in t.kinds), t.hosts.size) == (4, 8)
    assert t.n_links == 8 + 3  # s2-s0 is listed from both ends: one link
    w = "\n".join(t.attrs["warnings"])
    assert "t.conf:3: switch 's9' is used but never defined" in w
    assert "t.conf:4: switch 's0' defined again" in w
    assert "t.conf:5: unknown parameter 'Bogus=1'" in w and "t.conf:5: 's2' is listed as a node and as a switch" in w
    with pytest.raises(FormatError, match="t.conf:4: "):
        read_buffer(text, "slurm", path="t.conf", strict=True)
    with pytest.raises(FormatError):
        read_buffer("# nothing\n", "slurm")


def test_report_requires_adapter_topology():
    with pytest.raises(FormatError):
        ingest_report(ltm.torus([2, 2]))


def test_synthetic_fat_tree_small():
    text, counts = fat_tree_ibnetdiscover(pods=2, leaves_per_pod=4, hosts_per_leaf=4, cores=8, core_cables=2)
    t = read_buffer(text, "ibnetdiscover")
    rep = ingest_report(t)
    assert (rep.switches, rep.hosts, rep.cables, t.n_links) == tuple(counts) == (24, 32, 32 + 32 + 32, 32 + 32 + 16)
    assert rep.warnings == [] and np.all(t.degree[t.hosts] == 1)
    with pytest.raises(ArgumentError, match="cores"):
        fat_tree_ibnetdiscover(cores=7)
    with pytest.raises(ArgumentError, match="pods"):
        fat_tree_ibnetdiscover(pods=0)
    with pytest.raises(ArgumentTypeError, match="pods"):
        fat_tree_ibnetdiscover(pods=2.0)


def test_one_sided_cable_warns():
    text = _small_text()
    line = next(s for s in text.splitlines() if s.startswith("[1](c003)"))
    t = read_buffer(text.replace(line + "\n", ""), "ibnetdiscover", path="e")
    assert t.hosts.size == 5  # the cable still counts (the switch end printed it)
    assert any("e:27: 1 cables are listed by one end only (e.g. H-000000000000c003[1] -- S-0000000000000b01[3])" in w
               for w in t.attrs["warnings"])


def test_sniffing_blank_runs_is_linear():
    # a MULTILINE '^\s*' would rescan every run of blank lines: 4,000 newlines took seconds
    import time
    t0 = time.perf_counter()
    for head in ("\n" * 65536, " \n" * 32768, "\r\n" * 32768):
        with pytest.raises(FormatError):
            sniff(head)
    assert time.perf_counter() - t0 < 5.0


def test_long_progress_prefix_is_delegated(tmp_path):
    # 'ibnetdiscover -s' prints 'DR path' progress lines before classic output too; when they fill
    # the sniffed head, the ports reader hands the file to the classic reader
    dr = 'DR path slid 0; dlid 0; 0,1 -> new Switch {0000000000000b01} portnum 0 lid 0-0 ""\n' * 1000
    p = tmp_path / "progress.out"
    p.write_text(dr + _small_text())
    assert sniff(p.read_text()[:65536], p) == "ibnetdiscover-ports"
    t = ltm.load(p)
    assert t.attrs["format"] == "ibnetdiscover" and t.names == SMALL_NAMES
    assert t == ltm.load(FILES / "small_fabric.ibnetdiscover")


def _cyclomatic(fn):
    """McCabe complexity of a function: 1 + its decision points (nested functions not counted)."""
    import ast

    count = 1
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, (ast.If, ast.For, ast.While, ast.IfExp, ast.ExceptHandler, ast.Assert)):
            count += 1
        elif isinstance(node, ast.BoolOp):
            count += len(node.values) - 1
        elif isinstance(node, ast.comprehension):
            count += 1 + len(node.ifs)
        todo.extend(ast.iter_child_nodes(node))
    return count


def test_fabric_build_is_split_into_steps():
    """Fabric.build reads as its steps (vertices, links, capacities, component, report): no function of
    the fabric model is a long chain of branches."""
    import ast

    tree = ast.parse((pathlib.Path(__file__).resolve().parents[1] / "adapters" / "_fabric.py").read_text())
    scores = {f.name: _cyclomatic(f) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)}
    assert scores["build"] <= 10, scores["build"]
    assert max(scores.values()) <= 25, sorted(scores.items(), key=lambda kv: -kv[1])[:3]


# --------------------------------------------------------------------------------- dubious fabric input warns
def test_dubious_fabric_input_warns(tmp_path, capsys):
    # a switch listing itself (a self loop) and a node listed twice: accepted, with a warning per line
    (tmp_path / "topology.conf").write_text("SwitchName=s Switches=s Nodes=n[1-2]\nSwitchName=s Nodes=n2\n")
    with pytest.warns(ltm.LibTopoMapWarning) as caught:
        topo = ltm.load(tmp_path / "topology.conf")
    assert topo.hosts.size == 2
    messages = [str(w.message) for w in caught]
    assert any(m.startswith(f"{tmp_path}/topology.conf:2: switch 's' defined again") for m in messages), messages
    assert any(m.startswith(f"{tmp_path}/topology.conf:1: self-loop cable s[") for m in messages), messages
    # one hostname under two switches
    (tmp_path / "two.conf").write_text("SwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n2\nSwitchName=r Switches=a,b\n")
    with pytest.warns(ltm.LibTopoMapWarning, match=r"two.conf:2: node 'n2' is listed by switch 'b' and by switch 'a' "
                                                   r"\(line 1\): a duplicate hostname\?"):
        assert ltm.load(tmp_path / "two.conf").hosts.size == 2
    assert main(["info", str(tmp_path / "topology.conf")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err and all(e.startswith("libtopomap info: warning: ") for e in err), err


def test_at_most_ten_fabric_warnings_are_issued(tmp_path):
    (tmp_path / "topology.conf").write_text("".join(f"SwitchName=s Nodes=n{i} Bogus=1\n" for i in range(30)))
    with pytest.warns(ltm.LibTopoMapWarning) as caught:
        topo = ltm.load(tmp_path / "topology.conf")
    assert len(caught) == 10 and "further warnings: see the ingest report" in str(caught[-1].message)
    from libtopomap.adapters import ingest_report

    assert len(ingest_report(topo).warnings) > 30
