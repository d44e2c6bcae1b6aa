"""PERCS-like two-level direct network (Hoefler & Snir, ICS'11, section 5.3.2; Arimilli et al., HotI'10).

Vertex ``i`` is node ``n<i>`` of supernode ``i // 32``, drawer ``(i // 8) % 4``; every node is a host
with one slot.
"""

from __future__ import annotations

import numpy as np

from .grid import check_vertex_count

from ..errors import TopologyError
from ..topology import Topology
from ..validation import check_seed

__all__ = ["percs", "NODES_PER_DRAWER", "DRAWERS_PER_SUPERNODE", "LL_CAPACITY", "LR_CAPACITY", "D_CAPACITY"]

NODES_PER_DRAWER = 8
DRAWERS_PER_SUPERNODE = 4
LL_CAPACITY = 24.0  # GiB/s, inside a drawer
LR_CAPACITY = 5.0   # GiB/s, between drawers of one supernode
D_CAPACITY = 10.0   # GiB/s, between supernodes


def percs(supernodes, dlinks, *, seed=None, name=None):
    """PERCS network: drawers of 8 nodes, supernodes of 4 drawers, random D links between supernodes.

    Parameters
    ----------
    supernodes : int
        Number of supernodes ``S >= 1``.
    dlinks : int
        D-link ports per node, ``0..16``.  A supernode has ``32 * dlinks`` D ports; every pair of
        supernodes gets ``m = 32 * dlinks // (S - 1)`` D links, so ``32 * dlinks >= S - 1`` is needed
        (the seed's machine: 9 D links per node, 289 supernodes, 9248 nodes, ``m = 1``).
    seed : int or numpy.random.Generator, optional
        Which ports the D links use (``numpy.random.default_rng(seed)``).
    name : str, optional

    Returns
    -------
    Topology
        ``32 * S`` nodes.  LL links (capacity 24) join all nodes of a drawer, LR links (capacity 5) all
        nodes of different drawers of a supernode, D links (capacity 10) join supernodes; two D links
        between the same pair of nodes merge into one of capacity 20.

    Raises
    ------
    TopologyError
        ``S < 1``, ``dlinks`` outside ``0..16``, or too few D ports to join every pair of supernodes.

    Notes
    -----
    The ports of each supernode (``dlinks`` per node) are shuffled and dealt out to the D links of
    its ``S - 1`` supernode pairs; ``32*dlinks - m*(S-1)`` ports per supernode stay unused, matching
    "up to 16 neighbors via D links".  Nodes are at most three hops apart when ``m >= 1``.

    References
    ----------
    T. Hoefler and M. Snir, ICS'11, section 5.3.2.  B. Arimilli et al., "The PERCS High-Performance
    Interconnect", HotI 2010.

    Examples
    --------
    >>> t = percs(4, 3, seed=1)
    >>> t.n_vertices, sorted(set(t.capacity.tolist()))[:3]
    (128, [5.0, 10.0, 20.0])
    """
    check_vertex_count(lambda: 40 * int(supernodes), f"percs({supernodes})")
    S, d = int(supernodes), int(dlinks)
    if S < 1:
        raise TopologyError(f"PERCS needs at least one supernode, got {S}")
    if not 0 <= d <= 16:
        raise TopologyError(f"D links per node must be in 0..16, got {d}")
    per_sn = NODES_PER_DRAWER * DRAWERS_PER_SUPERNODE
    ports = per_sn * d
    if S > 1 and ports < S - 1:
        raise TopologyError(f"{S} supernodes need {S - 1} D ports per supernode to be fully connected; "
                            f"{d} D links per node give {ports}")
    # a Generator is the caller's stream (hybrid components, tests); anything else is a seed
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(check_seed(seed))
    n = S * per_sn
    local = np.arange(per_sn)
    li, lj = np.triu_indices(per_sn, 1)
    same_drawer = (li // NODES_PER_DRAWER) == (lj // NODES_PER_DRAWER)
    links, caps = [], []
    for s in range(S):
        links.append(np.stack([s * per_sn + li, s * per_sn + lj], 1))
        caps.append(np.where(same_drawer, LL_CAPACITY, LR_CAPACITY))
    if S > 1:
        m = ports // (S - 1)
        # port_owner[s][q] = node of supernode s behind its q-th (shuffled) port
        port_owner = [s * per_sn + rng.permutation(np.repeat(local, d)) for s in range(S)]
        used = np.zeros(S, dtype=np.int64)
        us, vs = [], []
        for s in range(S):
            for t in range(s + 1, S):
                us.append(port_owner[s][used[s]:used[s] + m])
                vs.append(port_owner[t][used[t]:used[t] + m])
                used[s] += m
                used[t] += m
        du, dv = np.concatenate(us), np.concatenate(vs)
        links.append(np.stack([du, dv], 1))
        caps.append(np.full(du.size, D_CAPACITY))
    return Topology([f"n{i}" for i in range(n)], np.concatenate(links), capacities=np.concatenate(caps),
                    name=name or f"percs-s{S}-d{d}",
                    attrs={"generator": "percs", "supernodes": S, "dlinks": d,
                           "seed": seed if isinstance(seed, (int, type(None))) else None})
