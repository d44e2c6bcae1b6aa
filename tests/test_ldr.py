"""Seed 001 (Mehta 2005): the Moore bound (equation 4.1) and the LDR generator (section 4.3, Table 4.1)."""

import json

import networkx as nx
import numpy as np
import pytest

import libtopomap as ltm
from libtopomap import TopologyError, hypercube, ldr, properties
from libtopomap.cli import main
from libtopomap.generators.ldr import ldr_graph_edges, moore_bound


@pytest.mark.parametrize("nodes, degree, diameter", [(10, 3, 2), (50, 7, 2), (3250, 57, 2)])
def test_moore_bound_matches_the_three_moore_graphs_of_section_41(nodes, degree, diameter):
    # (nodes, degree, diameter): Petersen, Hoffman-Singleton, and the open (3250, 57, 2) case
    assert moore_bound(degree, diameter) == nodes


def test_moore_bound_counts_a_tree_of_fanout_d_minus_1():
    for d in range(3, 9):
        for k in range(0, 6):
            assert moore_bound(d, k) == 1 + sum(d * (d - 1) ** i for i in range(k))
    assert [moore_bound(2, k) for k in range(4)] == [1, 3, 5, 7]  # polygons
    assert moore_bound(1, 1) == 2 and moore_bound(0, 3) == 1
    with pytest.raises(TopologyError, match="degree >= 0"):
        moore_bound(-1, 2)


def _info(tmp_path, capsys, topo, *extra):
    p = tmp_path / "t.ltm"
    ltm.save(p, topo)
    capsys.readouterr()
    assert main(["info", str(p), *extra]) == 0
    return capsys.readouterr().out


def test_info_reports_the_moore_bound_of_regular_graphs(tmp_path, capsys):
    petersen = ltm.Topology.from_networkx(nx.petersen_graph())
    info = json.loads(_info(tmp_path, capsys, petersen, "--json"))
    assert (info["vertices"], info["degree_max"], info["diameter"], info["moore_bound"]) == (10, 3, 2, 10)
    hs = ltm.Topology.from_networkx(nx.hoffman_singleton_graph())
    info = json.loads(_info(tmp_path, capsys, hs, "--json"))
    assert (info["vertices"], info["degree_max"], info["diameter"], info["moore_bound"]) == (50, 7, 2, 50)
    # hypercube Q_4: degree 4, diameter 4 -> (4 * 3**4 - 2) / 2 = 161
    assert json.loads(_info(tmp_path, capsys, hypercube(4), "--json"))["moore_bound"] == 161
    text = _info(tmp_path, capsys, petersen)
    assert any(line.split() == ["moore_bound", "10"] for line in text.splitlines())
    # not regular, or with switches: no bound
    assert "moore_bound" not in json.loads(_info(tmp_path, capsys, ltm.mesh((3, 3)), "--json"))
    assert "moore_bound" not in json.loads(_info(tmp_path, capsys, ltm.fattree(4, 2), "--json"))
