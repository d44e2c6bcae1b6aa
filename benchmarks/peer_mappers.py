"""The peers that take a machine hierarchy or a target graph (KaHIP process mapping, SharedMap,
Mt-KaHyPar), run the same way by ``bench_quality.py``, ``bench_scale.py`` and ``bench_smpi.py``.

KaHIP and SharedMap take the hierarchy of :func:`machine_hierarchy` (a uniform tree the job fills) or
of :func:`padded_hierarchy` (a partial allocation: virtual PEs and idle processes).  Each ``run_*``
returns the host vertex of every process, repaired into the topology's slots
(:func:`libtopomap.mappers.scotch.repair_slots`), ready for ``libtopomap.evaluate``.  The
``peers`` extra installs them: ``pip install 'libtopomap[peers]'``.
"""

from __future__ import annotations

import ctypes
import glob
import importlib.util
import os

import numpy as np

from libtopomap.mappers.multisection import topology_hierarchy
from libtopomap.mappers.scotch import repair_slots

__all__ = ["KAHIP_MODES", "SHAREDMAP_MODES", "have", "kahip_lib", "machine_hierarchy", "padded_hierarchy", "run_kahip",
           "run_mtkahypar", "run_sharedmap"]

KAHIP_MODES = {"fast": 0, "eco": 1, "strong": 2}   # process_mapping's mode_partitioning
SHAREDMAP_MODES = ("fast", "eco", "strong")


def have(module):
    """Whether ``module`` can be imported (without importing it)."""
    return importlib.util.find_spec(module) is not None


def kahip_lib():
    """KaHIP's shared library with ``process_mapping`` declared (ctypes), or None without the wheel.

    PyPI ``kahip`` 3.25 binds only ``kaffpa`` in Python; its library exports the C ``process_mapping``."""
    try:
        import kahip
    except ImportError:
        return None
    so = glob.glob(os.path.join(os.path.dirname(kahip.__file__), "kahip*.so"))
    if not so:
        return None
    lib = ctypes.CDLL(so[0])
    P = ctypes.POINTER(ctypes.c_int)
    lib.process_mapping.argtypes = [P, P, P, P, P, P, P, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                    ctypes.POINTER(ctypes.c_double), ctypes.c_bool, ctypes.c_int, P, P, P]
    lib.process_mapping.restype = None
    return lib


def machine_hierarchy(t, slots):
    """``(hierarchy, distance, pe_vertex)`` bottom-up for KaHIP/SharedMap, or None.

    The tree of :func:`topology_hierarchy` when it is uniform, with one more level for several
    slots per host (distance 1 there: KaHIP needs positive distances); the distance of a level is
    the hop distance between the first leaves of two children of a node of that level.  PE ``i``
    runs on ``pe_vertex[i]`` (leaves in depth-first order, each repeated by its slots)."""
    h = topology_hierarchy(t)
    ar = h.arities()
    s = np.asarray(slots)[h.vertex[h.vertex >= 0]]
    if ar is None or np.unique(s).size != 1:
        return None
    depth = h.depth()
    dist = []
    for level in range(len(ar)):
        x = int(np.flatnonzero((depth == len(ar) - 1 - level) & (h.vertex < 0))[0])
        a, b = h.children(x)[:2]
        dist.append(int(t.distance(h.rep[a], h.rep[b])))
    order = []
    stack = [h.root]
    while stack:
        x = stack.pop()
        if h.vertex[x] >= 0:
            order.append(int(h.vertex[x]))
        else:
            stack.extend(h.children(x).tolist()[::-1])
    per = int(s[0])
    pe_vertex = np.repeat(np.asarray(order, np.int64), per)
    if per > 1:
        ar, dist = [per] + ar, [1] + dist
    return ar, dist, pe_vertex


