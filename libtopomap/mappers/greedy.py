"""Greedy graph embedding (Hoefler & Snir, ICS'11, Algorithm 1) without any all-pairs matrix.

Every search is local: candidate free vertices come from a level-synchronous search around the
anchor that stops at the nearest free level (plus a window), candidate costs are hop distances
from the topology's :class:`~libtopomap.distances.DistanceOracle` (closed form, bounded table or
bidirectional search), and edges are routed by a search from the placed process that stops at
its farthest mapped neighbour.  Scratch arrays carry stamps instead of being cleared, so a
placement costs what its searches reach, never ``O(n)``.
"""

from __future__ import annotations

import heapq
import time

import numba
import numpy as np

from .._kernels.bfs import multi_source_levels
from .._kernels.oracle import (KIND_SEARCH, KIND_TABLE, NEEDS_SEARCH, hop_distance, hop_distance_search,
                               new_search_scratch)
from ..commgraph import sym_graph
from ._common import finish, validated
from .local_search import current_deadline
from .locality_order import fill_rest, nearest_free, tree_order
from .._jit import njit

__all__ = ["map_greedy"]

#: Work counters of the last call (vertices reached by candidate searches, by routing searches,
#: queue entries, far-candidate fallbacks, processes placed by the fill after the deadline); for
#: profiling, and ``_STATS[4] > 0`` says the last call was cut short.
_STATS = np.zeros(5, np.int64)
#: With a deadline, the construction reads the clock (numba's object mode) after this many
#: placements or this many vertices reached by its searches, whichever comes first: no cost that
#: run-to-run noise shows (CPU with a far deadline vs none, two runs each, load 3-4: 32x32x32 scrambled
#: torus 0.15-0.16 vs 0.14-0.22 s, random:4096:100 on the 16^3 torus 5.22-5.25 vs 5.20-5.37 s).
_CLOCK_PLACEMENTS = 64
_CLOCK_WORK = 1 << 16
#: Vertices a search may reach (checked before each level, :func:`_reach_bound`): a candidate
#: search that has found no free vertex by then falls back to the locality order
#: (:func:`nearest_free`); a routing search from the placed process leaves the targets it has
#: not reached to bidirectional searches (:func:`_route_all`), and one of those that has not met by
#: then adds no load (:func:`_route`).
_BUDGET = 2048


@njit(cache=True)
def _start_search(s, stamp, lvl, best, queue, ctr):
    """Open a new stamped search rooted at ``s`` (level 0, path load 0, first in ``queue``);
    returns its stamp.  ``ctr[0]`` is the stamp counter of the scratch."""
    ctr[0] += 1
    c = ctr[0]
    stamp[s] = c
    lvl[s] = 0
    best[s] = 0.0
    queue[0] = s
    return c


@njit(cache=True)
def _loaded_level(q, head, tail, h_ptr, h_idx, h_src, h_rev, load, stamp, lvl, best, pred, c, forward):
    """Expand one whole level ``q[head:tail]`` of a (hops, path load)-lexicographic search; returns
    the new tail (the next level is ``q[tail:new_tail]``).

    The search is the paper's Dijkstra on ``omega_hat + load`` without the priority queue: a vertex
    first reached on level ``L + 1`` keeps, among its predecessors on level ``L``, the least path
    load ``best`` and the arc it came by (``pred``); on equal loads the predecessor Dijkstra would
    settle first, the one of least (load, index).  ``forward``: loads of the arcs ``v -> w`` and
    ``pred`` the arc into ``w`` (a search from a source); otherwise loads of the reverse arcs
    ``w -> v`` and ``pred`` the arc out of ``w`` (the target side of :func:`_route`); ``pred=None``
    (the candidate search, which needs no paths) compiles a version without it.  Shared by the
    candidate search, the routing search and both sides of the bidirectional route.
    """
    new_tail = tail
    for j in range(head, tail):
        v = q[j]
        dv = lvl[v] + 1
        bv = best[v]
        for a in range(h_ptr[v], h_ptr[v + 1]):
            w = h_idx[a]
            arc = a if forward else h_rev[a]
            nb = bv + load[arc]
            if stamp[w] != c:
                stamp[w] = c
                lvl[w] = dv
                best[w] = nb
                if pred is not None:
                    pred[w] = arc
                q[new_tail] = w
                new_tail += 1
            elif lvl[w] == dv:
                if nb < best[w]:
                    best[w] = nb
                    if pred is not None:
                        pred[w] = arc
                elif pred is not None and nb == best[w]:
                    pv = h_src[pred[w]] if forward else h_idx[pred[w]]
                    if pv != v and (bv < best[pv] or (bv == best[pv] and v < pv)):
                        pred[w] = arc
    return new_tail


