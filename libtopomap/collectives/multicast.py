"""Switch-based multicast trees on hypercubes, LDR graphs and hybrids (Mehta 2005, chapter 6).

A multicast tree is built once in the network and every tree link carries the message once: its
cost is counted in *links* (tree edges, the messages a switch-based multicast sends) and in
*hops* (the root-to-member distances along the tree; the largest is the tree's *depth*, the
latency in hops).  Vertices are topology vertex indices (for :func:`hypercube_tree`, hypercube
node numbers).  Trees are arrays of ``O(tree size)``: no per-network table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import TopologyError
from ..generators.hybrid import component_bfs, fat_tree_path, hybrid_layout

__all__ = ["MulticastTree", "enclosing_subcube", "hypercube_tree", "ldr_tree", "hybrid_tree", "cco_order"]


@dataclass(frozen=True)
class MulticastTree:
    """A multicast tree: ``parents[i]`` is the parent of ``vertices[i]`` (``-1`` for the root).

    Attributes
    ----------
    root : int
    members : numpy.ndarray of int64
        The multicast group (sorted, the root included).
    vertices : numpy.ndarray of int64
        Every vertex of the tree (members, forwarding nodes and switches), root first, then by
        depth.
    parents : numpy.ndarray of int64
        Parent of each vertex, aligned with ``vertices``.
    depths : numpy.ndarray of int64
        Hops from the root, aligned with ``vertices``.
    """

    root: int
    members: np.ndarray
    vertices: np.ndarray
    parents: np.ndarray
    depths: np.ndarray

    @property
    def links(self):
        """Tree edges: messages a switch-based multicast sends (``len(vertices) - 1``)."""
        return int(self.vertices.size - 1)

    @property
    def depth(self):
        """Largest number of hops from the root to a member."""
        return int(self._member_depths().max())

    @property
    def hops(self):
        """Sum over members of the hops from the root along the tree (what unicasts along the tree's
        paths would cost)."""
        return int(self._member_depths().sum())

    def _member_depths(self):
        order = np.argsort(self.vertices, kind="stable")
        pos = order[np.searchsorted(self.vertices[order], self.members)]
        return self.depths[pos]

    def steps(self):
        """The tree as a schedule: step ``t`` is the ``(parent, child)`` vertex pairs of the links from
        depth ``t`` to ``t + 1`` (``int64``, shape ``(m, 2)``); every vertex receives once."""
        out = []
        for t in range(int(self.depths.max()) if self.depths.size else 0):
            sel = self.depths == t + 1
            out.append(np.stack([self.parents[sel], self.vertices[sel]], 1))
        return out


def _tree(root, members, parent_of):
    """MulticastTree from a ``{vertex: parent}`` dict covering the members (root's parent -1)."""
    verts = np.fromiter(parent_of.keys(), dtype=np.int64, count=len(parent_of))
    pars = np.fromiter(parent_of.values(), dtype=np.int64, count=len(parent_of))
    depth = {int(root): 0}

    def depth_of(v):
        chain = []
        while v not in depth:
            chain.append(v)
            v = parent_of[v]
        d = depth[v]
        for u in reversed(chain):
            d += 1
            depth[u] = d
        return depth[chain[0]] if chain else d

    depths = np.array([depth_of(int(v)) for v in verts.tolist()], dtype=np.int64)
    order = np.lexsort((verts, depths))
    return MulticastTree(int(root), np.unique(np.asarray(members, dtype=np.int64)), verts[order], pars[order],
                         depths[order])


def _group(group, root, n, what):
    g = np.unique(np.append(np.asarray(group, dtype=np.int64).ravel(), int(root)))
    if g.size and (g[0] < 0 or g[-1] >= n):
        bad = g[(g < 0) | (g >= n)][0]
        raise TopologyError(f"{what}: vertex {bad} is outside 0..{n - 1}")
    return g


def enclosing_subcube(group):
    """Smallest subcube of a hypercube that contains every node of ``group`` (section 6.1).

    Keep the bits on which all members agree and take every combination of the others: ``2**k``
    nodes for ``k`` differing bits, from the OR and AND of the members (or, equivalently, the OR
    of their XORs with the first member).

    Parameters
    ----------
    group : sequence of int
        Non-negative node numbers, at least one.

    Returns
    -------
    numpy.ndarray of int64
        The subcube's nodes, sorted.

    Examples
    --------
    >>> enclosing_subcube([3, 5, 7]).tolist()  # 0011, 0101, 0111 differ in 2 bits: 0XX1
    [1, 3, 5, 7]
    """
    g = np.asarray(group, dtype=np.int64).ravel()
    if g.size == 0 or g.min() < 0:
        raise TopologyError("enclosing_subcube needs at least one node and non-negative node numbers")
    free = int(np.bitwise_or.reduce(g) ^ np.bitwise_and.reduce(g))
    bits = [1 << b for b in range(free.bit_length()) if free >> b & 1]
    fixed = int(g[0]) & ~free
    out = np.full(1, fixed, dtype=np.int64)
    for b in bits:
        out = np.concatenate([out, out | b])
    return np.sort(out)


def hypercube_tree(dim, root, group):
    """Section 6.1's hypercube multicast tree: a spanning tree of the enclosing subcube.

    The thesis iterates over the subcube's switches, making every neighbour without a parent a
    child.  Taken literally in list order this can link two switches that are not yet reached from
    the root (a cycle, not a tree), so the switches are taken in breadth-first order from the root,
    neighbours by *decreasing* dimension: the parent of ``x`` is ``x`` with its highest bit differing
    from the root flipped back, so every root-to-node path corrects bits lowest first -- the tree is
    the union of the e-cube (Hamming distance) routes from the root, the routing the thesis uses to
    reach its switches.

    Parameters
    ----------
    dim : int
        Hypercube dimension (nodes ``0 .. 2**dim - 1``).
    root : int
    group : sequence of int
        The multicast group (the root is added).

    Returns
    -------
    MulticastTree
        ``2**k`` vertices for ``k`` bits on which the group and root differ, ``2**k - 1`` links,
        depth ``k`` when a member lies opposite the root in the subcube.

    Examples
    --------
    >>> t = hypercube_tree(4, 3, [5, 7])
    >>> t.vertices.tolist(), t.parents.tolist(), t.links
    ([3, 1, 7, 5], [-1, 3, 3, 1], 3)
    """
    dim = int(dim)
    if not 0 <= dim <= 62:
        raise TopologyError(f"hypercube dimension must be in 0..62, got {dim}")
    g = _group(group, root, 1 << dim, "hypercube_tree")
    root = int(root)
    parent_of = {}
    for x in enclosing_subcube(g).tolist():
        diff = x ^ root
        parent_of[x] = -1 if diff == 0 else x ^ (1 << (diff.bit_length() - 1))
    return _tree(root, g, parent_of)


def _bfs_parents(indptr, indices, root, allowed=None):
    """Breadth-first parents from ``root`` (lowest-index neighbour first): dict vertex -> parent."""
    parent = {int(root): -1}
    frontier = [int(root)]
    while frontier:
        nxt = []
        for u in frontier:
            for v in np.sort(indices[indptr[u]:indptr[u + 1]]).tolist():
                if v not in parent and (allowed is None or allowed(v)):
                    parent[v] = u
                    nxt.append(v)
        frontier = nxt
    return parent


def ldr_tree(topology, root, group):
    """Section 6.2's LDR multicast tree: the union of shortest paths from the root to the members.

    "For every switch i in the multicast group, we traverse the shortest path from the root to the
    switch i [...] we mark its predecessor as its parent."  The shortest paths are those of one
    breadth-first search from the root (lowest-index predecessor), so that their union is a tree;
    shortest paths taken from unrelated routing tables could join a vertex twice.  Works on any
    topology (the thesis applies it to LDR graphs).

    Parameters
    ----------
    topology : Topology
    root : int
        Vertex index.
    group : sequence of int
        Vertex indices (the root is added).

    Returns
    -------
    MulticastTree
        Every member at its hop distance from the root (``depth`` = the largest).

    Notes
    -----
    One search, ``O(vertices + links)`` time and memory per tree.
    """
    g = _group(group, root, topology.n_vertices, "ldr_tree")
    parent = _bfs_parents(topology.indptr, topology.indices, root)
    parent_of = {}
    for m in g.tolist():
        if m not in parent:
            raise TopologyError(f"ldr_tree: vertex {m} cannot be reached from the root {root}")
        v = m
        while v != -1 and v not in parent_of:
            parent_of[v] = parent[v]
            v = parent[v]
    return _tree(root, g, parent_of)


def hybrid_tree(topology, root, group):
    """Section 6.3's hybrid multicast tree: trees in the components joined by the root's fat tree.

    Steps 1-3 bin the members by component and mark their positions in every component; step 4
    builds a tree in each component over the marked positions (:func:`hypercube_tree` or
    :func:`ldr_tree`), step 5 a fat-tree tree over the corresponding nodes.  Here the fat tree is
    the one at the root's position ``j_r``, it reaches position ``j_r`` of every component that
    holds a member (up from the root's leaf switch to the lowest level covering them, down along
    :func:`~libtopomap.generators.hybrid.fat_tree_path`), and each such component gets the tree
    rooted at ``j_r`` over the marked positions.

    Parameters
    ----------
    topology : Topology
        Built by :func:`~libtopomap.hybrid`.
    root : int
        A node (host vertex).
    group : sequence of int
        Nodes (the root is added).

    Returns
    -------
    MulticastTree
        Over nodes and fat-tree switches.

    Notes
    -----
    The thesis leaves open (a) which fat tree joins the components -- the root's position is the
    only one every component tree can start from -- and (b) whether step 3 marks positions in
    components without members; they are left out (a multicast to one component stays there), so
    a broadcast reaches every component and every position.
    """
    t_nodes, d, k, n = hybrid_layout(topology)
    g = _group(group, root, t_nodes, "hybrid_tree")
    cr, jr = divmod(int(root), d)
    comps = np.unique(g // d).tolist()
    positions = np.unique(np.append(g % d, jr))
    parent_of = {}
    # step 5: the fat tree at the root's position, from component cr to every member component
    for c in comps:
        if c == cr:
            continue
        path = fat_tree_path(topology, jr, cr, c)
        for u, v in zip(path[:-1], path[1:]):
            parent_of.setdefault(v, u)
    parent_of[cr * d + jr] = -1
    # step 4: a tree over the marked positions in each member component, rooted at j_r
    # every component has the same graph: one tree by position, copied into each member component
    if topology.attrs["component"] == "hypercube":
        sub = hypercube_tree(d.bit_length() - 1, jr, positions)
        pairs = list(zip(sub.vertices[1:].tolist(), sub.parents[1:].tolist()))
    else:
        par = component_bfs(topology, cr, jr)
        pairs = []
        seen = {jr}
        for m in positions.tolist():
            v = m
            while v not in seen:
                pairs.append((v, int(par[v])))
                seen.add(v)
                v = int(par[v])
    for c in comps:
        base = c * d
        for v, u in pairs:
            parent_of[base + v] = base + u
    return _tree(int(root), g, parent_of)


def cco_order(topology, nodes, *, root=None):
    """Chain concatenation order (CCO): the job's nodes in breadth-first order from the root.

    The multicast of Cui 2024's reference [97], used there as a rank-placement competitor (section
    3.4.4, Figure 3.10): "construct a breadth-first search (BFS) tree with a source node as root
    [...] visit a destination node with an order based on the BFS tree".  Rank ``i`` runs on the
    ``i``-th node of the returned order, so the binomial-tree Bcast from rank 0 starts at the root.

    Parameters
    ----------
    topology : Topology
    nodes : array_like of int
        The job's vertices (allocation order); a vertex may repeat (several slots), its copies stay
        together.
    root : int, optional
        The source vertex; default ``nodes[0]`` (rank 0 of the ascending order).

    Returns
    -------
    numpy.ndarray of int64
        A permutation of ``nodes`` (positions into it): ``nodes[order]`` are the job's vertices in
        order of their breadth-first visit (neighbours by increasing index), ties by allocation order.

    Notes
    -----
    Neither the thesis nor the brief description fixes how the BFS tree is walked; the plain
    breadth-first visit order is used (not a depth-first walk of the BFS tree).  One search,
    ``O(vertices + links)``.

    Examples
    --------
    >>> from libtopomap import circulant
    >>> cco_order(circulant(8), [0, 5, 3, 1]).tolist()  # BFS from 0 visits 0, 1, 2, 4, 6, 7, 3, 5
    [0, 3, 2, 1]
    """
    from scipy.sparse import csgraph

    v = np.asarray(nodes, dtype=np.int64).ravel()
    if v.size == 0:
        return np.zeros(0, dtype=np.int64)
    if v.min() < 0 or v.max() >= topology.n_vertices:
        raise TopologyError(f"cco_order: vertex outside 0..{topology.n_vertices - 1}")
    r = int(v[0]) if root is None else int(root)
    if not 0 <= r < topology.n_vertices:
        raise TopologyError(f"cco_order: root {r} outside 0..{topology.n_vertices - 1}")
    visit = csgraph.breadth_first_order(topology.adjacency, r, directed=False, return_predecessors=False)
    rank = np.full(topology.n_vertices, topology.n_vertices, dtype=np.int64)
    rank[visit] = np.arange(visit.size)
    return np.lexsort((np.arange(v.size), rank[v]))
