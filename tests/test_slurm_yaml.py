"""Slurm topology.yaml: tree topologies read exactly like topology.conf, block topologies, strict errors."""

import pathlib

import pytest

import libtopomap as ltm
from libtopomap import FormatError
from libtopomap.adapters.slurm_yaml import parse_yaml_subset
from libtopomap.formats import read_buffer, sniff

# the topology.yaml(5) example, extended; benchmarks/fuzz_ingest.py mutates the same file
DOC = (pathlib.Path(__file__).parent / "data" / "slurm" / "topology.yaml").read_text()

CONF = """\
SwitchName=sw_root Switches=s[1-2]
SwitchName=s1 Nodes=node[01-04]
SwitchName=s2 Nodes=node[05-07],node10
"""


def _links(t):
    return sorted(tuple(sorted((t.names[u], t.names[v]))) for u, v in zip(t.link_u, t.link_v))


def test_tree_same_as_topology_conf(tmp_path):
    p = tmp_path / "topology.yaml"
    p.write_text(DOC)
    t = ltm.load(p)
    c = read_buffer(CONF, "slurm")
    assert t.name == "topo1"
    assert _links(t) == _links(c)
    assert sorted(t.names[v] for v in t.hosts) == sorted(c.names[v] for v in c.hosts)
    assert t.total_slots == 8 and t.attrs["warnings"] == [] and t.attrs["format"] == "slurm-yaml"


def test_block_topology():
    t = read_buffer(DOC, "slurm-yaml", topology="topo2")
    assert t.name == "topo2" and t.total_slots == 10
    sw = [(a, b) for a, b in _links(t) if not a.startswith("node") and not b.startswith("node")]
    # base blocks of 2 nodes; 4-node blocks join pairs of consecutive blocks; a root joins what is left
    assert sw == sorted(tuple(sorted(pair)) for pair in [("b1", "b1..b2"), ("b2", "b1..b2"), ("b3", "b3..b4"),
                         ("b4", "b3..b4"), ("b5", "b5..4"), ("b1..b2", "topo2-root"), ("b3..b4", "topo2-root"),
                         ("b5..4", "topo2-root")])
    assert ("b5", "node10") in _links(t) and ("b1", "node02") in _links(t)
    d = t.distances.pairs
    i = t.index
    assert d([i("node01")] * 3, [i("node02"), i("node04"), i("node09")]).tolist() == [2, 4, 6]


def test_choice_of_topology():
    default_second = DOC.replace("cluster_default: True", "cluster_default: false").replace(
        "cluster_default: false\n  block", "cluster_default: yes\n  block")
    assert read_buffer(default_second, "slurm-yaml").name == "topo2"
    no_default = DOC.replace("cluster_default: True", "cluster_default: false")
    assert read_buffer(no_default, "slurm-yaml").name == "topo1"  # the first that is not flat
    with pytest.raises(FormatError, match=r"<stream>:30: topology .topo3. is flat"):
        read_buffer(DOC, "slurm-yaml", topology="topo3")
    with pytest.raises(FormatError, match="no topology 'x'; the file has topo1, topo2, topo3"):
        read_buffer(DOC, "slurm-yaml", topology="x")


def test_sniffed():
    assert sniff(DOC) == "slurm-yaml"
    assert sniff(CONF) == "slurm"


def test_yaml_subset():
    assert parse_yaml_subset("- a: 1\n  b:\n  - x\n  -\n    c: 'it''s'\n- [p, q]\n") == [
        {"a": "1", "b": ["x", {"c": "it's"}]}, ["p", "q"]]
    doc = parse_yaml_subset(DOC)
    assert doc.lines == [2, 12, 29] and doc[0].lines["tree"] == 4


@pytest.mark.parametrize("text, line, message", [
    ("- topology: t\n  tree:\n\tswitches:\n", 3, "tab in the indentation"),
    ("- topology: t\n  tree:\n    switches:\n    - switch: s\n      nodes: n1\n      nodes: n2\n", 6,
     "key 'nodes' given twice (first on line 5)"),
    ("- topology: t\n  tree:\n    switches:\n    - nodes: n1\n", 4, "a switch needs 'switch: NAME'"),
    ("- topology: t\n  tree:\n    switches:\n    - switch: s\n      nodes: n[0-99999999]\n", 5,
     "this file, up to here, has 100000000 host and switch names, above the limit of 4194304"),
    ("- topology: t\n  tree:\n    switches:\n    - switch: s\n      nodes: n[3-1]\n", 5, "bad nodes list: empty range"),
    ("- topology: t\n  tree:\n    switches:\n    - switch: s\n    - switch: s\n", 5, "switch 's' defined again"),
    ("- topology: t\n  tree:\n    switches:\n    - switch: " + "x" * 65 + "\n", 4, "bad switch name"),
    ("- topology: t\n  block:\n    block_sizes: [4, 12]\n    blocks:\n    - block: b\n      nodes: n[1-4]\n", 3,
     "each size must be a power-of-two multiple"),
    ("- topology: t\n  block:\n    block_sizes: [4, x]\n    blocks:\n    - block: b\n", 3,
     "block_sizes must be a list of positive integers"),
    ("- topology: t\n  tree: &a\n", 2, "YAML feature outside what Slurm writes"),
    ("- topology: t\n  tree:\n    switches:\n    - switch: 's\n", 4, "unterminated quoted string"),
    ("- topology: t\n  cluster_default: True\n", 1, "must have exactly one of tree, block, flat (has none)"),
    ("- topology: t\n  tree:\n    switches: []\n  flat: true\n", 1,
     "exactly one of tree, block, flat (has tree, flat)"),
    ("- cluster_default: true\n  topology: t\n", 1, "a topology starts with 'topology: NAME'"),
    ("- topology: t\n  tree:\n    switches:\n      - switch: s\n     nodes: n1\n", 5, "unexpected indentation"),
    ("- topology: t\n  tree:\n    switches: []\n", 3, "expected a non-empty list 'switches:'"),
    ("- topology: t\n  cluster_default: maybe\n  flat: true\n", 2, "cluster_default must be true or false"),
    ("topology: t\n", 1, "expected a list of topologies"),
    ("# nothing\n", 1, "empty file"),
])
def test_errors(text, line, message):
    with pytest.raises(FormatError) as e:
        read_buffer(text, "slurm-yaml", path="topology.yaml")
    assert str(e.value).startswith(f"topology.yaml:{line}: "), str(e.value)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_unknown_keys_warn_or_fail_when_strict():
    text = "- topology: t\n  tree:\n    switches:\n    - switch: s\n      nodes: n[1-2]\n      speed: 5\n"
    t = read_buffer(text, "slurm-yaml")
    assert t.total_slots == 2
    assert t.attrs["warnings"] == ["<stream>:6: unknown key 'speed' ignored"]
    with pytest.raises(FormatError, match=r"<stream>:6: strict mode: unknown key 'speed' ignored"):
        read_buffer(text, "slurm-yaml", strict=True)
