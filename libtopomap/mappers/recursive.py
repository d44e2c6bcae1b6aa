"""Recursive bisection mapping with METIS (Hoefler & Snir, ICS'11, Algorithm 2)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..commgraph import sym_graph
from ._common import finish, validated, settle_domain
from .partition import balance_csr, int_weights, metis_csr, subgraph

__all__ = ["map_recursive", "metis_parts", "balance_parts", "int_weights"]


def metis_parts(adj, nparts, *, vweights=None, tpwgts=None, seed=None):
    """Partition a symmetric CSR matrix (weights = edge weights) into ``nparts`` parts with pymetis.

    Returns the part of every vertex (``int64``).  Tiny graphs are split without METIS.  The CSR
    arrays go to METIS as ``int64`` numpy arrays (no Python lists).
    """
    n = adj.shape[0]
    if nparts <= 1 or n == 0:
        return np.zeros(n, np.int64)
    if n <= nparts:
        return np.arange(n, dtype=np.int64) % nparts
    adj = adj.tocsr()
    if not adj.has_sorted_indices:
        adj = adj.copy()
        adj.sort_indices()
    return metis_csr(adj.indptr, adj.indices, adj.data, nparts, vweights, tpwgts, seed)


def balance_parts(adj, parts, sizes):
    """Move vertices until part ``i`` has exactly ``sizes[i]`` vertices (the paper's fix-up).

    From every part that is too big, the vertices least connected to their own part (internal minus
    external edge weight) move out, each to the too-small part it is most connected to.

    Parameters
    ----------
    adj : scipy.sparse matrix, symmetric, weights = edge weights
    parts : array_like of int
    sizes : array_like of int, summing to the number of vertices

    Returns
    -------
    numpy.ndarray of int64
    """
    parts = np.asarray(parts, dtype=np.int64).copy()
    sizes = np.asarray(sizes, dtype=np.int64)
    k = sizes.size
    count = np.bincount(parts, minlength=k)
    if np.array_equal(count, sizes):
        return parts
    adj = adj.tocsr()
    return balance_csr(adj.indptr, adj.indices, adj.data, parts, sizes, count)


def _interchangeable_hosts(topology):
    """Per vertex: an id shared by the hosts that no metric tells apart (on a single link, to the
    same switch, of the same capacity: whatever else the network, their distances and the routes
    of their traffic differ only in that link), else -1."""
    att, off = topology.distances.attachments()
    leaf = np.flatnonzero(off == 1)
    twin = np.full(topology.n_vertices, -1, np.int64)
    if leaf.size:
        cap = topology.arc_capacity[topology.indptr[leaf]]
        _, inv = np.unique(np.stack([att[leaf].astype(np.float64), cap], 1), axis=0, return_inverse=True)
        twin[leaf] = inv.reshape(-1)
    return twin


@validated
def map_recursive(topology, graph, *, slots=None, seed=None):
    """Recursive bisection mapping (Hoefler & Snir, Algorithm 2).

    H (vertex weight = usable slots, switches 0; edge weight = capacity) and G (edge weight =
    communication volume) are bisected together with METIS: G's halves get exactly as many
    processes as the H halves they go to can hold, in proportion to their slots, after the paper's
    exact-balance fix-up.  At a single slot vertex, all remaining processes go there.

    Parameters
    ----------
    topology : Topology
    graph : CommGraph or anything :func:`~libtopomap.as_commgraph` accepts
    slots : array_like of int, optional
        Usable slots per vertex; a job smaller than the machine fills the halves proportionally.
    seed : int, optional
        METIS seed.

    Returns
    -------
    Mapping

    Notes
    -----
    Algorithm 2 bisects G into equal halves and swaps them when the sizes do not match the halves
    of H; asking METIS for the target fractions of the H halves (``tpwgts``) makes that swap
    unnecessary and keeps the cut small when the capacities are uneven.

    References
    ----------
    T. Hoefler and M. Snir, ICS'11, section 3.2, Algorithm 2 and Theorem 3.
    G. Karypis and V. Kumar, "A fast and high quality multilevel scheme for partitioning irregular
    graphs", SIAM J. Sci. Comput. 20(1), 1998.
    """
    g, rng = graph, np.random.default_rng(seed)
    sym = sym_graph(g)
    gadj = sp.csr_matrix((sym.wsum, sym.indices, sym.indptr), shape=(g.n, g.n))
    hadj = topology.to_scipy()
    hadj.sort_indices()
    h_ptr, h_idx, h_val = hadj.indptr.astype(np.int64), hadj.indices.astype(np.int64), hadj.data
    g_ptr, g_idx, g_val = gadj.indptr.astype(np.int64), gadj.indices.astype(np.int64), gadj.data
    hpos = np.full(topology.n_vertices, -1, np.int64)
    gpos = np.full(g.n, -1, np.int64)
    gamma = np.full(g.n, -1, np.int64)
    metis_seed = int(rng.integers(0, 2**31 - 1)) if seed is not None else 0
    twin = _interchangeable_hosts(topology)
    stack = [(np.arange(topology.n_vertices), np.arange(g.n))]
    while stack:
        hv, procs = stack.pop()
        domain = settle_domain(gamma, hv, procs, slots)
        if domain is None:
            continue
        sl, usable = domain
        if twin[usable[0]] >= 0 and sl.max() == 1 and np.all(twin[usable] == twin[usable[0]]):
            # hosts of one slot, of one switch, on links of one capacity: every placement of the
            # processes onto them has the same loads and distances, so the rest of the bisections
            # (two METIS calls per host, 95 % of them on the 4,096-process dragonfly) cannot matter.
            # (With several slots per host, which processes share a host does matter.)
            gamma[procs] = usable[:procs.size]
            continue
        sp_, si, sv = subgraph(h_ptr, h_idx, h_val, hv, hpos)
        hpart = metis_csr(sp_, si, sv, 2, sl, None, metis_seed)
        c1 = int(sl[hpart == 0].sum())
        c2 = int(sl[hpart == 1].sum())
        if c1 == 0 or c2 == 0:
            # METIS put every slot on one side: split the usable vertices in index order instead
            half = np.zeros(hv.size, bool)
            half[np.flatnonzero(sl > 0)[: usable.size // 2]] = True
            hpart = np.where(half, 0, 1)
            c1 = int(sl[hpart == 0].sum())
            c2 = int(sl[hpart == 1].sum())
        n = procs.size
        n1 = int(round(n * c1 / (c1 + c2)))
        n1 = min(max(n1, n - c2), c1)
        if n1 == 0:
            gparts = np.ones(n, np.int64)
        elif n1 == n:
            gparts = np.zeros(n, np.int64)
        else:
            gp_, gi, gv = subgraph(g_ptr, g_idx, g_val, procs, gpos)
            gparts = metis_csr(gp_, gi, gv, 2, None, [n1 / n, 1 - n1 / n], metis_seed)
            sizes = np.array([n1, n - n1], np.int64)
            count = np.bincount(gparts, minlength=2)
            if not np.array_equal(count, sizes):
                gparts = balance_csr(gp_, gi, gv, gparts, sizes, count)
        stack.append((hv[hpart == 0], procs[gparts == 0]))
        stack.append((hv[hpart == 1], procs[gparts == 1]))
    return finish(topology, gamma, slots, "recursive")
