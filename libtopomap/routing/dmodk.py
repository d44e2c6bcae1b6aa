"""``dmodk``: deterministic fat-tree routing, the up-port chosen from the destination's index.

As OpenSM's ``ftree`` engine and SimGrid's ``FAT_TREE`` zone route (d-mod-k: Zahavi et al., "Optimized
InfiniBand fat-tree routing for shift all-to-all communication patterns"; Gomez et al., "Deterministic
versus adaptive routing in fat-trees"), on any tree-like fabric (:func:`tree_context`).  The rule, the
tree and the destination order: docs/routing.rst, "``dmodk`` and ``lft`` in detail".
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..errors import TopologyError
from ..topology import SWITCH
from ._common import cached, label, no_log, put
from ._models import Model

__all__ = ["TreeContext", "tree_context", "dmodk_route", "dmodk_index", "DMODK"]


class TreeContext:
    """The arrays of :func:`dmodk_route` (all ``int64``): ``level``; ``lo``/``hi``, the destination
    indices below each vertex (``[lo, hi)``; a host: its own index); ``didx``, the destination index of
    each host (-1 elsewhere); ``uptr``/``uarc`` and ``dptr``/``darc``, each vertex's up and down arcs
    (CSR over vertices, in port order)."""

    __slots__ = ("level", "lo", "hi", "didx", "uptr", "uarc", "dptr", "darc")

    def __init__(self, level, lo, hi, didx, uptr, uarc, dptr, darc):
        self.level, self.lo, self.hi, self.didx = level, lo, hi, didx
        self.uptr, self.uarc, self.dptr, self.darc = uptr, uarc, dptr, darc


def _levels(topology, hosts):
    n = topology.n_vertices
    tail = np.repeat(np.arange(n, dtype=np.int64), np.diff(topology.indptr))
    level = np.full(n, -1, np.int64)
    level[hosts] = 0
    frontier = np.zeros(n, bool)
    frontier[hosts] = True
    lv = 0
    while frontier.any():
        lv += 1
        nb = np.unique(topology.indices[frontier[tail]])
        nb = nb[level[nb] < 0]
        level[nb] = lv
        frontier[:] = False
        frontier[nb] = True
    return level


def _port_keys(topology):
    """Port number of each arc (its tail's port; the lowest of merged cables), or the head vertex."""
    key = topology.indices.astype(np.int64).copy()
    fab = topology.attrs.get("fabric") if isinstance(topology.attrs, dict) else None
    if not fab or not fab.get("ports"):
        return key
    ports = np.asarray(fab["ports"], np.int64).reshape(-1, 4)
    big = np.iinfo(np.int64).max
    port = np.full(topology.indices.size, big, np.int64)
    for u, pu, v, pv in ((ports[:, 0], ports[:, 1], ports[:, 2], ports[:, 3]),
                         (ports[:, 2], ports[:, 3], ports[:, 0], ports[:, 1])):
        arcs = _arcs_of(topology, u, v)
        ok = arcs >= 0
        np.minimum.at(port, arcs[ok], pu[ok])
    return np.where(port == big, key + (1 << 40), port)


def _arcs_of(topology, u, v):
    """Arc index of each ``u[i] -> v[i]`` (-1 where there is no such link)."""
    indptr, indices = topology.indptr, topology.indices.astype(np.int64)
    out = np.full(u.size, -1, np.int64)
    n = topology.n_vertices
    ok = (u >= 0) & (u < n) & (v >= 0) & (v < n)
    key = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr)) * n + indices  # sorted: CSR rows sorted
    q = u[ok] * n + v[ok]
    pos = np.searchsorted(key, q)
    pos = np.minimum(pos, key.size - 1)
    hit = key[pos] == q if key.size else np.zeros(q.size, bool)
    res = np.where(hit, pos, -1)
    out[ok] = res
    return out


def _tree_hosts(topology):
    """The tree's hosts: every vertex that is not a switch, with slots or not (the fabric routes the same
    whichever hosts a job was given, so a partial allocation keeps the whole tree's destination indices);
    the vertices with slots when the topology names no switch."""
    switch = np.asarray([k == SWITCH for k in topology.kinds], dtype=bool)
    if not switch.any():
        return np.asarray(topology.hosts, np.int64)
    return np.flatnonzero(~switch).astype(np.int64)


