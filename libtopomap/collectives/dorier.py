"""Topology-aware broadcasts on dragonfly networks, after Dorier et al. (sections III and IV-B).

Dorier et al., "Evaluation of Topology-Aware Broadcast Algorithms for Dragonfly Networks".  Four
broadcast schedules for any allocation and root: ``tree`` (MPICH's binomial tree), ``llf`` (local links
first), ``glf`` (global links first) and ``forest``; :func:`bcast_makespan` is the paper's time model and
:func:`dragonfly_link_use` its link analysis.  The choices where the paper is silent (tested in
``tests/test_dorier.py``): docs/internals.rst, "Dragonfly broadcasts".
"""

from __future__ import annotations

import heapq

import numpy as np

from ..errors import ArgumentError, CommGraphError, MappingError
from ..vocabulary import BCAST_ALGORITHMS, check_choice
from .dragonfly import dragonfly_queries
from .schedules import check_root, binomial_bcast

__all__ = ["BCAST_ALGORITHMS", "dragonfly_bcast", "bcast_links", "bcast_makespan", "evaluate_bcast",
           "dragonfly_link_use"]

# phase of a message, in each sender's order
_ROOT_GROUP, _GLOBAL, _GROUP, _ROUTER = 0, 1, 2, 3


def _binomial_parents(sizes):
    """Binomial trees over consecutive segments of the given sizes (first item of a segment is its root):
    the parent index of every item (-1 for roots) and the item's mask (subtree distance from its parent)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    starts = np.repeat(np.cumsum(np.r_[0, sizes[:-1]]), sizes) if sizes.size else np.zeros(0, np.int64)
    rel = np.arange(starts.size, dtype=np.int64) - starts
    par = rel & (rel - 1)
    parent = np.where(rel > 0, starts + par, -1)
    return parent, rel - par


def _segments(keys):
    """Sizes of the runs of equal values in a sorted key array."""
    if keys.size == 0:
        return np.zeros(0, np.int64)
    cut = np.flatnonzero(np.diff(keys)) + 1
    return np.diff(np.r_[0, cut, keys.size])


class _Job:
    """Where a job's ranks sit: router ids, groups, router representatives, entry points."""

    def __init__(self, q, vertices, root):
        self.q = q
        self.n = vertices.size
        self.root = root
        self.rid = q.router_index(vertices)
        a = q.routers
        self.group = self.rid // a
        n_routers = q.groups * a
        ranks = np.arange(self.n, dtype=np.int64)
        # rep[R]: lowest rank on router R (-1 unused), the root on its own router
        rep = np.full(n_routers, self.n, dtype=np.int64)
        np.minimum.at(rep, self.rid, ranks)
        rep[rep == self.n] = -1
        rep[self.rid[root]] = root
        self.rep = rep
        low = np.full(q.groups, self.n, dtype=np.int64)
        np.minimum.at(low, self.group, ranks)
        low[low == self.n] = -1
        self.lowest_in_group = low
        self.root_group = int(self.group[root])
        used = np.flatnonzero(np.bincount(self.group, minlength=q.groups))
        self.remote = used[used != self.root_group]  # ascending ids

    def entry(self, B, A):
        """Rank through which groups ``B`` receive from groups ``A`` (arrays): the lowest rank on a gate router
        of ``B`` toward ``A`` when the job has one, else the lowest rank of ``B``."""
        B, A = np.asarray(B, np.int64), np.asarray(A, np.int64)
        out = np.full(B.shape, -1, dtype=np.int64)
        near = self.q.gate_router
        for k in range(near.shape[2]):
            r = near[B, A, k]
            cand = np.where(r >= 0, self.rep[np.maximum(r, 0)], -1)
            out = np.where(out < 0, cand, out)
        return np.where(out < 0, self.lowest_in_group[B], out)

    def holders(self):
        """Root-group broadcast items: the root, then the representatives of the group's other used routers."""
        a = self.q.routers
        G = self.root_group
        reps = self.rep[G * a:(G + 1) * a]
        reps = np.sort(reps[(reps >= 0) & (reps != self.root)])
        return np.r_[self.root, reps].astype(np.int64)

    def assign(self, holders):
        """Holder serving each remote group (LLF and FOREST): the holder on the root group's gate router toward
        it, else the least-loaded holder (ties to the lower rank), groups in ascending id."""
        A = self.root_group
        B = self.remote
        serve = np.full(B.size, -1, dtype=np.int64)
        near = self.q.gate_router
        is_holder = np.zeros(self.n, dtype=bool)
        is_holder[holders] = True
        for k in range(near.shape[2]):
            r = near[A, B, k]
            cand = np.where(r >= 0, self.rep[np.maximum(r, 0)], -1)
            cand = np.where((cand >= 0) & is_holder[np.maximum(cand, 0)], cand, -1)
            serve = np.where(serve < 0, cand, serve)
        load = {int(h): 0 for h in holders}
        for h in serve[serve >= 0]:
            load[int(h)] += 1
        heap = [(c, h) for h, c in load.items()]
        heapq.heapify(heap)
        for i in np.flatnonzero(serve < 0):
            c, h = heapq.heappop(heap)
            serve[i] = h
            heapq.heappush(heap, (c + 1, h))
        return serve


