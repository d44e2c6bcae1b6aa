"""Dual recursive bisection: the process graph and the machine split together, each half placed
where its outside neighbours are (Pellegrini's dual recursive bipartitioning, as in Scotch).

On a grid or torus the machine is cut by a plane across its longest dimension (the bipartitioning
of Scotch's ``torus``/``mesh`` target architectures); elsewhere METIS bisects the network as in
:func:`~libtopomap.mappers.recursive.map_recursive`.  The difference from Hoefler & Snir's
Algorithm 2 is the outside: domains are split breadth first, and each graph bisection is oriented
and refined by the hop distance of its cut edges to the domains already given to their other ends.
"""

from __future__ import annotations

import heapq
from collections import deque

import numpy as np

from .._jit import njit
from ..commgraph import SymGraph
from ._common import finish, validated, settle_domain
from .local_search import current_deadline, past
from .partition import balance_csr, metis_csr, subgraph

__all__ = ["map_dual_bisection", "REFINE_PASSES", "CUT_SCALES", "TRIES", "SMALL"]

#: Fiduccia-Mattheyses passes after each graph bisection (a pass that gains nothing ends it).
REFINE_PASSES = 4
#: Weights of a cut edge, times the distance between the halves, that the refinement tries: the
#: full distance is Scotch's cost; half of it lets the outside costs lead (kept where it costs less).
CUT_SCALES = (1.0, 0.5)
#: METIS seeds per bisection (the cheapest result after refinement is kept).
TRIES = 3
#: Processes up to which a bisection gets one METIS run and one cut weight.
SMALL = 16


def _rows(indptr, indices, data, verts):
    """``(local row, column, weight)`` of every arc leaving ``verts``, in ``O(sum of their degrees)``."""
    start, stop = indptr[verts], indptr[verts + 1]
    deg = stop - start
    row = np.repeat(np.arange(verts.size), deg)
    off = np.arange(int(deg.sum())) - np.repeat(np.cumsum(deg) - deg, deg)
    pos = np.repeat(start, deg) + off
    return row, indices[pos], data[pos]


class _Grid:
    """Coordinates of a verified grid's vertices (hosts on a single link take their grid vertex's)."""

    def __init__(self, topology, dims):
        att, off = topology.distances.attachments()
        core = int(np.prod(dims))
        anchor = np.arange(topology.n_vertices)
        anchor[core:] = att[core:]
        self.coords = np.stack(np.unravel_index(anchor, dims), 1).astype(np.int64) if core else None

    def split(self, hv, sl):
        """Cut ``hv`` by the plane across its longest extent nearest to half its slots; ``None``
        when every slot lies in one plane of every dimension."""
        c = self.coords[hv]
        extent = c.max(0) - c.min(0)
        for j in np.argsort(-extent, kind="stable"):
            if extent[j] == 0:
                break
            planes, inv = np.unique(c[:, j], return_inverse=True)
            per = np.bincount(inv.reshape(-1), weights=sl, minlength=planes.size)
            cum = np.cumsum(per)[:-1]
            ok = (cum > 0) & (cum < per.sum())
            if not ok.any():
                continue
            k = int(np.argmin(np.where(ok, np.abs(cum - per.sum() / 2), np.inf)))
            return np.where(c[:, j] <= planes[k], 0, 1)
        return None


