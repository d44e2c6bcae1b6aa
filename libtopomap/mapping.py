"""A mapping Gamma: processes -> vertices of a :class:`~libtopomap.Topology` that respects slots."""

from __future__ import annotations

import numpy as np

from .errors import MappingError

__all__ = ["Mapping", "check_mapping"]


def check_mapping(topology, vertices, n_processes=None, *, slots=None):
    """Validate a process -> vertex array and return it as ``int32``.

    Parameters
    ----------
    topology : Topology
    vertices : array_like of int
        ``vertices[p]`` is the vertex index of process ``p``.
    n_processes : int, optional
        Expected length.
    slots : array_like of int, optional
        Slots available to this job per vertex (default ``topology.slots``).

    Returns
    -------
    numpy.ndarray of int32

    Raises
    ------
    MappingError
        Wrong length, a vertex out of range, or more processes on a vertex than it has slots.
    """
    v = np.asarray(vertices)
    if v.ndim != 1:
        raise MappingError(f"a mapping must be a 1-D array, got shape {v.shape}")
    if n_processes is not None and v.size != n_processes:
        raise MappingError(f"mapping has {v.size} entries for {n_processes} processes")
    if v.size and not np.issubdtype(v.dtype, np.integer):
        raise MappingError(f"mapping entries must be integers, got dtype {v.dtype}")
    v = v.astype(np.int64)
    nv = topology.n_vertices
    bad = np.flatnonzero((v < 0) | (v >= nv))
    if bad.size:
        raise MappingError(f"process {bad[0]} is mapped to vertex {v[bad[0]]}, outside 0..{nv - 1}")
    cap = topology.slots if slots is None else np.asarray(slots)
    used = np.bincount(v, minlength=nv)
    over = np.flatnonzero(used > cap)
    if over.size:
        x = over[0]
        procs = np.flatnonzero(v == x)[:5].tolist()
        raise MappingError(f"vertex {topology.names[x]!r} hosts {used[x]} processes (e.g. {procs}) "
                           f"but has {cap[x]} slots")
    return v.astype(np.int32)


class Mapping:
    """Processes mapped onto vertices; ``mapping.vertices[p]`` is the vertex index of process ``p``.

    Parameters
    ----------
    topology : Topology
    vertices : array_like of int
    strategy : str, optional
        Which strategy produced it (reported by the CLI and the MPI layer).

    Raises
    ------
    MappingError
        If the array is not a valid slot-respecting mapping (see :func:`check_mapping`).
    """

    __slots__ = ("topology", "vertices", "strategy")

    def __init__(self, topology, vertices, *, strategy=None, slots=None):
        self.topology = topology
        self.vertices = check_mapping(topology, vertices, slots=slots)
        self.vertices.setflags(write=False)
        self.strategy = strategy

    def __len__(self):
        return int(self.vertices.size)

    def __getitem__(self, p):
        return self.vertices[p]

    def __array__(self, dtype=None, copy=None):
        return self.vertices if dtype is None else self.vertices.astype(dtype)

    def names(self):
        """Vertex name of each process (a list)."""
        nm = self.topology.names
        return [nm[v] for v in self.vertices.tolist()]

    def __eq__(self, other):
        if isinstance(other, Mapping):
            return np.array_equal(self.vertices, other.vertices)
        return NotImplemented

    def __hash__(self):
        # equal mappings hash alike (the vertex array is read-only)
        return hash(self.vertices.tobytes())

    def __repr__(self):
        s = f" by {self.strategy}" if self.strategy else ""
        return f"<Mapping{s}: {self.vertices.size} processes>"