def _group_and_router_phases(job, entry_of_group, root_group_phase):
    """Messages inside every group (entry -> one representative per other used router) and inside every router
    (representative -> its other ranks): arrays sender, receiver, phase, priority."""
    a = job.q.routers
    out = []
    # groups: used routers sorted by (group, not the entry's router, representative rank)
    routers = np.flatnonzero(job.rep >= 0)
    rgroup = routers // a
    head = job.rid[entry_of_group[rgroup]] == routers
    items = np.where(head, entry_of_group[rgroup], job.rep[routers])
    order = np.lexsort((items, ~head, rgroup))
    items, rgroup = items[order], rgroup[order]
    parent, mask = _binomial_parents(_segments(rgroup))
    kid = parent >= 0
    phase = np.where(rgroup[kid] == job.root_group, root_group_phase, _GROUP)
    out.append((items[parent[kid]], items[kid], phase, -mask[kid]))
    # routers: ranks sorted by (router, not the representative, rank)
    ranks = np.arange(job.n, dtype=np.int64)
    is_rep = job.rep[job.rid] == ranks
    order = np.lexsort((ranks, ~is_rep, job.rid))
    items, keys = ranks[order], job.rid[order]
    parent, mask = _binomial_parents(_segments(keys))
    kid = parent >= 0
    out.append((items[parent[kid]], items[kid], np.full(int(kid.sum()), _ROUTER), -mask[kid]))
    return out


def _glf(job):
    groups = np.r_[job.root_group, job.remote].astype(np.int64)
    parent, mask = _binomial_parents([groups.size])
    entry = np.full(job.q.groups, -1, dtype=np.int64)
    entry[job.root_group] = job.root
    kid = parent >= 0
    pg = groups[parent[kid]]
    entry[groups[kid]] = job.entry(groups[kid], pg)
    msgs = [(entry[pg], entry[groups[kid]], np.full(int(kid.sum()), _GLOBAL), -mask[kid])]
    return msgs + _group_and_router_phases(job, entry, _GROUP)


def _llf_or_forest(job, forest):
    holders = job.holders()
    serve = job.assign(holders)
    entry = np.full(job.q.groups, -1, dtype=np.int64)
    entry[job.root_group] = job.root
    B = job.remote
    if not forest:
        entry[B] = job.entry(B, np.full(B.size, job.root_group))
        msgs = [(serve, entry[B], np.full(B.size, _GLOBAL), B)]
    else:
        # one binomial tree per holder over [holder] + its groups in ascending id
        order = np.lexsort((B, serve))
        Bs, hs = B[order], serve[order]
        sizes = _segments(hs)
        # insert the holder at the head of each segment
        starts = np.cumsum(np.r_[0, sizes[:-1]])
        items_g = np.empty(Bs.size + sizes.size, dtype=np.int64)
        is_head = np.zeros(items_g.size, dtype=bool)
        head_pos = starts + np.arange(sizes.size)
        is_head[head_pos] = True
        items_g[head_pos] = job.root_group
        items_g[~is_head] = Bs
        holder_of_item = np.repeat(hs[starts] if sizes.size else np.zeros(0, np.int64), sizes + 1)
        parent, mask = _binomial_parents(sizes + 1)
        kid = parent >= 0
        pg = items_g[parent[kid]]
        cg = items_g[kid]
        entry[cg] = job.entry(cg, pg)
        sender = np.where(is_head[parent[kid]], holder_of_item[kid], entry[pg])
        msgs = [(sender, entry[cg], np.full(cg.size, _GLOBAL), -mask[kid])]
    return msgs + _group_and_router_phases(job, entry, _ROOT_GROUP)


