"""The vertex limit (``--max-vertices``, ``$LIBTOPOMAP_MAX_VERTICES``, :func:`libtopomap._limits.vertex_limit`):
generators, fabric and graph readers, hostlists and graph specs check the size their input announces
before allocating or expanding it, name the limit and how to raise it, and accept a size equal to it
(the edge limit is tests/test_edge_limit.py)."""

import pytest

import libtopomap as ltm
from libtopomap._limits import vertex_limit
from libtopomap.cli import main

LIMIT_HINT = r"above the limit of {} \(raise it with --max-vertices N or \$LIBTOPOMAP_MAX_VERTICES\)"


def test_an_edge_list_naming_a_huge_id_hits_the_limit_before_allocating(tmp_path, monkeypatch):
    (tmp_path / "e.txt").write_text("0 300000000\n")
    with pytest.raises(ltm.FormatError, match=r"e.txt:1: the graph has 300000001 processes, above the limit of "
                                              r"4194304 \(raise it with --max-vertices N or \$LIBTOPOMAP_MAX_VERTICES"):
        ltm.load_graph(tmp_path / "e.txt")
    monkeypatch.setenv("LIBTOPOMAP_MAX_VERTICES", "2")
    (tmp_path / "f.txt").write_text("0 1\n1 2\n")
    with pytest.raises(ltm.FormatError, match="f.txt:2: the graph has 3 processes, above the limit of 2"):
        ltm.load_graph(tmp_path / "f.txt")


@pytest.mark.parametrize("make", [lambda: ltm.torus("100000x100000"), lambda: ltm.mesh([2] * 40),
                                  lambda: ltm.circulant(10**9), lambda: ltm.rtt(10**6),
                                  lambda: ltm.dragonfly(1000, 1000, 1000, 1)])
def test_generators_check_their_size_before_allocating(make):
    with pytest.raises(ltm.TopologyError, match=r"above the limit of 4194304 \(raise it with --max-vertices N or "
                                                r"\$LIBTOPOMAP_MAX_VERTICES\)"):
        make()


@pytest.mark.parametrize("k, n", [(2, 10**9), (10**6, 10**6), (2, 10**5)])
def test_fat_tree_of_absurd_depth_fails_before_computing_k_to_the_n(k, n, monkeypatch):
    # the fuzzer found fattree(2, 10**9): k**n is a huge integer (MemoryError, or ValueError when printed)
    with pytest.raises(ltm.TopologyError, match=rf"fattree\({k}, {n}\) has more than 4194304 vertices, above"):
        ltm.fattree(k, n)
    monkeypatch.setenv("LIBTOPOMAP_MAX_VERTICES", "100")
    with pytest.raises(ltm.TopologyError, match=r"fattree\(4, 3\) has 112 vertices, above the limit of 100"):
        ltm.fattree(4, 3)


def test_the_generator_limit_can_be_raised_or_lowered(monkeypatch):
    monkeypatch.setenv("LIBTOPOMAP_MAX_VERTICES", "15")
    with pytest.raises(ltm.TopologyError, match="4x4 has 16 vertices, above the limit of 15"):
        ltm.torus("4x4")
    monkeypatch.setenv("LIBTOPOMAP_MAX_VERTICES", "16")
    assert ltm.torus("4x4").n_vertices == 16


def test_as_commgraph_huge_ids_hit_the_limit():
    with pytest.raises(ltm.CommGraphError, match="above the limit"):
        ltm.as_commgraph([(0, 2**40)])


def test_a_31_byte_topology_conf_is_refused_before_its_names_are_made(tmp_path):
    # a billion names: counted from the brackets, never expanded (the old reader made 150,000 nodes of
    # 'n[0-149999]' and its per-expression cap allowed 10**6 per line, any number of lines)
    conf = tmp_path / "topology.conf"
    conf.write_text("SwitchName=s Nodes=n[0-999999999]\n")
    with pytest.raises(ltm.FormatError, match=r"topology.conf:1: this file, up to here, has 1000000000 host and "
                                              r"switch names, " + LIMIT_HINT.format(4194304)):
        ltm.load(conf)


