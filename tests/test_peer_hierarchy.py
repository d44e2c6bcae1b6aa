"""``benchmarks/peer_mappers.py``: the padded hierarchy that lets KaHIP and SharedMap map a fragmented
allocation of a tree (bench_smpi's peers), and the peers' placements staying inside the allocation."""

import importlib.util
import pathlib

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.patterns import stencil
from libtopomap.rankfiles import Allocation, allocation_topology

_PATH = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "peer_mappers.py"
_spec = importlib.util.spec_from_file_location("peer_mappers", _PATH)
pm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pm)


def two_level(hosts, per_leaf, spines):
    leaves = hosts // per_leaf
    names = ([f"n{i}" for i in range(hosts)] + [f"leaf{j}" for j in range(leaves)]
             + [f"spine{s}" for s in range(spines)])
    links = [(i, hosts + i // per_leaf) for i in range(hosts)]
    links += [(hosts + j, hosts + leaves + s) for j in range(leaves) for s in range(spines)]
    kinds = ["host"] * hosts + ["switch"] * (leaves + spines)
    return ltm.Topology(names, links, slots=[1] * hosts + [0] * (leaves + spines), kinds=kinds)


def fragment(topo, hosts):
    alloc = Allocation(tuple(f"n{i}" for i in hosts), tuple(1 for _ in hosts))
    return allocation_topology(topo, alloc)


def test_padded_hierarchy_of_a_fragmented_two_level_tree():
    # leaves of 4 hosts; the job has 3, 1 and 2 hosts on leaves 0, 1, 3 (leaf 2 unused)
    topo = two_level(16, 4, 2)
    hosts = [0, 1, 3, 6, 13, 14]
    r, _ = fragment(topo, hosts)
    ar, dist, pe = pm.padded_hierarchy(r, r.slots)
    assert ar == [3, 3] and dist == [2, 4]
    assert pe.size == 9
    # every allocated host is one PE; the padding of a leaf is a host of that leaf
    assert sorted(set(pe.tolist())) == hosts
    assert np.bincount(pe, minlength=16)[hosts].tolist() == [1, 1, 1, 3, 2, 1]
    assert pe.tolist() == [0, 1, 3, 6, 6, 6, 13, 14, 13]


def test_padded_hierarchy_of_a_full_tree_is_the_machine_hierarchy():
    t = ltm.fattree(4, 2)
    full = pm.machine_hierarchy(t, t.slots)
    pad = pm.padded_hierarchy(t, t.slots)
    assert full[0] == pad[0] and full[1] == pad[1]
    assert np.array_equal(full[2], pad[2])


@pytest.mark.parametrize("peer", ["kahip", "sharedmap"])
def test_peers_map_a_fragmented_allocation_inside_it(peer):
    if peer == "kahip" and pm.kahip_lib() is None:
        pytest.skip("kahip (the peers extra) is not installed")
    if peer == "sharedmap" and not pm.have("chszlablib"):
        pytest.skip("chszlablib (the peers extra) is not installed")
    topo = two_level(64, 8, 4)
    hosts = sorted(np.random.default_rng(1).choice(64, size=32, replace=False).tolist())
    r, _ = fragment(topo, hosts)
    g = stencil((8, 4), periodic=True)
    hier = pm.padded_hierarchy(r, r.slots)
    v = (pm.run_kahip(pm.kahip_lib(), r, g, r.slots, hier, 1) if peer == "kahip"
         else pm.run_sharedmap(r, g, r.slots, hier, "fast"))
    assert sorted(v.tolist()) == hosts