@njit(cache=True)
def _reach_bound(q, head, tail, h_ptr, budget, hmax):
    """Whether expanding the level ``q[head:tail]`` stays within ``budget`` reached vertices:
    ``tail`` plus the arcs leaving the level (at most all vertices) does not exceed it.  A search
    checks this before, not after, an expansion (one level of a fat tree's top switches can cost
    more than all the levels before it); on a network of at most ``budget`` vertices it always
    holds.  The arcs are counted only when ``tail + (tail - head) * hmax`` (``hmax``: the largest
    degree) exceeds the budget."""
    n = h_ptr.size - 1
    if n <= budget or tail + (tail - head) * hmax <= budget:
        return True
    s = tail
    for j in range(head, tail):
        v = q[j]
        s += h_ptr[v + 1] - h_ptr[v]
        if s > budget:
            return False
    return True


@njit(cache=True)
def _free_candidates(anchor, load, h_ptr, h_idx, h_src, h_rev, free, window, max_cand, ws, cand, budget, hmax):
    """Free vertices nearest to ``anchor`` in (hops, path load) order (Algorithm 1, line 13).

    A (hops, load)-lexicographic search from ``anchor`` (:func:`_loaded_level`) that collects the
    vertices with ``free > 0`` on the first level that has one and on the ``window`` levels after
    it, sorted by (level, load, index), at most ``max_cand`` of them.  Work: the arcs of the levels
    before the last collected one (a stamp makes the scratch reusable without clearing).  The search
    stops before a level whose expansion could pass ``budget`` reached vertices
    (:func:`_reach_bound`, ``hmax`` the largest degree of H).  Returns the number of candidates, or
    -1 when none was found by then (or on the whole component).
    """
    stamp, lvl, best, queue, ctr = ws
    c = _start_search(anchor, stamp, lvl, best, queue, ctr)
    head = 0
    tail = 1
    ncand = 0
    first = -1
    L = 0
    ckey = np.empty(max_cand)
    while head < tail:
        for j in range(head, tail):
            v = queue[j]
            if free[v] <= 0:
                continue
            if first < 0:
                first = L
            b = best[v]
            # bounded insertion sort by (load, index); earlier levels stay in front
            if ncand == max_cand:
                lastv = cand[ncand - 1]
                if lvl[lastv] < L or ckey[ncand - 1] < b or (ckey[ncand - 1] == b and lastv < v):
                    continue
                ncand -= 1
            i = ncand
            while i > 0 and lvl[cand[i - 1]] == L and (ckey[i - 1] > b or (ckey[i - 1] == b and cand[i - 1] > v)):
                cand[i] = cand[i - 1]
                ckey[i] = ckey[i - 1]
                i -= 1
            cand[i] = v
            ckey[i] = b
            ncand += 1
        if first >= 0 and (L >= first + window or ncand >= max_cand):
            break
        if not _reach_bound(queue, head, tail, h_ptr, budget, hmax):
            break
        new_tail = _loaded_level(queue, head, tail, h_ptr, h_idx, h_src, h_rev, load, stamp, lvl, best, None, c, True)
        head = tail
        tail = new_tail
        L += 1
    ctr[1] += tail
    return ncand if first >= 0 else -1


@njit(cache=True)
def _add_path_load(x, stop, pred, step, w_fwd, w_back, load, h_rev, inv_cap):
    """Walk the search tree ``pred`` from ``x`` to ``stop`` (``step[a]``: the vertex arc ``a`` leads
    back to) adding ``w_fwd / c`` to each arc and ``w_back / c`` to its reverse."""
    while x != stop:
        a = pred[x]
        load[a] += w_fwd * inv_cap[a]
        load[h_rev[a]] += w_back * inv_cap[a]
        x = step[a]