def test_topology_conf_names_are_summed_over_lines(tmp_path):
    conf = tmp_path / "topology.conf"
    conf.write_text("SwitchName=a Nodes=n[0-9]\nSwitchName=b Nodes=m[0-9]\nSwitchName=c Switches=a,b Nodes=x[1-6]\n")
    with vertex_limit(25):
        with pytest.raises(ltm.FormatError, match=r"topology.conf:3: this file, up to here, has 28 host and switch "
                                                  r"names, " + LIMIT_HINT.format(25)):
            ltm.load(conf)
    with vertex_limit(29):  # 28 names, 29 vertices (26 hosts, 3 switches)
        assert ltm.load(conf).hosts.size == 26


def test_topology_yaml_names_are_checked_before_expanding(tmp_path):
    doc = tmp_path / "topology.yaml"
    doc.write_text("- topology: t\n  tree:\n    switches:\n    - switch: s\n      nodes: n[0-9]\n"
                   "    - switch: r\n      children: s\n      nodes: m[0-999999999999]\n")
    with pytest.raises(ltm.FormatError, match=r"topology.yaml:8: this file, up to here, has 1000000000011 host and "
                                              r"switch names, " + LIMIT_HINT.format(4194304)):
        ltm.load(doc)


def test_hostlists_are_sized_without_expanding():
    from libtopomap.adapters.slurm import expand_hostlist, hostlist_size
    from libtopomap.rankfiles import read_allocation

    assert hostlist_size("n[0-149999],login[1-2],r[1-2]-n[01-03]") == 150008
    assert expand_hostlist("r[1-2]-n[08-10],x") == ["r1-n08", "r1-n09", "r1-n10", "r2-n08", "r2-n09", "r2-n10", "x"]
    with vertex_limit(6):
        with pytest.raises(ltm.FormatError, match=r"the hostlist 'r\[1-2\]-n\[08-10\],x' has 7 names, "
                                                  + LIMIT_HINT.format(6)):
            expand_hostlist("r[1-2]-n[08-10],x")
        with pytest.raises(ltm.FormatError, match="has 7 names, above the limit of 6"):
            read_allocation("r[1-2]-n[08-10],x")


def test_fabric_readers_stop_at_the_limit():
    path = "tests/data/fabrics/jabl__ibtopotool__1.topo.txt"
    n = ltm.load(path).n_vertices
    with vertex_limit(5):
        with pytest.raises(ltm.FormatError, match=r"ibtopotool__1.topo.txt:\d+: this fabric, up to here, has 6 nodes, "
                                                  + LIMIT_HINT.format(5)):
            ltm.load(path)
    with vertex_limit(n + 10):
        assert ltm.load(path).n_vertices == n


def test_ltm_header_and_json_vertices_hit_the_limit(tmp_path):
    ltm.save(str(tmp_path / "t.ltm"), ltm.torus("4x4"))
    ltm.save(str(tmp_path / "t.json"), ltm.torus("4x4"))
    (tmp_path / "huge.ltm").write_text("num: 999999999999\n")
    with pytest.raises(ltm.FormatError, match=r"huge.ltm:1: the header has 999999999999 vertices, "
                                              + LIMIT_HINT.format(4194304)):
        ltm.load(tmp_path / "huge.ltm")
    with vertex_limit(15):
        with pytest.raises(ltm.FormatError, match=r"t.ltm:1: the header has 16 vertices, above the limit of 15"):
            ltm.load(tmp_path / "t.ltm")
        with pytest.raises(ltm.FormatError, match=r"t.json: 'vertices' has 16 vertices, above the limit of 15"):
            ltm.load(tmp_path / "t.json")
    with vertex_limit(16):
        assert ltm.load(tmp_path / "t.ltm").n_vertices == ltm.load(tmp_path / "t.json").n_vertices == 16