def _rounds(n, root, sender, receiver, phase, prio):
    """Steps of a broadcast tree given as messages with each sender's order keys (phase, priority)."""
    got_once = np.bincount(receiver, minlength=n) == 1
    got_once[root] = not got_once[root]
    if receiver.size != n - 1 or not got_once.all():
        raise CommGraphError("internal error: the broadcast tree does not reach every rank exactly once")
    order = np.lexsort((prio, phase, sender))
    sender, receiver = sender[order], receiver[order]
    first = np.r_[0, np.flatnonzero(np.diff(sender)) + 1]
    pos = np.arange(sender.size) - np.repeat(first, np.diff(np.r_[first, sender.size]))
    got = np.full(n, -2, dtype=np.int64)
    got[root] = -1
    todo = np.ones(sender.size, dtype=bool)
    while todo.any():
        ready = todo & (got[sender] > -2)
        if not ready.any():
            raise CommGraphError("internal error: the broadcast tree has a cycle")
        got[receiver[ready]] = got[sender[ready]] + 1 + pos[ready]
        todo &= ~ready
    rnd = got[receiver]
    by = np.argsort(rnd, kind="stable")
    cuts = np.searchsorted(rnd[by], np.arange(int(rnd.max()) + 2 if rnd.size else 1))
    pairs = np.stack([sender[by], receiver[by]], 1)
    return [pairs[cuts[t]:cuts[t + 1]] for t in range(cuts.size - 1)]


def _vertices(topology, vertices):
    v = np.asarray(vertices)
    if v.ndim != 1 or v.size == 0 or not np.issubdtype(v.dtype, np.integer):
        raise MappingError(f"an allocation is a non-empty 1-D array of vertices, got shape {v.shape} dtype {v.dtype}")
    v = v.astype(np.int64)
    inside = (v >= 0) & (v < topology.n_vertices)
    bad = np.flatnonzero(~inside | (topology.slots[np.where(inside, v, 0)] <= 0))
    if bad.size:
        raise MappingError(f"rank {bad[0]} is placed on vertex {v[bad[0]]}, which is not a slot vertex")
    return v


def dragonfly_bcast(topology, vertices, algorithm="forest", *, root=0):
    """A broadcast schedule of Dorier et al. for ranks placed on a dragonfly.

    Parameters
    ----------
    topology : Topology
        A dragonfly (see :class:`~libtopomap.collectives.dragonfly.Dragonfly`).
    vertices : array_like of int
        ``vertices[r]``: the terminal of rank ``r`` (the allocation in rank order).
    algorithm : {"tree", "llf", "glf", "forest"}
        See the module docstring; the choices the paper leaves open are listed there.
    root : int
        Rank that holds the data.

    Returns
    -------
    list of numpy.ndarray
        Step ``t`` is an ``(m, 2)`` ``int64`` array of ``(sender, receiver)`` ranks; every rank but the
        root receives exactly once, from a rank that received in an earlier step, and no rank sends
        twice in a step.

    Raises
    ------
    ArgumentError
        Unknown algorithm.
    CommGraphError
        Bad root.
    MappingError
        A vertex that is not a terminal.
    TopologyError
        The topology is not a dragonfly (not raised for ``"tree"``, which needs no topology).

    References
    ----------
    M. Dorier, M. Mubarak, R. Ross, J. K. Li, C. D. Carothers, K.-L. Ma, "Evaluation of
    Topology-Aware Broadcast Algorithms for Dragonfly Networks", IEEE Cluster 2016, sections III-B
    (LLF), III-C (GLF), III-D (FOREST) (Dorier et al.).

    Examples
    --------
    >>> import libtopomap as ltm
    >>> t = ltm.dragonfly(9, 4, 2, 2)
    >>> steps = dragonfly_bcast(t, [0, 1, 2, 40, 70], "glf")
    >>> [s.tolist() for s in steps]  # groups 0, 5, 8: the root serves group 8, group 5, its router, itself
    [[[0, 4]], [[0, 3]], [[0, 2]], [[0, 1]]]
    """
    name = str(algorithm).lower()
    check_choice("bcast-algorithm", name)
    v = _vertices(topology, vertices)
    root = check_root(root, v.size)
    if name == "tree":
        return binomial_bcast(v.size, root)
    job = _Job(dragonfly_queries(topology), v, root)
    parts = _glf(job) if name == "glf" else _llf_or_forest(job, name == "forest")
    cat = [np.concatenate([np.asarray(p[i], dtype=np.int64) for p in parts]) for i in range(4)]
    return _rounds(v.size, root, *cat)