@njit(cache=True)
def _route(s, t, w_st, w_ts, load, h_ptr, h_idx, h_src, h_rev, inv_cap, rs, budget):
    """Route the edge s -> t on a least-loaded shortest path and add its load (Algorithm 1, line 26).

    The path minimises (hops, sum of ``load``) lexicographically, as Dijkstra on
    ``omega_hat + load`` does, but exactly and by a bidirectional level-synchronous search: whole
    levels are expanded (:func:`_loaded_level`) from the side with the smaller frontier until they
    meet; every shortest path crosses the meeting level once, so the least ``best_s(m) + best_t(m)``
    over the meeting vertices ``m`` gives the optimum.  ``w_st / c`` is added along the path,
    ``w_ts / c`` along its reverse arcs.  Work: two balls of about half the distance (stamps, no
    clearing); a search that has reached more than ``budget`` vertices without meeting gives up.
    Returns the hop distance (-1: unreachable or over budget, nothing added).
    """
    if s == t:
        return 0
    st_s, st_t, l_s, l_t, b_s, b_t, p_s, p_t, q_s, q_t, ctr = rs
    c = _start_search(s, st_s, l_s, b_s, q_s, ctr)
    st_t[t] = c
    l_t[t] = 0
    b_t[t] = 0.0
    q_t[0] = t
    hs, ts, ht, tt = 0, 1, 0, 1
    meet = -1
    while hs < ts and ht < tt:
        if ts - hs <= tt - ht:
            nts = _loaded_level(q_s, hs, ts, h_ptr, h_idx, h_src, h_rev, load, st_s, l_s, b_s, p_s, c, True)
            hs = ts
            ts = nts
            lo, hi, q, other = hs, ts, q_s, st_t
        else:
            ntt = _loaded_level(q_t, ht, tt, h_ptr, h_idx, h_src, h_rev, load, st_t, l_t, b_t, p_t, c, False)
            ht = tt
            tt = ntt
            lo, hi, q, other = ht, tt, q_t, st_s
        bestval = np.inf
        for j in range(lo, hi):
            m = q[j]
            if other[m] == c:
                x = b_s[m] + b_t[m]
                if x < bestval or (x == bestval and m < meet):
                    bestval = x
                    meet = m
        if meet >= 0:
            break
        if ts + tt > budget:
            break
    if meet < 0:
        # the sides can also meet on the first level: t adjacent to s is found by the check above,
        # so reaching here means disconnected
        return -1
    ctr[1] += ts + tt
    _add_path_load(meet, s, p_s, h_src, w_st, w_ts, load, h_rev, inv_cap)
    _add_path_load(meet, t, p_t, h_idx, w_st, w_ts, load, h_rev, inv_cap)
    return l_s[meet] + l_t[meet]


@njit(cache=True)
def _route_all(src, targets, w_out, w_in, nt, load, h_ptr, h_idx, h_src, h_rev, inv_cap, rs, budget, hmax):
    """Route the edges from ``src`` to every ``targets[i]`` and add their loads (Algorithm 1, line 26).

    One (hops, load)-lexicographic search from ``src`` (:func:`_loaded_level`, the Dijkstra on
    ``omega_hat + load`` of the paper with its ties).  The search stops once the level of the
    farthest target is complete, or once it has reached more than ``budget`` vertices; targets it
    has not reached then are routed one by one by :func:`_route` (two balls of half the distance
    instead of one of the whole distance).  Loads are added after the search.
    """
    st, lv, bs, pr, q, ctr = rs[0], rs[2], rs[4], rs[6], rs[8], rs[10]
    left = 0
    for i in range(nt):
        if targets[i] != src:
            left += 1
    if left == 0:
        return
    c = _start_search(src, st, lv, bs, q, ctr)
    head = 0
    tail = 1
    found = 0
    while head < tail and _reach_bound(q, head, tail, h_ptr, budget, hmax):
        new_tail = _loaded_level(q, head, tail, h_ptr, h_idx, h_src, h_rev, load, st, lv, bs, pr, c, True)
        head = tail
        tail = new_tail
        found = 0
        for i in range(nt):
            if targets[i] != src and st[targets[i]] == c:
                found += 1
        if found == left:
            break
    ctr[1] += tail
    for i in range(nt):
        if targets[i] != src and st[targets[i]] == c:
            _add_path_load(targets[i], src, pr, h_src, w_out[i], w_in[i], load, h_rev, inv_cap)
    if found < left:
        # marks of this search die with the next stamp: remember the far targets first
        nfar = 0
        for i in range(nt):
            if targets[i] != src and st[targets[i]] != c:
                targets[nfar] = targets[i]
                w_out[nfar] = w_out[i]
                w_in[nfar] = w_in[i]
                nfar += 1
        for i in range(nfar):
            _route(src, targets[i], w_out[i], w_in[i], load, h_ptr, h_idx, h_src, h_rev, inv_cap, rs, budget)


