"""Hierarchical multisection for tree-like networks (fat trees, InfiniBand fabrics, dragonflies).

The machine hierarchy is read off the topology (:func:`topology_hierarchy`): hosts under their
leaf switches, leaf switches under the switches one level up, and so on, until the whole machine is
one subtree.  The communication graph is then split top-down (:func:`map_multisection`): at every
subtree into as many parts as it has children, each part sized exactly by the slots of the child
it goes to, and the parts are placed onto the children recursively.  On a tree every message
between two processes costs twice the height of their lowest common subtree, so a split that cuts
little traffic at every level is what makes hop-bytes small.

This is the hierarchical multisection of SharedMap (Schulz & Woydt 2025) and the multisection
initial mapping of KaHIP's integrated process mapping (Faraj et al. 2020), with the hierarchy
derived from the network instead of given as ``a_1:a_2:...``, exact part sizes (slots, partial
allocations, several slots per host), several METIS tries per split, an exact-balance swap
refinement of every split, exact pairing on hosts of two slots, and a final hop-bytes swap search
over the whole mapping (the engine's :func:`~libtopomap.mappers.hopbytes_swap.hopbytes_swap`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.sparse import csgraph

from .._kernels import multi_source_levels, multi_source_owners
from ..commgraph import CommGraph, SymGraph
from ..distances import near_slot_cache
from ..topology import Topology
from ..mapping import Mapping
from ..metrics import evaluate
from ._common import finish, prepare
from .hopbytes_swap import hopbytes_swap, threshold_swap_passes
from .recursive import _balance_csr, _metis_csr, _subgraph
from .. import _numba_cache  # noqa: F401  (an unreadable cache file is a miss, not an error)

__all__ = ["Hierarchy", "topology_hierarchy", "map_multisection", "refine_parts"]

#: METIS tries per split (different seeds); the split with the smallest cut after the exact-balance
#: fix-up and the swap refinement is kept.  Splits are METIS recursive bisections with target part
#: weights whatever the number of parts: k-way METIS gave the same part for every seed on the
#: 1,024- and 256-process splits of the 32,768-process fat tree and dragonfly, 5-30 % more cut
#: after the fix-up, and took three times as long.
TRIES = 5

#: Passes of pairwise re-bisection over the adjacent parts of a split (stops early without gain).
PAIR_PASSES = 2

#: Smallest mean part size of a split whose pairs of parts are re-split.
PAIR_MIN_SIZE = 64

#: Largest split (processes) that gets the extra effort: ``tries`` METIS runs and the pairwise
#: re-bisection; larger splits get one METIS run.  The top splits of a machine with tens of
#: thousands of processes cost most per run and gain least from a second one (0.3-1 % of
#: hop-bytes on the 32,768-process fat tree, for most of the construction time).
EFFORT_MAX = 8192

#: Pairs of adjacent parts re-split per pass, per part of the split.
PAIRS_PER_PART = 8

#: Largest split onto hosts of two slots that gets the exact pairing (:func:`_pair_parts`, a
#: maximum-weight matching by networkx's blossom algorithm, ``O(n^3)`` in pure Python: 10 ms for
#: the 16 processes under a leaf switch of an 8-ary fat tree, 0.1 s for 256) when the METIS split
#: leaves a pair that does not communicate.
PAIR_EXACT_MAX = 256

#: Rounds of the exact-balance swap refinement per split.
REFINE_ROUNDS = 8

#: Communication-graph depth ``d`` of the final hop-bytes swap search (the neighbourhood
#: ``N_C^d`` of :func:`~libtopomap.mappers.hopbytes_swap.hopbytes_swap`).  4 beat the former
#: partners-and-theirs search (``d = 2``) on the fat tree, avakas and dragonfly instances of
#: ``benchmarks/bench_quality.py``; ``d = 10`` (VieM's) gains a little more on avakas for twice the time.
SWAP_DEPTH = 4

#: Moves of the final hop-bytes swap search at the most (all instances of
#: ``benchmarks/bench_quality.py``, up to 4,096 processes, reach a local optimum in fewer).  At
#: 32,768 processes the search to a local optimum took 10-12 million moves, more than the whole
#: construction, for 0.04-0.1 % of hop-bytes.
SWAP_MOVES = 1 << 22

#: Rounds of iterated local search after the descent: in round ``r`` (from 0) :data:`KICK_PASSES`
#: threshold passes (:func:`~libtopomap.mappers.hopbytes_swap.threshold_swap_passes` over
#: ``N_C^d``, first threshold ``(r + 1) x KICK_LEVEL`` median edge weights) from the best mapping
#: so far, then the descent again; the result replaces the best when it has fewer hop-bytes.  At
#: most :data:`KICK_MOVES` threshold swaps over all rounds.  On ``benchmarks/bench_quality.py``
#: (seed 1): the 16x16 torus / 4x64 stencil 1,756 -> 1,672 hop-bytes, 32x32 / 16x64 9,936 -> 9,108,
#: 8x8x8 7,104 -> 6,208, dragonfly g9 a4 p2 h2 892 -> 876, g17 a8 p4 h2 9,740 -> 9,570, the 4,096
#: fat tree 51,616 -> 51,576, never worse, for 0.1-0.7 s a round (idle); rounds with one threshold
#: gained after the first round nothing, passes over ``N_C^2`` a third to a half as much.
KICK_PASSES = 10
KICK_ROUNDS = 5
KICK_LEVEL = 2.0
KICK_MOVES = 1 << 21
#: Processes up to which the rounds get all of :data:`KICK_MOVES`; above, their swaps shrink as
#: ``1 / P``.  With the full budget at 4,096 processes (8-ary 4-tree, 64x64 stencil) the rounds
#: doubled multisection's CPU time (0.75 -> 1.8 s, load ~5) for 0.08 % of hop-bytes, and on the
#: 32,768-host 32-ary 3-tree added 5.2 s to 13.6 s for 0.016 %; the 1,024-process torus gains 8 %.
KICK_FULL = 1024
#: Processes above which there are no rounds.  At 4,096 processes they bought 32 hop-bytes of
#: 51,616 on the 8-ary 4-tree with a 64x64 stencil and 20 of 70,458 on the 4,224-host dragonfly
#: with a 16^3 stencil (gains by round [20, 12, 0, 0, 0] and [20, 0, 0, 0, 0]) for 0.3-0.6 s (load
#: ~4), mostly the descent after each round, which starts again from ``N_C^1``; and the result of
#: ``map --strategy all --refine ta`` was the same without them (fat tree: multisection+ta 4 /
#: 51,556 either way; dragonfly: 23.33 / 75,628 without, 23.33 / 75,734 with; the race's winners
#: in ``benchmarks/results/speed_s7.md`` unchanged).  ``bench_quality.py``'s fat tree: multisection
#: 51,584 -> 51,616 hop-bytes (SharedMap fast 51,816).
KICK_MAX = 2048

#: Processes up to which, on a dragonfly with its generator's groups, the final swap search runs on
#: both hierarchies and the lower (maximum congestion, hop-bytes) is kept; above, it runs on the
#: better of the two descents only.  At 512 processes (``dragonfly(17, 8, 4, 2)``, 8x8x8 stencil)
#: the search turned the order round (17.33 / 9,750 -> 16.5 / 9,654 on the group hierarchy,
#: 19.92 / 9,892 -> 15.5 / 9,570 on the links alone); on the 4,224-host dragonfly with a 16^3
#: stencil it kept it (41 / 70,550 -> 41 / 70,438 and 36.33 / 72,116 -> 36.33 / 71,952) and the
#: second search cost 2.0-3.5 s, the larger part of the whole ``map --strategy all --refine ta``.
SEARCH_BOTH_MAX = 1024

#: Descents from different METIS seeds per tree hierarchy under ``objective="hopbytes"`` (up to
#: :data:`EFFORT_MAX` processes), the lowest (maximum congestion, hop-bytes) going on, the order in
#: which the hierarchies are compared (by hop-bytes alone, a recursive-doubling allreduce on
#: ``dragonfly(5, 4, 2, 1)`` went from max congestion 48 to 56).  On the 8-ary 4-tree with a
#: scrambled 64x64 stencil six seeds gave descents of 51,500-51,908 hop-bytes, and the swap search
#: after them changed at most 20: the seed of the splits decides, not the search.  Not on a torus's
#: hierarchy of boxes, where the search decides: the descent with the fewest hop-bytes of three
#: ended at 8,868 hop-bytes on a 32x32 torus with a 16x64 stencil, the first alone at 8,384.
HOPBYTES_STARTS = 3

#: Processes a search of :func:`_repair_lonely_pairs` visits at the most (per lonely host).
REPAIR_VISITS = 4096


@dataclass(frozen=True)
class Hierarchy:
    """A rooted tree over the slot vertices of a topology.

    Nodes ``0 .. H-1`` are the leaves, one per slot vertex in :attr:`Topology.hosts` order; inner
    nodes follow, the root last.

    Attributes
    ----------
    parent : numpy.ndarray of int64
        Parent node of every node, -1 for the root.
    vertex : numpy.ndarray of int64
        Topology vertex of a leaf, -1 for inner nodes.
    rep : numpy.ndarray of int64
        A slot vertex under every node (the first leaf below it).
    flat : numpy.ndarray of bool
        Whether every child of the node is at the same distance from every other child (checked on
        the children's representatives): the order of the parts among the children matters only
        through their traffic to the outside.  True for leaves.
    child_ptr, child_idx : numpy.ndarray of int64
        Children of node ``x``: ``child_idx[child_ptr[x]:child_ptr[x + 1]]``.
    root : int
    grid : bool
        A coordinate bisection of a torus or mesh (:func:`_grid_tree`): every inner node has two
        children, boxes of the grid.
    """

    parent: np.ndarray
    vertex: np.ndarray
    rep: np.ndarray
    flat: np.ndarray
    child_ptr: np.ndarray
    child_idx: np.ndarray
    root: int
    grid: bool = False

    @property
    def n_nodes(self):
        return int(self.parent.size)

    def children(self, x):
        """Child nodes of node ``x`` (empty for a leaf)."""
        return self.child_idx[self.child_ptr[x]:self.child_ptr[x + 1]]

    def depth(self):
        """Depth of every node (the root has 0)."""
        d = np.zeros(self.n_nodes, np.int64)
        for x in self._top_down():
            if self.parent[x] >= 0:
                d[x] = d[self.parent[x]] + 1
        return d

    def _top_down(self):
        order = [self.root]
        i = 0
        while i < len(order):
            order.extend(self.children(order[i]).tolist())
            i += 1
        return order

    def arities(self):
        """``[a_1, ..., a_l]`` bottom-up when every inner node of one depth has the same number of
        children and every leaf is at the same depth (the ``hierarchy`` argument of KaHIP and
        SharedMap), else None.

        Examples
        --------
        >>> from libtopomap import fattree
        >>> topology_hierarchy(fattree(4, 3)).arities()
        [4, 4, 4]
        """
        d = self.depth()
        leaves = self.vertex >= 0
        if np.unique(d[leaves]).size != 1:
            return None
        out = []
        for level in range(int(d[leaves][0])):
            nodes = np.flatnonzero((d == level) & ~leaves)
            k = np.unique(self.child_ptr[nodes + 1] - self.child_ptr[nodes])
            if k.size != 1:
                return None
            out.append(int(k[0]))
        return out[::-1]


def _generator_groups(topology):
    """Group of every host from the generator's attributes (a dragonfly of
    :func:`~libtopomap.dragonfly` with more than one group, hosts ``0 .. H-1``), or None."""
    t = topology
    a = t.attrs
    if a.get("generator") != "dragonfly" or int(a.get("groups", 1)) <= 1:
        return None
    hosts = t.hosts.astype(np.int64)
    per_group = int(a["routers"]) * max(int(a["terminals"]), 1)
    if hosts.size != int(a["groups"]) * per_group or not np.array_equal(hosts, np.arange(hosts.size)):
        return None
    return hosts // per_group


def _host_partitions(topology, generator_groups=True):
    """Nested partitions of the slot vertices, finest first (labels per host, ``H`` entries each).

    Switch levels are hop distances from the nearest slot vertex (one multi-source BFS).  A host
    hangs under its anchor, its lowest-index neighbouring switch (the finest partition); at height
    ``r`` two hosts are
    together when their anchors are connected through switches of level ``<= r`` (connected
    components).  A dragonfly built by :func:`~libtopomap.dragonfly` also gets its groups
    (``generator_groups``).
    """
    t = topology
    n = t.n_vertices
    hosts = t.hosts.astype(np.int64)
    H = hosts.size
    is_host = np.asarray(t.slots) > 0
    level = multi_source_levels(t.indptr, t.indices, n, hosts)
    src = np.asarray(t.arc_source, np.int64)
    dst = np.asarray(t.indices, np.int64)
    to_switch = is_host[src] & ~is_host[dst]
    anchor = np.full(n, n, np.int64)
    np.minimum.at(anchor, src[to_switch], dst[to_switch])
    anchor = anchor[hosts]
    has_anchor = anchor < n
    # hosts under one switch (switches of level 1 may be linked to each other, as in a dragonfly)
    parts = [np.where(has_anchor, anchor, n + np.arange(H))]
    top = int(level.max()) if n else 0
    switch = ~is_host & (level >= 1)
    for r in range(1, top + 1):
        member = switch & (level <= r)
        keep = member[src] & member[dst]
        adj = sp.csr_matrix((np.ones(int(keep.sum()), np.int8), (src[keep], dst[keep])), shape=(n, n))
        _, comp = csgraph.connected_components(adj, directed=False)
        lab = np.where(has_anchor, comp[np.minimum(anchor, n - 1)], n + np.arange(H))
        parts.append(lab)
    groups = _generator_groups(t) if generator_groups else None
    if groups is not None:
        parts.append(groups)
    return parts


def _is_nested(fine, coarse):
    """Whether every group of ``fine`` lies inside one group of ``coarse``."""
    f = np.unique(fine, return_inverse=True)[1]
    pairs = np.unique(f * (int(coarse.max()) + 1) + (coarse - coarse.min()))
    return pairs.size == int(f.max()) + 1


def topology_hierarchy(topology, *, generator_groups=True):
    """The machine hierarchy of a topology: hosts under leaf switches, leaves under the switches
    one level up, ... up to one root.

    Parameters
    ----------
    topology : Topology
    generator_groups : bool
        Add the groups of a dragonfly from its generator's attributes (default); False reads the
        hierarchy off the links alone.

    Returns
    -------
    Hierarchy

    Notes
    -----
    The levels come from the network itself (:func:`_host_partitions`): switch levels are hop
    distances from the nearest host, and the hosts below a connected group of switches of level
    ``<= r`` form one subtree of height ``r``; only heights that merge subtrees are kept.  Dragonfly
    groups are added from the generator's attributes.  An inner node with more than two children
    that are not all at the same distance from each other (the root of a torus, routers of
    different dragonfly groups when no group attributes are known) is split further by recursive
    METIS bisection of the graph between its children (vertex weight = slots, edge weight = link
    capacity, every vertex counted with the child whose hosts reach it first), so that children
    close to each other stay in one subtree.  A torus or mesh whose hosts are its grid points gets
    a coordinate bisection instead (:func:`_grid_tree`: boxes cut across their longest side, as
    Scotch's torus target).

    Examples
    --------
    >>> from libtopomap import fattree
    >>> h = topology_hierarchy(fattree(2, 3))
    >>> h.arities(), h.n_nodes
    ([2, 2, 2], 15)
    """
    t = topology
    grid = _grid_tree(t)
    if grid is not None:
        return grid
    hosts = t.hosts.astype(np.int64)
    H = hosts.size
    parent = [-1] * H
    current = np.arange(H, dtype=np.int64)  # node of every host at the current height
    n_groups = H
    chain = []
    for lab in sorted(_host_partitions(t, generator_groups), key=lambda x: -np.unique(x).size):
        k = np.unique(lab).size
        if k >= n_groups or k < 1 or (chain and not _is_nested(chain[-1], lab)):
            continue
        if not chain and not _is_nested(current, lab):
            continue
        chain.append(lab)
        n_groups = k
    for lab in chain:
        groups, inv = np.unique(lab, return_inverse=True)
        base = len(parent)
        parent.extend([-1] * groups.size)
        nodes, first = np.unique(current, return_index=True)
        for x, g in zip(nodes.tolist(), inv[first].tolist()):
            parent[x] = base + g
        current = base + inv
    if np.unique(current).size > 1:
        root = len(parent)
        parent.append(-1)
        for x in np.unique(current).tolist():
            parent[x] = root
    parent = np.asarray(parent, np.int64)
    return _split_uneven(t, _finish_tree(parent, hosts))


def _grid_tree(topology):
    """The hierarchy of a torus or mesh whose slot vertices are its grid points, or None:
    recursive coordinate bisection of the box of grid points, always across its longest side
    (halves of ``floor`` and ``ceil`` points; the first such dimension on a tie), down to single
    points.  Every inner node is a box; its representative is the grid point nearest the box's
    centre, so that :func:`_order` sees where a subtree lies.

    This is the shape of Scotch's torus and mesh targets (recursive bipartitioning of the
    coordinates): the parts of the communication graph land in boxes whose sides keep the
    proportions of the grid, where a METIS bisection of the torus graph (the fall-back for other
    uneven nodes) may cut the 16x16 torus into strips or snakes.
    """
    shape = topology.distances.grid_shape
    if shape is None or topology.distances.kind != "grid":
        return None
    dims = np.asarray(shape[0], np.int64)
    m = int(np.prod(dims))
    hosts = topology.hosts.astype(np.int64)
    if hosts.size < 2 or hosts.size != m or not np.array_equal(hosts, np.arange(m)):
        return None
    strides = np.r_[np.cumprod(dims[::-1])[::-1][1:], 1].astype(np.int64)
    parent = [-1] * m
    rep = [int(x) for x in range(m)]
    # (node, lo, size) boxes, top-down; the root is node m
    parent.append(-1)
    rep.append(0)
    stack = [(m, np.zeros(dims.size, np.int64), dims.copy())]
    while stack:
        x, lo, size = stack.pop()
        rep[x] = int(np.dot(lo + (size - 1) // 2, strides))
        d = int(np.argmax(size))
        half = size[d] // 2
        for off, sz in ((0, half), (half, size[d] - half)):
            clo, csz = lo.copy(), size.copy()
            clo[d] += off
            csz[d] = sz
            if int(np.prod(csz)) == 1:
                parent[int(np.dot(clo, strides))] = x
                continue
            parent.append(x)
            rep.append(0)
            stack.append((len(parent) - 1, clo, csz))
    parent = np.asarray(parent, np.int64)
    h = _finish_tree(parent, hosts, np.zeros(parent.size, bool))
    flat = np.zeros(parent.size, bool)
    flat[:m] = True
    return Hierarchy(h.parent, h.vertex, np.asarray(rep, np.int64), flat, h.child_ptr, h.child_idx, h.root, True)


def _finish_tree(parent, hosts, flat=None):
    N = parent.size
    H = hosts.size
    vertex = np.full(N, -1, np.int64)
    vertex[:H] = hosts
    root = int(np.flatnonzero(parent < 0)[0])
    kids = np.flatnonzero(parent >= 0)
    order = np.argsort(parent[kids], kind="stable")
    child_idx = kids[order].astype(np.int64)
    child_ptr = np.zeros(N + 1, np.int64)
    np.cumsum(np.bincount(parent[kids], minlength=N), out=child_ptr[1:])
    rep = np.full(N, -1, np.int64)
    rep[:H] = hosts
    # children have larger ids than their parents except leaves: settle bottom-up by repeated passes
    for x in _bottom_up(child_ptr, child_idx, root):
        if rep[x] < 0:
            rep[x] = rep[child_idx[child_ptr[x]]]
    if flat is None:
        flat = np.ones(N, bool)
    return Hierarchy(parent, vertex, rep, np.asarray(flat, bool), child_ptr, child_idx, root)


def _bottom_up(child_ptr, child_idx, root):
    order = [root]
    i = 0
    while i < len(order):
        x = order[i]
        order.extend(child_idx[child_ptr[x]:child_ptr[x + 1]].tolist())
        i += 1
    return order[::-1]


def _equidistant(topology, reps):
    """Whether the vertices ``reps`` (two or more) look pairwise equidistant: the distances from
    the first two to all others are one value."""
    o = topology.distances
    r = np.asarray(reps, np.int64)
    a = np.r_[np.full(r.size - 1, r[0]), np.full(r.size - 2, r[1])]
    b = np.r_[r[1:], r[2:]]
    d = o.pairs(a, b)
    return bool(d.min() == d.max())


def _split_uneven(topology, h):
    """Binarise, by recursive METIS bisection, every node whose (more than two) children are not
    equidistant; mark the others flat."""
    t = topology
    parent = h.parent.tolist()
    flat = [True] * h.n_nodes
    hosts = h.vertex[h.vertex >= 0]
    for x in range(h.n_nodes):
        kids = h.children(x)
        if kids.size <= 1:
            continue
        if kids.size == 2:
            flat[x] = False
            continue
        reps = h.rep[kids]
        if np.all(h.vertex[kids] >= 0):
            # hosts: equidistant at once when they all hang under one switch and nothing else
            nb = t.indices[t.indptr[reps]]
            deg = t.indptr[reps + 1] - t.indptr[reps]
            if np.all(deg == 1) and np.unique(nb).size == 1:
                continue
        if _equidistant(t, reps):
            continue
        flat[x] = False
        _bisect_children(t, h, x, kids, parent, flat)
    parent = np.asarray(parent, np.int64)
    return _finish_tree(parent, hosts, flat + [False] * (parent.size - len(flat)))


def _bisect_children(topology, h, x, kids, parent, flat):
    """Replace the children of ``x`` by a binary tree of new nodes: recursive METIS bisection of
    the graph between the children (each vertex counted with the child whose hosts reach it first)."""
    t = topology
    n = t.n_vertices
    k = kids.size
    # which child every vertex belongs to: multi-source BFS from the hosts under each child
    owner = np.full(n, -1, np.int64)
    leaf_of = _leaves_under(h, kids)
    for i, leaves in enumerate(leaf_of):
        owner[h.vertex[leaves]] = i
    seeds = np.flatnonzero(owner >= 0)
    owner = multi_source_owners(t.indptr, t.indices, n, seeds, owner)
    u = np.asarray(t.link_u, np.int64)
    v = np.asarray(t.link_v, np.int64)
    ou, ov = owner[u], owner[v]
    cross = (ou >= 0) & (ov >= 0) & (ou != ov)
    q = sp.coo_matrix((np.r_[t.capacity[cross], t.capacity[cross]], (np.r_[ou[cross], ov[cross]],
                       np.r_[ov[cross], ou[cross]])), shape=(k, k)).tocsr()
    q.sum_duplicates()
    q.sort_indices()
    qp, qi, qv = q.indptr.astype(np.int64), q.indices.astype(np.int64), q.data.astype(np.float64)
    weight = np.array([int(np.asarray(t.slots)[h.vertex[lv]].sum()) for lv in leaf_of], np.int64)
    pos = np.full(k, -1, np.int64)
    stack = [(x, np.arange(k))]
    while stack:
        node, members = stack.pop()
        if members.size <= 2:
            for m in members.tolist():
                parent[kids[m]] = node
            flat[node] = False if members.size == 2 else flat[node]
            continue
        sp_, si, sv = _subgraph(qp, qi, qv, members, pos)
        side = _metis_csr(sp_, si, sv, 2, np.maximum(weight[members], 1), None, 0)
        if side.min() == side.max():
            side = (np.arange(members.size) >= members.size // 2).astype(np.int64)
        for s in (0, 1):
            sub = members[side == s]
            if sub.size == 1:
                parent[kids[sub[0]]] = node
                continue
            new = len(parent)
            parent.append(node)
            flat.append(False)
            stack.append((new, sub))


def _leaves_under(h, nodes):
    out = []
    for x in np.asarray(nodes).tolist():
        stack, leaves = [x], []
        while stack:
            y = stack.pop()
            if h.vertex[y] >= 0:
                leaves.append(y)
            else:
                stack.extend(h.children(y).tolist())
        out.append(np.asarray(leaves, np.int64))
    return out


# --------------------------------------------------------------------------------- partitioning
@njit(cache=True)
def _gain(ptr, idx, val, parts, v, to):
    g = 0.0
    own = parts[v]
    for a in range(ptr[v], ptr[v + 1]):
        p = parts[idx[a]]
        if p == to:
            g += val[a]
        elif p == own:
            g -= val[a]
    return g


@njit(cache=True)
def _weight(ptr, idx, val, u, v):
    w = 0.0
    for a in range(ptr[u], ptr[u + 1]):
        if idx[a] == v:
            w += val[a]
    return w


@njit(cache=True)
def _swap_refine(ptr, idx, val, parts, k, rounds):
    """Pairwise swaps between parts that lower the cut; part sizes never change.

    Every round finds each vertex's best other part (most edge weight to it minus to its own
    part), then for every pair of parts ``(A, B)`` walks the vertices of ``A`` that want ``B`` and
    those of ``B`` that want ``A`` by decreasing gain and swaps pairs while the exact combined gain
    (recomputed on the current parts, minus twice their common edge) is positive.  Returns the cut
    weight removed (each edge counted once per direction stored)."""
    n = ptr.size - 1
    conn = np.zeros(k)
    touched = np.empty(k, np.int64)
    gain = np.empty(n)
    want = np.empty(n, np.int64)
    total = 0.0
    for _ in range(rounds):
        nc = 0
        for v in range(n):
            nt = 0
            for a in range(ptr[v], ptr[v + 1]):
                p = parts[idx[a]]
                if conn[p] == 0.0:
                    touched[nt] = p
                    nt += 1
                conn[p] += val[a]
            own = conn[parts[v]]
            bg = -np.inf
            bt = -1
            for i in range(nt):
                p = touched[i]
                if p != parts[v] and conn[p] - own > bg:
                    bg = conn[p] - own
                    bt = p
            for i in range(nt):
                conn[touched[i]] = 0.0
            want[v] = bt
            gain[v] = bg
            if bt >= 0:
                nc += 1
        if nc == 0:
            break
        cand = np.empty(nc, np.int64)
        j = 0
        for v in range(n):
            if want[v] >= 0:
                cand[j] = v
                j += 1
        o1 = np.argsort(-gain[cand], kind="mergesort")
        cand = cand[o1]
        key = np.empty(nc, np.int64)
        for i in range(nc):
            key[i] = parts[cand[i]] * k + want[cand[i]]
        o2 = np.argsort(key, kind="mergesort")
        cand = cand[o2]
        key = key[o2]
        start = np.searchsorted(key, np.arange(k * k + 1))
        improved = 0.0
        for A in range(k):
            for B in range(A + 1, k):
                i, i_end = start[A * k + B], start[A * k + B + 1]
                j, j_end = start[B * k + A], start[B * k + A + 1]
                while i < i_end and j < j_end:
                    u = cand[i]
                    v = cand[j]
                    if parts[u] != A:
                        i += 1
                        continue
                    if parts[v] != B:
                        j += 1
                        continue
                    d = _gain(ptr, idx, val, parts, u, B) + _gain(ptr, idx, val, parts, v, A) \
                        - 2.0 * _weight(ptr, idx, val, u, v)
                    if d <= 1e-12:
                        break
                    parts[u] = B
                    parts[v] = A
                    improved += d
                    i += 1
                    j += 1
        total += improved
        if improved <= 1e-12:
            break
    return total


@njit(cache=True)
def _placed_swap_refine(ptr, idx, val, side, ext, cutw, rounds):
    """Pairwise swaps between the two sides of a placed bisection that lower ``cutw x cut + sum of
    the external costs``; ``ext[v]`` is what process ``v`` costs more on side 1 than on side 0
    (its traffic to processes outside the split, times the difference of the distances to them).
    Sizes never change.  Returns the cost removed."""
    n = ptr.size - 1
    ben = np.empty(n)
    total = 0.0
    for _ in range(rounds):
        n0 = 0
        for v in range(n):
            g = _gain(ptr, idx, val, side, v, 1 - side[v])
            ben[v] = cutw * g + (-ext[v] if side[v] == 0 else ext[v])
            if side[v] == 0:
                n0 += 1
        a = np.empty(n0, np.int64)
        b = np.empty(n - n0, np.int64)
        i0 = 0
        i1 = 0
        for v in range(n):
            if side[v] == 0:
                a[i0] = v
                i0 += 1
            else:
                b[i1] = v
                i1 += 1
        a = a[np.argsort(-ben[a], kind="mergesort")]
        b = b[np.argsort(-ben[b], kind="mergesort")]
        improved = 0.0
        i = 0
        j = 0
        while i < a.size and j < b.size:
            u = a[i]
            v = b[j]
            d = cutw * (_gain(ptr, idx, val, side, u, 1) + _gain(ptr, idx, val, side, v, 0)
                        - 2.0 * _weight(ptr, idx, val, u, v)) - ext[u] + ext[v]
            if d <= 1e-9:
                break
            side[u] = 1
            side[v] = 0
            improved += d
            i += 1
            j += 1
        total += improved
        if improved <= 1e-9:
            break
    return total


def _placed_refine(topology, h, kids, child_of, procs, sp_, si, sv, loc, sym, inside):
    """:func:`_placed_swap_refine` of a split into two children of a grid hierarchy: the cut counts
    with the distance between the children's representatives, the traffic to processes outside the
    split with the distances from each child's representative to where they are now."""
    s, nb, w = _subset_arcs(sym, procs, inside)
    reps = h.rep[kids]
    o = topology.distances
    ext = np.zeros(procs.size)
    if nb.size:
        where = loc[nb]
        d1 = o.pairs(np.full(where.size, reps[1]), where)
        d0 = o.pairs(np.full(where.size, reps[0]), where)
        ext = np.bincount(s, weights=w * (d1 - d0), minlength=procs.size)
    cutw = float(max(o.pairs(reps[:1], reps[1:2])[0], 1))
    side = child_of.astype(np.int64).copy()
    _placed_swap_refine(sp_, si, sv, side, ext, cutw, REFINE_ROUNDS)
    return side