def padded_hierarchy(t, slots):
    """``(hierarchy, distance, pe_vertex)`` of a partial allocation of a tree, or None.

    KaHIP and SharedMap take a uniform hierarchy (``a_1 x ... x a_l`` PEs); a fragmented allocation has
    leaf switches with different numbers of hosts.  Every inner node is padded to the most children of its
    level with virtual subtrees; a virtual PE's vertex is a host of its nearest real ancestor, so that a
    process the peer puts there is moved to the nearest free slot (``repair_slots``: the same leaf switch
    first).  The job is padded with idle processes to the PE count (:func:`_padded_run`).  Levels where every
    node has one child are dropped; a level's distance is the hop distance between the first two children of
    its first node that has two.  None when hosts have different slot counts or leaves lie at different depths.
    """
    h = topology_hierarchy(t)
    d = h.depth()
    leaves = h.vertex >= 0
    s = np.asarray(slots)[h.vertex[leaves]]
    if np.unique(d[leaves]).size != 1 or np.unique(s).size != 1:
        return None
    nchild = np.diff(h.child_ptr)
    ar, dist, keep = [], [], []
    for level in range(int(d[leaves][0]) - 1, -1, -1):       # bottom-up
        nodes = np.flatnonzero((d == level) & ~leaves)
        k = int(nchild[nodes].max())
        if k == 1:
            keep.append(False)
            continue
        x = int(nodes[nchild[nodes] >= 2][0])
        a, b = h.children(x)[:2]
        ar.append(k)
        dist.append(int(t.distance(h.rep[a], h.rep[b])))
        keep.append(True)
    widths = dict(zip([lv for lv, k in zip(range(int(d[leaves][0]) - 1, -1, -1), keep) if k], ar))

    def pes(x, level):
        """PE vertices below node ``x`` (at depth ``level``), depth first, virtual ones padded."""
        if h.vertex[x] >= 0:
            return [int(h.vertex[x])]
        out = [v for c in h.children(x).tolist() for v in pes(c, level + 1)]
        if level in widths:
            size = len(out) // max(1, h.children(x).size)
            out += [int(h.rep[x])] * (size * (widths[level] - h.children(x).size))
        return out

    pe_vertex = np.asarray(pes(h.root, 0), np.int64)
    per = int(s[0])
    pe_vertex = np.repeat(pe_vertex, per)
    if per > 1:
        ar, dist = [per] + ar, [1] + dist
    return ar, dist, pe_vertex


def _padded_run(g, hier):
    """``g`` with idle processes up to the hierarchy's PE count (the peers need one process per PE)."""
    from libtopomap import CommGraph

    total = int(np.prod(hier[0]))
    return g if total == g.n else CommGraph(total, g.src, g.dst, g.weights)


def _sym_csr(g):
    s = g.symmetric()
    w = np.maximum(1, np.rint(s.data)).astype(np.int64)
    return s.indptr.astype(np.int64), s.indices.astype(np.int64), w


def run_kahip(lib, t, g, slots, hier, mode):
    """KaHIP ``process_mapping`` (mode 0 fast, 1 eco, 2 strong; seed 0, imbalance 0) on ``hier``."""
    ar, dist, pe_vertex = hier
    real, g = g.n, _padded_run(g, hier)
    ptr, idx, w = _sym_csr(g)
    P = ctypes.POINTER(ctypes.c_int)
    c = lambda a: np.ascontiguousarray(a, np.int32)  # noqa: E731
    n = c([g.n])
    xadj, adj, ew, vw = c(ptr), c(idx), c(w), c(np.ones(g.n))
    hier_a, dist_a = c(ar), c(dist)
    part, cut, qap = np.zeros(g.n, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32)
    imb = ctypes.c_double(0.0)
    p = lambda a: a.ctypes.data_as(P)  # noqa: E731
    lib.process_mapping(p(n), p(vw), p(xadj), p(ew), p(adj), p(hier_a), p(dist_a), len(ar), mode, 0,
                        ctypes.byref(imb), True, 0, p(cut), p(qap), p(part))
    return repair_slots(t, pe_vertex[part[:real].astype(np.int64)], slots)


def run_sharedmap(t, g, slots, hier, mode, *, threads=1):
    """SharedMap (``chszlablib`` ``Decomposition.process_map``, seed 0, imbalance 0) on ``hier``."""
    from chszlablib import Decomposition, Graph

    ar, dist, pe_vertex = hier
    real, g = g.n, _padded_run(g, hier)
    ptr, idx, w = _sym_csr(g)
    cg = Graph.from_csr(ptr, idx, edge_weights=w)
    r = Decomposition.process_map(cg, ar, dist, mode=mode, imbalance=0.0, threads=threads, seed=0)
    return repair_slots(t, pe_vertex[np.asarray(r.assignment, np.int64)[:real]], slots)


def run_mtkahypar(t, g, slots):
    """Mt-KaHyPar ``map_onto_graph`` onto the whole host+switch graph (switches get weight 0)."""
    import mtkahypar

    if "init" not in run_mtkahypar.__dict__:
        run_mtkahypar.init = mtkahypar.initialize(1)
    mk = run_mtkahypar.init
    ctx = mk.context_from_preset(mtkahypar.PresetType.DEFAULT)
    ctx.logging = False
    k = t.n_vertices
    ctx.set_mapping_parameters(k, 0.0)
    ctx.set_individual_target_block_weights([int(x) for x in slots])
    s = g.symmetric().tocoo()
    keep = s.row < s.col
    edges = [tuple(e) for e in np.stack([s.row[keep], s.col[keep]], 1).tolist()]
    graph = mk.create_graph(ctx, g.n, len(edges), edges, [1] * g.n,
                            np.maximum(1, np.rint(s.data[keep])).astype(int).tolist())
    links = [tuple(e) for e in np.stack([t.link_u, t.link_v], 1).astype(int).tolist()]
    target = mk.create_target_graph(ctx, k, len(links), links, [1] * len(links))
    part = graph.map_onto_graph(target, ctx)
    v = np.array([part.block_id(i) for i in range(g.n)], np.int64)
    return repair_slots(t, v, slots)
