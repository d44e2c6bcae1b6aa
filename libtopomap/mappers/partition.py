"""METIS splits of a communication graph into parts of exact sizes, on raw CSR arrays.

METIS calls (:func:`metis_csr`), the exact-balance fix-up (:func:`balance_csr`), induced subgraphs
(:func:`subgraph`), swap refinements that keep part sizes (:func:`refine_parts`,
:func:`placed_refine`) and the split of :func:`~libtopomap.mappers.multisection.map_multisection`
(:func:`split`: several METIS tries, pairwise re-bisection, exact pairing on hosts of two slots).
"""

from __future__ import annotations

import numpy as np
import pymetis
import scipy.sparse as sp

from .._jit import njit

__all__ = ["metis_csr", "balance_csr", "subgraph", "int_weights", "refine_parts", "split", "placed_refine",
           "fill", "subset_arcs"]

#: Passes of pairwise re-bisection over the adjacent parts of a split (stops early without gain).
PAIR_PASSES = 2

#: Smallest mean part size of a split whose pairs of parts are re-split.
PAIR_MIN_SIZE = 64

#: Largest split (processes) that gets the extra effort: ``tries`` METIS runs and the pairwise
#: re-bisection; larger splits get one METIS run.  The top splits of a machine with tens of
#: thousands of processes cost most per run and gain least from a second one (0.3-1 % of
#: hop-bytes on the 32,768-process fat tree, for most of the construction time).
EFFORT_MAX = 8192

#: Pairs of adjacent parts re-split per pass, per part of the split.
PAIRS_PER_PART = 8

#: Largest split onto hosts of two slots that gets the exact pairing (:func:`_pair_parts`, a
#: maximum-weight matching by networkx's blossom algorithm, ``O(n^3)`` in pure Python: 10 ms for
#: the 16 processes under a leaf switch of an 8-ary fat tree, 0.1 s for 256) when the METIS split
#: leaves a pair that does not communicate.
PAIR_EXACT_MAX = 256

#: Rounds of the exact-balance swap refinement per split.
REFINE_ROUNDS = 8


def int_weights(w, scale=1000):
    """Positive integer edge weights for METIS, proportional to ``w`` (at least 1)."""
    w = np.asarray(w, dtype=np.float64)
    if w.size == 0:
        return np.zeros(0, np.int64)
    mx = w.max()
    if mx <= 0:
        return np.ones(w.size, np.int64)
    return np.maximum(1, np.rint(w * (scale / mx))).astype(np.int64)


def metis_csr(indptr, indices, data, nparts, vweights, tpwgts, seed, *, bisection=None):
    """:func:`~libtopomap.mappers.recursive.metis_parts` on raw CSR arrays (sorted column indices).

    ``bisection``: METIS recursive bisection (True) or k-way (False); default pymetis's choice
    (recursive bisection up to 8 parts)."""
    n = indptr.size - 1
    if nparts <= 1 or n == 0:
        return np.zeros(n, np.int64)
    if n <= nparts:
        return np.arange(n, dtype=np.int64) % nparts
    opts = pymetis.Options()
    opts.seed = 0 if seed is None else int(seed) % (2**31 - 1)
    kw = {}
    if vweights is not None:
        kw["vweights"] = np.ascontiguousarray(vweights, dtype=np.int64)
    if tpwgts is not None:
        kw["tpwgts"] = [float(x) for x in tpwgts]
    _cut, member = pymetis.part_graph(
        nparts, adjacency=pymetis.CSRAdjacency(np.ascontiguousarray(indptr, dtype=np.int64),
                                               np.ascontiguousarray(indices, dtype=np.int64)),
        eweights=int_weights(data) if data.size else None, options=opts, recursive=bisection, **kw)
    return np.asarray(member, dtype=np.int64)


