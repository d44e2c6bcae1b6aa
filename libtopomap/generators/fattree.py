"""k-ary n-tree fat trees (Petrini & Vanneschi), the indirect network of Hoefler & Snir, ICS'11, section 5.

Hosts come first (vertex ``i`` is host ``n<i>`` for ``i < k**n``), then the ``n * k**(n-1)`` switches
level by level from the root (level 0) to the leaves (level ``n - 1``), named ``sw-l<level>-<index>``.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import TopologyError
from ..topology import HOST, SWITCH, Topology
from .._limits import max_vertices
from .grid import check_vertex_count

__all__ = ["fattree"]


def fattree(k, n, *, capacity=1.0, name=None):
    """k-ary n-tree: ``k**n`` hosts, ``n`` levels of ``k**(n-1)`` switches with ``2k`` ports.

    Parameters
    ----------
    k : int
        Arity (down ports per switch), ``k >= 2``.
    n : int
        Number of switch levels, ``n >= 1``.
    capacity : float
        Capacity of every link.
    name : str, optional

    Returns
    -------
    Topology
        Switches have 0 slots; each host has 1 slot and one link to its leaf switch.

    Raises
    ------
    TopologyError
        ``k < 2``, ``n < 1`` or more vertices than the limit (``--max-vertices``).

    Notes
    -----
    A switch is ``<w, l>`` with ``w`` a word of ``n - 1`` base-``k`` digits and level ``l`` in
    ``0..n-1``.  Switches ``<w, l>`` and ``<w', l+1>`` are linked when ``w`` and ``w'`` agree in every
    digit except possibly digit ``l``; host ``p = (p_0 .. p_{n-1})`` is linked to leaf switch
    ``<(p_0 .. p_{n-2}), n-1>``.  Hosts are at most ``2n`` hops apart.

    References
    ----------
    F. Petrini and M. Vanneschi, "k-ary n-trees: High performance networks for massively parallel
    architectures", IPPS 1997.  Fat trees are one of the machines of T. Hoefler and M. Snir, ICS'11.

    Examples
    --------
    >>> t = fattree(4, 3)
    >>> t.hosts.size, t.n_vertices - t.hosts.size
    (64, 48)
    """
    k, n = int(k), int(n)
    if k < 2 or n < 1:
        raise TopologyError(f"a k-ary n-tree needs k >= 2 and n >= 1, got k={k}, n={n}")
    # by logarithms first: k**n itself is a huge integer for a fuzzed n (MemoryError, or a ValueError
    # when printed)
    if n * math.log2(k) > math.log2(max_vertices()) + 1e-9:
        check_vertex_count(2.0 ** min(n * math.log2(k), 1000.0), f"fattree({k}, {n})")
    check_vertex_count(k ** n + n * k ** (n - 1), f"fattree({k}, {n})")
    hosts = k ** n
    per_level = k ** (n - 1)
    words = np.arange(per_level, dtype=np.int64)

    def switch(level, w):
        return hosts + level * per_level + w

    links = []
    # Digit l of a word (l = 0 is the most significant of the n-1 digits).
    for level in range(n - 1):
        place = k ** (n - 2 - level)
        digit = (words // place) % k
        base = words - digit * place
        for j in range(k):
            links.append(np.stack([switch(level, words), switch(level + 1, base + j * place)], 1))
    host_ids = np.arange(hosts, dtype=np.int64)
    links.append(np.stack([host_ids, switch(n - 1, host_ids // k)], 1))
    names = [f"n{i}" for i in range(hosts)]
    names += [f"sw-l{lv}-{w}" for lv in range(n) for w in range(per_level)]
    kinds = [HOST] * hosts + [SWITCH] * (n * per_level)
    slots = np.zeros(len(names), dtype=np.int32)
    slots[:hosts] = 1
    links = np.concatenate(links)
    return Topology(names, links, capacities=np.full(links.shape[0], float(capacity)), slots=slots, kinds=kinds,
                    name=name or f"fattree-k{k}-n{n}", attrs={"generator": "fattree", "k": k, "n": n})
