"""Dense communication graphs of real shape for the dense-graph benchmark and budget test (issue 29).

Two recipes besides the uniform ``random:P:DEGREE:SEED`` graphs of :func:`libtopomap.load_graph`:

* :func:`amg_graph`, an algebraic-multigrid-like graph: the fine level's 27-point halo exchange on a
  3-D grid of ranks plus the wider, lighter exchanges of the coarse levels and a gather of the coarsest
  level onto rank 0 (the shape of a BoomerAMG solve's graph as mpiP records it);
* :func:`power_law_graph`, a skewed-degree graph (Chung-Lu model): a few ranks talk to nearly every
  rank, most to a few, like the row pattern of a sparse matrix with dense rows or a master-worker code.

Both are deterministic for a seed and return a symmetric :class:`libtopomap.CommGraph`.
"""

from __future__ import annotations

import itertools

import numpy as np

from libtopomap.commgraph import CommGraph

__all__ = ["amg_graph", "power_law_graph", "dense_graph"]


def amg_graph(dims=(10, 10, 10), *, radii=(2, 3, 6), face=100.0):
    """An algebraic-multigrid-like communication graph on a non-periodic grid of ranks ``dims``.

    Recipe: level 0 is the 27-point stencil's halo exchange of a subdomain with ``face`` points per
    face (face neighbours ``face``, edge neighbours ``sqrt(face)``, corner neighbours 1).  Coarse level
    ``l = 1, 2, ...`` (Galerkin operators widen, each rank keeps fewer rows) exchanges with every rank
    within Euclidean distance ``radii[l - 1]`` on the grid, at ``face / 8**l`` (an eighth of the rows
    per level).  The coarsest level is gathered onto rank 0 and scattered back (weight 1 each way).
    Volumes of the levels add up.  With the defaults on 10x10x10 ranks the mean degree is 420 (the
    issue's real AMG graph: 440), and rank 0 talks to all 999 others.

    Parameters
    ----------
    dims : tuple of int
        Grid of ranks (row-major rank numbering).
    radii : tuple of float
        Reach of each coarse level, in ranks.
    face : float
        Fine-level volume to a face neighbour.

    Returns
    -------
    CommGraph
    """
    dims = tuple(int(d) for d in dims)
    n = int(np.prod(dims))
    coords = np.stack(np.unravel_index(np.arange(n), dims), axis=1)
    reach = int(np.ceil(max(radii, default=1)))
    src, dst, w = [], [], []
    for off in itertools.product(range(-reach, reach + 1), repeat=len(dims)):
        off = np.array(off)
        if not off.any():
            continue
        nb = coords + off
        ok = np.all((nb >= 0) & (nb < np.array(dims)), axis=1)
        u = np.flatnonzero(ok)
        v = np.ravel_multi_index(tuple(nb[ok].T), dims)
        weight = 0.0
        cheb, eucl = int(np.abs(off).max()), float(np.sqrt((off * off).sum()))
        if cheb == 1:  # fine level: face, edge, corner neighbours
            weight += (face, np.sqrt(face), 1.0)[int(np.abs(off).sum()) - 1]
        for level, r in enumerate(radii, start=1):
            if eucl <= r:
                weight += face / 8.0 ** level
        if weight > 0:
            src.append(u)
            dst.append(v)
            w.append(np.full(u.size, weight))
    others = np.arange(1, n)
    src += [others, np.zeros(n - 1, np.int64)]
    dst += [np.zeros(n - 1, np.int64), others]
    w += [np.ones(n - 1), np.ones(n - 1)]
    return CommGraph(n, np.concatenate(src), np.concatenate(dst), np.concatenate(w))


def power_law_graph(n, mean_degree, *, exponent=2.1, hubs=4, seed=0):
    """A skewed-degree symmetric graph: the Chung-Lu model with power-law expected degrees.

    Rank ``i`` gets the weight ``(i + 1) ** (-1 / (exponent - 1))`` scaled so that the mean expected
    degree is ``mean_degree``; the pair ``{u, v}`` is an edge with probability ``min(1, d_u d_v / sum d)``
    (F. Chung and L. Lu, "Connected components in random graphs with given expected degree
    sequences", Annals of Combinatorics 6, 2002); the ``hubs`` heaviest ranks also talk to every rank
    (masters of a master-worker code, dense rows of a sparse matrix), which the model's cap at
    probability 1 alone does not give.  Ranks are then shuffled, so the hubs are not ranks
    0, 1, ...; unit volume both ways.  Sampled one row at a time (``O(n)`` memory per row, ``n**2 / 2``
    draws: meant for benchmark sizes, a few thousand ranks).

    Returns
    -------
    CommGraph
    """
    rng = np.random.default_rng(seed)
    d = np.arange(1, n + 1, dtype=np.float64) ** (-1.0 / (exponent - 1.0))
    d *= mean_degree * n / d.sum()
    d = np.minimum(d, n - 1)
    total = d.sum()
    src, dst = [], []
    for u in range(n - 1):
        p = np.minimum(1.0, d[u] * d[u + 1:] / total)
        v = u + 1 + (np.arange(p.size) if u < hubs else np.flatnonzero(rng.random(p.size) < p))
        src.append(np.full(v.size, u))
        dst.append(v)
    src, dst = np.concatenate(src), np.concatenate(dst)
    perm = rng.permutation(n)
    src, dst = perm[src], perm[dst]
    return CommGraph(n, np.concatenate([src, dst]), np.concatenate([dst, src]))


def dense_graph(spec):
    """A graph from ``amg:NXxNYxNZ``, ``powerlaw:N:MEAN_DEGREE[:SEED]`` or a :func:`libtopomap.load_graph` spec."""
    import libtopomap as ltm

    head, _, rest = spec.partition(":")
    if head == "amg":
        return amg_graph(tuple(int(x) for x in rest.split("x")))
    if head == "powerlaw":
        fields = rest.split(":")
        return power_law_graph(int(fields[0]), float(fields[1]), seed=int(fields[2]) if len(fields) > 2 else 0)
    return ltm.load_graph(spec)
