"""Objective functions of a mapping and the incremental swap engine used by the refinements.

Three objectives are selectable everywhere (Hoefler & Snir, ICS'11, section 2.4):

``congestion``
    Maximum arc congestion under ECMP routing (equal split over all shortest paths, section 2.5),
    exactly as :func:`libtopomap.max_congestion` computes it.
``dilation``
    Weighted average dilation ``sum(w * hops) / sum(w)``.
``hopbytes``
    ``sum(w * hops)``.

The refinements (two-opt, threshold accepting) move one process to another slot, or swap two
processes, and need the objective change of such a move fast.  Only the communication edges of the
moved processes change: their hop counts are looked up in the host distance matrix, and, for
congestion, their ECMP flows are removed from and re-added to a per-arc traffic array by one
single-pair breadth-first search per affected edge (:func:`_pair_flow`).  The maximum over the arcs
is then rescanned (``O(arcs)``, a few microseconds at 10^4 arcs).
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from ..commgraph import as_commgraph
from ..errors import MappingError
from .. import metrics

__all__ = ["OBJECTIVES", "objective_value", "check_objective", "SymGraph", "SwapState", "local_search"]

OBJECTIVES = ("congestion", "dilation", "hopbytes")

# Weight of the smooth term sqrt(mean(c^2)) added to the maximum congestion while searching: without
# it almost every swap leaves the maximum unchanged and the search walks blind on a plateau.
CONGESTION_TIE = 1.0
# Share of moves that put a process next to one of its communication partners (the rest go to a
# uniformly random slot), and how many nearest slot vertices count as "next to".
LOCAL_MOVES = 0.9
NEAR_SLOTS = 12


def check_objective(objective):
    if objective not in OBJECTIVES:
        raise MappingError(f"unknown objective {objective!r}; expected one of {', '.join(OBJECTIVES)}")
    return objective


def objective_value(topology, graph, vertices, objective="congestion"):
    """Value of one objective for a mapping (lower is better).

    Parameters
    ----------
    topology : Topology
    graph : CommGraph or anything :func:`~libtopomap.as_commgraph` accepts
    vertices : Mapping or array_like of int
        ``vertices[p]`` is the vertex of process ``p``.
    objective : {"congestion", "dilation", "hopbytes"}
        Maximum ECMP congestion, weighted average dilation, or hop-bytes.

    Returns
    -------
    float

    Raises
    ------
    MappingError
        Unknown objective or invalid mapping.

    Examples
    --------
    >>> from libtopomap import torus
    >>> objective_value(torus("4"), [(0, 1), (1, 2)], [0, 1, 3], "hopbytes")
    3.0
    """
    check_objective(objective)
    if objective == "congestion":
        return metrics.max_congestion(topology, graph, vertices)
    if objective == "dilation":
        return metrics.average_dilation(topology, graph, vertices)
    return metrics.hop_bytes(topology, graph, vertices)


class SymGraph:
    """Undirected CSR view of a communication graph keeping both directed weights per neighbour.

    ``wout[k]`` is the volume from ``u`` to ``indices[k]``, ``win[k]`` the volume back; self-edges
    are dropped (they never load a link).  ``wsum = wout + win``.
    """

    def __init__(self, graph):
        g = as_commgraph(graph)
        n = g.n
        off = g.src != g.dst
        s_, d_, w_ = g.src[off].astype(np.int64), g.dst[off].astype(np.int64), g.weights[off]
        # both orientations of every edge; the first half carries u->x volume, the second x->u
        rows = np.concatenate([s_, d_])
        cols = np.concatenate([d_, s_])
        key = rows * max(n, 1) + cols
        uniq, inv = np.unique(key, return_inverse=True)
        wout = np.zeros(uniq.size)
        win = np.zeros(uniq.size)
        m = s_.size
        np.add.at(wout, inv[:m], w_)
        np.add.at(win, inv[m:], w_)
        r = uniq // max(n, 1)
        self.n = n
        self.indptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(r, minlength=n), out=self.indptr[1:])
        self.indices = (uniq % max(n, 1)).astype(np.int64)
        self.wout = wout
        self.win = win
        self.wsum = self.wout + self.win
        self.total = float(g.weights.sum())
        self.graph = g


# ----------------------------------------------------------------------------- numba kernels
@njit(cache=True)
def _pair_flow(indptr, indices, arc_reverse, s, t, wf, wr, traffic, dist, sigma, flow, order, vdist, log_arc,
               log_val, log_n):
    """Add ECMP flow ``wf`` from s to t (and ``wr`` back from t to s) to ``traffic``.

    Breadth-first search from s, level by level, stopping after the level that holds t; then the
    unit flow at t is pushed back to s in proportion to path counts.  With an all-vertex distance
    matrix ``vdist`` (n x n; 1 x 1 = none) only vertices on shortest s-t paths are visited.  Every
    change is appended to ``log_arc/log_val`` while they have room (``log_n[1]`` is set to 1 on
    overflow).  Scratch arrays must be reset (dist -1, sigma/flow 0) and are reset on return.
    Returns False if t is unreachable.
    """
    if s == t:
        return True
    prune = vdist.shape[0] == indptr.size - 1
    dst_t = np.int64(vdist[s, t]) if prune else 0
    dist[s] = 0
    sigma[s] = 1.0
    order[0] = s
    head = 0
    tail = 1
    level_end = 1
    found = False
    while head < tail:
        while head < level_end:
            v = order[head]
            head += 1
            dv = dist[v]
            for a in range(indptr[v], indptr[v + 1]):
                w = indices[a]
                if dist[w] < 0:
                    if prune and np.int64(vdist[w, t]) != dst_t - dv - 1:
                        continue
                    dist[w] = dv + 1
                    order[tail] = w
                    tail += 1
                    if w == t:
                        found = True
                if dist[w] == dv + 1:
                    sigma[w] += sigma[v]
        level_end = tail
        if found:
            break
    if found:
        flow[t] = 1.0
        dt = dist[t]
        cap = log_arc.size
        for j in range(tail - 1, 0, -1):
            w = order[j]
            fw = flow[w]
            if fw == 0.0 or dist[w] > dt:
                continue
            dw = dist[w]
            ratio = fw / sigma[w]
            for a in range(indptr[w], indptr[w + 1]):
                v = indices[a]
                if dist[v] == dw - 1:
                    f = ratio * sigma[v]
                    # arc a goes w -> v; its reverse goes v -> w (the s -> t direction)
                    ra = arc_reverse[a]
                    traffic[ra] += wf * f
                    traffic[a] += wr * f
                    flow[v] += f
                    k = log_n[0]
                    if k + 2 <= cap:
                        log_arc[k] = ra
                        log_val[k] = wf * f
                        log_arc[k + 1] = a
                        log_val[k + 1] = wr * f
                        log_n[0] = k + 2
                    else:
                        log_n[1] = 1
    for j in range(tail):
        w = order[j]
        dist[w] = -1
        sigma[w] = 0.0
        flow[w] = 0.0
    return found


@njit(cache=True)
def _full_traffic(indptr, indices, arc_reverse, g_ptr, g_idx, g_wout, g_win, proc_vertex, traffic,
                  dist, sigma, flow, order, vdist):
    """Traffic of all edges (each undirected pair once, u < x) into ``traffic``."""
    log_arc = np.empty(0, np.int64)
    log_val = np.empty(0)
    log_n = np.zeros(2, np.int64)
    for u in range(g_ptr.size - 1):
        for k in range(g_ptr[u], g_ptr[u + 1]):
            x = g_idx[k]
            if x > u:
                _pair_flow(indptr, indices, arc_reverse, proc_vertex[u], proc_vertex[x], g_wout[k], g_win[k],
                           traffic, dist, sigma, flow, order, vdist, log_arc, log_val, log_n)


@njit(cache=True)
def _congestion_score(traffic, inv_cap, tie):
    mx = 0.0
    sq = 0.0
    for a in range(traffic.size):
        c = traffic[a] * inv_cap[a]
        if c > mx:
            mx = c
        sq += c * c
    if traffic.size == 0:
        return 0.0, 0.0
    return mx, mx + tie * np.sqrt(sq / traffic.size)


@njit(cache=True)
def _hopbytes(g_ptr, g_idx, g_wsum, proc_vertex, hpos, hdist):
    total = 0.0
    for u in range(g_ptr.size - 1):
        pu = hpos[proc_vertex[u]]
        for k in range(g_ptr[u], g_ptr[u + 1]):
            x = g_idx[k]
            if x > u:
                total += g_wsum[k] * hdist[pu, hpos[proc_vertex[x]]]
    return total


@njit(cache=True)
def _move_edges(a, b, g_ptr, g_idx, nbuf_u, nbuf_x, nbuf_k):
    """Edges touching a or b (the a-b edge once): fill buffers, return count."""
    cnt = 0
    for k in range(g_ptr[a], g_ptr[a + 1]):
        nbuf_u[cnt] = a
        nbuf_x[cnt] = g_idx[k]
        nbuf_k[cnt] = k
        cnt += 1
    if b >= 0:
        for k in range(g_ptr[b], g_ptr[b + 1]):
            x = g_idx[k]
            if x == a:
                continue
            nbuf_u[cnt] = b
            nbuf_x[cnt] = x
            nbuf_k[cnt] = k
            cnt += 1
    return cnt


@njit(cache=True)
def _apply_flows(cnt, nbuf_u, nbuf_x, nbuf_k, proc_vertex, sign, indptr, indices, arc_reverse, g_wout, g_win,
                 traffic, dist, sigma, flow, order, vdist, log_arc, log_val, log_n):
    for i in range(cnt):
        u = nbuf_u[i]
        x = nbuf_x[i]
        k = nbuf_k[i]
        _pair_flow(indptr, indices, arc_reverse, proc_vertex[u], proc_vertex[x], sign * g_wout[k], sign * g_win[k],
                   traffic, dist, sigma, flow, order, vdist, log_arc, log_val, log_n)


@njit(cache=True)
def _search(n_iter, thresholds, seed_state, mode, tie,
            slot_vertex, occupant, proc_slot, proc_vertex,
            g_ptr, g_idx, g_wout, g_win, g_wsum,
            hpos, hdist,
            indptr, indices, arc_reverse, inv_cap, traffic,
            cur_score, best_score, best_proc_vertex, stall_limit, deltas_out,
            near_ptr, near_idx, slot_first, slot_count, p_local, vdist, best_mx, best_mx_vertex):
    """Random-swap local search: ``n_iter`` moves, iteration i accepts a move when
    ``delta < thresholds[i]`` (all zeros = two-opt descent; decreasing = threshold accepting).

    mode 0: hop-bytes (exact delta from the distance matrix); mode 1: congestion (ECMP flows of the
    moved processes' edges removed and re-added).  Returns (cur_score, best_score, accepted,
    improved, iterations done).
    """
    np.random.seed(seed_state)
    P = proc_slot.size
    S = slot_vertex.size
    maxdeg = 0
    for u in range(P):
        d = g_ptr[u + 1] - g_ptr[u]
        if d > maxdeg:
            maxdeg = d
    nbuf_u = np.empty(2 * maxdeg + 1, np.int64)
    nbuf_x = np.empty(2 * maxdeg + 1, np.int64)
    nbuf_k = np.empty(2 * maxdeg + 1, np.int64)
    n = indptr.size - 1
    dist = np.full(n, -1, np.int64)
    sigma = np.zeros(n)
    flow = np.zeros(n)
    order = np.empty(n, np.int64)
    log_arc = np.empty(1 << 20, np.int64)
    log_val = np.empty(1 << 20)
    log_n = np.zeros(2, np.int64)
    accepted = 0
    improved = 0
    since_best = 0
    it = 0
    for it in range(n_iter):
        a = np.random.randint(P)
        sa = proc_slot[a]
        deg_a = g_ptr[a + 1] - g_ptr[a]
        if deg_a > 0 and near_idx.size > 0 and np.random.random() < p_local:
            # local move: next to the vertex of a random communication partner of a
            x = g_idx[g_ptr[a] + np.random.randint(deg_a)]
            vx = proc_vertex[x]
            lo = near_ptr[vx]
            cnt_near = near_ptr[vx + 1] - lo
            if cnt_near == 0:
                sb = np.random.randint(S)
            else:
                w = near_idx[lo + np.random.randint(cnt_near)]
                sb = slot_first[w] + np.random.randint(slot_count[w])
        else:
            sb = np.random.randint(S)
        va = slot_vertex[sa]
        vb = slot_vertex[sb]
        if va == vb:
            deltas_out[it] = np.nan
            continue
        b = occupant[sb]
        cnt = _move_edges(a, b, g_ptr, g_idx, nbuf_u, nbuf_x, nbuf_k)
        mx = 0.0
        if mode == 0:
            delta = 0.0
            for i in range(cnt):
                u = nbuf_u[i]
                x = nbuf_x[i]
                w = g_wsum[nbuf_k[i]]
                pu_old = hpos[proc_vertex[u]]
                px_old = hpos[proc_vertex[x]]
                pu_new = hpos[vb] if u == a else hpos[va]
                if x == a:
                    px_new = hpos[vb]
                elif x == b:
                    px_new = hpos[va]
                else:
                    px_new = px_old
                delta += w * (np.float64(hdist[pu_new, px_new]) - np.float64(hdist[pu_old, px_old]))
            new_score = cur_score + delta
        else:
            log_n[0] = 0
            log_n[1] = 0
            _apply_flows(cnt, nbuf_u, nbuf_x, nbuf_k, proc_vertex, -1.0, indptr, indices, arc_reverse, g_wout,
                         g_win, traffic, dist, sigma, flow, order, vdist, log_arc, log_val, log_n)
            proc_vertex[a] = vb
            if b >= 0:
                proc_vertex[b] = va
            _apply_flows(cnt, nbuf_u, nbuf_x, nbuf_k, proc_vertex, 1.0, indptr, indices, arc_reverse, g_wout,
                         g_win, traffic, dist, sigma, flow, order, vdist, log_arc, log_val, log_n)
            mx, new_score = _congestion_score(traffic, inv_cap, tie)
            delta = new_score - cur_score
            if mx < best_mx[0] * (1.0 - 1e-12):
                # the walk minimises max + rms; every evaluated state (accepted or not) also
                # competes by the maximum alone
                best_mx[0] = mx
                best_mx_vertex[:] = proc_vertex
        deltas_out[it] = delta
        if delta < thresholds[it]:
            # accept
            accepted += 1
            proc_vertex[a] = vb
            proc_slot[a] = sb
            occupant[sb] = a
            occupant[sa] = b
            if b >= 0:
                proc_vertex[b] = va
                proc_slot[b] = sa
            cur_score = new_score
            if cur_score < best_score - 1e-12 * (1.0 + abs(best_score)):
                best_score = cur_score
                best_proc_vertex[:] = proc_vertex
                improved += 1
                since_best = 0
            else:
                since_best += 1
        else:
            since_best += 1
            if mode == 1:
                if log_n[1] == 0:
                    for i in range(log_n[0]):
                        traffic[log_arc[i]] -= log_val[i]
                    proc_vertex[a] = va
                    if b >= 0:
                        proc_vertex[b] = vb
                else:  # the log overflowed: route the flows back
                    _apply_flows(cnt, nbuf_u, nbuf_x, nbuf_k, proc_vertex, -1.0, indptr, indices, arc_reverse,
                                 g_wout, g_win, traffic, dist, sigma, flow, order, vdist, log_arc, log_val, log_n)
                    proc_vertex[a] = va
                    if b >= 0:
                        proc_vertex[b] = vb
                    _apply_flows(cnt, nbuf_u, nbuf_x, nbuf_k, proc_vertex, 1.0, indptr, indices, arc_reverse,
                                 g_wout, g_win, traffic, dist, sigma, flow, order, vdist, log_arc, log_val, log_n)
        if stall_limit > 0 and since_best >= stall_limit:
            return cur_score, best_score, accepted, improved, it + 1
    return cur_score, best_score, accepted, improved, n_iter


# All-vertex hop matrices (uint8) up to this many vertices (64 MiB) let the congestion kernel visit
# only the vertices on shortest paths.
_VDIST_LIMIT = 8192


def _vertex_distances(topology):
    """All-pairs hop distances between all vertices (switches included) as uint8, or a 1 x 1 dummy
    when the network is too large or too deep; cached on the topology object."""
    cached = getattr(topology, "_ltm_vertex_distances", None)
    if cached is not None:
        return cached
    n = topology.n_vertices
    out = np.zeros((1, 1), np.uint8)
    if n <= _VDIST_LIMIT:
        from scipy.sparse import csgraph

        full = np.empty((n, n), np.uint8)
        for lo in range(0, n, 1024):  # batches bound the float64 scratch to 1024 x n
            d = csgraph.shortest_path(topology.adjacency, method="D", unweighted=True,
                                      indices=np.arange(lo, min(n, lo + 1024)))
            if not np.isfinite(d).all() or d.max() >= 255:
                full = None
                break
            full[lo:lo + d.shape[0]] = d
        if full is not None:
            out = full
    try:
        topology._ltm_vertex_distances = out
    except AttributeError:  # pragma: no cover - slotted topology
        pass
    return out


# The swap search of this version keeps hop distances between slot vertices in a matrix; it is built
# only up to this many hosts (256 MiB as uint8) and refused beyond, with an error that names the limit.
HOST_MATRIX_LIMIT = 16384


def _host_distance_matrix(topology):
    """Hop distances between slot vertices (``H x H``, smallest unsigned type), bounded by
    :data:`HOST_MATRIX_LIMIT` hosts; cached on the topology object."""
    cached = topology.__dict__.get("_ltm_host_matrix")
    if cached is not None:
        return cached
    h = topology.hosts.size
    if h > HOST_MATRIX_LIMIT:
        raise MappingError(f"the swap search for hop-bytes or dilation keeps a host distance matrix, limited to "
                           f"{HOST_MATRIX_LIMIT} hosts; this topology has {h} (use objective='congestion', or no "
                           f"refinement)")
    from .. import _kernels

    hosts = topology.hosts.astype(np.int64)
    _total, diameter = topology.distances.host_sums(topology.slots)
    dtype = np.uint8 if diameter < 255 else (np.uint16 if diameter < 65535 else np.uint32)
    out = np.zeros((h, h), dtype=dtype)
    _kernels.bfs_distance_rows(topology.indptr, topology.indices, topology.n_vertices, hosts,
                               topology.host_position, out)
    out.setflags(write=False)
    topology.__dict__["_ltm_host_matrix"] = out
    return out


def _near_slots(topology, slots, k=NEAR_SLOTS, limit=8000):
    """For every vertex with usable slots, the ``k`` nearest other vertices with usable slots (by hops,
    ties in index order), as CSR ``(ptr, idx)`` over all vertices; empty beyond ``limit`` hosts."""
    n = topology.n_vertices
    usable = np.flatnonzero(slots > 0)
    if usable.size < 2 or usable.size > limit:
        return np.zeros(n + 1, np.int64), np.zeros(0, np.int64)
    pos = topology.host_position[usable]
    d = _host_distance_matrix(topology)[np.ix_(pos, pos)].astype(np.int32)
    np.fill_diagonal(d, np.iinfo(np.int32).max)
    kk = min(k, usable.size - 1)
    part = np.argpartition(d, kk - 1, axis=1)[:, :kk]
    # keep every vertex tied with the k-th nearest so the sample is not biased by index order
    kth = np.take_along_axis(d, part, axis=1).max(axis=1)
    mask = d <= kth[:, None]
    counts = np.zeros(n, np.int64)
    counts[usable] = mask.sum(axis=1)
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    idx = np.empty(ptr[-1], np.int64)
    for i, v in enumerate(usable.tolist()):
        idx[ptr[v]:ptr[v + 1]] = usable[np.flatnonzero(mask[i])]
    return ptr, idx


class SwapState:
    """A mapping held as slots (one per usable slot, vertex order) for the swap searches.

    Parameters
    ----------
    topology : Topology
    graph : CommGraph
    vertices : array_like of int
        Starting mapping (process -> vertex), valid for ``slots``.
    slots : array_like of int
        Usable slots per vertex.
    objective : str
    """

    def __init__(self, topology, graph, vertices, slots, objective):
        self.topology = topology
        self.sym = graph if isinstance(graph, SymGraph) else SymGraph(graph)
        self.objective = check_objective(objective)
        slots = np.asarray(slots, dtype=np.int64)
        self.slot_vertex = np.repeat(np.arange(topology.n_vertices), slots).astype(np.int64)
        vertices = np.asarray(vertices, dtype=np.int64)
        P = vertices.size
        self.occupant = np.full(self.slot_vertex.size, -1, np.int64)
        self.proc_slot = np.empty(P, np.int64)
        first = np.zeros(topology.n_vertices + 1, np.int64)
        np.cumsum(slots, out=first[1:])
        fill = first[:-1].copy()
        for p, v in enumerate(vertices.tolist()):
            k = fill[v]
            fill[v] += 1
            self.occupant[k] = p
            self.proc_slot[p] = k
        self.proc_vertex = vertices.copy()
        self.hpos = topology.host_position.astype(np.int64)
        self.mode = 1 if objective == "congestion" else 0
        if self.mode == 0:
            self.hdist = _host_distance_matrix(topology)
            self.traffic = np.zeros(1)
        else:
            self.hdist = np.zeros((1, 1), np.uint8)
            self.traffic = np.zeros(topology.n_arcs)
        self.vdist = _vertex_distances(topology) if self.mode == 1 else np.zeros((1, 1), np.uint8)
        self.inv_cap = 1.0 / topology.arc_capacity
        self.slot_first = first[:-1].copy()
        self.slot_count = slots.copy()
        self.near_ptr, self.near_idx = _near_slots(topology, slots)
        self.score = self.recompute()
        self.best_score = self.score
        self.best = self.proc_vertex.copy()
        self.best_max = np.array([self.current_max()])
        self.best_max_vertices = self.proc_vertex.copy()

    def current_max(self):
        """Maximum arc congestion of the current state (congestion mode; 0 otherwise)."""
        if self.mode == 0 or self.traffic.size == 0:
            return 0.0
        return float(np.max(self.traffic * self.inv_cap))

    def recompute(self):
        """Exact search score of the current mapping (also resets the traffic array)."""
        t, s = self.topology, self.sym
        if self.mode == 0:
            return float(_hopbytes(s.indptr, s.indices, s.wsum, self.proc_vertex, self.hpos, self.hdist))
        n = t.n_vertices
        self.traffic[:] = 0.0
        _full_traffic(t.indptr, t.indices, t.arc_reverse, s.indptr, s.indices, s.wout, s.win, self.proc_vertex,
                      self.traffic, np.full(n, -1, np.int64), np.zeros(n), np.zeros(n), np.empty(n, np.int64),
                      self.vdist)
        return float(_congestion_score(self.traffic, self.inv_cap, CONGESTION_TIE)[1])

    def run(self, thresholds, rng, stall_limit=0):
        """Run ``len(thresholds)`` random moves; returns (accepted, improved, iterations done, deltas)."""
        t, s = self.topology, self.sym
        seed = int(rng.integers(0, 2**31 - 1))
        deltas = np.full(thresholds.size, np.nan)
        cur, best, acc, imp, done = _search(
            thresholds.size, thresholds, seed, self.mode, CONGESTION_TIE,
            self.slot_vertex, self.occupant, self.proc_slot, self.proc_vertex,
            s.indptr, s.indices, s.wout, s.win, s.wsum, self.hpos, self.hdist,
            t.indptr, t.indices, t.arc_reverse, self.inv_cap, self.traffic,
            self.score, self.best_score, self.best, stall_limit, deltas,
            self.near_ptr, self.near_idx, self.slot_first, self.slot_count, LOCAL_MOVES, self.vdist,
            self.best_max, self.best_max_vertices)
        self.score = cur
        self.best_score = best
        return acc, imp, done, deltas[:done]


def local_search(topology, graph, vertices, slots, objective, *, thresholds_fn, rng, time_budget=None,
                 iterations=None, chunk=2000, stall_limit=0):
    """Drive :class:`SwapState` in chunks until the iteration or time budget is spent.

    ``thresholds_fn(progress, size, scale)`` returns the thresholds of the next chunk, where
    ``progress`` in [0, 1) is the fraction of the budget used.  Returns (best vertices, stats dict).
    """
    t0 = time.perf_counter()
    state = SwapState(topology, graph, vertices, slots, objective)
    start_score = state.score
    if state.slot_vertex.size < 2 or np.unique(state.slot_vertex).size < 2 or state.sym.indices.size == 0:
        return state.best.astype(np.int32), {"iterations": 0, "accepted": 0, "start": start_score,
                                             "best": start_score, "seconds": time.perf_counter() - t0}
    scale = None
    done = acc = 0
    if iterations is None and time_budget is None:
        iterations = 20000
    while True:
        elapsed = time.perf_counter() - t0
        if time_budget is not None and elapsed >= time_budget:
            break
        if iterations is not None and done >= iterations:
            break
        prog = max(done / iterations if iterations else 0.0, elapsed / time_budget if time_budget else 0.0)
        size = chunk if iterations is None else min(chunk, iterations - done)
        if scale is None:
            # first chunk: plain descent, recording the size of the moves (the threshold scale)
            th = np.zeros(size)
        else:
            th = np.asarray(thresholds_fn(prog, size, scale), dtype=np.float64)
        a, _imp, n, deltas = state.run(th, rng, stall_limit=stall_limit)
        if scale is None:
            pos = deltas[np.isfinite(deltas) & (deltas > 0)]
            scale = float(np.median(pos)) if pos.size else 0.0
            # a walk can afford to wander further when it has many moves per process: scale the
            # thresholds up with the expected moves per process (x1 at 35, at most x100)
            rate = n / max(time.perf_counter() - t0 - elapsed, 1e-9)
            total = iterations if iterations is not None else rate * time_budget
            scale *= float(np.clip(total / max(state.proc_slot.size, 1) / 35.0, 1.0, 100.0))
        done += n
        acc += a
        if n < size:  # stalled (two-opt)
            break
        if state.mode == 1 and (done // chunk) % 20 == 0:
            state.score = state.recompute()  # bound the floating drift of the running traffic
    best = state.best
    if state.mode == 1 and not np.array_equal(best, state.best_max_vertices):
        if (metrics.max_congestion(topology, state.sym.graph, state.best_max_vertices)
                < metrics.max_congestion(topology, state.sym.graph, best)):
            best = state.best_max_vertices
    return best.astype(np.int32), {"iterations": done, "accepted": acc, "start": start_score,
                                   "best": state.best_score, "seconds": time.perf_counter() - t0}
