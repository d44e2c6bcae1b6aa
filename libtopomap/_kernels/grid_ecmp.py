"""Exact ECMP link loads on tori, meshes and hypercubes in closed form (no search per source).

Used by :func:`libtopomap.metrics.link_traffic` when ``topology.distances.grid_shape`` is not None;
the comment below derives the method.
"""

import numba
import numpy as np
from .._jit import njit

__all__ = ["grid_arc_table", "grid_demand_costs", "grid_ecmp_traffic"]

# Exact ECMP (path-uniform) link loads on verified tori, meshes and hypercubes from the structure of
# their shortest paths, without a search per source (issue 11).  Used by
# :func:`libtopomap.metrics.link_traffic` when ``topology.distances.grid_shape`` is not None.
#
# On a grid the shortest paths from s to t are the monotone lattice paths in the box spanned by the
# per-dimension shortest displacements L_j (on a ring of k > 2 vertices the shorter way round; both
# ways when the displacement is exactly k/2, each orientation then carrying the same number of
# paths).  A path drawn uniformly among the multinomial(L) monotone paths passes box point x with
# probability prod_i binom(L_i, x_i) / binom(|L|, |x|) (paths through x over all paths: a product of
# multinomials that reduces to binomials) and steps from there along dimension i with probability
# (L_i - x_i) / (|L| - |x|); the flow on the arc leaving x along i is the weight times both, i.e.
# paths(s->u) * paths(u+e_i->t) / paths(s->t).  With at most three active dimensions (every demand
# on a 3-D torus) and |L| <= _CLOSED_MAX (so that no binomial overflows), these are products of
# per-dimension tables: no dependence between box points, no buffer.  Otherwise the weight is pushed
# forward through the box with the step probabilities (the same numbers, a point at a time).  Work per
# demand is O(box volume x active dimensions); a demand one hop long costs O(1).
# The two directions of a pair of vertices share their paths reversed, so ``s -> t`` and ``t -> s``
# are scored in one pass: loads go to a per-thread array indexed by (slot, core vertex, step) whose
# slot says where they end up (the arc, its reverse, or both, for a pair with equal weights both ways).
# A hypercube is the mesh 2 x 2 x ... x 2 (vertex id = coordinates as bits, most significant first).

_CLOSED_MAX = 500   # binom(500, 250) ~ 1e149: box tables stay far from overflow and underflow
_SLOT_ARC, _SLOT_REVERSE, _SLOT_BOTH = 0, 1, 2
_GRID_PART_BYTES = 256 << 20   # per-thread load arrays of grid_ecmp_traffic, all threads together