def _pairs(steps):
    return np.concatenate([np.asarray(s, dtype=np.int64).reshape(-1, 2) for s in steps]) if steps else \
        np.zeros((0, 2), np.int64)


def bcast_links(topology, steps, vertices):
    """Terminal, local and global link traversals of a schedule under minimal dragonfly routing.

    Returns
    -------
    dict
        ``{"terminal": int, "local": int, "global": int}``, summed over all messages.
    """
    q = dragonfly_queries(topology)
    v = np.asarray(vertices, dtype=np.int64)
    pairs = _pairs(steps)
    t, lo, gl = q.link_counts(v[pairs[:, 0]], v[pairs[:, 1]])
    return {"terminal": int(t.sum()), "local": int(lo.sum()), "global": int(gl.sum())}


def _has_repeats(x):
    x = np.sort(x)
    return bool(np.any(x[1:] == x[:-1]))


def bcast_makespan(topology, steps, vertices, *, durations=None):
    """Makespan of a broadcast schedule in the model of Dorier et al., section IV-B.

    A send lasts as many time units as the links its message crosses (minimal routing on a
    dragonfly; hop distance on any other topology); a sender sends its messages one after the
    other in step order and waits for each to arrive before the next; a rank may send once it
    has received.  The makespan is the last arrival (0 for a single rank).

    Parameters
    ----------
    topology : Topology
    steps : list of (m, 2) arrays
        A broadcast schedule: every rank but the root receives once, no rank sends twice in a step.
    vertices : array_like of int
        Vertex of each rank.
    durations : callable, optional
        ``durations(src_vertices, dst_vertices) -> array`` instead of the link counts.

    Returns
    -------
    int or float

    Raises
    ------
    CommGraphError
        A rank that sends before it received, receives twice, or sends twice in one step.

    Examples
    --------
    >>> import libtopomap as ltm
    >>> t = ltm.dragonfly(9, 4, 2, 2)
    >>> bcast_makespan(t, [[(0, 1)], [(0, 2)]], [0, 1, 2])  # 2 links, then 3 links
    5
    """
    from ..errors import TopologyError

    v = np.asarray(vertices, dtype=np.int64)
    n = v.size
    if durations is None:
        try:
            durations = dragonfly_queries(topology).hops
        except TopologyError:
            durations = topology.distances.pairs
    pairs = _pairs(steps)
    receivers = np.zeros(n, dtype=bool)
    receivers[pairs[:, 1]] = True
    ready = np.where(receivers, np.inf, 0.0)
    if np.count_nonzero(~receivers) != 1:
        raise CommGraphError(f"a broadcast has one root; this schedule has {np.count_nonzero(~receivers)} ranks "
                             "that never receive")
    free = np.zeros(n)
    got = np.zeros(n, dtype=bool)
    for t, step in enumerate(steps):
        st = np.asarray(step, dtype=np.int64).reshape(-1, 2)
        if st.size == 0:
            continue
        s, d = st[:, 0], st[:, 1]
        if _has_repeats(s):
            raise CommGraphError(f"step {t}: a rank sends twice in one step")
        if np.any(np.isinf(ready[s])):
            raise CommGraphError(f"step {t}: rank {s[np.isinf(ready[s])][0]} sends before it received")
        if np.any(got[d]) or _has_repeats(d):
            raise CommGraphError(f"step {t}: a rank receives twice")
        end = np.maximum(ready[s], free[s]) + np.asarray(durations(v[s], v[d]), dtype=np.float64)
        free[s] = end
        ready[d] = end
        got[d] = True
    span = float(ready.max()) if n else 0.0
    return int(span) if span == int(span) else span


def evaluate_bcast(topology, vertices, algorithm="forest", *, root=0):
    """Schedule, link traversals, involved groups and makespan of one broadcast (for the CLI and benchmarks).

    Returns
    -------
    dict
        ``algorithm, procs, root, groups`` (groups with a rank), ``links`` (:func:`bcast_links`),
        ``makespan`` (:func:`bcast_makespan`), ``messages`` and ``steps`` (rounds).
    """
    steps = dragonfly_bcast(topology, vertices, algorithm, root=root)
    q = dragonfly_queries(topology)
    v = np.asarray(vertices, dtype=np.int64)
    groups = int(np.count_nonzero(np.bincount(q.group_of(v), minlength=q.groups)))
    return {"algorithm": str(algorithm).lower(), "procs": int(v.size), "root": int(root),
            "groups": groups, "links": bcast_links(q.topology, steps, v),
            "makespan": bcast_makespan(q.topology, steps, v, durations=q.hops),
            "messages": int(sum(len(s) for s in steps)), "steps": len(steps)}


