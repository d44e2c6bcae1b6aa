"""Routing models of real fabrics: ``dmodk`` (d-mod-k fat-tree routing) and ``lft:PATH`` (the subnet
manager's forwarding tables), on fabrics simulated with ibsim and routed by the real OpenSM
(tests/data/fabrics/ibsim/SOURCES.md)."""

import pathlib
import re

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.errors import ArgumentError, TopologyError
from libtopomap.routing import pair_context, route_hops, route_traffic
from libtopomap.routing.pairs import routes_batch

IBSIM = pathlib.Path(__file__).parent / "data" / "fabrics" / "ibsim"
FABRICS = ["ftree-4-3", "ftree-4-3-updn", "tapered-8x8-2"]


def _fabric(name):
    return ltm.load(str(IBSIM / f"{name}.ibnetdiscover.txt"))


def _lft(name):
    return f"lft:{IBSIM / f'{name}.lfts.txt'}"


# ---------------------------------------------------------------- hand-written, parser-independent walk
def _hand_fabric(name):
    """From the ibnetdiscover text: (switch guid, port) -> node id, host name -> (its switch guid, its
    LID), and node id -> vertex name as the ingest names it (``S-<guid>``, host name)."""
    out, host_at, cur = {}, {}, None
    for line in (IBSIM / f"{name}.ibnetdiscover.txt").read_text().splitlines():
        m = re.match(r'^(Switch|Ca)\s+\d+\s+"([SH]-[0-9a-f]+)"\s+#\s+"([^"]*)"', line)
        if m:
            cur = (m.group(1), m.group(2), m.group(3).split()[0])
            continue
        m = re.match(r'^\[(\d+)\]\S*\s+"([SH]-[0-9a-f]+)"\[(\d+)\]', line)
        if m and cur is not None:
            if cur[0] == "Switch":
                out[(cur[1], int(m.group(1)))] = m.group(2)
            else:
                lid = int(re.search(r"# lid (\d+)", line).group(1))
                host_at[cur[2]] = (m.group(2), lid, cur[1])
    return out, host_at


def _hand_tables(name):
    tables, cur = {}, None
    for line in (IBSIM / f"{name}.lfts.txt").read_text().splitlines():
        m = re.search(r"guid 0x([0-9a-f]+)", line)
        if line.startswith("Unicast lids") and m:
            cur = tables.setdefault(f"S-{int(m.group(1), 16):016x}", {})
            continue
        m = re.match(r"^0x([0-9a-f]+) (\d+) ", line)
        if m and cur is not None:
            cur[int(m.group(1), 16)] = int(m.group(2))
    return tables


@pytest.mark.parametrize("name", FABRICS)
def test_lft_paths_equal_a_walk_of_the_dumped_tables(name):
    t = _fabric(name)
    cable, host_at = _hand_fabric(name)
    tables = _hand_tables(name)
    ids = {hid: h for h, (_, _, hid) in host_at.items()}
    index = {nm: i for i, nm in enumerate(t.names)}
    tail = np.repeat(np.arange(t.n_vertices), np.diff(t.indptr))
    hosts = sorted(host_at)
    assert len(hosts) == t.hosts.size
    for a in hosts:
        for b in hosts:
            if a == b:
                continue
            sw, lid = host_at[a][0], host_at[b][1]
            walk = [a, sw]
            while True:
                nxt = cable[(sw, tables[sw][lid])]
                if nxt.startswith("H-"):
                    walk.append(ids[nxt])
                    break
                walk.append(nxt)
                sw = nxt
                assert len(walk) < 20
            assert walk[-1] == b
            load = route_traffic(t, [index[a]], [index[b]], routing=_lft(name))
            got = {(t.names[tail[k]], t.names[t.indices[k]]) for k in np.flatnonzero(load)}
            assert got == set(zip(walk, walk[1:])), (a, b)
            assert route_hops(t, [index[a]], [index[b]], routing=_lft(name))[0] == len(walk) - 1