@njit(cache=True)
def subgraph(indptr, indices, data, verts, pos):
    """CSR of the subgraph induced by ``verts`` (local index = position in ``verts``), column
    indices sorted per row, parallel entries kept: what ``adj[verts][:, verts]`` plus
    ``sort_indices`` gives, in ``O(sum of the degrees of verts)``.  ``pos`` is a scratch array of
    -1 over all vertices, restored on return."""
    k = verts.size
    for i in range(k):
        pos[verts[i]] = i
    ptr = np.zeros(k + 1, np.int64)
    for i in range(k):
        v = verts[i]
        c = 0
        for a in range(indptr[v], indptr[v + 1]):
            if pos[indices[a]] >= 0:
                c += 1
        ptr[i + 1] = ptr[i] + c
    idx = np.empty(ptr[k], np.int64)
    val = np.empty(ptr[k], data.dtype)
    for i in range(k):
        v = verts[i]
        j = ptr[i]
        for a in range(indptr[v], indptr[v + 1]):
            w = pos[indices[a]]
            if w >= 0:
                # insertion into the sorted row (rows are short); equal columns keep arc order
                t = j
                while t > ptr[i] and idx[t - 1] > w:
                    idx[t] = idx[t - 1]
                    val[t] = val[t - 1]
                    t -= 1
                idx[t] = w
                val[t] = data[a]
                j += 1
    for i in range(k):
        pos[verts[i]] = -1
    return ptr, idx, val


def balance_csr(indptr, indices, data, parts, sizes, count):
    """:func:`~libtopomap.mappers.recursive.balance_parts` on raw CSR arrays; ``parts`` is changed
    in place and returned."""
    n = indptr.size - 1
    row = np.repeat(np.arange(n), np.diff(indptr))
    same = parts[row] == parts[indices]
    internal = np.bincount(row, weights=np.where(same, data, -data), minlength=n)
    # every vertex by (part, internal, index): the members of an overfull part in the order they leave
    order = np.lexsort((np.arange(n), internal, parts)).astype(np.int64)
    start = np.zeros(sizes.size + 1, np.int64)
    np.cumsum(np.bincount(parts, minlength=sizes.size), out=start[1:])
    _balance_moves(indptr.astype(np.int64), indices.astype(np.int64), data.astype(np.float64), parts,
                   sizes.astype(np.int64), count.astype(np.int64), order, start)
    return parts


@njit(cache=True)
def _balance_moves(indptr, indices, data, parts, sizes, count, order, start):
    """The moves of :func:`~libtopomap.mappers.recursive.balance_parts`: overfull parts in index
    order, their least internally connected members first, each to the short part
    (``count < sizes``) it has the most edge weight to (ties and no weight at all: the short part of
    smallest index).  Work: the degrees of the moved vertices (a touched list clears the per-part
    sums)."""
    k = sizes.size
    acc = np.zeros(k)
    touched = np.empty(indices.size + 1, np.int64)
    first_short = 0
    for part in range(k):
        excess = count[part] - sizes[part]
        if excess <= 0:
            continue
        for r in range(excess):
            v = order[start[part] + r]
            while first_short < k and count[first_short] >= sizes[first_short]:
                first_short += 1
            nt = 0
            for a in range(indptr[v], indptr[v + 1]):
                p = parts[indices[a]]
                if count[p] < sizes[p]:
                    if acc[p] == 0.0:
                        touched[nt] = p
                        nt += 1
                    acc[p] += data[a]
            dest = first_short
            bestval = 0.0
            for i in range(nt):
                p = touched[i]
                if acc[p] > bestval or (acc[p] == bestval and bestval > 0.0 and p < dest):
                    bestval = acc[p]
                    dest = p
            for i in range(nt):
                acc[touched[i]] = 0.0
            parts[v] = dest
            count[part] -= 1
            count[dest] += 1



@njit(cache=True)
def _gain(ptr, idx, val, parts, v, to):
    g = 0.0
    own = parts[v]
    for a in range(ptr[v], ptr[v + 1]):
        p = parts[idx[a]]
        if p == to:
            g += val[a]
        elif p == own:
            g -= val[a]
    return g


@njit(cache=True)
def _weight(ptr, idx, val, u, v):
    w = 0.0
    for a in range(ptr[u], ptr[u + 1]):
        if idx[a] == v:
            w += val[a]
    return w