def dragonfly_link_use(g, a, p, h, n):
    """Expected link traversals of TREE under a random allocation, and the bounds of LLF/GLF/FOREST.

    Section III-E of Dorier et al., on a dragonfly where every pair of groups shares one global link
    (``g = a*h + 1``) and minimal routing.  For two distinct random terminals:

    * ``P(global) = 1 - (ap - 1)/(gap - 1)``;
    * ``P0 = (p - 1 + hp)/(gap - 1)`` (same router, or routers joined by a global link);
    * ``P1 = (2h + 1)(a - 1)p/(gap - 1)``; ``P2 = 1 - P0 - P1``.

    TREE sends ``n - 1`` messages between random distinct terminals, so it crosses ``2(n - 1)``
    terminal links, ``(n - 1) P(global)`` global links and ``(n - 1)(P1 + 2 P2)`` local links, where
    ``P1 + 2 P2 = 2 - 2 P0 - P1 = 2 - (p(1 + a + 2ha) - 2)/(gap - 1)``.  The paper prints
    ``2 - (2 + p(1 + 2ha + a))/(gap - 1)``, a sign slip on the ``2`` (and ``a + 2ha + a`` in the
    total); its 19,122 local links for ``n = 10,240`` on ``g=129, a=16, p=8, h=8`` come from that
    formula (``local_paper``), the derivation gives 19,124.87.

    The topology-aware algorithms send one global message per remote group and inside a group at
    most ``a - 1`` local messages plus two per global message: at most ``g - 1`` global and
    ``2(g - 1) + g(a - 1)`` local link traversals, with ``2(n - 1)`` terminal links like TREE.

    Parameters
    ----------
    g, a, p, h : int
        Groups, routers per group, terminals per router, global links per router.
    n : int
        Processes, one per terminal, ``1 <= n <= g*a*p``.

    Returns
    -------
    dict
        ``terminal``, ``local``, ``global``: TREE's expectations; ``local_paper``: the printed
        formula's value; ``bound_terminal``, ``bound_local``, ``bound_global``: LLF/GLF/FOREST;
        ``p_global``, ``p_local``: ``[P0, P1, P2]``.

    Raises
    ------
    ArgumentError
        Sizes that are not positive, ``g != a*h + 1`` (the formulas assume one global link per pair of
        groups), or ``n`` outside ``1 .. g*a*p``.

    Examples
    --------
    >>> u = dragonfly_link_use(129, 16, 8, 8, 10240)
    >>> round(u["global"], 2), u["terminal"], round(u["local"], 2), round(u["local_paper"]), u["bound_local"]
    (10160.24, 20478, 19124.87, 19122, 2191)
    """
    try:
        g, a, p, h, n = (int(x) for x in (g, a, p, h, n))
    except (TypeError, ValueError):
        raise ArgumentError(f"dragonfly_link_use needs integers, got g={g!r}, a={a!r}, p={p!r}, h={h!r}, n={n!r}") \
            from None
    if min(g, a, p, h) < 1:
        raise ArgumentError(f"dragonfly sizes must be positive, got g={g}, a={a}, p={p}, h={h}")
    if g != a * h + 1:
        raise ArgumentError(f"the analysis assumes one global link between every pair of groups, g = a*h + 1; "
                            f"got g={g}, a*h + 1 = {a * h + 1}")
    T = g * a * p
    if not 1 <= n <= T:
        raise ArgumentError(f"n = {n} processes do not fit: 1 <= n <= g*a*p = {T}")
    d = T - 1
    p_global = 1 - (a * p - 1) / d
    p0 = (p - 1 + h * p) / d
    p1 = (2 * h + 1) * (a - 1) * p / d
    p2 = 1 - p0 - p1
    m = n - 1
    return {"terminal": 2 * m, "local": m * (p1 + 2 * p2), "global": m * p_global,
            "local_paper": m * (2 - (2 + p * (1 + 2 * h * a + a)) / d),
            "bound_terminal": 2 * m, "bound_local": 2 * (g - 1) + g * (a - 1), "bound_global": g - 1,
            "p_global": p_global, "p_local": [p0, p1, p2]}
