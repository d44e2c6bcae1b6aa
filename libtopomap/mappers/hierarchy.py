"""The machine hierarchy of a topology: a rooted tree over its slot vertices.

:func:`topology_hierarchy` reads it off the network (hosts under leaf switches, leaf switches under
the switches one level up, ..., dragonfly groups from the generator's attributes; a coordinate
bisection for a torus or mesh); :func:`~libtopomap.mappers.multisection.map_multisection` splits the
communication graph along it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from .._kernels.bfs import multi_source_levels, multi_source_owners
from .partition import metis_csr, subgraph

__all__ = ["Hierarchy", "topology_hierarchy", "dragonfly_groups", "bottom_up"]


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


def dragonfly_groups(topology):
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
    groups = dragonfly_groups(t) if generator_groups else None
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
    for x in bottom_up(child_ptr, child_idx, root):
        if rep[x] < 0:
            rep[x] = rep[child_idx[child_ptr[x]]]
    if flat is None:
        flat = np.ones(N, bool)
    return Hierarchy(parent, vertex, rep, np.asarray(flat, bool), child_ptr, child_idx, root)


def bottom_up(child_ptr, child_idx, root):
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
        sp_, si, sv = subgraph(qp, qi, qv, members, pos)
        side = metis_csr(sp_, si, sv, 2, np.maximum(weight[members], 1), None, 0)
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
