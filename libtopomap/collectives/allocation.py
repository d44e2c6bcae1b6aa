"""Allocation placements: which ``m`` compute nodes of a machine a job gets (Cui 2024, 3.2 and 4.4).

Every function returns the chosen host vertices *in allocation order*: random mapping in the order
the nodes were drawn, hierarchical-tree mapping in breadth-first order, ring-based consecutive mapping
along the ring, circulant mapping along the stride.  The job numbers its nodes in that order, and the
thesis' ascending-order rank placement (section 3.3.1) puts rank ``i`` on the ``i``-th node.  With
this reading the hop counts of Tables 3.4-3.6 are reproduced (e.g. Bcast on a random mapping: 1,363
over seeds 0-2 vs the thesis' 1,373; sorting the random nodes by global vertex id instead gives about
1,090, because consecutive ids are ring neighbours).
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import csgraph

from ..errors import MappingError
from ..vocabulary import ALLOCATIONS, check_choice

__all__ = ["ALLOCATIONS", "allocate", "random_allocation", "tree_allocation", "ring_allocation",
           "circulant_allocation", "ascending_allocation"]


def _check(topology, m):
    try:
        mm = int(m)
    except (TypeError, ValueError):
        raise MappingError(f"number of nodes must be an integer, got {m!r}") from None
    h = topology.hosts.size
    if mm != m or mm < 1:
        raise MappingError(f"number of nodes must be a positive integer, got {m!r}")
    if mm > h:
        raise MappingError(f"cannot allocate {mm} nodes: the topology has only {h} compute nodes")
    return mm


def ascending_allocation(topology, m):
    """The first ``m`` compute nodes by vertex index."""
    m = _check(topology, m)
    return topology.hosts[:m].astype(np.int64)


def random_allocation(topology, m, *, seed=None):
    """``m`` compute nodes drawn uniformly without replacement, in draw order (section 3.2.1)."""
    m = _check(topology, m)
    rng = np.random.default_rng(seed)
    return topology.hosts[rng.choice(topology.hosts.size, m, replace=False)].astype(np.int64)


def tree_allocation(topology, m, *, seed=None, root=None):
    """Hierarchical-tree mapping (section 3.2.2): breadth-first search from a root compute node.

    The root is ``root`` (a vertex index or name) or a random compute node; the first ``m`` compute
    nodes in BFS order (neighbours in vertex-index order; switches are passed through, not allocated)
    form the job, so the embedded tree's depth bounds the distance between any two of its nodes.
    """
    m = _check(topology, m)
    rng = np.random.default_rng(seed)
    if root is None:
        root = int(topology.hosts[rng.integers(topology.hosts.size)])
    elif isinstance(root, str):
        root = topology.index(root)
    root = int(root)
    if not 0 <= root < topology.n_vertices or topology.slots[root] <= 0:
        raise MappingError(f"tree root {root} is not a compute node")
    order = csgraph.breadth_first_order(topology.adjacency, root, directed=False, return_predecessors=False)
    order = order[topology.slots[order] > 0]
    return order[:m].astype(np.int64)


def ring_allocation(topology, m, *, seed=None, start=None):
    """Ring-based consecutive mapping (section 3.2.3): ``m`` consecutive compute nodes along the ring.

    The ring is the vertex-index order of the compute nodes (the ring of
    :func:`~libtopomap.generators.shortcut.random_shortcut_ring` and
    :func:`~libtopomap.generators.circulant.circulant`); the line starts at ``start`` (a position
    among the compute nodes) or at a random one and wraps around.
    """
    m = _check(topology, m)
    h = topology.hosts.size
    rng = np.random.default_rng(seed)
    s = int(rng.integers(h)) if start is None else int(start) % h
    return topology.hosts[(s + np.arange(m)) % h].astype(np.int64)


def circulant_allocation(topology, m, *, seed=None, start=None):
    """Circulant mapping, Algorithm 4.1: every ``(n/m)``-th node from a random start.

    For ``G(n, log2 n)`` and ``m`` a power of two the chosen nodes induce ``G(m, log2 m)`` and rank
    ``i`` on the ``i``-th node makes every binomial/recursive-doubling/Bruck message one hop.

    Raises
    ------
    MappingError
        When ``m`` does not divide the number ``n`` of compute nodes (no exact stride).
    """
    m = _check(topology, m)
    h = topology.hosts.size
    if h % m:
        raise MappingError(f"circulant mapping needs m to divide the number of compute nodes: {m} does not "
                           f"divide {h}")
    stride = h // m
    rng = np.random.default_rng(seed)
    s = int(rng.integers(h)) if start is None else int(start) % h
    return topology.hosts[(s + stride * np.arange(m)) % h].astype(np.int64)


def allocate(topology, m, method="random", *, seed=None):
    """Choose ``m`` compute nodes of ``topology`` for a job, in allocation order.

    Parameters
    ----------
    topology : Topology
    m : int
        Number of nodes (one process per node, as in the thesis).
    method : {"ascending", "random", "tree", "ring", "circulant"}
        See the functions of this module.
    seed : int, optional
        Random draw, tree root or ring/stride start.

    Returns
    -------
    numpy.ndarray of int64
        ``m`` distinct host vertex indices in allocation order.

    Raises
    ------
    MappingError
        Unknown method, ``m`` larger than the number of compute nodes, or no exact circulant stride.

    References
    ----------
    K. Cui, "Efficient Collective Communication in Interconnection Networks with Shortcut Network
    Topologies", PhD thesis, 2024, sections 3.2.1-3.2.3 and Algorithm 4.1.

    Examples
    --------
    >>> from libtopomap.generators.circulant import circulant
    >>> allocate(circulant(16), 4, "circulant", seed=0).tolist()
    [13, 1, 5, 9]
    """
    fns = {"ascending": lambda: ascending_allocation(topology, m),
           "random": lambda: random_allocation(topology, m, seed=seed),
           "tree": lambda: tree_allocation(topology, m, seed=seed),
           "ring": lambda: ring_allocation(topology, m, seed=seed),
           "circulant": lambda: circulant_allocation(topology, m, seed=seed)}
    check_choice("allocation", method)
    return fns[method]()