def refine_parts(adj, parts, *, rounds=REFINE_ROUNDS):
    """Lower the cut of a partition by swapping vertices between parts (sizes stay exact).

    Parameters
    ----------
    adj : scipy.sparse matrix, symmetric, weights = edge weights
    parts : array_like of int
    rounds : int

    Returns
    -------
    numpy.ndarray of int64
        The refined parts; the cut is never larger than that of ``parts``.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> path = sp.csr_matrix(([1.0] * 6, ([0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2])), shape=(4, 4))
    >>> refine_parts(path, [0, 1, 0, 1]).tolist()
    [0, 0, 1, 1]
    """
    a = sp.csr_matrix(adj)
    a.sort_indices()
    p = np.asarray(parts, np.int64).copy()
    k = int(p.max()) + 1 if p.size else 1
    _swap_refine(a.indptr.astype(np.int64), a.indices.astype(np.int64), a.data.astype(np.float64), p, k,
                 int(rounds))
    return p


def _cut(ptr, idx, val, parts):
    row = np.repeat(np.arange(ptr.size - 1), np.diff(ptr))
    return float(val[parts[row] != parts[idx]].sum())


def _split(ptr, idx, val, targets, seed, tries, hosts=False):
    """Parts of exactly ``targets[i]`` vertices with a small cut: METIS recursive bisection with
    target weights (``tries`` seeds, one above :data:`EFFORT_MAX` vertices), the exact-balance fix-up of :func:`~libtopomap.mappers.recursive.balance_parts`,
    then :func:`_swap_refine`; the smallest cut wins (ties: the first try).  A split onto ``hosts``
    into parts of two that leaves a pair without traffic inside (a host whose link carries all of
    both processes' traffic) is replaced by the exact pairing (:func:`_pair_parts`, up to
    :data:`PAIR_EXACT_MAX` processes) when that cuts less."""
    n = ptr.size - 1
    k = targets.size
    if n > EFFORT_MAX:
        tries = 1
    if k == 1:
        return np.zeros(n, np.int64)
    if ptr[-1] == 0 or n == k:
        return np.repeat(np.arange(k, dtype=np.int64), targets)
    frac = targets / n
    best, best_cut = None, np.inf
    for t in range(tries):
        parts = _metis_csr(ptr, idx, val, k, None, frac, seed + t, bisection=True)
        count = np.bincount(parts, minlength=k)
        if not np.array_equal(count, targets):
            parts = _balance_csr(ptr, idx, val, parts, targets, count)
        _swap_refine(ptr, idx, val, parts, k, REFINE_ROUNDS)
        c = _cut(ptr, idx, val, parts)
        if c < best_cut:
            best, best_cut = parts, c
    if k > 2 and PAIR_MIN_SIZE * k <= n <= EFFORT_MAX:
        for p in range(PAIR_PASSES):
            if not _pairwise(ptr, idx, val, best, k, seed + 31 * p):
                break
    if hosts and n <= PAIR_EXACT_MAX and np.all(targets == 2) and _lonely_pair(ptr, idx, val, best):
        pairs = _pair_parts(ptr, idx, val)
        if _cut(ptr, idx, val, pairs) < _cut(ptr, idx, val, best):
            best = pairs
    return best