# ---------------------------------------------------------------- dmodk against a brute-force count
def _dmodk_path(k, n, s, d):
    """The d-mod-k route on fattree(k, n) from host s to host d, as vertex indices (generator numbering)."""
    hosts, per = k ** n, k ** (n - 1)
    digits = [(d // k ** (n - 1 - j)) % k for j in range(n)]  # digit 0 most significant

    def sw(level, w):
        return hosts + level * per + w

    def wdigit(w, j):
        return (w // k ** (n - 2 - j)) % k

    path, level, w, i = [s], n - 1, s // k, 0
    path.append(sw(level, w))
    while any(wdigit(w, j) != digits[j] for j in range(level)):  # climb: set digit level-1 from d
        u = (d // k ** i) % k
        j = level - 1
        w = w - wdigit(w, j) * k ** (n - 2 - j) + u * k ** (n - 2 - j)
        level -= 1
        i += 1
        path.append(sw(level, w))
    while level < n - 1:  # down: digit `level` of the word becomes d's
        w = w - wdigit(w, level) * k ** (n - 2 - level) + digits[level] * k ** (n - 2 - level)
        level += 1
        path.append(sw(level, w))
    path.append(d)
    return path


@pytest.mark.parametrize("k,n", [(2, 1), (2, 2), (3, 2), (2, 3), (4, 2), (3, 3), (4, 3)])
def test_dmodk_loads_equal_a_brute_force_count(k, n):
    t = ltm.fattree(k, n)
    rng = np.random.default_rng(k * 10 + n)
    h = k ** n
    s = rng.integers(0, h, 300)
    d = rng.integers(0, h, 300)
    w = rng.random(300)
    load = route_traffic(t, s, d, w, routing="dmodk")
    want = np.zeros(t.n_arcs)
    for a, b, x in zip(s, d, w):
        if a == b:
            continue
        p = _dmodk_path(k, n, int(a), int(b))
        assert route_hops(t, [a], [b], routing="dmodk")[0] == len(p) - 1
        for u, v in zip(p, p[1:]):
            arc = t.indptr[u] + int(np.searchsorted(t.indices[t.indptr[u]:t.indptr[u + 1]], v))
            assert t.indices[arc] == v
            want[arc] += x
    np.testing.assert_allclose(load, want)
    # the engine's per-pair kernel routes the same
    engine = np.zeros(t.n_arcs)
    meta, packed, table = t.distances.fast_arrays
    assert routes_batch(pair_context(t, "dmodk"), s, d, w, t.indptr, t.indices, t.arc_reverse, meta, packed, table,
                        bool(t.distances.covers_all), engine)
    np.testing.assert_allclose(engine, want)


def test_dmodk_equals_opensm_ftree_tables_on_the_4ary_3tree():
    """OpenSM's ftree engine on the 4-ary 3-tree installs exactly the d-mod-k routes, with the
    destination index of :func:`libtopomap.routing.dmodk.dmodk_index` (host order of the tree)."""
    t = _fabric("ftree-4-3")
    h = t.hosts
    s, d = (x.ravel() for x in np.meshgrid(h, h))
    keep = s != d
    s, d = s[keep], d[keep]
    lft = _lft("ftree-4-3")
    differ = 0
    for a, b in zip(s, d):
        differ += not np.array_equal(route_traffic(t, [a], [b], routing="dmodk"),
                                     route_traffic(t, [a], [b], routing=lft))
    assert differ == 0
    order = ltm.routing.dmodk.dmodk_index(t)
    assert [t.names[v] for v in np.argsort(np.where(order < 0, 1 << 40, order))[:64]] == [f"n{i}" for i in range(64)]
    # updn on the same tree is not d-mod-k
    updn = route_traffic(t, s, d, routing=_lft("ftree-4-3-updn"))
    assert not np.array_equal(route_traffic(t, s, d, routing="dmodk"), updn)


def test_dmodk_equals_the_updn_tables_of_the_tapered_tree():
    t = _fabric("tapered-8x8-2")
    h = t.hosts
    for a in h:
        for b in h[::3]:
            if a != b:
                np.testing.assert_array_equal(route_traffic(t, [a], [b], routing="dmodk"),
                                              route_traffic(t, [a], [b], routing=_lft("tapered-8x8-2")))


def test_dmodk_index_is_the_host_order_of_generated_fat_trees():
    t = ltm.fattree(3, 3)
    assert ltm.routing.dmodk.dmodk_index(t)[:27].tolist() == list(range(27))


# ---------------------------------------------------------------- bad inputs: one line, file:line
def _one_line(excinfo):
    text = str(excinfo.value)
    assert "\n" not in text
    return text


def test_lft_of_another_fabric(tmp_path):
    t = _fabric("ftree-4-3")
    with pytest.raises(TopologyError) as e:
        route_traffic(t, [t.hosts[0]], [t.hosts[1]], routing=_lft("tapered-8x8-2"))
    assert re.search(r"tapered-8x8-2\.lfts\.txt:\d+: ", _one_line(e))


def test_lft_unknown_guid(tmp_path):
    text = (IBSIM / "ftree-4-3.lfts.txt").read_text().replace("guid 0x000000000020002e", "guid 0x00000000deadbeef")
    p = tmp_path / "lfts.txt"
    p.write_text(text)
    t = _fabric("ftree-4-3")
    with pytest.raises(TopologyError) as e:
        route_traffic(t, [t.hosts[0]], [t.hosts[1]], routing=f"lft:{p}")
    assert f"{p}:117: switch guid 0x00000000deadbeef is not in the fabric" in _one_line(e)


@pytest.mark.parametrize("cut", [1000, 1000.5])
def test_lft_truncated(tmp_path, cut):
    lines = (IBSIM / "ftree-4-3.lfts.txt").read_text().splitlines(True)
    text = "".join(lines[:int(cut)]) + (lines[int(cut)][:4] if cut != int(cut) else "")
    p = tmp_path / "lfts.txt"
    p.write_text(text)
    t = _fabric("ftree-4-3")
    with pytest.raises(TopologyError) as e:
        route_traffic(t, [t.hosts[0]], [t.hosts[1]], routing=f"lft:{p}")
    assert re.search(rf"{re.escape(str(p))}:\d+: ", _one_line(e))


def test_lft_loop_and_uncabled_port(tmp_path):
    src = (IBSIM / "tapered-8x8-2.lfts.txt").read_text().splitlines(True)
    t = _fabric("tapered-8x8-2")
    # leaf7 sends LID 1 (n0) back down to its own host port 1: does not reach n0
    bad = [ln.replace("0x0001 009 :", "0x0001 001 :") if i < 10 else ln for i, ln in enumerate(src)]
    p = tmp_path / "lfts.txt"
    p.write_text("".join(bad))
    with pytest.raises(TopologyError) as e:
        route_traffic(t, [t.hosts[0]], [t.hosts[1]], routing=f"lft:{p}")
    assert f"{p}:" in _one_line(e)
    bad = [ln.replace("0x0001 009 :", "0x0001 017 :") if i < 10 else ln for i, ln in enumerate(src)]
    p.write_text("".join(bad))
    with pytest.raises(TopologyError) as e:
        route_traffic(t, [t.hosts[0]], [t.hosts[1]], routing=f"lft:{p}")
    assert f"{p}:4: " in _one_line(e) and "not cabled" in str(e.value)


def test_lft_other_formats(tmp_path):
    """OpenSM's opensm-lfts.dump and ibdiagnet's .fdbs, written from the dump_lfts tables."""
    t = _fabric("tapered-8x8-2")
    tables = _hand_tables("tapered-8x8-2")
    osm, fdbs = [], []
    for sw, tab in tables.items():
        g = int(sw[2:], 16)
        osm.append(f"Unicast lids [0-{max(tab)}] of switch Lid 1 guid 0x{g:016x} ('x'):")
        fdbs += [f"osm_ucast_mgr_dump_ucast_routes: Switch 0x{g:016x}", "LID    : Port : Hops : Optimal"]
        for lid, port in sorted(tab.items()):
            osm.append(f"0x{lid:04x} {port:03d} # unknown node and type")
            fdbs.append(f"0x{lid:04X} : {port:03d}  : 00   : yes" if port else f"0x{lid:04X} : UNREACHABLE")
        osm.append(f"{max(tab)} lids dumped")
    h = t.hosts
    s, d = (x.ravel() for x in np.meshgrid(h, h))
    want = route_traffic(t, s, d, routing=_lft("tapered-8x8-2"))
    for name, lines in (("opensm-lfts.dump", osm), ("ibdiagnet2.fdbs", fdbs)):
        p = tmp_path / name
        p.write_text("\n".join(lines) + "\n")
        np.testing.assert_array_equal(route_traffic(t, s, d, routing=f"lft:{p}"), want)


def test_bad_routing_names_and_topologies():
    with pytest.raises(ArgumentError) as e:
        route_traffic(ltm.fattree(2, 2), [0], [1], routing="lft")
    assert "lft:PATH" in _one_line(e)
    with pytest.raises(TopologyError) as e:
        route_traffic(ltm.fattree(2, 2), [0], [1], routing=_lft("ftree-4-3"))
    assert "ibnetdiscover" in _one_line(e)
    with pytest.raises(TopologyError) as e:
        route_traffic(ltm.torus("4x4"), [0], [1], routing="dmodk")
    assert "not tree-like" in _one_line(e)
    with pytest.raises(ArgumentError):
        route_traffic(ltm.fattree(2, 2), [0], [1], routing="lft:/nonexistent/dump.txt")
    with pytest.raises(TopologyError) as e:  # a switch end
        route_traffic(ltm.fattree(2, 2), [0], [5], routing="dmodk")
    assert "hosts only" in _one_line(e)


# ---------------------------------------------------------------- everywhere routing= is taken
@pytest.mark.parametrize("routing", ["dmodk", "lft"])
def test_refinement_never_raises_the_max_congestion(routing):
    t = _fabric("ftree-4-3")
    r = _lft("ftree-4-3-updn") if routing == "lft" else "dmodk"
    g = ltm.load_graph("stencil:8x8")
    base = ltm.map_processes(t, g, strategy="greedy", routing=r)
    ref = ltm.map_processes(t, g, strategy="greedy", refine="ta", routing=r, seed=1, iterations=2000)
    before = ltm.evaluate(t, g, base.vertices, routing=r)["max_congestion"]
    after = ltm.evaluate(t, g, ref.vertices, routing=r)["max_congestion"]
    assert after <= before + 1e-12


def test_cli_routing_lft_and_dmodk(capsys):
    from libtopomap.cli import main

    f = str(IBSIM / "ftree-4-3.ibnetdiscover.txt")
    assert main(["info", f, "--routing", _lft("ftree-4-3"), "--json"]) == 0
    assert '"routing": "lft:' in capsys.readouterr().out
    assert main(["map", "--topology", f, "--graph", "stencil:8x8", "--routing", "dmodk", "--quiet"]) == 0


def test_dmodk_on_a_partial_allocation_routes_as_the_whole_tree():
    """A job's allocation (hosts without slots elsewhere) keeps the fabric's routes and destination indices."""
    from libtopomap.rankfiles import Allocation, allocation_topology

    t = ltm.fattree(4, 3)
    hosts = tuple(f"n{i}" for i in range(0, 64, 3))
    part, _ = allocation_topology(t, Allocation(hosts, (1,) * len(hosts)))
    s = np.array([t.index(h) for h in hosts])
    d = np.roll(s, 1)
    np.testing.assert_array_equal(ltm.route_traffic(part, s, d, routing="dmodk"),
                                  ltm.route_traffic(t, s, d, routing="dmodk"))
