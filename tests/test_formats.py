"""Topology file formats: LibTopoMap text (ltm), JSON, registry and sniffing."""

import io
import json

import numpy as np
import pytest

from libtopomap import FormatError, Topology, dragonfly, fattree, load, percs, read_buffer, save, torus, write_buffer
from libtopomap.formats import sniff

WEIGHTED = """num: 4 w
0 host0
1 host1
2 sw-a
3 host2
0 2(4)
1 2(4)
2 0(4) 1(4) 3(2.5)
3 2(2.5)
"""


def test_ltm_weighted_file_reads_with_switch_rule():
    t = read_buffer(WEIGHTED, "ltm")
    assert t.names == ("host0", "host1", "sw-a", "host2")
    assert t.slots.tolist() == [1, 1, 0, 1]
    assert sorted(t.capacity.tolist()) == [2.5, 4.0, 4.0]
    assert t.name is None


def test_ltm_unweighted_any_order_and_blank_lines():
    text = "num: 3\n\n2 c\n0 a\n1 b\n1 0 2\n0 1\n2 1\n"
    t = read_buffer(text, "ltm")
    assert t.names == ("a", "b", "c") and t.n_links == 2


def test_ltm_w_glued_to_count_like_the_original():
    t = read_buffer(WEIGHTED.replace("num: 4 w", "num: 4w"), "ltm")
    assert t.n_links == 3


def test_ltm_switch_rule_options():
    text = "num: 3\n0 a\n1 b\n2 hub\n0 2\n1 2\n2 0 1\n"
    assert read_buffer(text, "ltm").slots.tolist() == [1, 1, 1]
    assert read_buffer(text, "ltm", switches=["hub"]).slots.tolist() == [1, 1, 0]
    assert read_buffer(text, "ltm", switches=r"^hu").slots.tolist() == [1, 1, 0]
    assert read_buffer(text, "ltm", switches=lambda name, deg: deg > 1, slots=4).slots.tolist() == [4, 4, 0]


@pytest.mark.parametrize("text, line, match", [
    ("", 1, "empty file"),
    ("nodes: 2\n0 a\n1 b\n0 1\n1 0\n", 1, "bad header"),
    ("num: two\n0 a\n1 b\n0 1\n1 0\n", 1, "bad vertex count"),
    ("num: 0\n", 1, "must be positive"),
    ("num: 3\n0 a\n1 b\n2 c\n0 1\n1 0\n", 7, "expected 6 lines.*found 5"),
    ("num: 2\n0 a\n1 b\n0 1\n1 0\nextra stuff\n", 6, "trailing garbage"),
    ("num: 2\n0 a\n2 b\n0 1\n1 0\n", 3, "vertex id 2 out of range 0..1"),
    ("num: 2\n0 a\n0 b\n0 1\n1 0\n", 3, "vertex 0 named twice"),
    ("num: 2\n0 a\n1 b c\n0 1\n1 0\n", 3, "expected '<id> <hostname>'"),
    ("num: 2\n0 a\n1 b\n0 5\n1 0\n", 4, "vertex id 5 out of range"),
    ("num: 2\n0 a\n1 b\n0 x\n1 0\n", 4, "bad adjacency entry 'x'"),
    ("num: 2\n0 a\n1 b\n0 0\n1\n", 4, "lists itself"),
    ("num: 2\n0 a\n1 b\n0 1\n1\n", 4, "listed by vertex 0 but not by vertex 1"),
    ("num: 2\n0 a\n1 b\n0 1\n0 1\n", 5, "adjacency of vertex 0 given twice"),
    ("num: 2 w\n0 a\n1 b\n0 1(abc)\n1 0(1)\n", 4, "bad capacity"),
    ("num: 2 w\n0 a\n1 b\n0 1(0)\n1 0(0)\n", 4, "must be positive"),
    ("num: 2 w\n0 a\n1 b\n0 1(-3)\n1 0(-3)\n", 4, "must be positive"),
    ("num: 2 w\n0 a\n1 b\n0 1(2)\n1 0(3)\n", None, "capacity 2 here but 3"),
    ("num: 2 w\n0 a\n1 b\n0 1\n1 0\n", 4, "no capacity"),
    ("num: 2\n0 a\n1 b\n0 1(2)\n1 0(2)\n", 4, "header has no 'w'"),
    ("num: 3\n0 a\n1 b\n2 c\n0 1\n1 0\n2\n", None, "not all connected"),
])
def test_ltm_errors_report_file_and_line(tmp_path, text, line, match):
    p = tmp_path / "bad.ltm"
    p.write_text(text)
    with pytest.raises(FormatError, match=match) as ei:
        load(p, format="ltm")
    msg = str(ei.value)
    assert msg.startswith(str(p) + (f":{line}: " if line is not None else ""))
    assert ei.value.path == str(p)
    if line is not None:
        assert ei.value.line == line


