"""Dragonfly networks (Kim et al. 2008) as described by Dorier et al. (section II-A), and their queries.

Terminals come first (vertex ``(G*a + r)*p + t``, named ``n<i>``), then routers ``sw-g<G>-r<r>``;
:class:`Dragonfly` answers the router, group and gate queries of Dorier et al.'s broadcasts from the
links themselves.  The numbering, the minimal route and the gate table: docs/internals.rst, "Dragonfly
queries".
"""

from __future__ import annotations

import re

import numpy as np

from .grid import check_edge_count, check_vertex_count

from ..errors import TopologyError
from ..topology import HOST, SWITCH, Topology

__all__ = ["dragonfly", "Dragonfly", "dragonfly_queries"]


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
    ``g = a*h + 1`` every pair of groups shares exactly one global link, the architecture of Dorier et al.
    (``h = (g-1)/a``); ports beyond ``m*(g-1)`` stay unused.  Minimal routes between routers take at
    most local-global-local hops, so routers are at most 3 hops apart (terminals at most 5).

    References
    ----------
    J. Kim, W. J. Dally, S. Scott, D. Abts, "Technology-Driven, Highly-Scalable Dragonfly Topology",
    ISCA 2008.  M. Dorier et al., "Evaluation of Topology-Aware Broadcast Algorithms for Dragonfly
    Networks", CLUSTER 2016, section II-A.

    Examples
    --------
    >>> t = dragonfly(9, 4, 2, 2)
    >>> t.hosts.size, t.n_vertices
    (72, 108)
    """
    check_vertex_count(lambda: int(groups) * int(routers) * (int(terminals) + 1),
                       f"dragonfly({groups}, {routers}, {terminals})")
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


_ROUTER_NAME = re.compile(r"^sw-g(\d+)-r(\d+)$")


class Dragonfly:
    """Router, group, gate and minimal-route queries of a dragonfly topology.

    Parameters
    ----------
    topology : Topology
        A dragonfly: ``topology.attrs["generator"] == "dragonfly"`` (from
        :func:`~libtopomap.dragonfly`, or a JSON file that kept its attributes), or routers named
        ``sw-g<G>-r<r>`` with every terminal attached to exactly one router (a ``.ltm`` file written
        from the generator).

    Attributes
    ----------
    groups, routers, terminals : int
        ``g``, ``a`` (routers per group) and ``p`` (terminals per router; 0 when the routers are the
        slot vertices).
    router_vertices : numpy.ndarray of int64
        Topology vertex of router ``G*a + r`` (router ``r`` of group ``G``).
    links_per_pair : int
        ``m``, the global links between two groups (1 in Dorier et al.'s ``g = a*h + 1``).
    router_ids : numpy.ndarray of int64
        Router ``G*a + r`` of each topology vertex (a terminal: its router's).
    gate_router, landing_router : numpy.ndarray of int64, shape (g, g, max(m, 1))
        Router ``G*a + r`` of group ``G`` on the ``k``-th global link between groups ``G`` and ``H``, and
        that link's end in ``H`` (``-1`` pads pairs with fewer than ``m`` links).

    Raises
    ------
    TopologyError
        When the topology is not a dragonfly (no dragonfly attributes and no ``sw-g<G>-r<r>`` router
        names), or its links contradict the structure: a terminal not attached to exactly one router,
        a group whose routers are not all joined, two groups without a global link.

    Examples
    --------
    >>> import libtopomap as ltm
    >>> q = Dragonfly(ltm.dragonfly(9, 4, 2, 2))
    >>> int(q.group_of(q.router_of(17))), q.link_counts(0, 17)
    (2, (2, 1, 1))
    """

    def __init__(self, topology):
        t = topology
        attrs = getattr(t, "attrs", None) or {}
        label = f" {t.name!r}" if getattr(t, "name", None) else ""
        if attrs.get("generator") == "dragonfly":
            try:
                g, a, p = int(attrs["groups"]), int(attrs["routers"]), int(attrs["terminals"])
            except (KeyError, TypeError, ValueError):
                raise TopologyError(f"topology{label}: dragonfly attributes need integer 'groups', 'routers' "
                                    f"and 'terminals', got {attrs!r}") from None
            expect = g * a * (p + 1) if p > 0 else g * a
            if t.n_vertices != expect:
                raise TopologyError(f"topology{label}: a dragonfly with g={g}, a={a}, p={p} has {expect} vertices, "
                                    f"this one has {t.n_vertices}")
            router_vertices = np.arange(g * a, dtype=np.int64) + (g * a * p if p > 0 else 0)
        else:
            g, a, p, router_vertices = self._from_names(t, label)
        self.topology = t
        self.groups, self.routers, self.terminals = g, a, p
        self.router_vertices = router_vertices
        self.router_vertices.setflags(write=False)
        n = t.n_vertices
        rid = np.full(n, -1, dtype=np.int64)
        rid[router_vertices] = np.arange(g * a, dtype=np.int64)
        is_router = rid >= 0
        deg = np.diff(t.indptr)
        if p > 0:
            hosts = np.flatnonzero(~is_router)
            first = t.indices[t.indptr[hosts]] if hosts.size else np.zeros(0, np.int64)
            bad = hosts[(deg[hosts] != 1) | ~is_router[first]] if hosts.size else hosts
            if bad.size:
                raise TopologyError(f"topology{label}: vertex {t.names[bad[0]]!r} is not a terminal attached to "
                                    f"exactly one router, so this is not a dragonfly")
            rid[hosts] = rid[first]
            per_router = np.bincount(rid[hosts], minlength=g * a)
            if hosts.size != g * a * p or np.any(per_router != p):
                raise TopologyError(f"topology{label}: routers must have {p} terminals each "
                                    f"(found {per_router.min()} to {per_router.max()})")
        self.router_ids = rid
        self.router_ids.setflags(write=False)
        # Router-router links: local (same group) and global (different groups).
        u, v = rid[t.link_u], rid[t.link_v]
        rr = is_router[t.link_u] & is_router[t.link_v]
        u, v = u[rr], v[rr]
        gu, gv = u // a, v // a
        n_local = int(np.count_nonzero(gu == gv))
        if n_local != g * a * (a - 1) // 2:
            raise TopologyError(f"topology{label}: a dragonfly group is a clique of {a} routers; found {n_local} "
                                f"local links instead of {g * a * (a - 1) // 2}")
        glob = gu != gv
        # both directions of every global link, sorted by (group, far group, router, far router)
        su = np.r_[u[glob], v[glob]]
        sv = np.r_[v[glob], u[glob]]
        order = np.lexsort((sv, su, sv // a, su // a))
        su, sv = su[order], sv[order]
        pair = (su // a) * g + sv // a
        counts = np.bincount(pair, minlength=g * g).reshape(g, g) if g > 1 else np.zeros((g, g), np.int64)
        off_diag = ~np.eye(g, dtype=bool)
        if g > 1 and np.any(counts[off_diag] == 0):
            G, H = np.argwhere((counts == 0) & off_diag)[0]
            raise TopologyError(f"topology{label}: groups {G} and {H} share no global link, so this is not a "
                                f"dragonfly with minimal routing")
        m = int(counts.max()) if g > 1 else 0
        self.links_per_pair = m
        self.gate_router = np.full((g, g, max(m, 1)), -1, dtype=np.int64)
        self.landing_router = np.full((g, g, max(m, 1)), -1, dtype=np.int64)
        if su.size:
            start = np.r_[0, np.cumsum(np.bincount(pair, minlength=g * g))[:-1]]
            k = np.arange(su.size) - start[pair]
            self.gate_router[su // a, sv // a, k] = su
            self.landing_router[su // a, sv // a, k] = sv
        for arr in (self.gate_router, self.landing_router):
            arr.setflags(write=False)

    @staticmethod
    def _from_names(t, label):
        found = []
        for i, nm in enumerate(t.names):
            mt = _ROUTER_NAME.match(nm)
            if mt:
                found.append((int(mt.group(1)), int(mt.group(2)), i))
        if not found:
            raise TopologyError(f"topology{label} is not a dragonfly: it has no dragonfly attributes (from "
                                f"libtopomap.dragonfly or a JSON file) and no routers named sw-g<G>-r<r>")
        arr = np.array(found, dtype=np.int64)
        g, a = int(arr[:, 0].max()) + 1, int(arr[:, 1].max()) + 1
        if arr.shape[0] != g * a or np.unique(arr[:, 0] * a + arr[:, 1]).size != g * a:
            raise TopologyError(f"topology{label}: routers sw-g<G>-r<r> must cover every G < {g} and r < {a} "
                                f"exactly once ({arr.shape[0]} found)")
        router_vertices = np.empty(g * a, dtype=np.int64)
        router_vertices[arr[:, 0] * a + arr[:, 1]] = arr[:, 2]
        n_other = t.n_vertices - g * a
        if n_other % (g * a):
            raise TopologyError(f"topology{label}: {n_other} terminals cannot be spread evenly over {g * a} routers")
        return g, a, n_other // (g * a), router_vertices

    # ------------------------------------------------------------------ identity queries
    def _vertices(self, vertices):
        v = np.asarray(vertices, dtype=np.int64)
        bad = (v < 0) | (v >= self.topology.n_vertices)
        if np.any(bad):
            raise TopologyError(f"vertex {int(v[bad].flat[0])} is outside 0..{self.topology.n_vertices - 1}")
        return v

    def router_index(self, vertices):
        """Router id ``G*a + r`` of each terminal or router vertex."""
        return self.router_ids[self._vertices(vertices)]

    def router_of(self, vertices):
        """The router vertex each terminal hangs off (a router is its own router)."""
        return self.router_vertices[self.router_index(vertices)]

    def group_of(self, vertices):
        """The group of each terminal or router vertex."""
        return self.router_index(vertices) // self.routers

    def _check_groups(self, A, B):
        A, B = int(A), int(B)
        for G in (A, B):
            if not 0 <= G < self.groups:
                raise TopologyError(f"group {G} is outside 0..{self.groups - 1}")
        return A, B

    def gates(self, A, B):
        """Router vertices of group ``A`` that hold a global link to group ``B`` (empty when ``A == B``)."""
        A, B = self._check_groups(A, B)
        r = self.gate_router[A, B]
        return self.router_vertices[np.unique(r[r >= 0])]

    def gate(self, A, B):
        """The gate router vertex of group ``A`` toward group ``B``: the lowest one of :meth:`gates`."""
        g = self.gates(A, B)
        if g.size == 0:
            raise TopologyError(f"groups {A} and {B} are the same group: no gate between them")
        return int(g[0])

    # ------------------------------------------------------------------ minimal routing
    def _choice(self, rs, rd):
        """For router ids ``rs``, ``rd`` in different groups: (near, far) router ids of the global link of the
        minimal route (fewest local hops; ties to the lowest near then far router) and its local hop count."""
        a = self.routers
        gs, gd = rs // a, rd // a
        best = np.full(rs.shape, 3, dtype=np.int64)
        near = np.full(rs.shape, -1, dtype=np.int64)
        far = np.full(rs.shape, -1, dtype=np.int64)
        for k in range(self.gate_router.shape[2]):
            u, w = self.gate_router[gs, gd, k], self.landing_router[gs, gd, k]
            cost = np.where(u >= 0, (u != rs).astype(np.int64) + (w != rd), 3)
            take = cost < best
            best = np.where(take, cost, best)
            near = np.where(take, u, near)
            far = np.where(take, w, far)
        return near, far, best

    def link_counts(self, src, dst):
        """Terminal, local and global links a message crosses from ``src`` to ``dst`` under minimal routing.

        Parameters
        ----------
        src, dst : int or array_like of int
            Terminal (or, with ``p = 0``, router) vertices; broadcast against each other.

        Returns
        -------
        tuple of int, or tuple of numpy.ndarray of int64
            ``(terminal, local, global)``: 0 links when ``src == dst``; otherwise 2 terminal links
            (0 when ``p = 0``), 0 local links on one router, 1 in one group, and across groups one
            global link plus 0 to 2 local links (section II-A.2).
        """
        scalar = np.ndim(src) == 0 and np.ndim(dst) == 0
        s, d = np.broadcast_arrays(self._vertices(src), self._vertices(dst))
        shape = s.shape
        s, d = s.ravel(), d.ravel()
        rs, rd = self.router_ids[s], self.router_ids[d]
        a = self.routers
        moved = s != d
        term = np.where(moved, 2 if self.terminals > 0 else 0, 0).astype(np.int64)
        same_g = rs // a == rd // a
        local = (same_g & (rs != rd)).astype(np.int64)
        glob = (~same_g).astype(np.int64)
        if np.any(~same_g):
            idx = ~same_g
            local[idx] = self._choice(rs[idx], rd[idx])[2]
        if scalar:
            return int(term[0]), int(local[0]), int(glob[0])
        return term.reshape(shape), local.reshape(shape), glob.reshape(shape)

    def hops(self, src, dst):
        """Links crossed under minimal routing (the sum of :meth:`link_counts`)."""
        t, lo, gl = self.link_counts(src, dst)
        return t + lo + gl

    def route(self, src, dst):
        """The minimal route from ``src`` to ``dst`` as a list of topology vertices, both ends included.

        Across groups the route leaves through the gate router of the source group (the one needing the
        fewest local hops when there are several links between the two groups) and enters through its
        far end.

        Examples
        --------
        >>> import libtopomap as ltm
        >>> q = Dragonfly(ltm.dragonfly(3, 2, 2, 1))
        >>> [q.topology.names[v] for v in q.route(0, 4)]
        ['n0', 'sw-g0-r0', 'sw-g1-r1', 'sw-g1-r0', 'n4']
        """
        s, d = int(self._vertices(src)), int(self._vertices(dst))
        if s == d:
            return [s]
        rs, rd = int(self.router_ids[s]), int(self.router_ids[d])
        routers = [rs]
        if rs // self.routers != rd // self.routers:
            near, far, _ = self._choice(np.array([rs]), np.array([rd]))
            routers += [int(near[0]), int(far[0])]
        routers.append(rd)
        path = [] if self.terminals == 0 else [s]
        for r in routers:
            v = int(self.router_vertices[r])
            if not path or path[-1] != v:
                path.append(v)
        if self.terminals > 0:
            path.append(d)
        return path


def dragonfly_queries(topology):
    """The :class:`Dragonfly` of ``topology``, built once and cached on it (a Topology is immutable)."""
    if isinstance(topology, Dragonfly):
        return topology
    cached = topology.cache.get("dragonfly_queries")
    if cached is None:
        cached = topology.cache["dragonfly_queries"] = Dragonfly(topology)
    return cached