def test_graph_specs_and_concentration_hit_the_limit():
    with pytest.raises(ltm.CommGraphError, match=r"random graph\(1000000000, 3\) has 1000000000 processes, "
                                                 + LIMIT_HINT.format(4194304)):
        ltm.load_graph("random:1000000000:3:1")
    with pytest.raises(ltm.CommGraphError, match="needs 0 <= degree <= 2P"):
        ltm.load_graph("random:10:1000000000:1")
    with pytest.raises(ltm.CommGraphError, match=r"uniform traffic\(1000\) with 1000000000 messages per process "
                                                 r"has 1000000000000 messages, above the limit of 268435456 "
                                                 r"\(.*--max-edges"):
        ltm.load_graph("uniform:1000:1000000000")
    with pytest.raises(ltm.TopologyError, match=r"concentrate\(torus-4x4, 1000000\) has 16000016 vertices"):
        ltm.concentrate(ltm.torus("4x4"), 1000000)


def test_the_old_process_variable_still_works_with_a_deprecation_warning(tmp_path, monkeypatch):
    (tmp_path / "e.txt").write_text("0 1\n1 2\n")
    monkeypatch.delenv("LIBTOPOMAP_MAX_VERTICES", raising=False)
    monkeypatch.setenv("LIBTOPOMAP_MAX_PROCESSES", "2")
    with pytest.warns(DeprecationWarning, match="LIBTOPOMAP_MAX_PROCESSES is deprecated"):
        with pytest.raises(ltm.FormatError, match="e.txt:2: the graph has 3 processes, above the limit of 2"):
            ltm.load_graph(tmp_path / "e.txt")
    monkeypatch.setenv("LIBTOPOMAP_MAX_VERTICES", "x")
    with pytest.raises(ltm.ArgumentError, match="LIBTOPOMAP_MAX_VERTICES must be a positive integer, got 'x'"):
        ltm.load_graph(tmp_path / "e.txt")


def test_cli_max_vertices_option(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # generate: a size over the limit is a usage error (exit 2) naming the limit and how to raise it
    assert main(["generate", "torus", "--dims", "4x4", "-o", "t.ltm", "--max-vertices", "15"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("libtopomap generate: error: 4x4 has 16 vertices, above the limit of 15 (raise it with "
                           "--max-vertices N or $LIBTOPOMAP_MAX_VERTICES)")
    assert main(["generate", "torus", "--dims", "4x4", "-o", "t.ltm", "--max-vertices", "16"]) == 0
    for bad in ("0", "-3", "x", "1e3"):
        with pytest.raises(SystemExit) as e:
            main(["info", "t.ltm", "--max-vertices", bad])
        assert e.value.code == 2
        assert "argument --max-vertices: expected a positive integer" in capsys.readouterr().err
    capsys.readouterr()
    # readers: exit 1 with file, line and limit; the default applies without the option
    assert main(["info", "t.ltm", "--max-vertices", "15"]) == 1
    assert "t.ltm:1: the header has 16 vertices, above the limit of 15" in capsys.readouterr().err
    (tmp_path / "topology.conf").write_text("SwitchName=s Nodes=n[0-149999]\n")  # 31 bytes
    assert main(["info", "topology.conf", "--max-vertices", "100000"]) == 1
    assert ("topology.conf:1: this file, up to here, has 150000 host and switch names, above the limit of 100000"
            in capsys.readouterr().err)
    assert main(["map", "--topology", "t.ltm", "--graph", "stencil:4x4", "--max-vertices", "15"]) == 1
    assert "above the limit of 15" in capsys.readouterr().err
    (tmp_path / "e.txt").write_text("0 300000000\n")
    assert main(["map", "--topology", "t.ltm", "--graph", "e.txt"]) == 1
    assert "e.txt:1: the graph has 300000001 processes, above the limit of 4194304" in capsys.readouterr().err
    for cmd in (["collective", "--topology", "t.ltm", "--collective", "bcast", "--procs", "4"],
                ["ingest", "topology.conf", "-o", "o.ltm"], ["simulate", "--help"], ["plot", "--help"]):
        if cmd[-1] == "--help":
            with pytest.raises(SystemExit):
                main(cmd)
            assert "--max-vertices N" in capsys.readouterr().out
        else:
            assert main(cmd + ["--max-vertices", "3"]) == 1
            assert "above the limit of 3" in capsys.readouterr().err