@njit(cache=True)
def _axis_depths(ptr, idx, root, max_level, stamp, lvl, sig, branch, queue, c):
    """Length of the straight line leaving ``root`` by each of its arcs: for arc ``k`` of ``root``,
    the deepest breadth-first level holding a vertex whose *only* shortest path from ``root`` starts
    with that arc (0 when none), levels up to ``max_level``.

    On a torus these vertices are the axes through ``root``, so the result tells each direction's
    half-length (15 along a dimension of 32, 31 along one of 64), which no count of vertices at a
    distance can (a torus looks the same in every direction by those).  Path counts are kept capped
    at 2 (unique or not); the search stops at the first level without a uniquely reached vertex.
    ``O(reached arcs)``; ``stamp``/``lvl``/``queue`` are stamped scratch (stamp ``c``).
    """
    deg = ptr[root + 1] - ptr[root]
    depth = np.zeros(deg, np.int64)
    stamp[root] = c
    lvl[root] = 0
    head = 0
    tail = 1
    queue[0] = root
    for k in range(deg):
        w = idx[ptr[root] + k]
        if w == root:
            continue
        if stamp[w] != c:
            stamp[w] = c
            lvl[w] = 1
            sig[w] = 1
            branch[w] = k
            queue[tail] = w
            tail += 1
        else:
            sig[w] = 2  # parallel arcs
    head = 1
    L = 1
    while head < tail:
        unique = False
        for j in range(head, tail):
            v = queue[j]
            if sig[v] == 1:
                depth[branch[v]] = L
                unique = True
        if not unique or L >= max_level:
            break
        new_tail = tail
        for j in range(head, tail):
            v = queue[j]
            for a in range(ptr[v], ptr[v + 1]):
                w = idx[a]
                if stamp[w] != c:
                    stamp[w] = c
                    lvl[w] = L + 1
                    sig[w] = sig[v]
                    branch[w] = branch[v]
                    queue[new_tail] = w
                    new_tail += 1
                elif lvl[w] == L + 1:
                    sig[w] = 2
        head = tail
        tail = new_tail
        L += 1
    return depth


@njit(cache=True)
def _grow_block(m, room, g_ptr, g_idx, g_wsum, gamma, state, gain, front, block):
    """Up to ``room`` unmapped processes around ``m`` (``m`` first) that communicate mostly among
    themselves: greedy graph growing, each step the frontier process with the most edge weight
    into the block (ties: the first reached, so breadth-first on unweighted ties).  Writes
    ``block`` and returns its size; ``state``/``gain`` (zero) are left as found.
    ``O(size x degree x frontier)``."""
    nb = 1
    block[0] = m
    state[m] = 2
    nf = 0
    y = m
    while nb < room:
        for k in range(g_ptr[y], g_ptr[y + 1]):
            z = g_idx[k]
            if gamma[z] >= 0 or state[z] == 2:
                continue
            if state[z] == 0:
                state[z] = 1
                front[nf] = z
                nf += 1
            gain[z] += g_wsum[k]
        bi = -1
        bg = -1.0
        for i in range(nf):
            if gain[front[i]] > bg:
                bg = gain[front[i]]
                bi = i
        if bi < 0:
            break
        y = front[bi]
        for i in range(bi, nf - 1):  # keep the reach order of the rest
            front[i] = front[i + 1]
        nf -= 1
        state[y] = 2
        block[nb] = y
        nb += 1
    for i in range(nf):
        state[front[i]] = 0
        gain[front[i]] = 0.0
    for i in range(nb):
        state[block[i]] = 0
        gain[block[i]] = 0.0
    return nb


@njit(cache=True)
def _leaf_block(m, best, g_ptr, g_idx, g_wsum, gamma, h_ptr, h_idx, free, under, state, gain, front, block, bvert):
    """The processes to place now and their vertices (``block[:nb]`` on ``bvert[:nb]``; returns
    ``nb``): ``m`` on ``best`` alone, or, when ``best`` is a single-link vertex (a host) under a
    switch none of whose single-link vertices holds a process yet (``under``), a block of G grown
    from ``m`` (:func:`_grow_block`) over the free slots of that switch's single-link vertices,
    ``best``'s first, then the others' in link order."""
    block[0] = m
    bvert[0] = best
    if h_ptr[best + 1] - h_ptr[best] != 1:
        return 1
    sw = h_idx[h_ptr[best]]
    if under[sw] > 0:
        return 1
    room = 0
    for a in range(h_ptr[sw], h_ptr[sw + 1]):
        h = h_idx[a]
        if h_ptr[h + 1] - h_ptr[h] == 1 and free[h] > 0:
            room += free[h]
    nb = _grow_block(m, room, g_ptr, g_idx, g_wsum, gamma, state, gain, front, block)
    i = 1
    for _ in range(1, free[best]):
        if i < nb:
            bvert[i] = best
            i += 1
    for a in range(h_ptr[sw], h_ptr[sw + 1]):
        h = h_idx[a]
        if h == best or h_ptr[h + 1] - h_ptr[h] != 1:
            continue
        for _ in range(free[h]):
            if i < nb:
                bvert[i] = h
                i += 1
    return nb


