"""Mapping by graph similarity: Reverse Cuthill-McKee orders of G and H zipped (Hoefler & Snir, 3.3)."""

from __future__ import annotations

import numpy as np
from scipy.sparse import csgraph

from ..commgraph import sym_graph
from ._common import finish, validated

__all__ = ["map_rcm"]


@validated
def map_rcm(topology, graph, *, slots=None, seed=None):
    """RCM graph-similarity mapping.

    RCM orders both the communication graph G and the network H (bandwidth reduction brings both
    adjacency matrices into a banded shape); the ``i``-th process in G's order goes to the ``i``-th
    usable slot in H's order, so ``pi = pi_H o pi_G^-1``.

    Parameters
    ----------
    topology : Topology
    graph : CommGraph or anything :func:`~libtopomap.as_commgraph` accepts
    slots : array_like of int, optional
        Usable slots per vertex (default ``topology.slots``).  A vertex with ``k`` slots takes ``k``
        consecutive processes of G's order.
    seed : ignored (RCM is deterministic)

    Returns
    -------
    Mapping

    Notes
    -----
    The paper removes the vertices with ``C(v) = 0`` from H before ordering it.  That leaves no
    edges at all in an indirect network (a fat tree's hosts only touch switches), so here RCM runs on
    the whole of H and the order is then restricted to vertices with usable slots; on a direct
    network with every vertex usable both are the same.

    References
    ----------
    T. Hoefler and M. Snir, ICS'11, section 3.3 and Theorem 4.
    E. Cuthill and J. McKee, "Reducing the bandwidth of sparse symmetric matrices", ACM '69.
    """
    g = graph
    sym = sym_graph(g)
    import scipy.sparse as sp

    gm = sp.csr_matrix((sym.wsum, sym.indices, sym.indptr), shape=(g.n, g.n))
    order_g = csgraph.reverse_cuthill_mckee(gm, symmetric_mode=True)
    order_h = csgraph.reverse_cuthill_mckee(topology.adjacency.tocsr(), symmetric_mode=True)
    order_h = order_h[slots[order_h] > 0]
    slot_seq = np.repeat(order_h, slots[order_h])
    vert = np.empty(g.n, dtype=np.int64)
    vert[order_g] = slot_seq[:g.n]
    return finish(topology, vert, slots, "rcm")