@njit(cache=True)
def _swap_refine(ptr, idx, val, parts, k, rounds):
    """Pairwise swaps between parts that lower the cut; part sizes never change.

    Every round finds each vertex's best other part (most edge weight to it minus to its own
    part), then for every pair of parts ``(A, B)`` walks the vertices of ``A`` that want ``B`` and
    those of ``B`` that want ``A`` by decreasing gain and swaps pairs while the exact combined gain
    (recomputed on the current parts, minus twice their common edge) is positive.  Returns the cut
    weight removed (each edge counted once per direction stored)."""
    n = ptr.size - 1
    conn = np.zeros(k)
    touched = np.empty(k, np.int64)
    gain = np.empty(n)
    want = np.empty(n, np.int64)
    total = 0.0
    for _ in range(rounds):
        nc = 0
        for v in range(n):
            nt = 0
            for a in range(ptr[v], ptr[v + 1]):
                p = parts[idx[a]]
                if conn[p] == 0.0:
                    touched[nt] = p
                    nt += 1
                conn[p] += val[a]
            own = conn[parts[v]]
            bg = -np.inf
            bt = -1
            for i in range(nt):
                p = touched[i]
                if p != parts[v] and conn[p] - own > bg:
                    bg = conn[p] - own
                    bt = p
            for i in range(nt):
                conn[touched[i]] = 0.0
            want[v] = bt
            gain[v] = bg
            if bt >= 0:
                nc += 1
        if nc == 0:
            break
        cand = np.empty(nc, np.int64)
        j = 0
        for v in range(n):
            if want[v] >= 0:
                cand[j] = v
                j += 1
        o1 = np.argsort(-gain[cand], kind="mergesort")
        cand = cand[o1]
        key = np.empty(nc, np.int64)
        for i in range(nc):
            key[i] = parts[cand[i]] * k + want[cand[i]]
        o2 = np.argsort(key, kind="mergesort")
        cand = cand[o2]
        key = key[o2]
        start = np.searchsorted(key, np.arange(k * k + 1))
        improved = 0.0
        for A in range(k):
            for B in range(A + 1, k):
                i, i_end = start[A * k + B], start[A * k + B + 1]
                j, j_end = start[B * k + A], start[B * k + A + 1]
                while i < i_end and j < j_end:
                    u = cand[i]
                    v = cand[j]
                    if parts[u] != A:
                        i += 1
                        continue
                    if parts[v] != B:
                        j += 1
                        continue
                    d = _gain(ptr, idx, val, parts, u, B) + _gain(ptr, idx, val, parts, v, A) \
                        - 2.0 * _weight(ptr, idx, val, u, v)
                    if d <= 1e-12:
                        break
                    parts[u] = B
                    parts[v] = A
                    improved += d
                    i += 1
                    j += 1
        total += improved
        if improved <= 1e-12:
            break
    return total


@njit(cache=True)
def _placed_swap_refine(ptr, idx, val, side, ext, cutw, rounds):
    """Pairwise swaps between the two sides of a placed bisection that lower ``cutw x cut + sum of
    the external costs``; ``ext[v]`` is what process ``v`` costs more on side 1 than on side 0
    (its traffic to processes outside the split, times the difference of the distances to them).
    Sizes never change.  Returns the cost removed."""
    n = ptr.size - 1
    ben = np.empty(n)
    total = 0.0
    for _ in range(rounds):
        n0 = 0
        for v in range(n):
            g = _gain(ptr, idx, val, side, v, 1 - side[v])
            ben[v] = cutw * g + (-ext[v] if side[v] == 0 else ext[v])
            if side[v] == 0:
                n0 += 1
        a = np.empty(n0, np.int64)
        b = np.empty(n - n0, np.int64)
        i0 = 0
        i1 = 0
        for v in range(n):
            if side[v] == 0:
                a[i0] = v
                i0 += 1
            else:
                b[i1] = v
                i1 += 1
        a = a[np.argsort(-ben[a], kind="mergesort")]
        b = b[np.argsort(-ben[b], kind="mergesort")]
        improved = 0.0
        i = 0
        j = 0
        while i < a.size and j < b.size:
            u = a[i]
            v = b[j]
            d = cutw * (_gain(ptr, idx, val, side, u, 1) + _gain(ptr, idx, val, side, v, 0)
                        - 2.0 * _weight(ptr, idx, val, u, v)) - ext[u] + ext[v]
            if d <= 1e-9:
                break
            side[u] = 1
            side[v] = 0
            improved += d
            i += 1
            j += 1
        total += improved
        if improved <= 1e-9:
            break
    return total