@njit(cache=True)
def _orient(root_p, root_v, g_ptr, g_idx, h_ptr, h_idx, gaxis, haxis, rs):
    """Straight-line lengths (:func:`_axis_depths`) through each arc of the first process
    ``root_p`` in G, written to ``gaxis`` at its neighbours, and through each arc of its vertex
    ``root_v`` in H up to one level past G's longest, written to ``haxis``; ``rs`` is the routing
    scratch (its arrays are stamped with -1 here, a stamp no search uses)."""
    P = g_ptr.size - 1
    dg = _axis_depths(g_ptr, g_idx, root_p, P, np.zeros(P, np.int64), np.zeros(P, np.int64), np.zeros(P, np.int64),
                      np.zeros(P, np.int64), np.empty(P, np.int64), 1)
    mx = 0
    for k in range(dg.size):
        x = g_idx[g_ptr[root_p] + k]
        if gaxis[x] < 0:
            gaxis[x] = dg[k]
        mx = max(mx, dg[k])
    dh = _axis_depths(h_ptr, h_idx, root_v, mx + 1, rs[1], rs[3], rs[6], rs[7], rs[9], -1)
    for k in range(dh.size):
        v = h_idx[h_ptr[root_v] + k]
        if haxis[v] < 0:
            haxis[v] = dh[k]


@njit(cache=True)
def _distance(meta, packed, table, h_ptr, h_idx, scratch, u, v):
    d = hop_distance(meta, packed, table, u, v)
    if d == NEEDS_SEARCH:
        d = hop_distance_search(meta, packed, h_ptr, h_idx, scratch, u, v)
    return d