def _pair_parts(ptr, idx, val):
    """Parts of exactly two processes with the smallest cut: the pairs of a maximum-weight matching.

    The cut of a split into pairs is the total weight minus the weight inside the pairs, so the
    pairs of a maximum-weight matching (Edmonds' blossom algorithm,
    :func:`networkx.max_weight_matching`, ``O(n^3)``) give the smallest cut; processes left
    unmatched are paired in index order.  ``n`` must be even.  Returns the part of every process
    (``0 .. n/2 - 1``, numbered by the smaller process of each pair)."""
    import networkx as nx

    n = ptr.size - 1
    a = sp.csr_matrix((val, idx, ptr), shape=(n, n))
    u = sp.triu(a + a.T, k=1).tocoo()  # both directions and parallel entries add up
    gx = nx.Graph()
    gx.add_nodes_from(range(n))
    gx.add_weighted_edges_from((x, y, z) for x, y, z in zip(u.row.tolist(), u.col.tolist(), u.data.tolist())
                               if z > 0)
    mate = np.full(n, -1, np.int64)
    for x, y in nx.max_weight_matching(gx):
        mate[x], mate[y] = y, x
    left = np.flatnonzero(mate < 0)
    mate[left[0::2]], mate[left[1::2]] = left[1::2], left[0::2]
    first = np.minimum(np.arange(n), mate)
    return np.unique(first, return_inverse=True)[1].astype(np.int64)