def placed_refine(topology, h, kids, child_of, procs, sp_, si, sv, loc, sym, inside):
    """:func:`_placed_swap_refine` of a split into two children of a grid hierarchy: the cut counts
    with the distance between the children's representatives, the traffic to processes outside the
    split with the distances from each child's representative to where they are now."""
    s, nb, w = subset_arcs(sym, procs, inside)
    reps = h.rep[kids]
    o = topology.distances
    ext = np.zeros(procs.size)
    if nb.size:
        where = loc[nb]
        d1 = o.pairs(np.full(where.size, reps[1]), where)
        d0 = o.pairs(np.full(where.size, reps[0]), where)
        ext = np.bincount(s, weights=w * (d1 - d0), minlength=procs.size)
    cutw = float(max(o.pairs(reps[:1], reps[1:2])[0], 1))
    side = child_of.astype(np.int64).copy()
    _placed_swap_refine(sp_, si, sv, side, ext, cutw, REFINE_ROUNDS)
    return side


def refine_parts(adj, parts, *, rounds=REFINE_ROUNDS):
    """Lower the cut of a partition by swapping vertices between parts (sizes stay exact).

    Parameters
    ----------
    adj : scipy.sparse matrix, symmetric, weights = edge weights
    parts : array_like of int
    rounds : int

    Returns
    -------
    numpy.ndarray of int64
        The refined parts; the cut is never larger than that of ``parts``.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> path = sp.csr_matrix(([1.0] * 6, ([0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2])), shape=(4, 4))
    >>> refine_parts(path, [0, 1, 0, 1]).tolist()
    [0, 0, 1, 1]
    """
    a = sp.csr_matrix(adj)
    a.sort_indices()
    p = np.asarray(parts, np.int64).copy()
    k = int(p.max()) + 1 if p.size else 1
    _swap_refine(a.indptr.astype(np.int64), a.indices.astype(np.int64), a.data.astype(np.float64), p, k,
                 int(rounds))
    return p


def _cut(ptr, idx, val, parts):
    row = np.repeat(np.arange(ptr.size - 1), np.diff(ptr))
    return float(val[parts[row] != parts[idx]].sum())


def split(ptr, idx, val, targets, seed, tries, hosts=False):
    """Parts of exactly ``targets[i]`` vertices with a small cut: METIS recursive bisection with
    target weights (``tries`` seeds, one above :data:`EFFORT_MAX` vertices), the exact-balance fix-up of
    :func:`~libtopomap.mappers.recursive.balance_parts`,
    then :func:`_swap_refine`; the smallest cut wins (ties: the first try).  A split onto ``hosts``
    into parts of two that leaves a pair without traffic inside (a host whose link carries all of
    both processes' traffic) is replaced by the exact pairing (:func:`_pair_parts`, up to
    :data:`PAIR_EXACT_MAX` processes) when that cuts less."""
    n = ptr.size - 1
    k = targets.size
    if n > EFFORT_MAX:
        tries = 1
    if k == 1:
        return np.zeros(n, np.int64)
    if ptr[-1] == 0 or n == k:
        return np.repeat(np.arange(k, dtype=np.int64), targets)
    frac = targets / n
    best, best_cut = None, np.inf
    for t in range(tries):
        parts = metis_csr(ptr, idx, val, k, None, frac, seed + t, bisection=True)
        count = np.bincount(parts, minlength=k)
        if not np.array_equal(count, targets):
            parts = balance_csr(ptr, idx, val, parts, targets, count)
        _swap_refine(ptr, idx, val, parts, k, REFINE_ROUNDS)
        c = _cut(ptr, idx, val, parts)
        if c < best_cut:
            best, best_cut = parts, c
    if k > 2 and PAIR_MIN_SIZE * k <= n <= EFFORT_MAX:
        for p in range(PAIR_PASSES):
            if not _pairwise(ptr, idx, val, best, k, seed + 31 * p):
                break
    if hosts and n <= PAIR_EXACT_MAX and np.all(targets == 2) and _lonely_pair(ptr, idx, val, best):
        pairs = _pair_parts(ptr, idx, val)
        if _cut(ptr, idx, val, pairs) < _cut(ptr, idx, val, best):
            best = pairs
    return best