@njit(cache=True)
def _greedy(g_ptr, g_idx, g_wout, g_win, g_wsum, heavy_order, h_ptr, h_idx, h_src, h_rev, inv_cap, free, fast,
            start, window, max_cand, by_connectivity, lookahead, budget, order, opos, stats, deadline):
    P = g_ptr.size - 1
    n = h_ptr.size - 1
    meta, packed, table = fast
    stats[3] = 0
    stats[4] = 0
    gamma = np.full(P, -1, np.int64)
    load = np.zeros(h_idx.size)
    ws = (np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n), np.empty(n, np.int64), np.zeros(2, np.int64))
    rs = (np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64),
          np.zeros(n), np.zeros(n), np.zeros(n, np.int64), np.zeros(n, np.int64),
          np.empty(n, np.int64), np.empty(n, np.int64), np.zeros(2, np.int64))
    hmax = 1
    for v in range(n):
        hmax = max(hmax, h_ptr[v + 1] - h_ptr[v])
    scratch = new_search_scratch(n if meta[0] == KIND_SEARCH or meta[0] == KIND_TABLE else 1)
    cand = np.empty(max_cand, np.int64)
    maxdeg = 1
    for u in range(P):
        maxdeg = max(maxdeg, g_ptr[u + 1] - g_ptr[u])
    targets = np.empty(maxdeg, np.int64)
    tw_out = np.empty(maxdeg)
    tw_in = np.empty(maxdeg)
    s = start
    hp = 0
    placed = 0
    right = np.arange(order.size + 1)
    left = np.arange(order.size + 1)
    conn = np.zeros(P)
    common = np.zeros(P, np.int64)
    second = np.empty(P, np.int64)
    mark = np.zeros(n, np.bool_)
    # orientation at the first process: straight-line lengths by arc in G and in H (_axis_depths)
    gaxis = np.full(P, -1, np.int64)
    haxis = np.full(n, -1, np.int64)
    root_p = -1
    # leaf groups: processes placed on the single-link vertices of each vertex
    under = np.zeros(n, np.int64)
    block = np.empty(P, np.int64)
    bstate = np.zeros(P, np.int8)
    bgain = np.zeros(P)
    bfront = np.empty(P, np.int64)
    bvert = np.empty(P, np.int64)
    heap = [(0.0, np.int64(0), np.int64(0), np.int64(0))]
    heapq.heappop(heap)
    counter = 0
    timed = deadline < np.inf  # without a deadline the clock is never read
    cut = False
    clock_placed = -_CLOCK_PLACEMENTS  # the first placement reads it: a deadline may be past already
    clock_work = 0
    while placed < P and not cut:
        while gamma[heavy_order[hp]] >= 0:
            hp += 1
        first = heavy_order[hp]
        # (negated key, entry counter for FIFO ties, process, anchor process)
        heapq.heappush(heap, (0.0, np.int64(counter), np.int64(first), np.int64(-1)))
        counter += 1
        while len(heap) > 0:
            work = ws[4][1] + rs[10][1]
            if timed and (placed - clock_placed >= _CLOCK_PLACEMENTS or work - clock_work >= _CLOCK_WORK):
                clock_placed = placed
                clock_work = work
                with numba.objmode(now="float64"):
                    now = time.perf_counter()
                if now >= deadline:
                    cut = True
                    break
            negw, _c, m, anchor_p = heapq.heappop(heap)
            if gamma[m] >= 0:
                continue
            if by_connectivity and -negw < conn[m]:
                continue  # stale entry: m gained mapped neighbours since
            anchor = s if anchor_p < 0 else gamma[anchor_p]
            ncand = _free_candidates(anchor, load, h_ptr, h_idx, h_src, h_rev, free, window, max_cand, ws, cand,
                                     budget, hmax)
            if ncand <= 0:
                # no free slot near the anchor (or none reachable): the nearest in the locality order
                ncand = nearest_free(anchor, opos, order, right, left, max_cand, cand)
                stats[3] += 1
            best = cand[0]
            if ncand > 1:
                # among the nearest free vertices, the one closest (in hops, weighted) to all
                # already-mapped neighbours of m; ties go to the one whose common-neighbour counts
                # with the mapped second neighbours of m match those in G (this tells a "straight"
                # from a "turning" continuation on grids), then, next to the first process, to the
                # one whose straight line is as long as m's (orients the map), then to the least
                # loaded (earliest) one
                n2 = 0
                if lookahead:
                    for k in range(g_ptr[m], g_ptr[m + 1]):
                        y = g_idx[k]
                        for k2 in range(g_ptr[y], g_ptr[y + 1]):
                            z = g_idx[k2]
                            if z == m or gamma[z] < 0:
                                continue
                            if common[z] == 0:
                                second[n2] = z
                                n2 += 1
                            common[z] += 1
                orient = anchor_p >= 0 and anchor_p == root_p and gaxis[m] >= 0
                best_cost = np.inf
                best_cost2 = np.inf
                best_cost3 = np.inf
                for ci in range(ncand):
                    t = cand[ci]
                    cost = 0.0
                    for k in range(g_ptr[m], g_ptr[m + 1]):
                        x = g_idx[k]
                        if gamma[x] >= 0:
                            cost += g_wsum[k] * _distance(meta, packed, table, h_ptr, h_idx, scratch, t, gamma[x])
                    if cost > best_cost:
                        continue
                    cost2 = 0.0
                    if n2 > 0:
                        for a in range(h_ptr[t], h_ptr[t + 1]):
                            mark[h_idx[a]] = True
                        for i in range(n2):
                            z = second[i]
                            vz = gamma[z]
                            cn = 0
                            for a in range(h_ptr[vz], h_ptr[vz + 1]):
                                if mark[h_idx[a]]:
                                    cn += 1
                            cost2 += abs(cn - common[z])
                        for a in range(h_ptr[t], h_ptr[t + 1]):
                            mark[h_idx[a]] = False
                    cost3 = 0.0
                    if orient and haxis[t] >= 0:
                        cost3 = abs(gaxis[m] - haxis[t])
                    if cost < best_cost or cost2 < best_cost2 or (cost2 == best_cost2 and cost3 < best_cost3):
                        best_cost = cost
                        best_cost2 = cost2
                        best_cost3 = cost3
                        best = t
                for i in range(n2):
                    common[second[i]] = 0
            # what goes where: m alone, or a block of G filling the leaf switch of best
            nb = _leaf_block(m, best, g_ptr, g_idx, g_wsum, gamma, h_ptr, h_idx, free, under, bstate, bgain, bfront,
                             block, bvert)
            for b in range(nb):
                mb = block[b]
                v = bvert[b]
                gamma[mb] = v
                free[v] -= 1
                if free[v] == 0 and opos[v] >= 0:
                    right[opos[v]] = opos[v] + 1
                    left[opos[v] + 1] = opos[v]
                if h_ptr[v + 1] - h_ptr[v] == 1:
                    under[h_idx[h_ptr[v]]] += 1
                placed += 1
                nt = 0
                for k in range(g_ptr[mb], g_ptr[mb + 1]):
                    x = g_idx[k]
                    if gamma[x] >= 0:
                        targets[nt] = gamma[x]
                        tw_out[nt] = g_wout[k]
                        tw_in[nt] = g_win[k]
                        nt += 1
                    else:
                        conn[x] += g_wsum[k]
                        key = conn[x] if by_connectivity else g_wsum[k]
                        heapq.heappush(heap, (-key, np.int64(counter), x, np.int64(mb)))
                        counter += 1
                _route_all(v, targets, tw_out, tw_in, nt, load, h_ptr, h_idx, h_src, h_rev, inv_cap, rs, budget,
                           hmax)
            s = bvert[nb - 1]
            if root_p < 0:
                root_p = m
                _orient(m, best, g_ptr, g_idx, h_ptr, h_idx, gaxis, haxis, rs)
    if cut:
        stats[4] = fill_rest(heap, heavy_order, g_ptr, g_idx, gamma, free, s, order, opos, right, left, cand)
    stats[0] = ws[4][1]
    stats[1] = rs[10][1]
    stats[2] = counter
    return gamma


