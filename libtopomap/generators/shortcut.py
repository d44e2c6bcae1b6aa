"""Ring-based random shortcut networks (Cui 2024, sections 2.1.3 and 3.4.1).

A ring of ``n`` vertices gets random shortcut links until every vertex has the requested degree, or as
close to it as the degree sequence allows.  Vertices are hosts named ``n<i>``, one slot each; vertex
``i`` is the ``i``-th node along the ring.
"""

from __future__ import annotations

import math

import numpy as np

from .grid import check_edge_count, check_vertex_count

from ..errors import TopologyError
from ..topology import Topology
from ..validation import check_seed

__all__ = ["random_shortcut_ring", "cable_lengths"]

# Consecutive failed random picks after which we check whether any valid pair is left at all.
_MAX_MISSES = 64


def random_shortcut_ring(n, degree, *, seed=None, name=None):
    """A ring plus random shortcuts, every vertex of (as nearly as possible) equal degree.

    Parameters
    ----------
    n : int
        Number of vertices (>= 3).
    degree : int
        Target degree of every vertex, ``2 <= degree <= n - 1`` (the ring gives 2).
    seed : int or numpy.random.Generator, optional
        Makes the network reproducible.
    name : str, optional
        Topology label (default ``shortcut-<n>-d<degree>``).

    Returns
    -------
    Topology
        ``n`` hosts ``n0 .. n<n-1>`` with one slot each; links ``(i, i+1 mod n)`` plus shortcuts.  When
        ``n * degree`` is even every vertex has degree ``degree``; when it is odd exactly one vertex
        has ``degree - 1`` (a degree sum must be even).

    Raises
    ------
    TopologyError
        ``n < 3`` or ``degree`` outside ``2 .. n - 1``.

    Notes
    -----
    As in the thesis, links are added one at a time between two vertices picked uniformly among the
    vertices whose degree is still below the target (never a self-link or a second link between the
    same pair).  That greedy process can end with a few deficient vertices whose remaining partners are
    all already their neighbours; each such case is repaired by a standard edge switch that removes a
    random shortcut ``(x, y)`` and adds ``(u, x)`` and ``(v, y)`` (or ``(u, x)``, ``(u, y)``), so the
    ring is never broken and the final degrees are as equal as possible.

    References
    ----------
    K. Cui, "Efficient Collective Communication in Interconnection Networks with Shortcut Network
    Topologies", PhD thesis, 2024, section 2.1.3 (Random Network Topology, Fig. 2.7) and section
    3.4.1 (1,024 nodes of degree 19).

    Examples
    --------
    >>> t = random_shortcut_ring(64, 5, seed=1)
    >>> sorted(set(t.degree.tolist()))
    [5]
    """
    check_vertex_count(lambda: int(n), f"random_shortcut_ring({n})")
    n, degree = int(n), int(degree)
    if n < 3:
        raise TopologyError(f"a shortcut ring needs n >= 3 vertices, got {n}")
    if not 2 <= degree <= n - 1:
        raise TopologyError(f"degree must be in 2..{n - 1} for n = {n}, got {degree}")
    check_edge_count(n * degree // 2, f"random_shortcut_ring({n}, {degree})", unit="links")
    # a Generator is the caller's stream (hybrid components, tests); anything else is a seed
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(check_seed(seed))

    adj = [set() for _ in range(n)]
    shortcuts = []          # list of [u, v]; removed entries are swapped out
    where = {}              # (min, max) -> index in shortcuts

    def add(u, v, short=True):
        adj[u].add(v)
        adj[v].add(u)
        if short:
            key = (u, v) if u < v else (v, u)
            where[key] = len(shortcuts)
            shortcuts.append(key)

    def remove_shortcut(k):
        u, v = shortcuts[k]
        adj[u].discard(v)
        adj[v].discard(u)
        del where[(u, v)]
        last = shortcuts.pop()
        if k < len(shortcuts):
            shortcuts[k] = last
            where[last] = k

    for i in range(n):
        add(i, (i + 1) % n, short=False)

    # Pool of vertices below the target degree, with O(1) removal.
    pool = np.arange(n, dtype=np.int64) if degree > 2 else np.zeros(0, np.int64)
    slot = np.arange(n, dtype=np.int64)
    size = pool.size

    def drop(v):
        nonlocal size
        k = slot[v]
        size -= 1
        w = pool[size]
        pool[k], slot[w] = w, k
        pool[size], slot[v] = v, size

    misses = 0
    draws, k = rng.random(0), 0  # uniform draws fetched in batches: one rng call per pick is slow
    while size >= 2:
        if k + 2 > draws.size:
            draws, k = rng.random(4096), 0
        u, v = int(pool[int(draws[k] * size)]), int(pool[int(draws[k + 1] * size)])
        k += 2
        if u == v or v in adj[u]:
            misses += 1
            if misses >= _MAX_MISSES:
                live = pool[:size].tolist()
                if not any(b not in adj[a] for k, a in enumerate(live) for b in live[k + 1:]):
                    break
                misses = 0
            continue
        misses = 0
        add(u, v)
        for w in (u, v):
            if len(adj[w]) >= degree:
                drop(w)

    # Repair: edge switches until at most one vertex lacks one link (odd degree sum).
    deficit = {int(v): degree - len(adj[v]) for v in pool[:size]}
    guard = 0
    while deficit and (sum(deficit.values()) >= 2):
        guard += 1
        if guard > 100 * n:
            raise TopologyError(f"could not complete a degree-{degree} shortcut ring on {n} vertices")
        ds = list(deficit)
        u = ds[int(rng.integers(len(ds)))]
        if deficit[u] >= 2:
            v = u
        else:
            others = [w for w in ds if w != u]
            v = others[int(rng.integers(len(others)))]
        if u != v and v not in adj[u]:
            add(u, v)  # an earlier switch made the pair joinable
        else:
            if not shortcuts:
                raise TopologyError(f"cannot reach degree {degree} on {n} vertices")
            # a shortcut (x, y) with x not yet next to u and y not yet next to v; drawn among all such
            # switches (on nearly complete graphs a random shortcut almost never qualifies)
            options = [(x, y) for x in range(n) if x != u and x != v and x not in adj[u]
                       for y in adj[x] if y != u and y != v and y not in adj[v] and (min(x, y), max(x, y)) in where]
            if not options:
                continue
            x, y = options[int(rng.integers(len(options)))]
            remove_shortcut(where[(min(x, y), max(x, y))])
            add(u, x)
            add(v, y)
        for w in (u, v):
            deficit[w] = degree - len(adj[w])
            if deficit[w] <= 0:
                del deficit[w]

    links = [(i, (i + 1) % n) for i in range(n)] + shortcuts
    return Topology([f"n{i}" for i in range(n)], np.array(links, dtype=np.int64),
                    name=name or f"shortcut-{n}-d{degree}",
                    attrs={"generator": "random_shortcut_ring", "n": n, "degree": degree,
                           "seed": seed if isinstance(seed, (int, np.integer)) else None})


def cable_lengths(topology, *, switches_per_cabinet=8, cabinet_width=0.6, cabinet_depth=2.1, intra=1.0, inter=2.0):
    """Cable length of every link under the cabinet layout of Cui 2024, section 5.6 (metres).

    Vertex ``i`` (a switch, in ring order for the shortcut and circulant generators) sits in cabinet
    ``i // switches_per_cabinet``; the ``C`` cabinets stand on a grid of ``r = ceil(sqrt(C))`` rows and
    ``c = ceil(C / r)`` columns, row-major.  A link inside a cabinet is ``intra`` long; between
    cabinets it is ``inter`` plus the Manhattan distance, ``cabinet_width`` per column and
    ``cabinet_depth`` per row.  Host-switch cables are ignored, as in the thesis.

    Parameters
    ----------
    topology : Topology
    switches_per_cabinet : int
        8 in the thesis.
    cabinet_width, cabinet_depth : float
        0.6 m and 2.1 m.
    intra, inter : float
        Cable overheads, 1 m inside a cabinet and 2 m between cabinets.

    Returns
    -------
    numpy.ndarray of float64
        One length per link, in :attr:`~libtopomap.Topology.link_u` order.

    Notes
    -----
    The thesis writes ``r = ceil(sqrt(n))`` and ``c = ceil(n / r)`` without saying whether ``n`` counts
    switches or cabinets; cabinets are taken (with switches, 1,024 switches would get a 32 x 32 grid
    of which 128 cabinets fill four rows).  With this reading the average cable at 1,024 switches
    of degree 19 is 46% shorter on the circulant ``G(1024, 10)`` than on a random shortcut ring, the
    thesis' figure (``benchmarks/bench_thesis_ch5.py``).

    References
    ----------
    K. Cui, PhD thesis, 2024, section 5.6 and Figure 5.19.

    Examples
    --------
    >>> from libtopomap import circulant
    >>> # 2 cabinets on 2 rows x 1 column: 0-1, 0-2, 0-4 inside cabinet 0; 0-8 one row away (2 + 2.1)
    >>> cable_lengths(circulant(16)).round(1).tolist()[:4]
    [1.0, 1.0, 1.0, 4.1]
    """
    per = int(switches_per_cabinet)
    if per < 1:
        raise TopologyError(f"switches_per_cabinet must be >= 1, got {per}")
    cabinets = -(-topology.n_vertices // per)
    rows = math.ceil(math.sqrt(cabinets))
    cols = math.ceil(cabinets / rows)
    u = topology.link_u.astype(np.int64) // per
    v = topology.link_v.astype(np.int64) // per
    manhattan = (np.abs(u % cols - v % cols) * float(cabinet_width)
                 + np.abs(u // cols - v // cols) * float(cabinet_depth))
    return np.where(u == v, float(intra), float(inter) + manhattan)