def _pair_parts(ptr, idx, val):
    """Parts of exactly two processes with the smallest cut: the pairs of a maximum-weight matching.

    The cut of a split into pairs is the total weight minus the weight inside the pairs, so the
    pairs of a maximum-weight matching (Edmonds' blossom algorithm,
    :func:`networkx.max_weight_matching`, ``O(n^3)``) give the smallest cut; processes left
    unmatched are paired in index order.  ``n`` must be even.  Returns the part of every process
    (``0 .. n/2 - 1``, numbered by the smaller process of each pair)."""
    import networkx as nx

    n = ptr.size - 1
    a = sp.csr_matrix((val, idx, ptr), shape=(n, n))
    u = sp.triu(a + a.T, k=1).tocoo()  # both directions and parallel entries add up
    gx = nx.Graph()
    gx.add_nodes_from(range(n))
    gx.add_weighted_edges_from((x, y, z) for x, y, z in zip(u.row.tolist(), u.col.tolist(), u.data.tolist())
                               if z > 0)
    mate = np.full(n, -1, np.int64)
    for x, y in nx.max_weight_matching(gx):
        mate[x], mate[y] = y, x
    left = np.flatnonzero(mate < 0)
    mate[left[0::2]], mate[left[1::2]] = left[1::2], left[0::2]
    first = np.minimum(np.arange(n), mate)
    return np.unique(first, return_inverse=True)[1].astype(np.int64)


def _lonely_pair(ptr, idx, val, parts):
    """Whether some part of two processes carries no weight inside (its host link carries all of
    both processes' traffic)."""
    n = ptr.size - 1
    row = np.repeat(np.arange(n), np.diff(ptr))
    inside = np.bincount(parts[row], weights=np.where(parts[row] == parts[idx], val, 0.0), minlength=n // 2)
    return bool(np.any(inside <= 0))


def _pairwise(ptr, idx, val, parts, k, seed):
    """Re-split the union of two adjacent parts by METIS bisection into their two exact sizes and
    keep the new split when it cuts less between them; the ``PAIRS_PER_PART * k`` pairs with the
    heaviest shared cut, heaviest first.
    ``parts`` is changed in place; returns whether any split improved."""
    n = ptr.size - 1
    changed = False
    row = np.repeat(np.arange(n), np.diff(ptr))
    pa, pb = parts[row], parts[idx]
    m = pa < pb
    between = np.bincount(pa[m] * k + pb[m], weights=val[m], minlength=k * k)
    pos = np.full(n, -1, np.int64)
    for key in np.argsort(-between, kind="stable")[:PAIRS_PER_PART * k].tolist():
        if between[key] <= 0:
            break
        a, b = divmod(key, k)
        members = np.flatnonzero((parts == a) | (parts == b))
        sp_, si, sv = subgraph(ptr, idx, val, members, pos)
        old = (parts[members] == b).astype(np.int64)
        sizes = np.array([int((old == 0).sum()), int((old == 1).sum())], np.int64)
        best, best_cut = old, _cut(sp_, si, sv, old)
        side = metis_csr(sp_, si, sv, 2, None, sizes / members.size, seed + 7919)
        count = np.bincount(side, minlength=2)
        if not np.array_equal(count, sizes):
            side = balance_csr(sp_, si, sv, side, sizes, count)
        _swap_refine(sp_, si, sv, side, 2, REFINE_ROUNDS)
        if _cut(sp_, si, sv, side) < best_cut:
            best, changed = side, True
        parts[members] = np.where(best == 0, a, b)
    return changed


def fill(caps, n):
    """Processes per child: all when the slots are all needed, else the largest children first
    (ties: child order) filled completely, so a small job stays in few subtrees."""
    caps = np.asarray(caps, np.int64)
    if int(caps.sum()) == n:
        return caps.copy()
    out = np.zeros_like(caps)
    left = n
    for i in np.argsort(-caps, kind="stable").tolist():
        take = min(int(caps[i]), left)
        out[i] = take
        left -= take
        if left == 0:
            break
    return out


def subset_arcs(sym, procs, inside):
    """The arcs of ``sym`` from the processes ``procs`` to processes outside them (``inside`` marks
    the processes of the subset): ``(src, nb, w)``, the position in ``procs`` of each arc's source,
    its other end (a process) and its weight (``sym.wsum``)."""
    ptr, idx = sym.indptr, sym.indices
    deg = ptr[procs + 1] - ptr[procs]
    src_local = np.repeat(np.arange(procs.size), deg)
    first = np.cumsum(deg) - deg
    arcs = np.arange(int(deg.sum()), dtype=np.int64) + np.repeat(ptr[procs] - first, deg)
    nb = idx[arcs]
    ext = ~inside[nb]
    return src_local[ext], nb[ext], sym.wsum[arcs[ext]]
