"""Low diameter regular (LDR) graphs (seed 001, Mehta 2005, section 4.3)."""

from __future__ import annotations

import numpy as np

from .grid import check_vertex_count

from ..errors import TopologyError
from ..topology import Topology

__all__ = ["ldr", "ldr_graph_edges"]


def ldr_graph_edges(n, degree, rng):
    """One LDR graph attempt: edge list ``(m, 2)`` of a connected ``degree``-regular simple graph.

    Follows section 4.3: a spanning tree in which every node has ``degree - 1`` children (filled
    breadth first), completed one edge at a time by joining the vertex ``A`` with the most missing
    connections to a random vertex ``B`` that still misses connections and is not yet adjacent to
    ``A``; when no such ``B`` exists an edge ``X - Y`` is opened and replaced by ``A - X`` and
    ``B - Y`` (``B = A`` when ``A`` is the only vertex left with missing connections).

    Returns ``None`` when an attempt ends disconnected (the caller retries with the next draw).
    """
    adj = [set() for _ in range(n)]
    edges = set()

    def add(u, v):
        adj[u].add(v)
        adj[v].add(u)
        edges.add((min(u, v), max(u, v)))

    def remove(u, v):
        adj[u].discard(v)
        adj[v].discard(u)
        edges.discard((min(u, v), max(u, v)))

    # Spanning tree: node i > 0 hangs below node (i - 1) // (degree - 1) (root has degree-1 children too).
    children = max(degree - 1, 1)
    for i in range(1, n):
        add((i - 1) // children, i)
    missing = np.array([degree - len(adj[v]) for v in range(n)], dtype=np.int64)
    if missing.min() < 0:
        return None
    while missing.max() > 0:
        a = int(np.argmax(missing))
        ok = missing > 0
        ok[a] = False
        ok[list(adj[a])] = False
        cand = np.flatnonzero(ok)
        if cand.size:
            b = int(rng.choice(cand))
            add(a, b)
            missing[a] -= 1
            missing[b] -= 1
            continue
        # No legitimate B: open an edge X-Y far from A (and B) and connect A-X, B-Y.
        others = np.flatnonzero(missing > 0)
        others = [int(x) for x in others if x != a]
        b = int(rng.choice(others)) if others else a
        if b == a and missing[a] < 2:
            return None  # odd total degree left over; cannot be completed
        pool = list(edges)
        order = rng.permutation(len(pool))
        for k in order:
            x, y = pool[k]
            if rng.random() < 0.5:
                x, y = y, x
            if len({a, b, x, y}) < (3 if a == b else 4):
                continue
            if x in adj[a] or y in adj[b]:
                continue
            remove(x, y)
            add(a, x)
            add(b, y)
            missing[a] -= 1
            missing[b] -= 1
            break
        else:
            return None
    e = np.array(sorted(edges), dtype=np.int64).reshape(-1, 2)
    return e


def ldr(n, degree, *, seed=None, trials=10, name=None):
    """Low diameter regular graph with ``n`` nodes of degree ``degree``; best ASPL of ``trials`` draws.

    Parameters
    ----------
    n : int
        Number of nodes (hosts, one slot each), ``n > degree``.
    degree : int
        Connections per node, ``>= 2``; ``n * degree`` must be even.
    seed : int, optional
        Seeds ``numpy.random.default_rng``; the same seed gives the same graph.
    trials : int
        Graphs generated; the one with the smallest average internode distance is kept (ties: the
        first).
    name : str, optional

    Returns
    -------
    Topology
        Connected and ``degree``-regular; ``attrs`` records ``aspl`` and the trial kept.

    Raises
    ------
    TopologyError
        Impossible parameters, or no trial produced a connected regular graph.

    References
    ----------
    A. Mehta, "Low Diameter Regular Graph as a Network Topology in Direct and Hybrid Interconnection
    Networks", MS thesis, UIUC, 2005, section 4.3 (procedure by L. V. Kale) and Table 4.1.

    Examples
    --------
    >>> t = ldr(64, 6, seed=1)
    >>> int(t.degree.min()), int(t.degree.max())
    (6, 6)
    """
    check_vertex_count(lambda: int(n), f"ldr({n})")
    n, degree, trials = int(n), int(degree), int(trials)
    if degree < 2 or n <= degree:
        raise TopologyError(f"an LDR graph needs degree >= 2 and nodes > degree; got nodes={n}, degree={degree}")
    if (n * degree) % 2:
        raise TopologyError(f"nodes * degree must be even for a regular graph; got {n} * {degree}")
    if trials < 1:
        raise TopologyError(f"trials must be >= 1, got {trials}")
    names = [f"n{i}" for i in range(n)]
    rng = np.random.default_rng(seed)
    best = None
    for trial in range(trials):
        e = None
        for _attempt in range(20):
            e = ldr_graph_edges(n, degree, rng)
            if e is not None:
                break
        if e is None:
            continue
        try:
            t = Topology(names, e)
        except TopologyError:  # an edge swap disconnected the graph: discard this draw
            continue
        total, diameter = t.distances.host_sums(t.slots)
        aspl = float(total / (n * (n - 1)))
        if best is None or aspl < best[0]:
            best = (aspl, trial, e, int(diameter))
    if best is None:
        raise TopologyError(f"could not build a connected {degree}-regular LDR graph on {n} nodes")
    aspl, trial, e, diameter = best
    return Topology(names, e, name=name or f"ldr-{n}-{degree}",
                    attrs={"generator": "ldr", "nodes": n, "degree": degree, "seed": seed, "trials": trials,
                           "best_trial": trial, "aspl": aspl, "diameter": diameter})
