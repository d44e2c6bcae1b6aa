"""Dragonfly networks (Kim et al. 2008) as described in seed 002 (Dorier et al.), section II-A.

Terminals come first: terminal ``t`` of router ``r`` of group ``G`` is vertex ``(G*a + r)*p + t``, named
``n<i>``; router ``r`` of group ``G`` follows as ``sw-g<G>-r<r>`` (vertex ``g*a*p + G*a + r``).
"""

from __future__ import annotations

import numpy as np

from .grid import check_edge_count, check_vertex_count

from ..errors import TopologyError
from ..topology import HOST, SWITCH, Topology

__all__ = ["dragonfly"]


def dragonfly(groups, routers, terminals, global_links, *, local_capacity=1.0, global_capacity=1.0,
              terminal_capacity=1.0, name=None):
    """Dragonfly with ``g`` groups of ``a`` routers, ``p`` terminals per router, ``h`` global links per router.

    Parameters
    ----------
    groups : int
        ``g >= 1``.
    routers : int
        ``a >= 1`` routers per group, joined all-to-all by local links.
    terminals : int
        ``p >= 0`` terminals (host vertices, one slot each) per router.  With ``p = 0`` the routers
        themselves are the slot vertices (names ``n<i>``), e.g. for :func:`concentrate`.
    global_links : int
        ``h >= 0`` global ports per router.
    local_capacity, global_capacity, terminal_capacity : float
        Link capacities.
    name : str, optional

    Returns
    -------
    Topology

    Raises
    ------
    TopologyError
        Non-positive sizes, or ``g - 1 > a*h`` (not enough global ports for a link between every
        pair of groups).

    Notes
    -----
    Canonical ("consecutive") arrangement: the ``a*h`` global ports of a group are numbered
    ``j = r*h + k`` (router ``r``, its port ``k``).  With ``m = (a*h) // (g - 1)`` links per pair of
    groups, port ``j < m*(g-1)`` of group ``G`` leads to group ``G + (j mod (g-1)) + 1 (mod g)``,
    arriving on port ``c*(g-1) + (g - 2 - (j mod (g-1)))`` with ``c = j // (g-1)``.  When
    ``g = a*h + 1`` every pair of groups shares exactly one global link, the architecture of seed 002
    (``h = (g-1)/a``); ports beyond ``m*(g-1)`` stay unused.  Minimal routes between routers take at
    most local-global-local hops, so routers are at most 3 hops apart (terminals at most 5).

    References
    ----------
    J. Kim, W. J. Dally, S. Scott, D. Abts, "Technology-Driven, Highly-Scalable Dragonfly Topology",
    ISCA 2008.  M. Dorier et al., "Evaluation of Topology-Aware Broadcast Algorithms for Dragonfly
    Networks", CLUSTER 2016, section II-A (seed 002).

    Examples
    --------
    >>> t = dragonfly(9, 4, 2, 2)
    >>> t.hosts.size, t.n_vertices
    (72, 108)
    """
    check_vertex_count(lambda: int(groups) * int(routers) * (int(terminals) + 1), f"dragonfly({groups}, {routers}, {terminals})")
    g, a, p, h = int(groups), int(routers), int(terminals), int(global_links)
    if g < 1 or a < 1 or p < 0 or h < 0:
        raise TopologyError(f"dragonfly needs groups >= 1, routers >= 1, terminals >= 0, global >= 0; "
                            f"got g={g}, a={a}, p={p}, h={h}")
    if g > 1 and g - 1 > a * h:
        raise TopologyError(f"dragonfly with {g} groups needs a*h >= g-1 = {g - 1} global ports per group "
                            f"to join every pair of groups; a*h = {a * h}")
    n_routers = g * a
    n_terms = n_routers * p
    # local all-to-all, global (a*h ports per group, each link counted at both ends), terminal links
    check_edge_count(g * (a * (a - 1) // 2) + (g * a * h) // 2 + n_terms, f"dragonfly({g}, {a}, {p}, {h})",
                     unit="links")
    router0 = n_terms  # vertex of router 0
    links, caps = [], []
    # Local links: all-to-all inside each group.
    ri, rj = np.triu_indices(a, 1)
    for G in range(g):
        base = router0 + G * a
        links.append(np.stack([base + ri, base + rj], 1))
        caps.append(np.full(ri.size, float(local_capacity)))
    # Global links, consecutive arrangement.
    if g > 1:
        m = (a * h) // (g - 1)
        j = np.arange(m * (g - 1), dtype=np.int64)
        off = j % (g - 1)
        copy = j // (g - 1)
        for G in range(g):
            H = (G + off + 1) % g
            jj = copy * (g - 1) + (g - 2 - off)
            keep = G < H  # each link once
            u = router0 + G * a + j[keep] // h
            v = router0 + H[keep] * a + jj[keep] // h
            links.append(np.stack([u, v], 1))
            caps.append(np.full(u.size, float(global_capacity)))
    if p > 0:
        t = np.arange(n_terms, dtype=np.int64)
        links.append(np.stack([t, router0 + t // p], 1))
        caps.append(np.full(n_terms, float(terminal_capacity)))
        names = [f"n{i}" for i in range(n_terms)]
        names += [f"sw-g{G}-r{r}" for G in range(g) for r in range(a)]
        kinds = [HOST] * n_terms + [SWITCH] * n_routers
        slots = np.r_[np.ones(n_terms, np.int32), np.zeros(n_routers, np.int32)]
    else:
        names = [f"n{i}" for i in range(n_routers)]
        kinds = [HOST] * n_routers
        slots = np.ones(n_routers, np.int32)
    return Topology(names, np.concatenate(links) if links else np.zeros((0, 2), np.int64),
                    capacities=np.concatenate(caps) if caps else None, slots=slots, kinds=kinds,
                    name=name or f"dragonfly-g{g}-a{a}-p{p}-h{h}",
                    attrs={"generator": "dragonfly", "groups": g, "routers": a, "terminals": p, "global": h})
