"""Ring-based random shortcut networks (Cui 2024, sections 2.1.3 and 3.4.1).

A ring of ``n`` vertices gets random shortcut links until every vertex has the requested degree, or as
close to it as the degree sequence allows.  Vertices are hosts named ``n<i>``, one slot each; vertex
``i`` is the ``i``-th node along the ring.
"""

from __future__ import annotations

import numpy as np

from .grid import check_vertex_count

from ..errors import TopologyError
from ..topology import Topology

__all__ = ["random_shortcut_ring"]

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
    rng = np.random.default_rng(seed)

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