def test_ltm_round_trip_and_name_from_basename(tmp_path):
    t = fattree(2, 3)
    p = tmp_path / "my-fat-tree.topo"
    save(p, t)
    assert p.read_text().startswith("num: 20\n")
    t2 = load(p)
    assert t2 == t
    assert t2.name == "my-fat-tree"


def test_ltm_weighted_round_trip(tmp_path):
    t = percs(2, 1, seed=3)
    buf = io.StringIO()
    write_buffer(buf, t, "ltm")
    assert buf.getvalue().startswith("num: 64 w\n")
    t2 = read_buffer(buf.getvalue(), "ltm")
    assert t2 == t


@pytest.mark.parametrize("topo", [dragonfly(5, 2, 1, 2), percs(2, 1, seed=0), torus("3x3")])
def test_json_round_trip_everything(tmp_path, topo):
    p = tmp_path / "t.json"
    save(p, topo)
    t2 = load(p)
    assert t2 == topo
    assert t2.name == topo.name and t2.attrs == topo.attrs and t2.kinds == topo.kinds
    assert np.array_equal(t2.capacity, topo.capacity)


def test_json_keeps_slots_and_custom_kinds(tmp_path):
    t = Topology(["a", "b", "c"], [(0, 1), (1, 2)], slots=[4, 0, 2], kinds=["host", "gpu-switch", "host"],
                 name="x", attrs={"k": [1, 2]})
    buf = io.StringIO()
    write_buffer(buf, t, "json")
    doc = json.loads(buf.getvalue())
    assert doc["format"] == "libtopomap-topology" and doc["version"] == 1
    t2 = read_buffer(buf.getvalue(), "json")
    assert t2.slots.tolist() == [4, 0, 2] and t2.kinds == t.kinds and t2.attrs == {"k": [1, 2]}


@pytest.mark.parametrize("doc, match", [
    ('{"format": "libtopomap-topology", "version": 1, "vertices": [], ', "invalid JSON"),
    ('{"format": "other"}', "not a libtopomap topology"),
    ('{"format": "libtopomap-topology", "version": 7, "vertices": [], "links": []}', "unsupported version 7"),
    ('{"format": "libtopomap-topology", "version": 1, "vertices": [1], "links": []}', "vertex 0"),
    ('{"format": "libtopomap-topology", "version": 1, "vertices": [{"name": "a"}], "links": [[0, 3]]}',
     "out of range"),
    ('{"format": "libtopomap-topology", "version": 1, "vertices": [{"name": "a"}, {"name": "b"}], '
     '"links": [[0, 1, -1]]}', "capacit"),
])
def test_json_errors(tmp_path, doc, match):
    p = tmp_path / "bad.json"
    p.write_text(doc)
    with pytest.raises(FormatError, match=match) as ei:
        load(p)
    assert str(ei.value).startswith(str(p))


def test_sniffing_and_unknown_format(tmp_path):
    assert sniff("num: 4\n") == "ltm"
    assert sniff('  {"format": "libtopomap-topology"}') == "json"
    p = tmp_path / "mystery.dat"
    p.write_text("hello\n")
    with pytest.raises(FormatError, match="cannot tell the format"):
        load(p)
    with pytest.raises(FormatError, match="unknown format 'nope'"):
        load(p, format="nope")
    with pytest.raises(FormatError, match="cannot open"):
        load(tmp_path / "missing.ltm")


def test_shipped_examples_match_their_generators():
    import pathlib

    import libtopomap as L

    root = pathlib.Path(__file__).resolve().parents[1] / "topology_files"
    expected = {"torus-4x4": L.torus("4x4"), "torus-8x8x8": L.torus("8x8x8"), "fattree-k4-n3": L.fattree(4, 3),
                "dragonfly-g9-a4-p2-h2": L.dragonfly(9, 4, 2, 2), "percs-s4-d3": L.percs(4, 3, seed=1),
                "rtt-8": L.rtt(8)}
    for name, topo in expected.items():
        for ext in ("ltm", "json"):
            t = load(root / f"{name}.{ext}")
            assert t == topo, f"{name}.{ext}"
            assert t.name == name


def test_ltm_keeps_non_round_capacities_exactly():
    t = Topology(["a", "b", "c"], [(0, 1), (1, 2)], capacities=[1 / 3, 24.0])
    buf = io.StringIO()
    write_buffer(buf, t, "ltm")
    assert "1(24)" in buf.getvalue()
    assert np.array_equal(read_buffer(buf.getvalue(), "ltm").capacity, t.capacity)