@njit(cache=True)
def grid_arc_table(indptr, indices, m, dims, strides):
    """CSR arc of each step on a grid: ``arcs[v, 2j]`` goes from core vertex ``v`` one step up
    dimension ``j`` (wrapping on a ring), ``arcs[v, 2j + 1]`` one step down; -1 where there is none.

    Core vertices are ``0..m-1`` with coordinates ``(v // strides[j]) % dims[j]`` (row-major); arcs to
    vertices ``>= m`` (attached hosts) are skipped.  On a 2-vertex dimension both columns name the one
    link.  ``O(m x degree x len(dims))``.
    """
    nd = dims.size
    table = np.full((m, 2 * nd), -1, np.int64)
    for v in range(m):
        for a in range(indptr[v], indptr[v + 1]):
            w = indices[a]
            if w >= m:
                continue
            for j in range(nd):
                k = dims[j]
                cv = (v // strides[j]) % k
                cw = (w // strides[j]) % k
                if cv != cw:
                    up = (cw - cv) % k
                    if up == 1:
                        table[v, 2 * j] = a
                    if up == k - 1:
                        table[v, 2 * j + 1] = a
                    break
    return table


@njit(cache=True)
def _grid_displacements(dims, wrap, strides, s, t, length, sign, dim, coord, tied):
    """Active dimensions of the demand ``s -> t``: writes ``length, sign, dim, coord`` (source
    coordinate) and ``tied`` (both ways round are shortest) per active dimension; returns
    ``(active, ties)``.  ``wrap[j]`` must be False on rings of 2 (one link, one way)."""
    na = 0
    nt = 0
    for j in range(dims.size):
        k = dims[j]
        cs = (s // strides[j]) % k
        ct = (t // strides[j]) % k
        if cs == ct:
            continue
        d = ct - cs
        tie = False
        if wrap[j]:
            up = d % k
            dn = k - up
            if up < dn:
                sg, ln = 1, up
            elif dn < up:
                sg, ln = -1, dn
            else:
                sg, ln = 1, up
                tie = True
                nt += 1
        elif d > 0:
            sg, ln = 1, d
        else:
            sg, ln = -1, -d
        length[na] = ln
        sign[na] = sg
        dim[na] = j
        coord[na] = cs
        tied[na] = tie
        na += 1
    return na, nt


@njit(cache=True)
def grid_demand_costs(dims, wrap, strides, src, dst):
    """Work of each demand in :func:`grid_ecmp_traffic`: box volume x active dimensions x
    orientations (used to split demands into chunks of equal work)."""
    nd = dims.size
    length = np.zeros(nd, np.int64)
    sign = np.zeros(nd, np.int64)
    dim = np.zeros(nd, np.int64)
    coord = np.zeros(nd, np.int64)
    tied = np.zeros(nd, np.bool_)
    cost = np.zeros(src.size, np.float64)
    for i in range(src.size):
        na, nt = _grid_displacements(dims, wrap, strides, src[i], dst[i], length, sign, dim, coord, tied)
        vol = 1.0
        for a in range(na):
            vol *= length[a] + 1
        cost[i] = 1.0 + vol * na * (1 << nt)
    return cost


@njit(cache=True)
def _grid_box_flow(acc, base1, base2, ratio, ncol, dims, strides, s, weight, na, length, sign, dim, coord, buf,
                   bstride, x, cur):
    """Push ``weight`` from ``s`` through the box of one orientation (see the section comment): any
    number of active dimensions, any length.  The load of the step from vertex ``v`` along column
    ``col`` of :func:`grid_arc_table` goes to ``acc[base1 + v * ncol + col]``, and ``ratio`` times it
    to ``acc[base2 + ...]`` when ``ratio != 0``."""
    total = 0
    for i in range(na):
        total += length[i]
    bstride[na - 1] = 1
    for i in range(na - 2, -1, -1):
        bstride[i] = bstride[i + 1] * (length[i + 1] + 1)
    vol = bstride[0] * (length[0] + 1)
    for b in range(vol):
        buf[b] = 0.0
    buf[0] = weight
    for i in range(na):
        x[i] = 0
        cur[i] = coord[i]
    v = s
    lev = 0
    for b in range(vol):
        if lev < total:
            r = buf[b] / (total - lev)
            for i in range(na):
                left = length[i] - x[i]
                if left > 0:
                    f = r * left
                    col = v * ncol + 2 * dim[i] + (0 if sign[i] > 0 else 1)
                    acc[base1 + col] += f
                    if ratio != 0.0:
                        acc[base2 + col] += f * ratio
                    buf[b + bstride[i]] += f
        # next box point (row-major odometer over the active dimensions), moving v along
        i = na - 1
        while i >= 0:
            j = dim[i]
            k = dims[j]
            if x[i] < length[i]:
                x[i] += 1
                lev += 1
                c = cur[i] + sign[i]
                if c == k:
                    c = 0
                elif c < 0:
                    c = k - 1
                v += (c - cur[i]) * strides[j]
                cur[i] = c
                break
            lev -= x[i]
            x[i] = 0
            v += (coord[i] - cur[i]) * strides[j]
            cur[i] = coord[i]
            i -= 1


@njit(cache=True)
def _grid_box_closed3(acc, base1, base2, ratio, ncol, dims, strides, s, weight, na, length, sign, dim, coord, off,
                      tab):
    """:func:`_grid_box_flow` for at most three active dimensions and ``|L| <= _CLOSED_MAX``, in
    closed form (see the section comment): the flow at each box point is a product of table entries,
    so the points are independent and nothing is carried from one to the next (about 3x faster)."""
    # pad to three dimensions of length 0 (one box point, no step)
    l0 = length[0]
    l1 = length[1] if na > 1 else 0
    l2 = length[2] if na > 2 else 0
    total = l0 + l1 + l2
    c0 = 2 * dim[0] + (0 if sign[0] > 0 else 1)
    c1 = 2 * dim[1] + (0 if sign[1] > 0 else 1) if na > 1 else 0
    c2 = 2 * dim[2] + (0 if sign[2] > 0 else 1) if na > 2 else 0
    # off[i, x]: vertex index change after x steps along active dimension i (wrapping);
    # tab[i, x] = binom(L_i, x); tab[3, n] = weight / (binom(|L|, n) (|L| - n))
    for i in range(3):
        li = length[i] if i < na else 0
        if i < na:
            j = dim[i]
            k = dims[j]
            for x in range(li + 1):
                c = (coord[i] + sign[i] * x) % k
                off[i, x] = (c - coord[i]) * strides[j]
        else:
            off[i, 0] = 0
        b = 1.0
        tab[i, 0] = 1.0
        for x in range(1, li + 1):
            b = b * (li - x + 1) / x
            tab[i, x] = b
    b = 1.0
    for n in range(total):
        tab[3, n] = weight / (b * (total - n))
        b = b * (total - n) / (n + 1)
    for x0 in range(l0 + 1):
        r0 = l0 - x0
        v0 = s + off[0, x0]
        a0 = tab[0, x0]
        for x1 in range(l1 + 1):
            r1 = l1 - x1
            v1 = v0 + off[1, x1]
            a01 = a0 * tab[1, x1]
            n0 = x0 + x1
            end = l2 if r0 + r1 == 0 else l2 + 1   # the far corner sends nothing
            if ratio == 0.0:
                for x2 in range(end):
                    r2 = l2 - x2
                    p = a01 * tab[2, x2] * tab[3, n0 + x2]
                    at = base1 + (v1 + off[2, x2]) * ncol
                    if r0 > 0:
                        acc[at + c0] += p * r0
                    if r1 > 0:
                        acc[at + c1] += p * r1
                    if r2 > 0:
                        acc[at + c2] += p * r2
            else:
                for x2 in range(end):
                    r2 = l2 - x2
                    p = a01 * tab[2, x2] * tab[3, n0 + x2]
                    v = (v1 + off[2, x2]) * ncol
                    if r0 > 0:
                        f = p * r0
                        acc[base1 + v + c0] += f
                        acc[base2 + v + c0] += f * ratio
                    if r1 > 0:
                        f = p * r1
                        acc[base1 + v + c1] += f
                        acc[base2 + v + c1] += f * ratio
                    if r2 > 0:
                        f = p * r2
                        acc[base1 + v + c2] += f
                        acc[base2 + v + c2] += f * ratio


@njit(cache=True)
def _grid_ecmp_range(dims, wrap, strides, src, dst, wf, wr, lo, hi, acc, slot_base, buf, maxlen):
    """Pairs ``lo..hi-1``: ``src -> dst`` with weight ``wf``, ``dst -> src`` with weight ``wr``."""
    nd = dims.size
    ncol = 2 * nd
    length = np.zeros(nd, np.int64)
    sign = np.zeros(nd, np.int64)
    dim = np.zeros(nd, np.int64)
    coord = np.zeros(nd, np.int64)
    tied = np.zeros(nd, np.bool_)
    bstride = np.zeros(nd, np.int64)
    x = np.zeros(nd, np.int64)
    cur = np.zeros(nd, np.int64)
    base = np.zeros(nd, np.int64)
    off = np.zeros((3, maxlen + 1), np.int64)
    tab = np.zeros((4, 3 * maxlen + 2), np.float64)
    for i in range(lo, hi):
        s = src[i]
        na, nt = _grid_displacements(dims, wrap, strides, s, dst[i], length, sign, dim, coord, tied)
        if na == 0:
            continue
        # where the loads of the box of s -> t go: both directions alike, one of them, or both scaled
        ratio = 0.0
        base2 = 0
        if wf[i] == wr[i]:
            weight, base1 = wf[i], slot_base[_SLOT_BOTH]
        elif wr[i] == 0.0:
            weight, base1 = wf[i], slot_base[_SLOT_ARC]
        elif wf[i] == 0.0:
            weight, base1 = wr[i], slot_base[_SLOT_REVERSE]
        else:
            weight, base1 = wf[i], slot_base[_SLOT_ARC]
            ratio, base2 = wr[i] / wf[i], slot_base[_SLOT_REVERSE]
        total = 0
        for a in range(na):
            total += length[a]
            base[a] = sign[a]
        closed = na <= 3 and total <= _CLOSED_MAX
        # both ways round a ring are shortest in the tied dimensions: 2**nt orientations with equally
        # many paths each, so each carries an equal share
        share = weight / (1 << nt)
        for o in range(1 << nt):
            bit = 0
            for a in range(na):
                if tied[a]:
                    sign[a] = -base[a] if (o >> bit) & 1 else base[a]
                    bit += 1
            if closed:
                _grid_box_closed3(acc, base1, base2, ratio, ncol, dims, strides, s, share, na, length, sign, dim,
                                  coord, off, tab)
            else:
                _grid_box_flow(acc, base1, base2, ratio, ncol, dims, strides, s, share, na, length, sign, dim,
                               coord, buf, bstride, x, cur)
        for a in range(na):
            sign[a] = base[a]


@njit(cache=True, parallel=True)
def _grid_ecmp_chunks(dims, wrap, strides, src, dst, wf, wr, bounds, parts, slot_base, maxvol, maxlen):
    for c in numba.prange(bounds.size - 1):
        buf = np.empty(maxvol, np.float64)
        _grid_ecmp_range(dims, wrap, strides, src, dst, wf, wr, bounds[c], bounds[c + 1], parts[c], slot_base, buf,
                         maxlen)
    return parts


@njit(cache=True)
def _grid_collect(parts, slot_base, arcs, arc_reverse, n_arcs):
    """Per-arc traffic from the per-thread (slot, vertex, step) loads of :func:`_grid_ecmp_chunks`."""
    m, ncol = arcs.shape
    out = np.zeros(n_arcs, np.float64)
    for c in range(parts.shape[0]):
        acc = parts[c]
        for v in range(m):
            for col in range(ncol):
                a = arcs[v, col]
                if a < 0:
                    continue
                k = v * ncol + col
                if slot_base[_SLOT_ARC] >= 0:
                    out[a] += acc[slot_base[_SLOT_ARC] + k]
                if slot_base[_SLOT_REVERSE] >= 0:
                    out[arc_reverse[a]] += acc[slot_base[_SLOT_REVERSE] + k]
                if slot_base[_SLOT_BOTH] >= 0:
                    x = acc[slot_base[_SLOT_BOTH] + k]
                    out[a] += x
                    out[arc_reverse[a]] += x
    return out


def grid_ecmp_traffic(arcs, arc_reverse, dims, wrap, src, dst, w, n_arcs):
    """Per-arc ECMP traffic of the demands ``src[i] -> dst[i]`` (weight ``w[i]``) between core
    vertices of a grid: path-uniform split over all shortest paths, as :func:`ecmp_traffic` computes
    by searches.

    Parameters
    ----------
    arcs : ndarray of int64, shape (m, 2 * len(dims))
        :func:`grid_arc_table` of the grid.
    arc_reverse : ndarray of int64
        The reverse of each CSR arc (``Topology.arc_reverse``).
    dims : ndarray of int64
        Ring or line length per dimension; core vertex ``v`` has row-major coordinates over ``dims``.
    wrap : ndarray of bool
        Whether dimension ``j`` is a ring (torus) rather than a line (mesh); a ring of 2 is one link
        and counts as a line.
    src, dst : ndarray of int64
        Core vertices (``0 <= v < prod(dims)``) of each demand.
    w : ndarray of float64
    n_arcs : int

    Returns
    -------
    ndarray of float64 per CSR arc.

    Notes
    -----
    Demands between the same two vertices, either way, are merged into one pair scored in one pass
    (the paths of ``t -> s`` are those of ``s -> t`` reversed).  Pairs are split into one chunk per
    numba thread by estimated work (box volume, from a regular sample of the pairs), each chunk
    adding into its own array of up to three loads per core vertex and step: ``O(threads x m x
    2 len(dims))`` memory, with fewer chunks than threads when that would pass
    ``_GRID_PART_BYTES`` (256 MiB) in all.
    """
    dims = np.ascontiguousarray(dims, np.int64)
    wrap = np.ascontiguousarray(np.asarray(wrap, np.bool_) & (dims > 2))
    nd = dims.size
    m = int(np.prod(dims))
    strides = np.ones(nd, np.int64)
    for j in range(nd - 2, -1, -1):
        strides[j] = strides[j + 1] * dims[j + 1]
    src = np.asarray(src, np.int64)
    dst = np.asarray(dst, np.int64)
    w = np.asarray(w, np.float64)
    if src.size == 0 or nd == 0:
        return np.zeros(n_arcs)
    # one pair per unordered {s, t}, s < t, sorted by s: weight s -> t and weight t -> s
    fwd = src < dst
    key, inv = np.unique(np.minimum(src, dst) * m + np.maximum(src, dst), return_inverse=True)
    wf = np.bincount(inv, weights=np.where(fwd, w, 0.0), minlength=key.size)
    wr = np.bincount(inv, weights=np.where(fwd, 0.0, w), minlength=key.size)
    src, dst = key // m, key % m
    # the slots in use (a symmetric graph needs only _SLOT_BOTH), each m x ncol long
    used = [None] * 3
    used[_SLOT_ARC] = bool(np.any((wf != wr) & (wf != 0.0)))
    used[_SLOT_REVERSE] = bool(np.any((wf != wr) & (wr != 0.0)))
    used[_SLOT_BOTH] = bool(np.any(wf == wr))
    slot_base = np.full(3, -1, np.int64)
    size = 0
    for k in range(3):
        if used[k]:
            slot_base[k] = size
            size += m * 2 * nd
    maxvol = 1
    for k, wr_ in zip(dims.tolist(), wrap.tolist()):
        maxvol *= k // 2 + 1 if wr_ else k
    maxlen = int(dims.max())
    nchunks = int(max(1, min(src.size, numba.get_num_threads(), _GRID_PART_BYTES // (8 * size))))
    # chunks of equal estimated work, from the costs of a regular sample of at most ~65,536 pairs
    step = max(1, src.size // 65536)
    sample = np.arange(0, src.size, step)
    cost = np.cumsum(grid_demand_costs(dims, wrap, strides, src[sample], dst[sample]))
    cuts = sample[np.minimum(np.searchsorted(cost, cost[-1] * np.arange(1, nchunks) / nchunks), sample.size - 1)]
    bounds = np.concatenate([[0], cuts, [src.size]]).astype(np.int64)
    parts = np.zeros((nchunks, size), np.float64)
    _grid_ecmp_chunks(dims, wrap, strides, src, dst, wf, wr, bounds, parts, slot_base, maxvol, maxlen)
    return _grid_collect(parts, slot_base, np.ascontiguousarray(arcs, np.int64),
                         np.ascontiguousarray(arc_reverse, np.int64), n_arcs)
