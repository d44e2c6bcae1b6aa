"""Hybrid networks of direct components joined by fat trees (Mehta 2005, chapter 5).

``T`` nodes are split into ``P = T / D`` *components* of ``D`` consecutive nodes, each a hypercube or
an LDR graph; for every position ``j < D`` one fat tree (a k-ary n-tree with ``P = k**n`` leaves)
joins node ``j`` of every component.

Vertex layout: node ``i`` (vertex ``i``, name ``n<i>``, one slot) is position ``i % D`` of component
``i // D``.  Fat tree ``j`` follows, its switches level by level from the root as in
:func:`~libtopomap.fattree` (level 0 the root, ``n - 1`` the leaves), named ``sw-ft<j>-l<level>-<w>``
(the ``sw`` prefix makes ltm files round-trip): vertex ``T + j S + level k**(n-1) + w`` with
``S = n k**(n-1)``.  Its processing node ``c`` is node ``c D + j`` of the hybrid, linked to leaf
switch ``c // k``.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import TopologyError
from ..topology import HOST, SWITCH, Topology
from ..validation import check_seed
from .fattree import fattree
from .grid import check_edge_count, check_vertex_count, hypercube
from .ldr import ldr

__all__ = ["hybrid", "hybrid_route", "hybrid_layout", "HYBRID_EXAMPLES"]

#: The thesis' hybrids ``(T, D)``: Figure 5.1 (32/8), Figures 5.2-5.4 (1024/64, 4096/256, 4096/1024)
#: and Figure 6.3 (256/16).
HYBRID_EXAMPLES = ((32, 8), (1024, 64), (4096, 256), (4096, 1024), (256, 16))


def _default_arity(p):
    """4 when ``p`` is a power of 4 (the 16-node fat tree of Figure 3.2 is a 4-ary 2-tree), else 2 when
    ``p`` is a power of 2, else ``p`` (one crossbar switch)."""
    levels4 = round(math.log(p, 4))
    if 4 ** levels4 == p:
        return 4
    if p & (p - 1) == 0:
        return 2
    return p


def hybrid(nodes, component_size, *, component="hypercube", degree=None, arity=None, seed=None, trials=100,
           name=None):
    """Hybrid network: ``nodes / component_size`` direct components and one fat tree per position.

    Section 5.1: "divide the nodes in sets, each of the size as defined for the hypercube", connect
    each set as a hypercube (``P = T/D`` of them), then "consider the first switch in each hypercube
    network [...] build a fat-tree using these P switches as the nodes [...] similarly, we build
    fat-trees for the second switch in each hypercube, and so on [...] we have D such fat-trees".
    Section 5.2 replaces the hypercube by an LDR graph of size ``D``.

    Parameters
    ----------
    nodes : int
        ``T``, the number of nodes (hosts, one slot each); a multiple of ``component_size`` with
        ``T / D >= 2``.
    component_size : int
        ``D``, nodes per direct component; a power of two for hypercube components.
    component : {"hypercube", "ldr"}
        The direct network of every component.
    degree : int, optional
        Degree of the LDR components; default ``log2(D)`` rounded down (the hypercube's, as in
        Table 4.1).  Hypercube components ignore it.
    arity : int, optional
        ``k`` of the k-ary n-tree joining the ``P = T / D`` components (``P`` must be a power of
        ``k``).  Default 4 when ``P`` is a power of 4 (Figure 3.2's 16-node fat tree is a 4-ary
        2-tree), else 2 when ``P`` is a power of two, else ``P`` (a single switch).
    seed : int, optional
        Seeds the LDR graph (one graph, drawn once and used for every component, so that every
        component routes alike); unused for hypercubes.
    trials : int
        LDR draws (:func:`~libtopomap.ldr`).
    name : str, optional

    Returns
    -------
    Topology
        ``T`` hosts and ``D n k**(n-1)`` switches; ``attrs`` records ``nodes``, ``component_size``,
        ``component``, ``arity`` and ``levels`` (what :func:`hybrid_route` reads).

    Raises
    ------
    TopologyError
        ``D`` does not divide ``T``, fewer than two components, ``D`` not a power of two for a
        hypercube, ``T / D`` not a power of ``arity``, or impossible LDR parameters.

    Notes
    -----
    *A node and its switch are one vertex*, as in the library's direct networks
    (:func:`~libtopomap.hypercube`, :func:`~libtopomap.ldr`): the "switch ``j`` of a component" of
    the thesis is node ``j``, and fat tree ``j`` links to it directly.

    *The thesis contradicts its rule once.*  The rule gives ``D`` fat trees of ``T / D`` leaves each
    (32 nodes in hypercubes of 8: "4 such hypercubes, and then 8 different fat-trees").  For 1,024
    nodes in components of 64 section 5.4 says "we have 1024/64, i.e. 16 such fat-trees": 16 is the
    number of *components*; by the rule there are 64 fat trees of 16 leaves.  The generator follows
    the rule (``benchmarks/bench_hybrid.py`` prints both).

    References
    ----------
    A. Mehta, "Low Diameter Regular Graph as a Network Topology in Direct and Hybrid Interconnection
    Networks", MS thesis, UIUC, 2005, sections 5.1-5.2 and Figure 5.1.

    Examples
    --------
    >>> t = hybrid(32, 8)
    >>> t.hosts.size, t.attrs["components"], t.attrs["fat_trees"], t.n_vertices - t.hosts.size
    (32, 4, 8, 8)
    """
    seed = check_seed(seed)  # the components' (ldr) and the attrs' seed, checked before any work
    t_nodes, d = int(nodes), int(component_size)
    if component not in ("hypercube", "ldr"):
        raise TopologyError(f"hybrid component must be 'hypercube' or 'ldr', got {component!r}")
    if d < 2 or t_nodes % d:
        raise TopologyError(f"a hybrid needs component_size >= 2 dividing nodes; got nodes={t_nodes}, "
                            f"component_size={d}")
    p = t_nodes // d
    if p < 2:
        raise TopologyError(f"a hybrid needs at least two components; got nodes={t_nodes}, component_size={d}")
    k = _default_arity(p) if arity is None else int(arity)
    if k < 2:
        raise TopologyError(f"fat tree arity must be >= 2, got {k}")
    levels = max(1, round(math.log(p, k)))
    if k ** levels != p:
        raise TopologyError(f"{p} components are not a power of the fat tree arity {k}")
    per_tree = levels * k ** (levels - 1)
    check_vertex_count(t_nodes + d * per_tree, f"hybrid({t_nodes}, {d})")
    if component == "hypercube":
        if d & (d - 1):
            raise TopologyError(f"hypercube components need a power-of-two size, got {d}")
        comp = hypercube(d.bit_length() - 1)
        deg = d.bit_length() - 1
    else:
        deg = (d.bit_length() - 1) if degree is None else int(degree)
        # p copies of the component, d fat trees of `levels` levels of p links each
        check_edge_count(t_nodes * max(deg, 0) // 2 + d * levels * p, f"hybrid({t_nodes}, {d}, degree={deg})",
                         unit="links")
        comp = ldr(d, deg, seed=seed, trials=trials)
    cu, cv = comp.link_u.astype(np.int64), comp.link_v.astype(np.int64)
    offsets = (np.arange(p, dtype=np.int64) * d)[:, None]
    links = [np.stack([(offsets + cu).ravel(), (offsets + cv).ravel()], 1)]
    ft = fattree(k, levels)
    fu, fv = ft.link_u.astype(np.int64), ft.link_v.astype(np.int64)
    for j in range(d):
        # fat tree vertex x: processing node x < p is node x D + j; switch p + s is T + j S + s
        def where(x):
            return np.where(x < p, x * d + j, t_nodes + j * per_tree + (x - p))
        links.append(np.stack([where(fu), where(fv)], 1))
    words = k ** (levels - 1)
    names = [f"n{i}" for i in range(t_nodes)]
    names += [f"sw-ft{j}-l{lv}-{w}" for j in range(d) for lv in range(levels) for w in range(words)]
    kinds = [HOST] * t_nodes + [SWITCH] * (d * per_tree)
    slots = np.zeros(len(names), dtype=np.int32)
    slots[:t_nodes] = 1
    attrs = {"generator": "hybrid", "nodes": t_nodes, "component_size": d, "component": component,
             "components": p, "fat_trees": d, "arity": k, "levels": levels, "degree": deg}
    if component == "ldr":
        attrs.update(seed=seed, trials=int(trials), component_aspl=comp.attrs["aspl"],
                     component_diameter=comp.attrs["diameter"])
    return Topology(names, np.concatenate(links), slots=slots, kinds=kinds,
                    name=name or f"hybrid-{component}-{t_nodes}-{d}", attrs=attrs)


def hybrid_layout(topology):
    """``(T, D, k, n)`` of a topology built by :func:`hybrid`; raises TopologyError for any other."""
    a = topology.attrs
    if a.get("generator") != "hybrid":
        raise TopologyError(f"topology {topology.name!r} was not built by hybrid()")
    return int(a["nodes"]), int(a["component_size"]), int(a["arity"]), int(a["levels"])


def _component_path(topology, c, js, jt):
    """Positions from ``js`` to ``jt`` inside component ``c``: e-cube for hypercubes (lowest differing
    bit first, as ``dimension-order`` routing), else the shortest path taking the lowest-index
    neighbour one hop closer at every step (``table`` routing)."""
    t_nodes, d, _k, _n = hybrid_layout(topology)
    if topology.attrs["component"] == "hypercube":
        out = [js]
        x, diff = js, js ^ jt
        while diff:
            low = diff & -diff
            x ^= low
            diff ^= low
            out.append(x)
        return out
    parent = component_bfs(topology, c, jt)
    out = [js]
    while out[-1] != jt:
        out.append(int(parent[out[-1]]))
    return out


def component_bfs(topology, c, root):
    """Breadth-first parents inside component ``c`` of a hybrid, by position (``parent[root] = -1``).

    Every position's parent is its lowest-index neighbour in the component one hop closer to
    ``root`` (the next hop of ``table`` routing); ``O(D x degree)`` work and memory.
    """
    t_nodes, d, _k, _n = hybrid_layout(topology)
    base = c * d
    level = np.full(d, -1, dtype=np.int64)
    level[root] = 0
    frontier = [root]
    indptr, indices = topology.indptr, topology.indices
    while frontier:
        nxt = []
        for u in frontier:
            for v in indices[indptr[base + u]:indptr[base + u + 1]].tolist():
                if base <= v < base + d and level[v - base] < 0:
                    level[v - base] = level[u] + 1
                    nxt.append(v - base)
        frontier = nxt
    parent = np.full(d, -2, dtype=np.int64)
    parent[root] = -1
    for u in range(d):
        if level[u] > 0:
            nb = np.sort(indices[indptr[base + u]:indptr[base + u + 1]])
            nb = nb[(nb >= base) & (nb < base + d)] - base
            parent[u] = int(nb[level[nb] == level[u] - 1].min())
    return parent


def fat_tree_path(topology, j, cs, ct):
    """Up-down path in fat tree ``j`` from component ``cs`` to ``ct`` (vertex ids, both nodes included).

    Up from the source's leaf switch without changing the word (every switch ``<w, l>`` is linked to
    ``<w, l - 1>``) to level ``i``, the first base-``k`` digit where ``cs`` and ``ct`` differ, then
    down setting digit ``l`` to the destination's at each level ``l`` -- ``2 (n - i)`` hops, the
    distance in a k-ary n-tree.
    """
    t_nodes, d, k, n = hybrid_layout(topology)
    words = k ** (n - 1)
    base = t_nodes + j * n * words
    path = [cs * d + j]
    if cs == ct:
        return path
    ds = [(cs // k ** (n - 1 - x)) % k for x in range(n)]
    dt = [(ct // k ** (n - 1 - x)) % k for x in range(n)]
    i = next(x for x in range(n) if ds[x] != dt[x])
    w = cs // k
    for level in range(n - 1, i - 1, -1):
        path.append(base + level * words + w)
    for level in range(i, n - 1):  # going down from level to level + 1 sets digit `level`
        place = k ** (n - 2 - level)
        w = w - ((w // place) % k) * place + dt[level] * place
        path.append(base + (level + 1) * words + w)
    path.append(ct * d + j)
    return path


def hybrid_route(topology, source, target):
    """Section 5.3 routing on a hybrid: inside the source's component, then up-down across.

    "The packet is routed to the farthest node to which it can go, on that particular hypercube.
    It is then sent across the indirect network to the other hypercube and then forwarded to the
    destination node."  From node ``(cs, js)`` to ``(ct, jt)``: inside component ``cs`` from
    position ``js`` to ``jt`` (e-cube on hypercubes, lowest differing bit first; a breadth-first
    shortest path on LDR components), then through fat tree ``jt`` from component ``cs`` to ``ct``
    (:func:`fat_tree_path`), which lands on the destination.  Within one component only the first
    part is taken.

    Parameters
    ----------
    topology : Topology
        Built by :func:`hybrid`.
    source, target : int
        Node (host vertex) indices, ``0 <= i < T``.

    Returns
    -------
    numpy.ndarray of int64
        The vertices visited, ``source`` first and ``target`` last; ``len - 1`` hops.

    Notes
    -----
    The thesis does not say which fat tree carries the packet; "the farthest node it can go on
    that hypercube" is read as the node at the destination's position.  Every component has the
    same graph and fat-tree distances form an ultrametric, so the route is a shortest path (the
    tests compare it with the hop distance for every pair).  The ``hybrid`` model of
    :mod:`libtopomap.routing` walks these paths in compiled code (``routing="hybrid"``, the native
    routing of these topologies).

    Examples
    --------
    >>> t = hybrid(32, 8)
    >>> hybrid_route(t, 0, 31).tolist()  # 0 -> 1 -> 3 -> 7 in component 0, then fat tree 7 (one switch)
    [0, 1, 3, 7, 39, 31]
    """
    t_nodes, d, _k, _n = hybrid_layout(topology)
    s, t = int(source), int(target)
    for v in (s, t):
        if not 0 <= v < t_nodes:
            raise TopologyError(f"hybrid_route: vertex {v} is not a node of {topology.name!r} (0..{t_nodes - 1})")
    cs, js = divmod(s, d)
    ct, jt = divmod(t, d)
    path = [cs * d + x for x in _component_path(topology, cs, js, jt)]
    path += fat_tree_path(topology, jt, cs, ct)[1:]
    return np.asarray(path, dtype=np.int64)
