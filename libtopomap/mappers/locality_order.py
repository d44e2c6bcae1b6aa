"""A locality order of a network's slot vertices (subtrees such as leaf switches and pods contiguous) and
the nearest free vertices in it: greedy's fallback when free vertices are far, and its cheap finish when
its deadline passes (Hoefler & Snir, ICS'11, Algorithm 1 is the construction these serve)."""

from __future__ import annotations

import heapq

import numpy as np

from .._jit import njit

__all__ = ["fill_rest", "nearest_free", "tree_order"]


@njit(cache=True)
def _find(parent, i):
    """Root of ``i`` in a union-find forest stored as parent pointers (with path compression)."""
    r = i
    while parent[r] != r:
        r = parent[r]
    while parent[i] != r:
        nxt = parent[i]
        parent[i] = r
        i = nxt
    return r


@njit(cache=True)
def nearest_free(anchor, opos, order, right, left, max_cand, cand):
    """Free vertices nearest to ``anchor`` in a locality order of the network (:func:`tree_order`;
    greedy's fallback when the free vertices are far): alternately the next free one after and before
    ``anchor``'s position, up to ``max_cand``; ``right``/``left`` are union-find "next free position"
    pointers, so each query is nearly constant time."""
    S = order.size
    p0 = opos[anchor] if opos[anchor] >= 0 else 0
    i = _find(right, p0)
    j = _find(left, p0)  # shifted: left index j is position j - 1
    ncand = 0
    while ncand < max_cand and (i < S or j > 0):
        if i < S:
            cand[ncand] = order[i]
            ncand += 1
            i = _find(right, i + 1)
        if ncand < max_cand and j > 0:
            cand[ncand] = order[j - 1]
            ncand += 1
            j = _find(left, j - 1)
    return ncand


@njit(cache=True)
def tree_order(h_ptr, h_idx, level, slots):
    """Locality order of the vertices with ``slots > 0``: depth-first preorder of a breadth-first
    spanning tree of H, given its levels ``level`` (hops from the root,
    :func:`libtopomap._kernels.bfs.multi_source_levels`; -1 for vertices it does not reach).

    A vertex's parent is its first neighbour (in link order) one level up; children are visited
    from the smallest subtree to the largest (index order on ties), so the order finishes what is
    near before it goes far.  Every subtree is one contiguous run: on a tree-like network the hosts
    under one leaf switch, then those of one pod, are neighbours in the order (a Cuthill-McKee
    order interleaves the subtrees of one level).  ``O(vertices + arcs)`` plus a sort of each
    vertex's children.
    """
    n = h_ptr.size - 1
    cptr = np.zeros(n + 1, np.int64)
    parent = np.full(n, -1, np.int64)
    depth = 0
    for v in range(n):
        depth = max(depth, level[v])
        if level[v] > 0:
            for a in range(h_ptr[v], h_ptr[v + 1]):
                if level[h_idx[a]] == level[v] - 1:
                    parent[v] = h_idx[a]
                    cptr[h_idx[a] + 1] += 1
                    break
    for v in range(n):
        cptr[v + 1] += cptr[v]
    fill = cptr[:-1].copy()
    child = np.empty(max(cptr[n], 1), np.int64)
    for v in range(n):
        if parent[v] >= 0:
            child[fill[parent[v]]] = v
            fill[parent[v]] += 1
    # subtree sizes, deepest level first (vertices bucketed by level)
    lptr = np.zeros(depth + 2, np.int64)
    for v in range(n):
        if level[v] >= 0:
            lptr[level[v] + 1] += 1
    for L in range(depth + 1):
        lptr[L + 1] += lptr[L]
    by_level = np.empty(lptr[depth + 1], np.int64)
    for v in range(n):
        if level[v] >= 0:
            by_level[lptr[level[v]]] = v
            lptr[level[v]] += 1
    size = np.ones(n, np.int64)
    for j in range(by_level.size - 1, -1, -1):
        v = by_level[j]
        if parent[v] >= 0:
            size[parent[v]] += size[v]
    for v in range(n):
        if cptr[v + 1] - cptr[v] > 1:
            kids = child[cptr[v]:cptr[v + 1]]
            child[cptr[v]:cptr[v + 1]] = kids[np.argsort(size[kids], kind="mergesort")]
    order = np.empty(n, np.int64)
    norder = 0
    stack = np.empty(n, np.int64)
    for r in range(n):
        if level[r] != 0:
            continue
        stack[0] = r
        top = 1
        while top > 0:
            top -= 1
            v = stack[top]
            if slots[v] > 0:
                order[norder] = v
                norder += 1
            for k in range(cptr[v + 1] - 1, cptr[v] - 1, -1):  # pushed reversed: popped in order
                stack[top] = child[k]
                top += 1
    return order[:norder]


@njit(cache=True)
def fill_rest(heap, heavy_order, g_ptr, g_idx, gamma, free, s, order, opos, right, left, cand):
    """Place the processes the greedy has not placed when its deadline passed, cheaply: a
    breadth-first growth over G from the queue's pending entries (then from the heaviest unplaced
    process), each process on the free vertex nearest to its anchor's in the locality order
    (:func:`nearest_free`), so neighbours stay near each other; no searches, no routing.
    ``O(P + edges + queue)``; returns the number of processes placed."""
    P = g_ptr.size - 1
    fq = np.empty(P, np.int64)  # FIFO of (process, anchor process); each process enters once
    fa = np.empty(P, np.int64)
    queued = np.zeros(P, np.bool_)
    head = 0
    tail = 0
    while len(heap) > 0:
        _negw, _c, m, anchor_p = heapq.heappop(heap)
        if gamma[m] < 0 and not queued[m]:
            queued[m] = True
            fq[tail] = m
            fa[tail] = anchor_p
            tail += 1
    n_placed = 0
    scan = 0
    hp = 0
    while True:
        if head == tail:
            while hp < P and (gamma[heavy_order[hp]] >= 0 or queued[heavy_order[hp]]):
                hp += 1
            if hp == P:
                break
            queued[heavy_order[hp]] = True
            fq[tail] = heavy_order[hp]
            fa[tail] = -1
            tail += 1
        m = fq[head]
        anchor_p = fa[head]
        head += 1
        if gamma[m] >= 0:
            continue
        anchor = s if anchor_p < 0 else gamma[anchor_p]
        if nearest_free(anchor, opos, order, right, left, 1, cand) > 0:
            v = cand[0]
        else:  # a free vertex the locality order does not hold (another component of H)
            while free[scan] <= 0:
                scan += 1
            v = scan
        gamma[m] = v
        free[v] -= 1
        if free[v] == 0 and opos[v] >= 0:
            right[opos[v]] = opos[v] + 1
            left[opos[v] + 1] = opos[v]
        s = v
        n_placed += 1
        for k in range(g_ptr[m], g_ptr[m + 1]):
            x = g_idx[k]
            if gamma[x] < 0 and not queued[x]:
                queued[x] = True
                fq[tail] = x
                fa[tail] = m
                tail += 1
    return n_placed
