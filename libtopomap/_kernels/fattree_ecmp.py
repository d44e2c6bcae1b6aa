"""Exact ECMP link loads on k-ary n-trees in closed form (no search per source).

Used by :func:`libtopomap.metrics.link_traffic` and the local-search engine; the comment below
derives the method.
"""

import numba
import numpy as np
from .._jit import njit

__all__ = ["fattree_up_arcs", "fattree_ecmp_traffic"]

# Exact ECMP (path-uniform) link loads on a k-ary n-tree (libtopomap.fattree: hosts 0..k^n - 1,
# then n levels of k^(n-1) switches, level 0 the top; switch <w, l> joined to <w', l+1> when the
# (n-1)-digit words w, w' agree except in digit l, digit 0 the most significant; host p under leaf
# <p // k, n-1>).  Every shortest path between hosts s, t under different leaves goes up to level d,
# the first digit where their leaves' words differ, and down: up, digits n-2 .. d are free (k ways
# each), down they are set to t's, one way.  So the k^(n-1-d) paths carry w / k^(n-1-d) each, and
# the arc from level l + 1 up to level l, like the arc from level l down to level l + 1, carries
# w / k^(n-1-l) on each of the k^(n-1-l) arcs used (issue 11: no search per source).


def fattree_up_arcs(indptr, indices, k, n):
    """The CSR arcs of a k-ary n-tree by structure, or None when the CSR is not one.

    Returns
    -------
    up : numpy.ndarray of int64, shape (n k^(n-1), k)
        ``up[l * k^(n-1) + w, j]``: the arc from switch ``<w, l>`` (``l >= 1``) up to the switch of
        level ``l - 1`` whose digit ``l - 1`` is ``j``; row ``w`` of level 0 is -1.
    host_up : numpy.ndarray of int64, shape (k^n,)
        The arc from each host to its leaf switch.
    """
    k, n = int(k), int(n)
    H, S = k ** n, k ** (n - 1)
    indptr = np.asarray(indptr, np.int64)
    indices = np.asarray(indices, np.int64)
    if indptr.size != H + n * S + 1 or indices.size != 2 * (H + (n - 1) * S * k):
        return None
    src = np.repeat(np.arange(H + n * S, dtype=np.int64), np.diff(indptr))
    # hosts: one arc each, to their leaf
    if not np.array_equal(np.diff(indptr[:H + 1]), np.ones(H, np.int64)):
        return None
    host_up = indptr[:H].copy()
    if not np.array_equal(indices[host_up], H + (n - 1) * S + np.arange(H) // k):
        return None
    up = np.full((n * S, k), -1, np.int64)
    a = np.flatnonzero((src >= H) & (indices >= H))
    cl, cw = (src[a] - H) // S, (src[a] - H) % S
    pl, pw = (indices[a] - H) // S, (indices[a] - H) % S
    a, cl, cw, pl, pw = a[pl == cl - 1], cl[pl == cl - 1], cw[pl == cl - 1], pl[pl == cl - 1], pw[pl == cl - 1]
    if a.size != (n - 1) * S * k:
        return None
    place = k ** (n - 2 - pl)
    j = (pw // place) % k
    if not np.array_equal(pw - j * place, cw - ((cw // place) % k) * place):  # words differ only in digit l
        return None
    up[cl * S + cw, j] = a
    if (up[S:] < 0).any():
        return None
    return up, host_up


@njit(cache=True)
def _fattree_gather(src, dst, wf, wr, k, n, host_up, arc_reverse, traffic, up_w, down_w):
    """Host links of every demand into ``traffic``; the rest summed per (source leaf, digit) in
    ``up_w`` and per (target leaf, digit) in ``down_w``: the switch-level loads of a demand depend only
    on its source leaf (up), its target leaf (down) and the first digit ``d`` where they differ."""
    S = k ** (n - 1)
    for e in range(src.size):
        for side in range(2):
            s, t, w = (src[e], dst[e], wf[e]) if side == 0 else (dst[e], src[e], wr[e])
            if s == t or w == 0.0:
                continue
            traffic[host_up[s]] += w
            traffic[arc_reverse[host_up[t]]] += w
            ws = s // k
            wt = t // k
            if ws == wt:
                continue
            d = 0
            place = S // k
            while (ws // place) % k == (wt // place) % k:
                d += 1
                place //= k
            up_w[ws, d] += w
            down_w[wt, d] += w


@njit(cache=True)
def _fattree_spread(leaf, d, w_up, w_down, k, n, up, arc_reverse, traffic):
    """Switch-level ECMP loads of the demands summed in ``w_up`` (from leaf ``leaf``) and ``w_down``
    (into it) whose leaves first differ in digit ``d``: up from level ``l + 1`` to ``l`` for
    ``l = n-2 .. d``, split evenly over the switches that keep the leaf's digits ``0..l``; down
    symmetrically, the arc at level ``l`` setting digit ``l`` to the target's."""
    S = k ** (n - 1)
    if w_up != 0.0:
        span = 1
        for l in range(n - 2, d - 1, -1):  # noqa: E741 (level l, as in the docstring)
            f = w_up / (span * k)
            base = (leaf // span) * span
            row0 = (l + 1) * S
            for x in range(span):
                r = row0 + base + x
                for j in range(k):
                    traffic[up[r, j]] += f
            span *= k
    if w_down != 0.0:
        span = S
        for _ in range(d):
            span //= k
        for l in range(d, n - 1):  # noqa: E741 (level l, as in the docstring)
            f = w_down / span
            place = span // k  # of digit l
            tl = (leaf // place) % k
            base = (leaf // span) * span
            row0 = (l + 1) * S
            for x in range(span):
                p = base + x
                pl = (p // place) % k
                child = p + (tl - pl) * place
                traffic[arc_reverse[up[row0 + child, pl]]] += f
            span //= k


@njit(cache=True, parallel=True)
def _fattree_chunks(up_w, down_w, k, n, up, arc_reverse, parts, nchunks):
    S = up_w.shape[0]
    for c in numba.prange(nchunks):
        for leaf in range(c * S // nchunks, (c + 1) * S // nchunks):
            for d in range(n - 1):
                _fattree_spread(leaf, d, up_w[leaf, d], down_w[leaf, d], k, n, up, arc_reverse, parts[c])
    return parts


def fattree_ecmp_traffic(arcs, arc_reverse, k, n, src, dst, wf, wr, n_arcs):
    """ECMP traffic per arc of the demands ``src[e] -> dst[e]`` (weight ``wf[e]``) and back
    (``wr[e]``) between hosts of a k-ary n-tree, in closed form (no search).

    ``arcs`` is :func:`fattree_up_arcs`'s result.  The switch-level loads of a demand depend only on
    its source leaf, its target leaf and the first digit ``d`` where they differ, so the demands are
    first summed per (leaf, ``d``) (``O(1)`` each), then each sum is spread over the arcs its paths
    use (``O(k^(n-1-d))``): work ``O(demands + leaves x n x k^(n-1))``, whatever the placement;
    memory ``O(threads x arcs)``.
    Equal to :func:`ecmp_traffic` up to float rounding (exactly when ``k`` is a power of two).

    Examples
    --------
    >>> import libtopomap as ltm
    >>> t = ltm.fattree(2, 2)
    >>> arcs = fattree_up_arcs(t.indptr, t.indices, 2, 2)
    >>> tr = fattree_ecmp_traffic(arcs, t.arc_reverse, 2, 2, [0], [3], [1.0], [0.0], t.n_arcs)
    >>> sorted(tr[tr > 0].tolist())
    [0.5, 0.5, 0.5, 0.5, 1.0, 1.0]
    """
    up, host_up = arcs
    k, n = int(k), int(n)
    src, dst, arc_reverse = (np.ascontiguousarray(x, np.int64) for x in (src, dst, arc_reverse))
    wf, wr = (np.ascontiguousarray(x, np.float64) for x in (wf, wr))
    traffic = np.zeros(n_arcs, np.float64)
    if not src.size:
        return traffic
    S = k ** (n - 1)
    up_w = np.zeros((S, max(n - 1, 1)), np.float64)
    down_w = np.zeros_like(up_w)
    _fattree_gather(src, dst, wf, wr, k, n, host_up, arc_reverse, traffic, up_w, down_w)
    if n < 2:
        return traffic
    nchunks = int(max(1, min(S, numba.get_num_threads())))
    parts = np.zeros((nchunks, n_arcs), np.float64)
    _fattree_chunks(up_w, down_w, k, n, up, arc_reverse, parts, nchunks)
    return traffic + parts.sum(axis=0)