def _build(topology):
    n = topology.n_vertices
    name = f"topology{label(topology)}"
    hosts = _tree_hosts(topology)
    if hosts.size == 0:
        raise TopologyError(f"{name} is not tree-like: it has no host (vertex with slots) for dmodk routing")
    indptr, indices = topology.indptr, topology.indices.astype(np.int64)
    level = _levels(topology, hosts)
    names = topology.names
    if (level < 0).any():
        v = int(np.flatnonzero(level < 0)[0])
        raise TopologyError(f"{name} is not tree-like: vertex {names[v]!r} is not connected to any host "
                            "(dmodk routing)")
    tail = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    diff = level[indices] - level[tail]
    if (np.abs(diff) != 1).any():
        a = int(np.flatnonzero(np.abs(diff) != 1)[0])
        raise TopologyError(f"{name} is not tree-like: link {names[tail[a]]!r} -- {names[indices[a]]!r} joins "
                            f"level {level[tail[a]]} to level {level[indices[a]]} (levels by hops from the hosts; "
                            "dmodk routing needs every link between adjacent levels)")
    pkey = _port_keys(topology)
    order = np.lexsort((indices, pkey, -diff, tail))  # per vertex: up arcs, then down arcs, by port
    up = diff[order] > 0
    uarc = order[up]
    darc = order[~up]
    uptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(tail[uarc], minlength=n), out=uptr[1:])
    dptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(tail[darc], minlength=n), out=dptr[1:])
    # groups bottom-up: switches with the same set of child groups have the same hosts below
    gid = np.full(n, -1, np.int64)
    gid[hosts] = np.arange(hosts.size)
    members = [[int(h)] for h in hosts]
    children = [[] for _ in range(hosts.size)]
    parent = [-1] * hosts.size
    top = int(level.max())
    for lv in range(1, top + 1):
        keys = {}
        for u in np.flatnonzero(level == lv):
            kids = tuple(sorted({int(gid[indices[a]]) for a in darc[dptr[u]:dptr[u + 1]]}))
            g = keys.get(kids)
            if g is None:
                g = keys[kids] = len(members)
                members.append([])
                children.append(list(kids))
                parent.append(-1)
                for c in kids:
                    if parent[c] >= 0:
                        other = members[parent[c]][0]
                        raise TopologyError(f"{name} is not tree-like: {names[members[c][0]]!r} is below both "
                                            f"{names[other]!r} and {names[u]!r}, which lead down to different "
                                            "hosts (dmodk routing)")
                    parent[c] = g
            gid[u] = g
            members[g].append(int(u))
    # destination index: depth first from the roots, children through the first member's down-ports
    lo = np.zeros(len(members), np.int64)
    hi = np.zeros(len(members), np.int64)
    didx = np.full(n, -1, np.int64)
    roots = sorted((g for g in range(len(members)) if parent[g] < 0), key=lambda g: members[g][0])
    nxt = 0
    stack = [(g, False) for g in reversed(roots)]
    while stack:
        g, done = stack.pop()
        if done:
            hi[g] = nxt
            continue
        lo[g] = nxt
        if g < hosts.size:
            didx[hosts[g]] = nxt
            nxt += 1
            hi[g] = nxt
            continue
        stack.append((g, True))
        first = members[g][0]
        seen = []
        for a in darc[dptr[first]:dptr[first + 1]]:
            c = int(gid[indices[a]])
            if c not in seen:
                seen.append(c)
        stack.extend((c, False) for c in reversed(seen))
    return TreeContext(level, lo[gid], hi[gid], didx, uptr, uarc.astype(np.int64), dptr, darc.astype(np.int64))


def tree_context(topology):
    """The :class:`TreeContext` of a tree-like topology (cached with it).

    Raises
    ------
    TopologyError
        The topology is not tree-like (one line saying where).
    """
    fab = topology.attrs.get("fabric") if isinstance(topology.attrs, dict) else None
    return cached(topology, ("dmodk", id(fab) if fab else None), lambda: _build(topology))


def dmodk_index(topology):
    """The destination index of every vertex (``int64``; -1 for switches): the host order of the tree."""
    return tree_context(topology).didx.copy()


def _context(name, topology):
    return tree_context(topology)


@njit(cache=True)
def dmodk_route(indices, lo, hi, didx, uptr, uarc, dptr, darc, s, t, w, traffic, log_arc, log_val, log_n):
    """The d-mod-k route from host ``s`` to host ``t`` (module docstring), ``w`` added to its arcs; its
    hops, or -1 when an end is not a host or the walk fails."""
    d = didx[t]
    if d < 0 or didx[s] < 0:
        return -1
    u = s
    div = 1
    h = 0
    while not (lo[u] <= d and d < hi[u]):
        m = uptr[u + 1] - uptr[u]
        if m == 0:
            return -1
        a = uarc[uptr[u] + (d // div) % m]
        put(traffic, a, w, log_arc, log_val, log_n)
        u = indices[a]
        div *= m
        h += 1
    while u != t:
        c = 0
        for j in range(dptr[u], dptr[u + 1]):
            v = indices[darc[j]]
            if lo[v] <= d and d < hi[v]:
                c += 1
        if c == 0:
            return -1
        pick = d % c
        for j in range(dptr[u], dptr[u + 1]):
            v = indices[darc[j]]
            if lo[v] <= d and d < hi[v]:
                if pick == 0:
                    put(traffic, darc[j], w, log_arc, log_val, log_n)
                    u = v
                    h += 1
                    break
                pick -= 1
    return h


@njit(cache=True)
def _dmodk_batch(indices, lo, hi, didx, uptr, uarc, dptr, darc, s, t, w, traffic):
    """Every demand's route added to ``traffic``; the first demand that cannot be routed, or -1."""
    log_arc, log_val, log_n = no_log()
    for i in range(s.size):
        if s[i] != t[i] and dmodk_route(indices, lo, hi, didx, uptr, uarc, dptr, darc, s[i], t[i], w[i], traffic,
                                        log_arc, log_val, log_n) < 0:
            return i
    return -1


def _traffic(topology, name, ctx, s, t, w):
    traffic = np.zeros(topology.indices.size)
    bad = _dmodk_batch(topology.indices.astype(np.int64), ctx.lo, ctx.hi, ctx.didx, ctx.uptr, ctx.uarc, ctx.dptr,
                       ctx.darc, s, t, w, traffic)
    if bad >= 0:
        end = int(s[bad]) if ctx.didx[s[bad]] < 0 else int(t[bad])
        raise TopologyError(f"topology{label(topology)}: dmodk routes between hosts only; demand {bad} "
                            f"({s[bad]} -> {t[bad]}) has the switch {topology.names[end]!r} as an end")
    return traffic


#: d-mod-k routing on tree-like topologies.
DMODK = Model("dmodk", _traffic, context=_context)
