"""Recursive bisection mapping with METIS (Hoefler & Snir, ICS'11, Algorithm 2)."""

from __future__ import annotations

import numpy as np
import pymetis
import scipy.sparse as sp

from ._common import finish, prepare
from .objectives import SymGraph

__all__ = ["map_recursive", "metis_parts", "balance_parts", "int_weights"]


def int_weights(w, scale=1000):
    """Positive integer edge weights for METIS, proportional to ``w`` (at least 1)."""
    w = np.asarray(w, dtype=np.float64)
    if w.size == 0:
        return np.zeros(0, np.int64)
    mx = w.max()
    if mx <= 0:
        return np.ones(w.size, np.int64)
    return np.maximum(1, np.rint(w * (scale / mx))).astype(np.int64)


def metis_parts(adj, nparts, *, vweights=None, tpwgts=None, seed=None):
    """Partition a symmetric CSR matrix (weights = edge weights) into ``nparts`` parts with pymetis.

    Returns the part of every vertex (``int64``).  Tiny graphs are split without METIS.
    """
    n = adj.shape[0]
    if nparts <= 1 or n == 0:
        return np.zeros(n, np.int64)
    if n <= nparts:
        return np.arange(n, dtype=np.int64) % nparts
    adj = adj.tocsr()
    adj.sort_indices()
    opts = pymetis.Options()
    opts.seed = 0 if seed is None else int(seed) % (2**31 - 1)
    kw = {}
    if vweights is not None:
        kw["vweights"] = np.asarray(vweights, np.int64).tolist()
    if tpwgts is not None:
        kw["tpwgts"] = [float(x) for x in tpwgts]
    _cut, member = pymetis.part_graph(
        nparts, adjacency=pymetis.CSRAdjacency(adj.indptr.astype(np.int64).tolist(),
                                               adj.indices.astype(np.int64).tolist()),
        eweights=int_weights(adj.data).tolist() if adj.nnz else None, options=opts, **kw)
    return np.asarray(member, dtype=np.int64)


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
    coo = adj.tocoo()
    same = parts[coo.row] == parts[coo.col]
    internal = np.bincount(coo.row, weights=np.where(same, coo.data, -coo.data), minlength=adj.shape[0])
    excess = count - sizes
    for part in np.flatnonzero(excess > 0):
        members = np.flatnonzero(parts == part)
        members = members[np.argsort(internal[members], kind="stable")]
        for v in members[:excess[part]]:
            short = np.flatnonzero(count < sizes)
            row = slice(adj.indptr[v], adj.indptr[v + 1])
            conn = np.bincount(parts[adj.indices[row]], weights=adj.data[row], minlength=k)[short]
            dest = short[int(np.argmax(conn))] if conn.size else short[0]
            parts[v] = dest
            count[part] -= 1
            count[dest] += 1
    return parts


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
    topology, g, slots, rng = prepare(topology, graph, slots, seed)
    sym = SymGraph(g)
    gadj = sp.csr_matrix((sym.wsum, sym.indices, sym.indptr), shape=(g.n, g.n))
    hadj = topology.to_scipy()
    gamma = np.full(g.n, -1, np.int64)
    metis_seed = int(rng.integers(0, 2**31 - 1)) if seed is not None else 0
    stack = [(np.arange(topology.n_vertices), np.arange(g.n))]
    while stack:
        hv, procs = stack.pop()
        if procs.size == 0:
            continue
        usable = hv[slots[hv] > 0]
        if usable.size == 1:
            gamma[procs] = usable[0]
            continue
        hpart = metis_parts(hadj[hv][:, hv], 2, vweights=slots[hv], seed=metis_seed)
        c1 = int(slots[hv[hpart == 0]].sum())
        c2 = int(slots[hv[hpart == 1]].sum())
        if c1 == 0 or c2 == 0:
            # METIS put every slot on one side: split the usable vertices in index order instead
            half = np.zeros(hv.size, bool)
            half[np.isin(hv, usable[: usable.size // 2])] = True
            hpart = np.where(half, 0, 1)
            c1 = int(slots[hv[hpart == 0]].sum())
            c2 = int(slots[hv[hpart == 1]].sum())
        n = procs.size
        n1 = int(round(n * c1 / (c1 + c2)))
        n1 = min(max(n1, n - c2), c1)
        if n1 == 0:
            gparts = np.ones(n, np.int64)
        elif n1 == n:
            gparts = np.zeros(n, np.int64)
        else:
            sub = gadj[procs][:, procs]
            gparts = metis_parts(sub, 2, tpwgts=[n1 / n, 1 - n1 / n], seed=metis_seed)
            gparts = balance_parts(sub, gparts, [n1, n - n1])
        stack.append((hv[hpart == 0], procs[gparts == 0]))
        stack.append((hv[hpart == 1], procs[gparts == 1]))
    return finish(topology, gamma, slots, "recursive")
