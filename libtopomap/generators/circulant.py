"""Circulant networks C(n; c_1, ..., c_k) (Cui 2024, section 4.2).

Vertex ``a`` is linked to ``a +- c_i (mod n)`` for every jump ``c_i``.  The default jumps
``1, 2, 4, ...`` (every power of two below ``n``) give the thesis' ``G(n, log2 n)``.
"""

from __future__ import annotations

import numpy as np

from .grid import check_edge_count, check_vertex_count

from ..errors import TopologyError
from ..topology import Topology

__all__ = ["circulant", "power_of_two_jumps"]


def power_of_two_jumps(n):
    """The jumps ``2**i`` with ``2**i < n`` (``[1, 2, 4, ..., n/2]`` for ``n`` a power of two)."""
    n = int(n)
    out, c = [], 1
    while c < n:
        out.append(c)
        c *= 2
    return out


def circulant(n, jumps=None, *, name=None):
    """The circulant graph ``C(n; jumps)``.

    Parameters
    ----------
    n : int
        Number of vertices (>= 2).
    jumps : sequence of int, optional
        Jump lengths, each in ``1 .. n - 1``; a jump ``c`` and ``n - c`` give the same links, and
        duplicates are merged.  Default :func:`power_of_two_jumps` ``(n)``: for ``n = 2**k`` this is
        ``G(n, k)`` of the thesis, degree ``2k - 1`` (the jump ``n/2`` adds one link per vertex).

    Returns
    -------
    Topology
        ``n`` hosts ``n0 .. n<n-1>``, one slot each, links ``(a, a + c mod n)``.  ``attrs`` records
        the normalised jumps.

    Raises
    ------
    TopologyError
        ``n < 2``, a jump outside ``1 .. n - 1``, or jumps that leave the graph disconnected
        (``gcd(n, jumps...) > 1``).

    References
    ----------
    K. Cui, "Efficient Collective Communication in Interconnection Networks with Shortcut Network
    Topologies", PhD thesis, 2024, section 4.2.1 (circulant graphs) and 4.2.2 (``G(n, log2 n)``).

    Examples
    --------
    >>> t = circulant(16)
    >>> t.n_links, sorted(set(t.degree.tolist()))
    (56, [7])
    """
    check_vertex_count(lambda: int(n), f"circulant({n})")
    n = int(n)
    if n < 2:
        raise TopologyError(f"a circulant graph needs n >= 2 vertices, got {n}")
    given = power_of_two_jumps(n) if jumps is None else [int(c) for c in np.atleast_1d(jumps)]
    if not given:
        raise TopologyError("a circulant graph needs at least one jump")
    bad = [c for c in given if not 1 <= c <= n - 1]
    if bad:
        raise TopologyError(f"jump {bad[0]} is outside 1..{n - 1} for n = {n}")
    norm = sorted({min(c, n - c) for c in given})
    if np.gcd.reduce(np.array(norm + [n])) != 1:
        raise TopologyError(f"jumps {norm} leave C({n}; ...) disconnected (gcd with n is not 1)")
    check_edge_count(n * len(norm), f"circulant({n}) with {len(norm)} jumps", unit="links")
    a = np.arange(n, dtype=np.int64)
    links = []
    for c in norm:
        if 2 * c == n:  # a and a + n/2 are linked once, not twice
            links.append(np.stack([a[: n // 2], a[: n // 2] + c], 1))
        else:
            links.append(np.stack([a, (a + c) % n], 1))
    label = ",".join(map(str, norm))
    return Topology([f"n{i}" for i in range(n)], np.concatenate(links),
                    name=name or f"circulant-{n}-{label}",
                    attrs={"generator": "circulant", "n": n, "jumps": norm})