def _lonely_pair(ptr, idx, val, parts):
    """Whether some part of two processes carries no weight inside (its host link carries all of
    both processes' traffic)."""
    n = ptr.size - 1
    row = np.repeat(np.arange(n), np.diff(ptr))
    inside = np.bincount(parts[row], weights=np.where(parts[row] == parts[idx], val, 0.0), minlength=n // 2)
    return bool(np.any(inside <= 0))


def _pairwise(ptr, idx, val, parts, k, seed):
    """Re-split the union of two adjacent parts by METIS bisection into their two exact sizes and
    keep the new split when it cuts less between them; the ``PAIRS_PER_PART * k`` pairs with the
    heaviest shared cut, heaviest first.
    ``parts`` is changed in place; returns whether any split improved."""
    n = ptr.size - 1
    changed = False
    row = np.repeat(np.arange(n), np.diff(ptr))
    pa, pb = parts[row], parts[idx]
    m = pa < pb
    between = np.bincount(pa[m] * k + pb[m], weights=val[m], minlength=k * k)
    pos = np.full(n, -1, np.int64)
    for key in np.argsort(-between, kind="stable")[:PAIRS_PER_PART * k].tolist():
        if between[key] <= 0:
            break
        a, b = divmod(key, k)
        members = np.flatnonzero((parts == a) | (parts == b))
        sp_, si, sv = _subgraph(ptr, idx, val, members, pos)
        old = (parts[members] == b).astype(np.int64)
        sizes = np.array([int((old == 0).sum()), int((old == 1).sum())], np.int64)
        best, best_cut = old, _cut(sp_, si, sv, old)
        side = _metis_csr(sp_, si, sv, 2, None, sizes / members.size, seed + 7919)
        count = np.bincount(side, minlength=2)
        if not np.array_equal(count, sizes):
            side = _balance_csr(sp_, si, sv, side, sizes, count)
        _swap_refine(sp_, si, sv, side, 2, REFINE_ROUNDS)
        if _cut(sp_, si, sv, side) < best_cut:
            best, changed = side, True
        parts[members] = np.where(best == 0, a, b)
    return changed


def _fill(caps, n):
    """Processes per child: all when the slots are all needed, else the largest children first
    (ties: child order) filled completely, so a small job stays in few subtrees."""
    caps = np.asarray(caps, np.int64)
    if int(caps.sum()) == n:
        return caps.copy()
    out = np.zeros_like(caps)
    left = n
    for i in np.argsort(-caps, kind="stable").tolist():
        take = min(int(caps[i]), left)
        out[i] = take
        left -= take
        if left == 0:
            break
    return out


def _subset_arcs(sym, procs, inside):
    """The arcs of ``sym`` from the processes ``procs`` to processes outside them (``inside`` marks
    the processes of the subset): ``(src, nb, w)``, the position in ``procs`` of each arc's source,
    its other end (a process) and its weight (``sym.wsum``)."""
    ptr, idx = sym.indptr, sym.indices
    deg = ptr[procs + 1] - ptr[procs]
    src_local = np.repeat(np.arange(procs.size), deg)
    first = np.cumsum(deg) - deg
    arcs = np.arange(int(deg.sum()), dtype=np.int64) + np.repeat(ptr[procs] - first, deg)
    nb = idx[arcs]
    ext = ~inside[nb]
    return src_local[ext], nb[ext], sym.wsum[arcs[ext]]


def _order(topology, h, kids, targets, parts, procs, loc, sym, inside):
    """Assign the parts to the children (only among children of equal size) so that the traffic
    of each part to processes outside the subtree (at their current representative vertex)
    travels the fewest hops: a linear assignment per group of equal-sized children."""
    k = kids.size
    src_local, nb, w = _subset_arcs(sym, procs, inside)
    if nb.size == 0:
        return np.arange(k)
    locs, inv = np.unique(loc[nb], return_inverse=True)
    cost = np.zeros((k, k))
    reps = h.rep[kids]
    for c in range(k):
        d = topology.distances.pairs(np.full(locs.size, reps[c]), locs)
        cost[:, c] = np.bincount(parts[src_local], weights=w * d[inv], minlength=k)
    assign = np.arange(k)
    for size in np.unique(targets).tolist():
        group = np.flatnonzero(targets == size)
        if group.size < 2:
            continue
        assign[group] = group[_assignment(cost[np.ix_(group, group)])]
    return assign


def _assignment(cost):
    """Column of every row in a minimum-cost perfect assignment of the square matrix ``cost``:
    :func:`scipy.optimize.linear_sum_assignment`, imported here, where it is used (importing
    :mod:`scipy.optimize` costs 0.1-0.5 s per interpreter, which a race that ends at greedy's
    bound should not pay).  ``scipy.sparse.csgraph.min_weight_full_bipartite_matching`` needs no
    new import but breaks ties otherwise, and on the tested dragonfly allreduce and 4x64 torus
    stencil its ties cost max congestion 48 -> 51 and hop-bytes 1,676 -> 1,736."""
    from scipy.optimize import linear_sum_assignment

    return linear_sum_assignment(cost)[1].astype(np.int64)


def _descend(topology, h, cap, sym, base_seed, tries):
    """The top-down multisection of :func:`map_multisection`: the vertex of every process of
    ``sym`` (a :class:`~libtopomap.mappers.objectives.SymGraph`) under the usable slots ``cap`` of
    every node of ``h``."""
    g_ptr, g_idx, g_val = sym.indptr, sym.indices, sym.wsum
    n = sym.n
    gpos = np.full(n, -1, np.int64)
    gamma = np.full(n, -1, np.int64)
    loc = np.full(n, h.rep[h.root], np.int64)
    inside = np.zeros(n, bool)
    grid = h.grid
    stack = [(h.root, np.arange(n, dtype=np.int64))]
    while stack:
        x, procs = stack.pop()
        if procs.size == 0:
            continue
        if h.vertex[x] >= 0:
            gamma[procs] = h.vertex[x]
            loc[procs] = h.vertex[x]
            continue
        kids = h.children(x)
        kids = kids[cap[kids] > 0]
        targets = _fill(cap[kids], procs.size)
        kids, targets = kids[targets > 0], targets[targets > 0]
        if kids.size == 1:
            stack.append((kids[0], procs))
            continue
        sp_, si, sv = _subgraph(g_ptr, g_idx, g_val, procs, gpos)
        parts = _split(sp_, si, sv, targets, base_seed + x % 64, max(int(tries), 1),
                       hosts=bool(np.all(h.vertex[kids] >= 0)))
        assign = np.arange(kids.size)
        child_of = None
        # the order of the parts matters where the children are uneven, and also where even
        # subtrees are not even to the outside (the routers of a dragonfly group: each has the
        # global links to other groups); hosts under one switch are even to everything
        if not h.flat[x] or not np.all(h.vertex[kids] >= 0):
            inside[procs] = True
            assign = _order(topology, h, kids, targets, parts, procs, loc, sym, inside)
            if grid and kids.size == 2:
                child_of = _placed_refine(topology, h, kids, assign[parts], procs, sp_, si, sv, loc, sym, inside)
            inside[procs] = False
        if child_of is None:
            child_of = assign[parts]
        for c in range(kids.size - 1, -1, -1):
            sub = procs[child_of == c]
            loc[sub] = h.rep[kids[c]]
            stack.append((kids[c], sub))
    return gamma


def map_multisection(topology, graph, *, slots=None, seed=None, tries=TRIES, swap_depth=None, rounds=None,
                     objective="hopbytes"):
    """Hierarchical multisection mapping: split the communication graph along the machine's tree.

    The hierarchy comes from the topology (:func:`topology_hierarchy`).  From the root down, the
    processes of a subtree are split into one part per child subtree, each exactly as large as the
    slots the child gets (all of them when the job fills the machine; otherwise the largest
    children are filled first, so a small job stays in few subtrees): METIS recursive bisection
    with target weights, the exact-balance fix-up of the recursive strategy, and a pairwise swap refinement
    that keeps sizes exact; ``tries`` METIS seeds, the smallest cut wins (one seed and no pairwise
    re-bisection for splits of more than :data:`EFFORT_MAX` processes).  Where the children are
    not all at the same distance, or whose children are subtrees (not hosts), the parts are
    assigned to equal-sized children so that their traffic to processes outside the subtree
    travels the fewest hops (on a dragonfly, the parts of a group go to the routers that hold the
    global links to the groups they talk to).  A host takes every process
    that reaches it (several slots per host are one more level).  On a torus or mesh (a hierarchy
    of boxes) every bisection is then refined with its placement in view: swaps between the two
    boxes lower the cut, counted at the distance between the boxes' centres, plus the traffic to
    processes outside the split, counted at the distances from each box's centre to where those
    processes are (the external costs of Scotch's dual recursive bipartitioning).  On hosts of two slots, a split
    that leaves two processes without traffic between them on one host is replaced by the pairs
    of a maximum-weight matching when they cut less.  Last, processes close in the
    communication graph swap places while hop-bytes drop (``swap_depth``), for at most
    :data:`SWAP_MOVES` moves, then a few rounds of threshold passes and descent again leave that
    local optimum (:data:`KICK_ROUNDS`; up to :data:`KICK_MAX` processes).  With
    ``objective="congestion"``, on hosts of two slots, hosts whose two processes do not
    communicate are then repaired along alternating paths (:func:`_repair_lonely_pairs`: such a
    host's link carries all of both processes' traffic; the 2-slot 8-ary 3-tree with a 32x32
    stencil went from max congestion 8 to 6 for 0.2 % more hop-bytes) and the pairs are moved as
    units by a hop-bytes descent.  On a dragonfly with its
    generator's group attributes the whole construction also runs (up to :data:`EFFORT_MAX`
    processes) on the hierarchy read off the links alone
    (``topology_hierarchy(topology, generator_groups=False)``) and the mapping with the lower
    (maximum ECMP congestion, hop-bytes) is kept: the group level cut hop-bytes but raised the
    maximum congestion of a recursive-doubling allreduce on ``dragonfly(5, 4, 2, 1)`` with 8 slots
    per host from 48 to 64.  Above :data:`SEARCH_BOTH_MAX` processes the two descents are compared
    that way and only the better one gets the swap search.

    Parameters
    ----------
    topology : Topology
    graph : CommGraph or anything :func:`~libtopomap.as_commgraph` accepts
    slots : array_like of int, optional
        Usable slots per vertex (default ``topology.slots``); hosts without usable slots are
        skipped, and a job smaller than the machine fills few subtrees.
    seed : int, optional
        METIS seeds (the same seed gives the same mapping).
    tries : int
        METIS runs per split.
    swap_depth : int, optional
        Depth ``d`` of the final hop-bytes swap search over ``N_C^d`` (default :data:`SWAP_DEPTH`;
        0: none): processes within ``d`` communication hops swap places while hop-bytes drop, until a
        local optimum or :data:`SWAP_MOVES` moves (:func:`~libtopomap.mappers.hopbytes_swap.hopbytes_swap`).
    rounds : int, optional
        Deprecated (the former swap search's rounds): ``rounds=0`` is ``swap_depth=0``.
    objective : {"hopbytes", "congestion", "dilation"}
        ``"congestion"`` adds the repair of hosts of two slots whose processes do not communicate
        (it may cost hop-bytes); the others map for hop-bytes alone.  :func:`~libtopomap.mappers.map_processes`
        passes its own.

    Returns
    -------
    Mapping

    Notes
    -----
    On a tree whose hosts are ``2 l`` hops apart when their lowest common subtree has height ``l``
    (a k-ary n-tree), hop-bytes are twice the traffic summed over the levels at which it is cut, so
    minimising the cut of every split is the hierarchical process-mapping objective of SharedMap
    and KaHIP.  Work: one METIS call per try and split, ``O((E + P) log P)`` over a balanced
    hierarchy; memory linear in the graph and the topology.  The final swap search is the one
    local-search engine's (:mod:`~libtopomap.mappers.local_search`), ``O(degree)`` per move, at most
    :data:`SWAP_MOVES` moves.

    References
    ----------
    C. Schulz and H. Woydt, "Shared-Memory Hierarchical Process Mapping" (SharedMap), 2025:
    hierarchical multisection.
    M. F. Faraj, A. van der Grinten, H. Meyerhenke, J. L. Träff and C. Schulz, "High-Quality
    Hierarchical Process Mapping", SEA 2020: the multisection initial mapping of integrated mapping.
    T. Hoefler and M. Snir, ICS'11, section 4.2 / Algorithm 2: the exact-balance fix-up.
    C. Schulz and J. L. Träff, "Better Process Mapping and Sparse Quadratic Assignment", SEA 2017:
    the swap neighbourhood ``N_C^d`` of the final search.

    Examples
    --------
    >>> from libtopomap import fattree
    >>> from libtopomap.patterns import stencil
    >>> m = map_multisection(fattree(4, 2), stencil("4x4"), seed=0)
    >>> len(m)
    16
    """
    from . import check_objective

    objective = check_objective(objective)
    topology, g, slots, rng = prepare(topology, graph, slots, seed)
    if rounds is not None:
        warnings.warn("map_multisection(rounds=...) is deprecated; use swap_depth= (0: no swap search)",
                      DeprecationWarning, stacklevel=2)
    depth = (SWAP_DEPTH if rounds is None or rounds > 0 else 0) if swap_depth is None else int(swap_depth)
    sym = SymGraph(g)
    base_seed = int(rng.integers(0, 2**31 - 1 - 64 * max(int(tries), 1))) if seed is not None else 0
    swap_seed = int(rng.integers(2**63))
    hierarchies = [topology_hierarchy(topology)]
    if _generator_groups(topology) is not None and g.n <= EFFORT_MAX:
        # both hierarchies where the extra effort is cheap (at 32,768 processes on a dragonfly of
        # 128 groups the second one cost 5 s, and the group hierarchy won: max congestion 68 and
        # 530,496 hop-bytes against 74.1 and 536,590)
        hierarchies.append(topology_hierarchy(topology, generator_groups=False))
    descents = [_descend(topology, h, _capacities(h, slots, topology.hosts.size), sym, base_seed, tries)
                for h in hierarchies]
    if objective == "hopbytes" and g.n <= EFFORT_MAX and HOPBYTES_STARTS > 1:
        # more METIS seeds on every tree hierarchy; the lowest (max congestion, hop-bytes) goes on,
        # as between hierarchies (the first on a tie)
        span = 2**31 - 1 - 64 * max(int(tries), 1)
        for i, h in enumerate(hierarchies):
            if h.grid:
                continue
            cap = _capacities(h, slots, topology.hosts.size)
            starts = [descents[i]] + [_descend(topology, h, cap, sym,
                                               (base_seed + k * 64 * max(int(tries), 1)) % span, tries)
                                      for k in range(1, HOPBYTES_STARTS)]
            values = [_congestion_key(topology, g, gamma, slots) for gamma in starts]
            descents[i] = starts[values.index(min(values))]
    if len(descents) > 1 and (depth == 0 or g.n <= 1 or g.n > SEARCH_BOTH_MAX):
        # the better descent alone goes on (the first on a tie)
        keys = [_congestion_key(topology, g, gamma, slots) for gamma in descents]
        descents = [descents[keys.index(min(keys))]]
    best, best_key = None, None
    with near_slot_cache(topology):  # the searches' states share one list of nearest slot vertices
        for gamma in descents:
            if depth > 0 and g.n > 1:
                gamma = _swap_search(topology, g, gamma, slots, np.random.default_rng(swap_seed), depth)
                if objective == "congestion":
                    gamma = _pair_hosts(topology, g, sym, gamma, slots, np.random.default_rng(swap_seed), depth)
            if len(descents) > 1:
                key = _congestion_key(topology, g, gamma, slots)
                if best_key is not None and key >= best_key:
                    continue
                best_key = key
            best = gamma
    return finish(topology, best, slots, "multisection")


def _congestion_key(topology, g, gamma, slots):
    """``(maximum ECMP congestion, hop-bytes)`` of a mapping into ``slots``, the order in which the
    hierarchies' results are compared."""
    m = evaluate(topology, g, Mapping(topology, gamma, slots=slots))
    return (round(float(m["max_congestion"]), 9), float(m["hop_bytes"]))


def _swap_search(topology, g, gamma, slots, rng, depth):
    """The final search of :func:`map_multisection`: hop-bytes descent over ``N_C^depth`` to a local
    optimum (at most :data:`SWAP_MOVES` moves), then :data:`KICK_ROUNDS` rounds of iterated local
    search: :data:`KICK_PASSES` threshold passes from the best mapping so far
    (:func:`~libtopomap.mappers.hopbytes_swap.threshold_swap_passes`, the first threshold of round
    ``r`` ``(r + 1) x`` :data:`KICK_LEVEL` times the median edge weight, at most :data:`KICK_MOVES`
    swaps over all rounds, fewer above :data:`KICK_FULL` processes, none above :data:`KICK_MAX`)
    and the descent again, kept when it has fewer hop-bytes.  Deterministic for a given ``rng``
    state (no step depends on the clock)."""
    gamma, _, value, _ = hopbytes_swap(topology, g, gamma, slots, rng=rng, depth=depth, iterations=SWAP_MOVES)
    level = KICK_LEVEL * float(np.median(np.abs(g.weights))) if g.n_edges else 0.0
    budget = KICK_MOVES * min(1.0, KICK_FULL / max(g.n, 1)) // max(KICK_ROUNDS, 1)
    for r in range(KICK_ROUNDS if g.n <= KICK_MAX else 0):
        kicked, before, after, _ = threshold_swap_passes(topology, g, gamma, slots, rng=rng, passes=KICK_PASSES,
                                                         depth=depth, level=level * (r + 1),
                                                         moves=int(budget))
        if after >= before:
            continue
        kicked, _, after, _ = hopbytes_swap(topology, g, kicked, slots, rng=rng, depth=depth, iterations=SWAP_MOVES)
        if after < value:
            gamma, value = kicked, after
    return gamma


def _mates(gamma):
    """The other process on the same vertex of every process whose vertex holds exactly two, else -1."""
    order = np.argsort(gamma, kind="stable")
    mate = np.full(gamma.size, -1, np.int64)
    count = np.bincount(gamma)
    k = np.flatnonzero((gamma[order][1:] == gamma[order][:-1]) & (count[gamma[order][1:]] == 2))
    mate[order[k]], mate[order[k + 1]] = order[k + 1], order[k]
    return mate


def _repair_lonely_pairs(sym, gamma, visits=REPAIR_VISITS):
    """Give every host of two processes a communicating pair where an alternating path allows it.

    A host whose two processes do not communicate carries all of both processes' traffic on its
    link (the lonely pairs of :func:`_split`).  For each such process ``p`` a breadth-first search
    (at most ``visits`` processes) looks for an alternating path ``p - x1 = y1 - x2 = ... - xk``
    (``-``: communication, ``=``: sharing a vertex) that ends at a process of another lonely host,
    or at ``p``'s own partner on its host; then ``p`` joins ``x1``, ``y1`` joins ``x2``, ..., and
    the ``x`` stay where they are (an augmenting path of the pairing seen as a matching of the
    communication graph).  Every repair removes at least one lonely host.  Returns ``(gamma,
    repairs)``."""
    gamma = np.asarray(gamma, np.int64).copy()
    mate = _mates(gamma)
    ptr, idx, w = sym.indptr, sym.indices, sym.wsum

    def talks(a, b):
        seg = slice(ptr[a], ptr[a + 1])
        return bool(np.any((idx[seg] == b) & (w[seg] > 0)))

    def lonely(a):
        return mate[a] >= 0 and not talks(a, mate[a])

    row = np.repeat(np.arange(sym.n), np.diff(ptr))
    talk = np.bincount(row[(idx == mate[row]) & (w > 0)], minlength=sym.n) > 0
    repairs = 0
    for p in np.flatnonzero((mate >= 0) & ~talk).tolist():  # lonely at the start (re-checked: repairs move)
        if not lonely(p):
            continue
        prev, seen, end = {}, {p, int(mate[p])}, None
        queue = [p]
        head = 0
        while head < len(queue) and end is None and len(seen) < visits:
            u = queue[head]
            head += 1
            for x in idx[ptr[u]:ptr[u + 1]].tolist():
                if x == mate[p] and u != p:
                    prev[x], end = u, x
                    break
                if x in seen or mate[x] < 0 or gamma[x] == gamma[p]:
                    continue
                seen.add(x)
                prev[x] = u
                if lonely(x):
                    end = x
                    break
                y = int(mate[x])
                if y not in seen:
                    seen.add(y)
                    queue.append(y)
        if end is None:
            continue
        xs = [end]
        while prev[xs[-1]] != p:
            xs.append(int(mate[prev[xs[-1]]]))
        xs = xs[::-1]
        ys = [int(mate[x]) for x in xs]
        movers = [p] + ys[:-1]
        old = gamma.copy()
        partner, left = int(mate[p]), ys[-1]
        for m, x in zip(movers, xs):
            gamma[m] = old[x]
        for m, x in zip(movers, xs):
            mate[m], mate[x] = x, m
        if end != partner:  # p's partner and x_k's take p's place together
            gamma[left] = old[p]
            mate[partner], mate[left] = left, partner
        repairs += 1
    return gamma, repairs


def _pair_hosts(topology, g, sym, gamma, slots, rng, depth):
    """On hosts of two slots: :func:`_repair_lonely_pairs`, then the hop-bytes descent of
    :func:`_swap_search` over whole hosts (the communication graph contracted by vertex, one slot
    per used vertex), which moves pairs without splitting them (the threshold rounds there gained
    nothing on the 2-slot fat tree of ``bench_quality.py`` for twice the time).  Unchanged
    elsewhere, or when no lonely host can be repaired."""
    used = np.unique(gamma)
    if used.size < 2 or not np.all(slots[used] == 2):
        return gamma
    fixed, repairs = _repair_lonely_pairs(sym, gamma)
    if repairs == 0:
        return gamma
    unit = np.searchsorted(used, fixed)
    us, ud = unit[g.src], unit[g.dst]
    keep = us != ud
    cg = CommGraph(used.size, us[keep], ud[keep], g.weights[keep])
    one = np.zeros(topology.n_vertices, np.int64)
    one[used] = 1
    t1 = Topology(topology.names, np.stack([topology.link_u, topology.link_v], 1), capacities=topology.capacity,
                  slots=one, kinds=topology.kinds, name=topology.name, attrs=topology.attrs)
    if cg.n_edges == 0:
        return fixed
    where, _, _, _ = hopbytes_swap(t1, cg, used.copy(), one, rng=rng, depth=depth, iterations=SWAP_MOVES)
    return np.asarray(where, np.int64)[unit]


def _capacities(h, slots, H):
    """Usable slots under every node of ``h`` (``slots`` per vertex; leaves ``0 .. H-1``)."""
    cap = np.zeros(h.n_nodes, np.int64)
    cap[:H] = slots[h.vertex[:H]]
    for x in _bottom_up(h.child_ptr, h.child_idx, h.root):
        if x >= H:
            cap[x] = cap[h.children(x)].sum()
    return cap