@validated
def map_greedy(topology, graph, *, slots=None, seed=None, start=None, window=1, max_candidates=16,
               order="edge", lookahead=True):
    """Greedy graph embedding (Hoefler & Snir, Algorithm 1) with load-aware shortest paths.

    The heaviest unmapped process goes to the start vertex (or the nearest vertex with a free slot);
    then its heaviest edges are taken from a priority queue, and each neighbour is placed on the
    nearest free vertex, where "nearest" is the paper's Dijkstra on arc weights
    ``omega_hat + load`` (``omega_hat = max(w) * |V_H|^2``, so fewer hops always win; among
    equally short paths the less loaded one, so link capacities count).  Here that order is
    computed exactly as the pair (hops, load) by level-synchronous searches: ``omega_hat`` would
    reach ``7e10`` at 262,144 vertices and float64 would no longer separate small loads.

    Parameters
    ----------
    topology : Topology
    graph : CommGraph or anything :func:`~libtopomap.as_commgraph` accepts
    slots : array_like of int, optional
        Usable slots per vertex (default ``topology.slots``).
    seed : int, optional
        Picks the start vertex when ``start`` is None.
    start : int or str, optional
        Start vertex (index or name); ranks of the MPI layer use different ones.
    window : int
        Free vertices up to ``window`` hops beyond the nearest are candidates too.
    max_candidates : int
        At most this many candidates; the one with the least weighted hop distance to the
        already-mapped neighbours wins.
    order : {"edge", "connectivity"}
        Queue key: the weight of the edge that brought the process in (Algorithm 1), or its total
        weight to already-mapped processes (most constrained first).  Ties are first in, first out.
    lookahead : bool
        Break distance ties by matching common-neighbour counts (see Notes).

    Returns
    -------
    Mapping

    Notes
    -----
    Refinements of Algorithm 1 within its "nearest free vertex" rule: the search starts at the vertex
    of the neighbour that brought the process into the queue (not the last placed one); among the
    free vertices at the nearest hop distance (plus ``window``) the one closest to *all* mapped
    neighbours is taken; remaining ties go to the candidate ``t`` for which, over the mapped
    second neighbours ``z`` of the process ``m``, the number of common neighbours of ``t`` and
    ``z``'s vertex in H best matches that of ``m`` and ``z`` in G.  On a grid this tells a straight
    continuation (one common neighbour) from a turn (two), which distances alone cannot.  Next to
    the first process, the last tie goes to the candidate whose straight line from the first
    vertex is as long as that of the process from the first process in G (the deepest level
    reached by a unique shortest path through each arc; :func:`_axis_depths`): distances and
    common neighbours are the same along every axis of a torus, so without it a 64x32x32 stencil
    could start along a short dimension of the 64x32x32 torus and wrap wrongly.  With these the
    greedy recovers scrambled 8x8, 16x16, 8x8x8, 12x12x12, 16x8x8 (onto each orientation),
    32x32x32 and 64x32x32 tori exactly from every start vertex (total hops = number of links).
    Queue ties are first in, first out (a breadth-first growth).  Every edge to an already-mapped
    neighbour adds its load (line 26 routes only the queue edge).

    Tree-like networks: when the chosen vertex is a single-link vertex (a host) under a switch that
    no process uses yet, the switch's free single-link slots are filled at once with a block of
    the communication graph grown from the process (:func:`_grow_block`: the unmapped process with
    the most edge weight into the block first, breadth-first on ties), so the processes under one
    leaf switch talk mostly among themselves; the block's processes then enter the queue as usual.

    Scale: candidate costs are hop distances from ``topology.distances`` (no host x host matrix);
    searches reuse stamped scratch arrays.  A search stops before a level whose expansion could
    take it past ``_BUDGET`` vertices (:func:`_reach_bound`).  A candidate search stopped so
    without a free vertex (a full region, e.g. a full leaf switch of a fat tree) takes the free
    vertices next to the anchor in a depth-first order of a breadth-first tree of H instead
    (:func:`tree_order`: subtrees such as leaf switches and pods are contiguous; union-find
    "next free" pointers), still scored by the distance to the mapped neighbours; an edge to a
    neighbour beyond the routing search is routed by a bidirectional search, which adds no load
    when it too exceeds the budget.  Networks of at most ``_BUDGET`` vertices never take these
    fallbacks.

    Deadline: inside :func:`~libtopomap.mappers.local_search.deadline_scope` (the portfolio sets it
    around each construction) the construction reads the clock every ``_CLOCK_PLACEMENTS``
    placements or ``_CLOCK_WORK`` vertices reached by its searches; past the deadline it stops and
    places the rest without searches or routing (:func:`fill_rest`: breadth-first over G from the
    pending queue, each process at the free vertex nearest its anchor's in the locality order), so
    the result is still a placement of every process, the greedy's best so far (``_STATS[4]``: the
    processes placed so).  Without a deadline the clock is never read and nothing changes.

    References
    ----------
    T. Hoefler and M. Snir, "Generic Topology Mapping Strategies for Large-scale Parallel
    Architectures", ICS'11, section 3.1, Algorithm 1.
    """
    g, rng = graph, np.random.default_rng(seed)
    sym = sym_graph(g)  # built once per graph (a race's other candidates share it)
    free = slots.astype(np.int64).copy()
    usable = np.flatnonzero(free > 0)
    if start is None:
        start_v = int(usable[rng.integers(usable.size)]) if seed is not None else int(usable[0])
    else:
        start_v = topology.index(start) if isinstance(start, str) else int(start)
        if not 0 <= start_v < topology.n_vertices:
            from ..errors import MappingError

            raise MappingError(f"start vertex {start} outside 0..{topology.n_vertices - 1}")
    deg = np.diff(sym.indptr)
    vweight = np.bincount(np.repeat(np.arange(g.n), deg), weights=sym.wsum, minlength=g.n)
    heavy_order = np.lexsort((np.arange(g.n), -vweight)).astype(np.int64)
    indptr, indices = topology.indptr.astype(np.int64), topology.indices.astype(np.int64)
    # locality order of the slot vertices for the far-candidate fallback (O(n), like the searches'
    # scratch; only networks larger than the search budget take that fallback)
    lorder = tree_order(indptr, indices, multi_source_levels(indptr, indices, topology.n_vertices, [start_v]), free)
    opos = np.full(topology.n_vertices, -1, np.int64)
    opos[lorder] = np.arange(lorder.size)
    # the race's deadline (deadline_scope, set by the portfolio around each construction): past it
    # the construction is cut short and the rest placed cheaply (fill_rest), see Notes
    deadline = current_deadline()
    gamma = _greedy(sym.indptr, sym.indices, sym.wout, sym.win, sym.wsum, heavy_order,
                    indptr, indices, topology.arc_source.astype(np.int64), topology.arc_reverse.astype(np.int64),
                    1.0 / topology.arc_capacity, free, topology.distances.fast_arrays, start_v, int(window),
                    max(int(max_candidates), 1), order == "connectivity", bool(lookahead), _BUDGET, lorder, opos,
                    _STATS, np.inf if deadline is None else float(deadline))
    return finish(topology, gamma, slots, "greedy")
