"""One swap/shift local-search engine behind every refinement and rank-placement optimizer.

A state is a bijection from processes into the usable slots; a move swaps two processes or shifts one
to a free slot, and the objective (``hops``, ``ecmp`` congestion or per-step ``paths`` loads) is
updated by deltas over the moved processes' edges only.  Acceptance is ``delta < level``: threshold
accepting (Hoefler & Snir, ICS'11, section 3.5), two-opt descent or simulated annealing.  The modes,
the chunked wall-clock budget and the stopping rules: docs/internals.rst, "The local-search engine".
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import time

import numpy as np

from .._kernels.oracle import NEEDS_SEARCH, grid3_dims, grid3_hops, grid3_target, hop_distance, hop_distance_search
from ..commgraph import SymGraph
from ..distances import near_slot_vertices
from ..errors import MappingError
from ..metrics import lower_bounds
from ..routing import get_routing, pair_context, pair_flows, pair_hops, pair_hops_batch
from ._deltas import congestion_stats, congestion_update, full_traffic, move_messages, paths_init, route_messages
from .._jit import njit

__all__ = ["SwapState", "local_search", "MODE_HOPS", "MODE_ECMP", "MODE_PATHS", "CONGESTION_TIE", "LOCAL_MOVES",
           "WORK_DEGREE", "work_moves", "deadline_scope", "current_deadline", "past"]

MODE_HOPS, MODE_ECMP, MODE_PATHS = 0, 1, 2
ACCEPT_THRESHOLD, ACCEPT_METROPOLIS = 0, 1

# Weight of the smooth term sqrt(mean(c^2)) added to the maximum congestion while searching: without
# it almost every swap leaves the maximum unchanged and the search walks blind on a plateau.
CONGESTION_TIE = 1.0
# Share of moves that put a process next to one of its communication partners (the rest go to a
# uniformly random slot; "next to": libtopomap.distances.near_slot_vertices).
LOCAL_MOVES = 0.9
# Entries of the per-move change log of the congestion mode (beyond it, flows are re-routed to undo).
_LOG = 1 << 20
# Target wall time of one compiled chunk, and its bounds in moves.
_CHUNK_SECONDS = 0.02
_CHUNK_MIN, _CHUNK_MAX = 16, 1 << 20
_NO_MOVES = np.zeros(0, np.int64)

#: Degree up to which a move budget is a move budget.  Every search's budget is edge work: a move
#: of processes ``a`` and ``b`` costs ``O(deg a + deg b)`` (their edges' new distances or flows),
#: and the neighbourhoods listed per process grow with the degree too, so a budget of ``M`` moves
#: means ``M x WORK_DEGREE`` edge evaluations: ``M`` moves on graphs of mean degree up to
#: :data:`WORK_DEGREE` (every sparse instance of ``benchmarks/bench_quality.py``: stencils, meshes
#: and collectives of mean degree 2-12, whose results are unchanged), ``M x WORK_DEGREE / degree``
#: above (:func:`work_moves`).  Profile of ``map --strategy multisection`` on a 1,000-process graph of
#: mean degree 710 (``random:1000:437:1``) on ``dragonfly(17, 8, 8, 2)`` before: 2,711 of 2,997
#: py-spy samples (575 s) in multisection's final swap search, 2^22 moves of ~1,400 edge evaluations each.
WORK_DEGREE = 16

_DEADLINE = contextvars.ContextVar("libtopomap_search_deadline", default=None)


def work_moves(moves, sym):
    """Moves that fit a budget of ``moves`` moves of :data:`WORK_DEGREE` edges: ``moves`` on a graph
    of mean degree (``sym``: a :class:`~libtopomap.commgraph.SymGraph`, or the degree itself) up to
    :data:`WORK_DEGREE`, ``moves x WORK_DEGREE / degree`` above (at least 1 when ``moves`` is positive).

    Examples
    --------
    >>> work_moves(1000, 4.0), work_moves(1000, 160.0)
    (1000, 100)
    """
    deg = float(sym) if np.isscalar(sym) else sym.indices.size / max(sym.n, 1)
    moves = int(moves)
    if deg <= WORK_DEGREE or moves <= 0:
        return moves
    return max(1, int(moves * WORK_DEGREE / deg))


@contextlib.contextmanager
def deadline_scope(deadline):
    """Within the block, searches that take no ``deadline`` of their own (the constructions' swap
    searches: :func:`libtopomap.mappers.multisection.map_multisection`) stop at ``deadline`` (a
    ``time.perf_counter()`` value; ``None``: none) with their best so far.  The portfolio sets it
    around each construction, so a construction that would not fit is cut short, not skipped."""
    token = _DEADLINE.set(None if deadline is None else float(deadline))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def current_deadline():
    """The deadline of the innermost :func:`deadline_scope` (``None`` outside one)."""
    return _DEADLINE.get()


def past(deadline):
    """Whether ``deadline`` (``None``: never) has passed."""
    return deadline is not None and time.perf_counter() >= deadline


def _work(n):
    return np.full(n, -1, np.int64), np.zeros(n), np.zeros(n), np.empty(n, np.int64)


# ----------------------------------------------------------------------------- the engine
@njit(cache=True, inline="always")
def _accepts(accept_kind, delta, level):
    if accept_kind == 0:
        return delta < level
    return delta < 0.0 or np.random.random() < math.exp(-delta / level)


@njit(cache=True)
def _max_degree(g_ptr):
    m = 0
    for u in range(g_ptr.size - 1):
        d = g_ptr[u + 1] - g_ptr[u]
        if d > m:
            m = d
    return m


@njit(cache=True)
def _walk(mode, n_moves, levels, accept_kind, seed, p_local, move_a, move_b, slots, graph, topo, fast, scratch, edist,
          ecmp, rctx, paths, scal, best_vertex, best_mx_vertex, deltas_out, stall_limit, lower):
    """The one walk of every mode: ``n_moves`` swap/shift moves, move i accepted when
    ``delta < levels[i]`` (``accept_kind`` 0) or by the Metropolis rule at temperature ``levels[i]`` (1).

    Moves are random (:data:`LOCAL_MOVES` of them next to a communication partner) unless
    ``move_a`` is non-empty: then move i takes process ``move_a[i]`` to the slot of process
    ``move_b[i]`` (a swap), or to slot ``-move_b[i] - 1`` when ``move_b[i] < 0``.  Only the objective's
    delta differs between modes:

    * ``MODE_HOPS``: ``edist[k]`` caches the current hop distance of CSR entry ``k`` of the graph
      (``g_rev[k]`` is the same edge seen from the other end), so a move computes only the new
      distances of its edges (inlined closed form or table, a search only where the oracle needs one)
      and an accepted move writes them back.  Under a model with its own hops (``rctx`` of
      ``minimal``/``valiant``) ``edist[k]`` holds the hops from the row's process to ``g_idx[k]``
      and the delta weighs each direction by its own volume (``g_wout``, ``g_win``).
    * ``MODE_ECMP``: the flows of the moved processes' edges are removed and re-added under the
      routing model of ``rctx`` (:func:`libtopomap.routing.pair_flows`, which is
      :func:`libtopomap._kernels.ecmp.ecmp_pair_flows` for ECMP; one call each), the maximum and the sum of squares
      updated from the logged arcs, and a rejected move undone from the log.  Every evaluated state
      also competes by the maximum alone (``best_mx_vertex``).
    * ``MODE_PATHS``: the routes of the moved processes' messages are removed and re-added
      (:func:`route_messages`), and routed back when the move is rejected.

    The arrays come in tuples unpacked once (``slots``, ``graph``, ``topo``, ``fast``, ``ecmp``,
    ``paths``: see :meth:`SwapState.run`); nothing taking arrays is called per move outside the
    modes' own kernels (that costs reference counting on every move).  ``scal`` (float64, updated
    in place): ``[cur, best, cur_max, cur_sq, best_max, best_is_current, since_best, best_score_max,
    stamp, tie, n_arcs]``.  The best state is copied to ``best_vertex`` only when a move leaves it.
    Stops at ``stall_limit`` moves without improvement or when the best (congestion: the best
    maximum) reaches ``lower``.  Returns (accepted, improved, done).
    """
    slot_vertex, occupant, proc_slot, proc_vertex, slot_first, slot_count, near_ptr, near_idx = slots
    g_ptr, g_idx, g_wsum, g_wout, g_win, g_rev = graph
    indptr, indices, arc_reverse, inv_cap = topo
    meta, packed, table = fast
    prune, traffic, dist, sigma, flow, order, mark, acc, log_arc, log_val = ecmp
    np.random.seed(seed)
    P = proc_slot.size
    S = slot_vertex.size
    m = 2 * _max_degree(g_ptr) + 1
    nbuf = np.empty(m)
    nbuf2 = np.empty(m)  # the hops back (x -> the moved process) where a model's hops are one-way
    s_old = np.empty(m, np.int64)
    t_old = np.empty(m, np.int64)
    s_new = np.empty(m, np.int64)
    t_new = np.empty(m, np.int64)
    ewf = np.empty(m)
    ewr = np.empty(m)
    log_n = np.zeros(2, np.int64)
    mbuf = np.empty(paths[0].size + 1, np.int64)
    oracle = (meta, packed, table, indptr, indices)
    cur = scal[0]
    best = scal[1]
    cur_mx = scal[2]
    cur_sq = scal[3]
    tie = scal[9]
    n_arcs = max(scal[10], 1.0)
    best_is_current = scal[5] != 0.0
    since_best = np.int64(scal[6])
    stamp = np.int64(scal[8])
    explicit = move_a.size > 0
    has_near = near_idx.size > 0
    grid3, k0, k1, k2, w0, w1, w2 = grid3_dims(meta)
    routed = mode == MODE_HOPS and rctx[0][0] != 0  # a routing model's hops, not the hop distance
    one_way = rctx[0][9] == 0
    accepted = 0
    improved = 0
    nm = 0
    new_mx = new_sq = 0.0
    for it in range(n_moves):
        if explicit:
            a = move_a[it]
            tb = move_b[it]
            sb = proc_slot[tb] if tb >= 0 else -tb - 1
        else:
            # random: next to the vertex of a random communication partner of a, or uniform
            a = np.random.randint(P)
            deg_a = g_ptr[a + 1] - g_ptr[a]
            if deg_a > 0 and has_near and np.random.random() < p_local:
                vx = proc_vertex[g_idx[g_ptr[a] + np.random.randint(deg_a)]]
                lo = near_ptr[vx]
                cnt_near = near_ptr[vx + 1] - lo
                if cnt_near == 0:
                    sb = np.random.randint(S)
                else:
                    w = near_idx[lo + np.random.randint(cnt_near)]
                    sb = slot_first[w] + np.random.randint(slot_count[w])
            else:
                sb = np.random.randint(S)
        sa = proc_slot[a]
        va = slot_vertex[sa]
        vb = slot_vertex[sb]
        if va == vb:
            deltas_out[it] = np.nan
            continue
        b = occupant[sb]
        delta = 0.0
        new_score = cur
        if mode == MODE_HOPS:
            c = 0
            # the edges of a (a goes to vb), then those of b (b goes to va); the a-b edge keeps its length
            for side in range(2 if b >= 0 else 1):
                if side == 0:
                    lo, hi, vt, other = g_ptr[a], g_ptr[a + 1], vb, b
                else:
                    lo, hi, vt, other = g_ptr[b], g_ptr[b + 1], va, a
                toff, t0, t1, t2 = grid3_target(packed, vt, grid3)
                for k in range(lo, hi):
                    x = g_idx[k]
                    old = edist[k]
                    if routed:
                        # edist[k]: hops from this process to x, edist[g_rev[k]] back; a swapped a-b
                        # edge runs the other way round (counted once, on a's side)
                        back = edist[g_rev[k]]
                        vx = proc_vertex[x]
                        if x == other:
                            h1, h2 = back, old
                        elif vx == vt:
                            h1 = h2 = 0.0
                        else:
                            h1 = pair_hops(rctx, vt, vx)
                            h2 = pair_hops(rctx, vx, vt) if one_way else h1
                        nbuf[c] = h1
                        nbuf2[c] = h2
                        c += 1
                        if x != other or side == 0:
                            delta += g_wout[k] * (h1 - old) + g_win[k] * (h2 - back)
                        continue
                    if x == other:
                        d = old
                    else:
                        vx = proc_vertex[x]
                        if vx == vt:
                            d = 0
                        elif grid3:
                            d = grid3_hops(packed, vx, t0, t1, t2, toff, k0, k1, k2, w0, w1, w2)
                        else:
                            d = hop_distance(meta, packed, table, vt, vx)
                            if d == NEEDS_SEARCH:
                                d = hop_distance_search(meta, packed, indptr, indices, scratch, vt, vx)
                    nbuf[c] = d
                    nbuf2[c] = d
                    c += 1
                    delta += g_wsum[k] * np.float64(d - old)
        elif mode == MODE_ECMP:
            cnt = 0
            for k in range(g_ptr[a], g_ptr[a + 1]):
                x = g_idx[k]
                s_old[cnt] = va
                t_old[cnt] = proc_vertex[x]
                s_new[cnt] = vb
                t_new[cnt] = va if x == b else proc_vertex[x]
                ewf[cnt] = g_wout[k]
                ewr[cnt] = g_win[k]
                cnt += 1
            if b >= 0:
                for k in range(g_ptr[b], g_ptr[b + 1]):
                    x = g_idx[k]
                    if x == a:
                        continue
                    s_old[cnt] = vb
                    t_old[cnt] = proc_vertex[x]
                    s_new[cnt] = va
                    t_new[cnt] = proc_vertex[x]
                    ewf[cnt] = g_wout[k]
                    ewr[cnt] = g_win[k]
                    cnt += 1
            nm = cnt
            log_n[0] = 0
            log_n[1] = 0
            pair_flows(rctx, cnt, s_old, t_old, ewf, ewr, -1.0, indptr, indices, arc_reverse, meta, packed, table,
                       prune, traffic, dist, sigma, flow, order, log_arc, log_val, log_n)
            pair_flows(rctx, cnt, s_new, t_new, ewf, ewr, 1.0, indptr, indices, arc_reverse, meta, packed, table,
                       prune, traffic, dist, sigma, flow, order, log_arc, log_val, log_n)
            new_mx, new_sq = congestion_update(traffic, inv_cap, log_arc, log_val, log_n, mark, acc, stamp, cur_mx,
                                               cur_sq)
            stamp += 2
            new_score = new_mx + tie * np.sqrt(new_sq / n_arcs)
            delta = new_score - cur
            if new_mx < scal[4] * (1.0 - 1e-12):
                # every evaluated state (accepted or not) also competes by the maximum alone
                scal[4] = new_mx
                best_mx_vertex[:] = proc_vertex
                best_mx_vertex[a] = vb
                if b >= 0:
                    best_mx_vertex[b] = va
        else:
            nm = move_messages(a, b, paths, mbuf)
            dp = route_messages(-1, nm, mbuf, proc_vertex, paths, oracle, scratch, indptr, indices)
            proc_vertex[a] = vb
            if b >= 0:
                proc_vertex[b] = va
            dp += route_messages(1, nm, mbuf, proc_vertex, paths, oracle, scratch, indptr, indices)
            proc_vertex[a] = va
            if b >= 0:
                proc_vertex[b] = vb
            delta = np.float64(dp)
        if mode != MODE_ECMP:
            new_score = cur + delta
        deltas_out[it] = delta
        if _accepts(accept_kind, delta, levels[it]):
            if best_is_current and not new_score < best - 1e-12 * (1.0 + abs(best)):
                # leaving the best state: keep a copy (before the move is applied)
                best_vertex[:] = proc_vertex
                best_is_current = False
            accepted += 1
            if mode == MODE_HOPS:
                c = 0
                for k in range(g_ptr[a], g_ptr[a + 1]):
                    edist[k] = nbuf[c]
                    edist[g_rev[k]] = nbuf2[c]
                    c += 1
                if b >= 0:
                    for k in range(g_ptr[b], g_ptr[b + 1]):
                        edist[k] = nbuf[c]
                        edist[g_rev[k]] = nbuf2[c]
                        c += 1
            elif mode == MODE_ECMP:
                cur_mx = new_mx
                cur_sq = new_sq
            proc_vertex[a] = vb
            proc_slot[a] = sb
            occupant[sb] = a
            occupant[sa] = b
            if b >= 0:
                proc_vertex[b] = va
                proc_slot[b] = sa
            cur = new_score
            if cur < best - 1e-12 * (1.0 + abs(best)):
                best = cur
                if mode == MODE_ECMP:
                    scal[7] = cur_mx
                best_is_current = True
                improved += 1
                since_best = 0
            else:
                since_best += 1
        else:
            since_best += 1
            if mode == MODE_ECMP:
                if log_n[1] == 0:
                    for i in range(log_n[0]):
                        traffic[log_arc[i]] -= log_val[i]
                else:  # the log overflowed: route the flows back
                    pair_flows(rctx, nm, s_new, t_new, ewf, ewr, -1.0, indptr, indices, arc_reverse, meta, packed,
                               table, prune, traffic, dist, sigma, flow, order, log_arc, log_val, log_n)
                    pair_flows(rctx, nm, s_old, t_old, ewf, ewr, 1.0, indptr, indices, arc_reverse, meta, packed,
                               table, prune, traffic, dist, sigma, flow, order, log_arc, log_val, log_n)
            elif mode == MODE_PATHS:
                proc_vertex[a] = vb
                if b >= 0:
                    proc_vertex[b] = va
                route_messages(-1, nm, mbuf, proc_vertex, paths, oracle, scratch, indptr, indices)
                proc_vertex[a] = va
                if b >= 0:
                    proc_vertex[b] = vb
                route_messages(1, nm, mbuf, proc_vertex, paths, oracle, scratch, indptr, indices)
        reached = scal[4] if mode == MODE_ECMP else best
        if reached <= lower or (stall_limit > 0 and since_best >= stall_limit):
            n_moves = it + 1
            break
    scal[0] = cur
    scal[1] = best
    scal[2] = cur_mx
    scal[3] = cur_sq
    scal[5] = 1.0 if best_is_current else 0.0
    scal[6] = since_best
    scal[8] = stamp
    return accepted, improved, n_moves


class SwapState:
    """A mapping held as slots (one per usable slot, vertex order) for the swap searches.

    Parameters
    ----------
    topology : Topology
    graph : CommGraph or SymGraph
    vertices : array_like of int
        Starting mapping (process -> vertex), valid for ``slots``.
    slots : array_like of int
        Usable slots per vertex.
    objective : {"congestion", "dilation", "hopbytes", "hops"} or a path objective
        ``"hops"`` is ``hopbytes`` under another name (the collectives' total hops).
    near : (ptr, idx), optional
        Candidate vertices of local moves per vertex (default :func:`near_slot_vertices`).
    paths : tuple, optional
        Mode 2 data ``(msrc, mdst, mstep, sw, minc_ptr, minc, load, hist, smax, pobj, big)``.
    routing : str or Routing, optional
        Routing model of the objective (:mod:`libtopomap.routing`; default ``ecmp``, ``"native"``:
        the topology's own).  Congestion takes the model's loads; the hop objectives take the hop
        distance under shortest-path models (bit-identical to ``ecmp``) and the model's own hops
        under dragonfly ``minimal`` and ``valiant`` (:func:`libtopomap.routing.pair_hops`; expected
        hops for Valiant, counted per direction where they differ).

    Notes
    -----
    Setup costs one exact evaluation: ``O(edges)`` oracle distances, or for congestion the ECMP
    traffic of all edges (:func:`full_traffic`), proportional to the graph's traffic, not to any
    budget.  Nothing of size ``H x H``, ``P x n``, ``P x P`` or ``n x n`` is allocated.
    """

    def __init__(self, topology, graph, vertices, slots, objective, *, near=None, paths=None, routing=None):
        self.topology = topology
        self.sym = graph if isinstance(graph, SymGraph) else SymGraph(graph)
        self.objective = objective
        if paths is not None:
            self.mode = MODE_PATHS
        elif objective == "congestion":
            self.mode = MODE_ECMP
        elif objective in ("dilation", "hopbytes", "hops"):
            self.mode = MODE_HOPS
        else:
            raise MappingError(f"unknown objective {objective!r}")
        self.oracle = topology.distances
        self.routing = get_routing(routing, topology)
        self.routing.check(topology)
        # the per-pair flow kernel's model (congestion), or hop kernel's (hop objectives under a model
        # whose routes are not shortest paths); ECMP's placeholders otherwise
        self.routed_hops = self.mode == MODE_HOPS and not self.routing.shortest
        self.rctx = pair_context(topology, self.routing if self.mode == MODE_ECMP or self.routed_hops else "ecmp")
        slots = np.asarray(slots, dtype=np.int64)
        self.slot_vertex = np.repeat(np.arange(topology.n_vertices), slots).astype(np.int64)
        vertices = np.asarray(vertices, dtype=np.int64)
        P = vertices.size
        self.occupant = np.full(self.slot_vertex.size, -1, np.int64)
        self.proc_slot = np.empty(P, np.int64)
        first = np.zeros(topology.n_vertices + 1, np.int64)
        np.cumsum(slots, out=first[1:])
        order = np.argsort(vertices, kind="stable")
        sv = vertices[order]
        rank_in_vertex = np.arange(P) - np.searchsorted(sv, sv, side="left")
        if P and np.any(rank_in_vertex >= slots[sv]):
            raise MappingError("the starting mapping puts more processes on a vertex than it has slots")
        self.proc_slot[order] = first[sv] + rank_in_vertex
        self.occupant[self.proc_slot] = np.arange(P)
        self.proc_vertex = vertices.copy()
        self.slot_first = first[:-1].copy()
        self.slot_count = slots.copy()
        self.near_ptr, self.near_idx = near_slot_vertices(topology, slots) if near is None else near
        t = topology
        self.inv_cap = 1.0 / t.arc_capacity
        self.fast = self.oracle.fast_arrays
        self.scratch = self.oracle.new_scratch()
        # mode 0: the current hop distance of every CSR entry of the graph (filled by recompute)
        self.edist = np.zeros(self.sym.indices.size if self.mode == MODE_HOPS else 0)
        self.prune = bool(self.oracle.covers_all)
        if self.mode == MODE_ECMP:
            n, n_arcs, n_log = t.n_vertices, t.n_arcs, _LOG
        else:
            n = n_arcs = n_log = 0
        self.traffic = np.zeros(max(n_arcs, 1))
        # (prune, traffic, dist, sigma, flow, order, mark, acc, log_arc, log_val) of mode 1
        self.ecmp = (self.prune, self.traffic) + _work(n) + (np.zeros(n_arcs, np.int64), np.zeros(n_arcs),
                                                              np.empty(n_log, np.int64), np.empty(n_log))
        z = np.zeros(0, np.int64)
        self.paths = paths if paths is not None else (z, z, z, z, np.zeros(1, np.int64), z,
                                                      np.zeros((0, 0), np.int32), np.zeros((0, 0), np.int64), z, 0, 0)
        self.scal = np.zeros(11)
        self.scal[9] = CONGESTION_TIE
        self.scal[10] = t.n_arcs
        self.scal[8] = 1.0
        self.recompute()
        self.start_score = self.score
        self.scal[1] = self.score
        self.scal[4] = self.scal[2]
        self.scal[5] = 1.0
        self.scal[7] = self.scal[2]
        self.best = self.proc_vertex.copy()
        self.best_max_vertices = self.proc_vertex.copy()

    # ------------------------------------------------------------------ scores
    @property
    def score(self):
        """Search score of the current state."""
        return float(self.scal[0])

    @score.setter
    def score(self, value):
        self.scal[0] = value

    @property
    def best_score(self):
        return float(self.scal[1])

    def current_max(self):
        """Maximum arc congestion of the current state (congestion mode; 0 otherwise)."""
        return float(self.scal[2])

    def recompute(self):
        """Exact search score of the current mapping (resets the traffic or loads); returns it."""
        s = self.sym
        if self.mode == MODE_HOPS and self.routed_hops:
            rows = np.repeat(np.arange(s.n), np.diff(s.indptr))
            pair_hops_batch(self.rctx, self.proc_vertex[rows], self.proc_vertex[s.indices], self.edist)
            self.scal[0] = float(np.dot(s.wout, self.edist))
        elif self.mode == MODE_HOPS:
            rows = np.repeat(np.arange(s.n), np.diff(s.indptr))
            self.edist[:] = self.oracle.pairs(self.proc_vertex[rows], self.proc_vertex[s.indices])
            self.scal[0] = float(np.dot(s.wsum, self.edist)) / 2.0
        elif self.mode == MODE_ECMP:
            self.traffic[:] = full_traffic(self.topology, s, self.proc_vertex, self.oracle, routing=self.routing)
            mx, sq = congestion_stats(self.traffic, self.inv_cap)
            self.scal[2], self.scal[3] = mx, sq
            self.scal[0] = mx + CONGESTION_TIE * math.sqrt(sq / max(self.traffic.size, 1))
        else:
            p = self.paths
            p[6][:] = 0
            p[7][:] = 0
            p[7][:, 0] = self.topology.n_arcs
            p[8][:] = 0
            self.scal[0] = float(paths_init(self.proc_vertex, p, self.oracle.kernel_args, self.topology.indptr,
                                            self.topology.indices))
        return self.score

    @property
    def best_vertices(self):
        """The best state seen by the search score."""
        return self.proc_vertex.copy() if self.scal[5] else self.best.copy()

    @property
    def best_max(self):
        return float(self.scal[4])

    def snapshot(self):
        """A copy of the current state (hop modes), for :meth:`restore`: ``O(P + slots + edges)``."""
        if self.mode != MODE_HOPS:
            raise MappingError("snapshots are kept for the hop objectives only")
        return (self.occupant.copy(), self.proc_slot.copy(), self.proc_vertex.copy(), self.edist.copy(),
                float(self.scal[0]))

    def restore(self, snap):
        """Return to a :meth:`snapshot`, which becomes the best state seen."""
        occupant, proc_slot, proc_vertex, edist, score = snap
        self.occupant[:] = occupant
        self.proc_slot[:] = proc_slot
        self.proc_vertex[:] = proc_vertex
        self.edist[:] = edist
        self.scal[0] = score
        self.keep()

    def keep(self):
        """Make the current state the best seen (the engine's best-state bookkeeping restarts here)."""
        self.scal[1] = self.scal[0]
        self.scal[5] = 1.0
        self.scal[6] = 0

    # ------------------------------------------------------------------ moves
    def run(self, levels, rng, stall_limit=0, *, metropolis=False, p_local=LOCAL_MOVES, lower=-np.inf, moves=None):
        """Run ``len(levels)`` moves; returns (accepted, improved, moves done, deltas).

        ``levels`` are thresholds (``delta < level`` accepts) or, with ``metropolis``, temperatures.
        ``moves``: ``(a, b)`` int64 arrays of ``len(levels)`` explicit moves (process ``a[i]`` to
        the slot of process ``b[i]``, or to slot ``-b[i] - 1`` when negative) instead of random ones.
        """
        seed = int(rng.integers(0, 2**31 - 1))
        levels = np.ascontiguousarray(levels, dtype=np.float64)
        deltas = np.full(levels.size, np.nan)
        s, t = self.sym, self.topology
        if moves is None:
            move_a = move_b = _NO_MOVES
        else:
            move_a = np.ascontiguousarray(moves[0], np.int64)
            move_b = np.ascontiguousarray(moves[1], np.int64)
            if move_a.size != levels.size or move_b.size != levels.size:
                raise MappingError("explicit moves need one level per move")
        acc, imp, done = _walk(self.mode, levels.size, levels, 1 if metropolis else 0, seed, float(p_local), move_a,
                               move_b, (self.slot_vertex, self.occupant, self.proc_slot, self.proc_vertex,
                                        self.slot_first, self.slot_count, self.near_ptr, self.near_idx),
                               (s.indptr, s.indices, s.wsum, s.wout, s.win, s.rev),
                               (t.indptr, t.indices, t.arc_reverse, self.inv_cap), self.fast, self.scratch,
                               self.edist, self.ecmp, self.rctx, self.paths, self.scal, self.best,
                               self.best_max_vertices,
                               deltas, int(stall_limit), float(lower))
        return acc, imp, done, deltas[:done]


def local_search(topology, graph, vertices, slots, objective, *, thresholds_fn, rng, time_budget=None,
                 iterations=None, chunk=2000, stall_limit=0, metropolis=False, p_local=LOCAL_MOVES, near=None,
                 paths=None, state=None, lower=None, t_start=None, calibrate=True, deadline=None, routing=None):
    """Drive a :class:`SwapState` in compiled chunks until the move or time budget is spent.

    Parameters
    ----------
    thresholds_fn : callable
        ``thresholds_fn(progress, size, scale)`` returns the levels of the next chunk (thresholds,
        or temperatures with ``metropolis``); ``progress`` in [0, 1) is the share of the budget used,
        ``scale`` the median worsening of the first chunk (a plain descent, recorded for scaling),
        or 1.0 without ``calibrate``.
    time_budget : float, optional
        Seconds, counted from ``t_start`` (default: now) and including setup and the final exact
        evaluation of the best state; checked after every chunk, and chunks last about 20 ms.
    iterations : int, optional
        Moves (default 20000 when neither budget is given).
    stall_limit : int
        Stop after this many moves without improving the best (0: never).
    lower : float, optional
        Stop when the best reaches this objective value (default: the hop-bytes or congestion bound
        of :func:`libtopomap.metrics.lower_bounds`; none for path objectives).
    deadline : float, optional
        A ``time.perf_counter()`` value after which the search stops between chunks (``stopped``
        ``"budget"``).  Unlike ``time_budget`` it leaves the chunks and thresholds alone, so a search
        that ends before it is the same for the same seed (the portfolio's overall budget).
    routing : str or Routing, optional
        Routing model of the congestion objective (see :class:`SwapState`; ignored with ``state``).

    Returns
    -------
    best : numpy.ndarray of int32
        The best mapping seen (congestion: the lower maximum of the best-by-score and best-by-maximum
        states).
    stats : dict
        ``iterations``, ``accepted``, ``start`` / ``best`` (search scores), ``start_value`` /
        ``best_value`` (the objective: hop-bytes or maximum congestion), ``setup_seconds``,
        ``seconds``, ``stopped`` (``"budget"``, ``"stall"``, ``"bound"`` or ``"moves"``).
    """
    t0 = time.perf_counter() if t_start is None else t_start
    if state is None:
        state = SwapState(topology, graph, vertices, slots, objective, near=near, paths=paths, routing=routing)
    setup = time.perf_counter() - t0
    mode = state.mode
    start_score = state.score
    start_value = state.current_max() if mode == MODE_ECMP else start_score
    if lower is None:
        if mode == MODE_PATHS:
            lower = -np.inf
        else:
            bounds = lower_bounds(topology, state.sym.graph, slots)
            lower = bounds["hopbytes"] if mode == MODE_HOPS else bounds["congestion"]
    stats = {"iterations": 0, "accepted": 0, "start": start_score, "best": start_score, "start_value": start_value,
             "best_value": start_value, "setup_seconds": setup, "stopped": "moves"}
    if (state.slot_vertex.size < 2 or np.unique(state.slot_vertex).size < 2 or state.sym.indices.size == 0
            or start_value <= lower * (1 + 1e-12)):
        stats["stopped"] = "bound" if start_value <= lower * (1 + 1e-12) else "moves"
        stats["seconds"] = time.perf_counter() - t0
        return state.proc_vertex.astype(np.int32), stats
    if iterations is None and time_budget is None:
        iterations = 20000
    # The walk may use the whole budget: the final exact evaluation of the best state (ECMP: about
    # one setup) runs only when it still fits, else the running value (exact up to float rounding)
    # is returned.  At P = 32,768 reserving it would cost a tenth of a 10 s budget.
    hard_stop = deadline
    deadline = None if time_budget is None else t0 + time_budget
    scale = None if calibrate else 1.0
    lower_stop = lower * (1 + 1e-12) if np.isfinite(lower) else lower
    done = acc = 0
    # without a clock budget the chunks have a fixed length (a reproducible random stream)
    size = chunk if deadline is None else min(chunk, _CHUNK_MIN * 4)
    rate = None
    stopped = "moves"
    last_recompute = 0
    while True:
        now = time.perf_counter()
        if deadline is not None and now >= deadline:
            stopped = "budget"
            break
        if iterations is not None and done >= iterations:
            break
        if hard_stop is not None and now >= hard_stop:
            stopped = "budget"
            break
        if rate is not None and deadline is not None:
            size = int(np.clip(rate * _CHUNK_SECONDS, _CHUNK_MIN, _CHUNK_MAX))
            if deadline is not None:
                size = int(max(_CHUNK_MIN, min(size, rate * (deadline - now) + 1)))
        if iterations is not None:
            size = min(size, iterations - done)
        if hard_stop is not None:
            # a short first chunk (256 moves of WORK_DEGREE edges: 256 x 16 edge evaluations); its
            # move rate shortens the chunk that would pass hard_stop
            if scale is None:
                size = min(size, work_moves(256, state.sym))
            elif rate is not None:
                size = int(max(_CHUNK_MIN, min(chunk if deadline is None else size, rate * (hard_stop - now) + 1)))
                if iterations is not None:
                    size = min(size, iterations - done)
        prog = max(done / iterations if iterations else 0.0,
                   (now - t0) / time_budget if time_budget else 0.0)
        if scale is None:
            # first chunk: plain descent, recording the size of the moves (the threshold scale)
            th = np.zeros(size)
        else:
            th = np.asarray(thresholds_fn(min(prog, 1.0), size, scale), dtype=np.float64)
        tic = time.perf_counter()
        a, _imp, n, deltas = state.run(th, rng, stall_limit=stall_limit, metropolis=metropolis and scale is not None,
                                       p_local=p_local, lower=lower_stop)
        el = time.perf_counter() - tic
        if n:
            r = n / max(el, 1e-7)
            rate = r if rate is None else 0.5 * rate + 0.5 * r
        if scale is None:
            pos = deltas[np.isfinite(deltas) & (deltas > 0)]
            scale = float(np.median(pos)) if pos.size else 0.0
            # a walk can afford to wander further when it has many moves per process: scale the
            # thresholds up with the expected moves per process (x1 at 35, at most x100)
            total = iterations if iterations is not None else (rate or 0.0) * time_budget
            scale *= float(np.clip(total / max(state.proc_slot.size, 1) / 35.0, 1.0, 100.0))
        done += n
        acc += a
        best_now = state.best_max if mode == MODE_ECMP else state.best_score
        if best_now <= lower_stop:
            stopped = "bound"
            break
        if n < size:
            stopped = "stall"
            break
        if mode == MODE_ECMP and done - last_recompute >= 20 * max(chunk, 1) and (
                deadline is None or time.perf_counter() + 2 * setup < deadline):
            last_recompute = done
            state.recompute()  # bound the floating drift of the running traffic
    best = state.best_vertices
    best_value = state.best_score
    if mode == MODE_ECMP:
        best_value = state.scal[7]
        if state.best_max < best_value and not np.array_equal(best, state.best_max_vertices):
            best, best_value = state.best_max_vertices.copy(), state.best_max
        if not np.array_equal(best, state.proc_vertex) and (
                deadline is None or time.perf_counter() + setup <= t0 + time_budget) and (
                hard_stop is None or time.perf_counter() + setup <= hard_stop):
            # exact value of the returned state (the running maximum carries float drift)
            best_value = float(np.max(full_traffic(topology, state.sym, best, state.oracle, routing=state.routing)
                                      * state.inv_cap))
        elif np.array_equal(best, state.proc_vertex):
            best_value = state.current_max()
    stats.update(iterations=done, accepted=acc, best=state.best_score, best_value=best_value, stopped=stopped,
                 seconds=time.perf_counter() - t0)
    return best.astype(np.int32), stats