def _metis_split(h, hv, sl, seed):
    """METIS bisection of the network on ``hv`` (vertex weight = slots), or index order when METIS
    puts every slot on one side."""
    h_ptr, h_idx, h_val, hpos = h
    sp_, si, sv = subgraph(h_ptr, h_idx, h_val, hv, hpos)
    part = metis_csr(sp_, si, sv, 2, sl, None, seed)
    if sl[part == 0].sum() == 0 or sl[part == 1].sum() == 0:
        half = np.zeros(hv.size, bool)
        half[np.flatnonzero(sl > 0)[: np.count_nonzero(sl) // 2]] = True
        part = np.where(half, 0, 1)
    return part


@njit(cache=True)
def _fm_pass(ptr, idx, w, side, ext0, ext1, stall):
    """One Fiduccia-Mattheyses pass over a bisection; ``side`` is changed in place, sizes kept.

    Moves alternate between the sides (so every pair of moves keeps the sizes), each time the
    unlocked vertex of the highest gain on that side (lazy max-heaps); a vertex's gain is its edge
    weight to the other side minus to its own, plus its outside cost on its side minus on the
    other.  The pass stops ``stall`` pairs after its best prefix and rolls back to that prefix.
    Returns the gain kept.  ``O(arcs log n)``.
    """
    n = side.size
    gain = np.empty(n)
    for v in range(n):
        g = ext0[v] - ext1[v] if side[v] == 0 else ext1[v] - ext0[v]
        for a in range(ptr[v], ptr[v + 1]):
            g += w[a] if side[idx[a]] != side[v] else -w[a]
        gain[v] = g
    heaps = [[(-gain[v], np.int64(v)) for v in range(n) if side[v] == s] for s in range(2)]
    for s in range(2):
        heapq.heapify(heaps[s])
    locked = np.zeros(n, np.bool_)
    moved = np.empty(n, np.int64)
    nmoved = 0
    total = 0.0
    best = 0.0
    best_at = 0
    while nmoved - best_at < 2 * stall:
        s = nmoved % 2
        heap = heaps[s]
        v = -1
        while len(heap) > 0:
            ng, u = heapq.heappop(heap)
            if not locked[u] and side[u] == s and -ng == gain[u]:
                v = u
                break
        if v < 0:
            break
        locked[v] = True
        total += gain[v]
        side[v] = 1 - s
        moved[nmoved] = v
        nmoved += 1
        for a in range(ptr[v], ptr[v + 1]):
            u = idx[a]
            if locked[u]:
                continue
            # v left side s: a neighbour on s now has one more edge across, one on the other side one less
            gain[u] += 2 * w[a] if side[u] == s else -2 * w[a]
            heapq.heappush(heaps[side[u]], (-gain[u], np.int64(u)))
        if s == 1 and total > best + 1e-9:
            best = total
            best_at = nmoved
    for j in range(best_at, nmoved):
        side[moved[j]] = 1 - side[moved[j]]
    return best


@validated
def map_dual_bisection(topology, graph, *, slots=None, seed=None, deadline=None, passes=REFINE_PASSES):
    """Map by splitting the machine and the process graph together, breadth first.

    Every domain of the machine (at first all of it) is cut in two: on a grid or torus by the plane
    across its longest dimension nearest to half its slots, elsewhere by METIS on the network.  The
    processes of the domain are bisected by METIS into parts sized like the halves' slots; the
    halves are oriented, and the bisection refined by Fiduccia-Mattheyses passes, on Scotch's cost:
    a cut edge pays its weight times the distance between the halves, and a process pays, for each
    neighbour outside its domain,
    the edge weight times the distance between the half it would go to and the domain that neighbour
    is in now (between representative vertices: the middle of a grid domain, else its first
    usable vertex).  Above :data:`SMALL` processes a bisection tries :data:`TRIES` METIS seeds, both
    orientations and the cut weights of :data:`CUT_SCALES`, and keeps the cheapest.  Domains are
    split level by level, so each split sees its neighbours' domains at its own depth.

    Parameters
    ----------
    topology, graph, slots
        As for :func:`~libtopomap.mappers.map_processes`.
    seed : int, optional
        METIS seed.
    deadline : float, optional
        ``time.perf_counter()`` value; default the portfolio's
        (:func:`~libtopomap.mappers.local_search.deadline_scope`).  Past it, the domains not yet
        split take their processes in slot order, so a valid mapping still comes back.
    passes : int, optional
        Fiduccia-Mattheyses passes per bisection (:data:`REFINE_PASSES`); 0 keeps METIS's
        bisection, oriented.

    Returns
    -------
    Mapping
        Strategy ``"dual-bisection"``.

    Notes
    -----
    Every level reads each process's arcs a constant number of times, so the cost is
    ``O(arcs * log(processes))`` plus METIS; the distances are asked of the topology's oracle for
    the pairs of domains that cut edges join, never all pairs.

    References
    ----------
    F. Pellegrini, "Static mapping by dual recursive bipartitioning of process and architecture
    graphs", Proc. SHPCC'94, IEEE, 1994 (the dual recursive bipartitioning of Scotch, and its
    bipartitioning of tori and meshes along their largest dimension).
    T. Hoefler and M. Snir, ICS'11, section 3.2, Algorithm 2 (recursive bisection of both graphs).
    C. M. Fiduccia and R. M. Mattheyses, "A linear-time heuristic for improving network partitions",
    Proc. 19th Design Automation Conference, 1982.
    """
    g, rng = graph, np.random.default_rng(seed)
    deadline = current_deadline() if deadline is None else float(deadline)
    sym = SymGraph(g)
    g_ptr, g_idx = sym.indptr.astype(np.int64), sym.indices.astype(np.int64)
    g_val = np.asarray(sym.wsum, np.float64)
    shape = topology.distances.grid_shape
    grid = _Grid(topology, shape[0]) if shape is not None else None
    hadj = topology.to_scipy()
    hadj.sort_indices()
    h = (hadj.indptr.astype(np.int64), hadj.indices.astype(np.int64), hadj.data,
         np.full(topology.n_vertices, -1, np.int64))
    gpos = np.full(g.n, -1, np.int64)
    metis_seed = int(rng.integers(0, 2**31 - 1)) if seed is not None else 0
    gamma = np.full(g.n, -1, np.int64)
    dom = np.zeros(g.n, np.int64)  # the domain each process is in now
    # representative vertex per domain; a split adds two, and at most one split per usable vertex
    reps = np.zeros(2 * np.count_nonzero(slots) + 1, np.int64)
    reps[0] = _representative(grid, np.arange(topology.n_vertices), slots)
    n_domains = 1
    queue = deque([(np.arange(topology.n_vertices), np.arange(g.n))])
    while queue:
        if past(deadline):  # out of time: every domain not yet split takes its processes in slot order
            for hv, procs in queue:
                usable = hv[slots[hv] > 0]
                gamma[procs] = np.repeat(usable, slots[usable])[:procs.size]
            break
        hv, procs = queue.popleft()
        domain = settle_domain(gamma, hv, procs, slots)
        if domain is None:
            continue
        sl = domain[0]
        hpart = grid.split(hv, sl) if grid is not None else None
        if hpart is None:
            hpart = _metis_split(h, hv, sl, metis_seed)
        c1, c2 = int(sl[hpart == 0].sum()), int(sl[hpart == 1].sum())
        n = procs.size
        n1 = min(max(int(round(n * c1 / (c1 + c2))), n - c2), c1)
        halves = (hv[hpart == 0], hv[hpart == 1])
        ids = np.array([n_domains, n_domains + 1], np.int64)
        reps[ids] = [_representative(grid, halves[0], slots), _representative(grid, halves[1], slots)]
        n_domains += 2
        side = _bisect(topology, g_ptr, g_idx, g_val, gpos, procs, n1, dom, reps, ids, metis_seed, passes)
        for s in (0, 1):
            dom[procs[side == s]] = ids[s]
            queue.append((halves[s], procs[side == s]))
    return finish(topology, gamma, slots, "dual-bisection")


def _representative(grid, hv, slots):
    """A domain's vertex for distances: the usable vertex nearest the middle of a grid domain, else
    the first usable one."""
    usable = hv[slots[hv] > 0]
    if usable.size == 0:
        return int(hv[0])
    if grid is None:
        return int(usable[0])
    c = grid.coords[usable]
    mid = (c.min(0) + c.max(0)) / 2
    return int(usable[np.argmin(np.abs(c - mid).sum(1))])


def _bisect(topology, g_ptr, g_idx, g_val, gpos, procs, n1, dom, reps, ids, seed, passes):
    """Side (0/1) of every process of ``procs``, ``n1`` of them on side 0 (domain ``ids[0]``)."""
    n = procs.size
    if n1 == 0 or n1 == n:
        return np.full(n, 0 if n1 == n else 1, np.int64)
    gp_, gi, gv = subgraph(g_ptr, g_idx, g_val, procs, gpos)
    # the outside cost of each process on either side: its arcs to other domains, by distance
    row, col, w = _rows(g_ptr, g_idx, g_val, procs)
    gpos[procs] = np.arange(n)
    inside = gpos[col] >= 0
    gpos[procs] = -1
    ext0 = np.zeros(n)
    ext1 = np.zeros(n)
    if not inside.all():
        r, c, ww = row[~inside], dom[col[~inside]], w[~inside]
        other, inv = np.unique(c, return_inverse=True)
        k = other.size
        dist = topology.distances.pairs(np.repeat(reps[ids], k), np.tile(reps[other], 2)).astype(np.float64)
        inv = inv.reshape(-1)
        ext0 = np.bincount(r, weights=ww * dist[:k][inv], minlength=n)
        ext1 = np.bincount(r, weights=ww * dist[k:][inv], minlength=n)
    prow = np.repeat(np.arange(n), np.diff(gp_))
    # a cut edge costs its weight times the distance between the halves (Scotch's cost of a cut)
    across = gv * max(1, int(topology.distances.pairs(reps[ids[:1]], reps[ids[1:]])[0]))

    def cost(side):
        return float(across[side[prow] != side[gi]].sum()) / 2 + float(np.where(side == 0, ext0, ext1).sum())

    best = None
    # several METIS seeds and cut weights where the bisection is large enough to matter; the many
    # small ones at the bottom of the recursion take one of each (they dominate the call count)
    tries, scales = (TRIES, CUT_SCALES) if n > SMALL else (1, CUT_SCALES[:1])
    for target, k in ((x, k) for x in _targets(n1, n) for k in range(tries)):
        part = metis_csr(gp_, gi, gv, 2, None, [target / n, 1 - target / n], seed + k)
        count = np.bincount(part, minlength=2)
        want = np.array([target, n - target], np.int64)
        if not np.array_equal(count, want):
            part = balance_csr(gp_, gi, gv, part, want, count)
        for side in ((part, 1 - part) if target == n1 and n1 * 2 == n else
                     (part,) if target == n1 else (1 - part,)):
            for scale in scales:
                trial = np.ascontiguousarray(side, np.int64)
                for _ in range(passes):
                    if _fm_pass(gp_, gi, across * scale, trial, ext0, ext1, max(16, n // 10)) <= 0:
                        break
                c = cost(trial)
                if best is None or c < best[0]:
                    best = (c, trial)
    return best[1]


def _targets(n1, n):
    """METIS part-0 sizes to try: ``n1`` (and, when the halves differ, ``n - n1`` flipped after)."""
    return (n1,) if n1 * 2 == n else (n1, n - n1)
