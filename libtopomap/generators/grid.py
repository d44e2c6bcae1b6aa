"""Direct networks on a grid: k-ary n-cube tori, meshes, hypercubes; concentration of hosts.

Vertex ``i`` has coordinates ``np.unravel_index(i, dims)`` (row-major, last dimension fastest);
names are ``n<i>``.  Every vertex is a host with one slot unless concentrated.
"""

from __future__ import annotations

import math

import numpy as np

from .._limits import MAX_VERTICES, check_edge_count, check_vertex_count  # noqa: F401 - the generators import them from here
from ..errors import TopologyError
from ..topology import HOST, SWITCH, Topology

__all__ = ["torus", "mesh", "hypercube", "concentrate", "parse_dims", "grid_links"]


def parse_dims(dims):
    """``"8x8x8"``, ``[8, 8, 8]`` or ``8`` -> tuple of ints >= 1."""
    if isinstance(dims, str):
        try:
            dims = [int(x) for x in dims.lower().split("x")]
        except ValueError:
            raise TopologyError(f"bad dimensions {dims!r}: expected e.g. '8x8x8'") from None
    elif isinstance(dims, (int, np.integer)):
        dims = [int(dims)]
    dims = tuple(int(d) for d in dims)
    if not dims or any(d < 1 for d in dims):
        raise TopologyError(f"dimensions must be positive integers, got {dims}")
    check_vertex_count(math.prod(dims), "x".join(map(str, dims)))
    return dims


def grid_links(dims, wrap):
    """Vertex count and ``(m, 2)`` index pairs of a mesh (``wrap=False``) or torus over ``dims``.

    Vertex ``i`` sits at ``np.unravel_index(i, dims)``; a dimension of size 2 gets one link, not a
    doubled wrap-around.
    """
    n = int(np.prod(dims))
    idx = np.arange(n).reshape(dims)
    links = []
    for ax, k in enumerate(dims):
        if k == 1:
            continue
        a = idx.take(range(k - 1), axis=ax).ravel()
        b = idx.take(range(1, k), axis=ax).ravel()
        links.append(np.stack([a, b], 1))
        if wrap and k > 2:  # a 2-ring is a single link, not a doubled one
            links.append(np.stack([idx.take([k - 1], axis=ax).ravel(), idx.take([0], axis=ax).ravel()], 1))
    return n, (np.concatenate(links) if links else np.zeros((0, 2), np.int64))


def torus(dims, *, name=None):
    """k-ary n-cube torus with wrap-around links in every dimension.

    Parameters
    ----------
    dims : str or sequence of int
        Size per dimension, e.g. ``"8x8x8"`` or ``(16, 16)``.

    Returns
    -------
    Topology
        ``prod(dims)`` hosts with one slot each; a dimension of size 2 has one link (no doubled wrap).

    Examples
    --------
    >>> torus("4x4").n_links
    32
    """
    return _grid("torus", dims, name)


def mesh(dims, *, name=None):
    """n-dimensional mesh (a torus without wrap-around links)."""
    return _grid("mesh", dims, name)


def _grid(kind, dims, name):
    """A ``"torus"`` or ``"mesh"`` of ``dims`` (one host per grid point)."""
    dims = parse_dims(dims)
    n, links = grid_links(dims, wrap=kind == "torus")
    label = "x".join(map(str, dims))
    return Topology([f"n{i}" for i in range(n)], links, name=name or f"{kind}-{label}",
                    attrs={"generator": kind, "dims": list(dims)})


def hypercube(dim, *, name=None):
    """Binary hypercube of dimension ``dim`` (``2**dim`` hosts, links between ids differing in one bit)."""
    dim = int(dim)
    if dim < 0 or dim > 24:
        raise TopologyError(f"hypercube dimension must be in 0..24, got {dim}")
    if dim == 0:
        return Topology(["n0"], [], name=name or "hypercube-0", attrs={"generator": "hypercube", "dim": 0})
    n = 1 << dim
    ids = np.arange(n)
    links = np.concatenate([np.stack([ids[(ids >> b) & 1 == 0], ids[(ids >> b) & 1 == 0] | (1 << b)], 1)
                            for b in range(dim)])
    return Topology([f"n{i}" for i in range(n)], links, name=name or f"hypercube-{dim}",
                    attrs={"generator": "hypercube", "dim": dim})


def concentrate(topology, c, *, capacity=1.0, name=None):
    """Attach ``c`` host vertices to every slot vertex, which becomes a router (0 slots).

    Parameters
    ----------
    topology : Topology
        Routers are its slot vertices (e.g. a torus or dragonfly without terminals).
    c : int
        Hosts per router (concentration factor, Camarero et al. section 3).
    capacity : float
        Capacity of each host-router link.

    Returns
    -------
    Topology
        Router ``r`` keeps its name prefixed ``sw-``; its hosts are ``<name>-<j>``.
    """
    c = int(c)
    if c < 1:
        raise TopologyError(f"concentration must be >= 1, got {c}")
    routers = topology.hosts
    check_vertex_count(topology.n_vertices + routers.size * c, f"concentrate({topology.name or 'topology'}, {c})")
    is_router = topology.slots > 0
    names = ["sw-" + nm if r else nm for nm, r in zip(topology.names, is_router.tolist())]
    kinds = [SWITCH] * topology.n_vertices
    slots = [0] * topology.n_vertices
    links = [np.stack([topology.link_u, topology.link_v], 1)]
    caps = [topology.capacity]
    base = topology.n_vertices
    new = np.stack([np.repeat(routers.astype(np.int64), c), base + np.arange(routers.size * c)], 1)
    names += [f"{topology.names[r]}-{k}" for r in routers.tolist() for k in range(c)]
    kinds += [HOST] * (len(routers) * c)
    slots += [1] * (len(routers) * c)
    links.append(new)
    caps.append(np.full(len(new), float(capacity)))
    return Topology(names, np.concatenate(links), capacities=np.concatenate(caps), slots=slots, kinds=kinds,
                    name=name or f"{topology.name}-c{c}", attrs={**topology.attrs, "concentration": c})
