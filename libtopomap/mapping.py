"""A mapping Gamma: processes -> vertices of a :class:`~libtopomap.Topology` that respects slots.

A mapping is saved as JSON with the host (vertex name) of every process (:meth:`Mapping.save`,
``libtopomap map ... -o mapping.json``), so a later job on the same hosts applies it without the
topology or recomputing (:func:`libtopomap.apply_mapping`); :func:`read_saved_mapping` reads it back.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import numpy as np

from ._textio import read_text
from .errors import FormatError, MappingError

__all__ = ["Mapping", "check_mapping", "SavedMapping", "read_saved_mapping", "MAPPING_FORMAT", "assign_new_ranks"]

#: The ``format`` field of a saved mapping.
MAPPING_FORMAT = "libtopomap-mapping"
_MAPPING_VERSION = 1


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

    def save(self, path, *, metrics=None):
        """Write the mapping as JSON with the host of every process.

        The file holds ``format`` (``"libtopomap-mapping"``), ``version``, ``n_processes``,
        ``topology`` (its name), ``strategy``, ``metrics`` (optional, e.g. from
        :func:`libtopomap.evaluate`) and ``hosts``: the vertex name of process ``p`` at position
        ``p``.  :func:`libtopomap.apply_mapping` reorders a job on the same hosts with it.

        Parameters
        ----------
        path : str or os.PathLike
        metrics : dict, optional
            JSON-serialisable numbers to keep with the mapping.
        """
        doc = {"format": MAPPING_FORMAT, "version": _MAPPING_VERSION, "n_processes": len(self),
               "topology": self.topology.name, "strategy": self.strategy,
               "metrics": {k: (v.item() if hasattr(v, "item") else v) for k, v in (metrics or {}).items()},
               "hosts": self.names()}
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")

    @classmethod
    def load(cls, path, topology):
        """Read a mapping saved by :meth:`save` onto ``topology`` (hosts resolved by name).

        Raises
        ------
        FormatError
            Not a saved mapping (``file:line:`` for bad JSON).
        MappingError
            A host that is not a vertex of ``topology``, or more processes on a vertex than slots.
        """
        saved = read_saved_mapping(path)
        index = {nm: i for i, nm in enumerate(topology.names)}
        missing = [h for h in saved.hosts if h not in index]
        if missing:
            raise MappingError(f"{saved.path}: host {missing[0]!r} of the mapping is not in the topology "
                               f"{topology.name!r}")
        return cls(topology, [index[h] for h in saved.hosts], strategy=saved.strategy)


@dataclass
class SavedMapping:
    """A mapping as read from a file by :func:`read_saved_mapping`.

    Attributes
    ----------
    hosts : list of str
        Host of process ``p`` at position ``p``.
    topology : str or None
        Name of the topology it was computed on.
    strategy : str or None
    metrics : dict
    path : str
    """

    hosts: list
    topology: str | None = None
    strategy: str | None = None
    metrics: dict = field(default_factory=dict)
    path: str = ""

    @property
    def n_processes(self):
        return len(self.hosts)


def read_saved_mapping(path):
    """Read a mapping written by :meth:`Mapping.save` (no topology needed).

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    SavedMapping

    Raises
    ------
    FormatError
        ``file:line:`` for invalid JSON; ``file:`` for a document that is not a saved mapping
        (wrong ``format``, unknown ``version``, ``hosts`` not a list of names, ``n_processes``
        not its length).
    OSError
        If the file cannot be read.
    """
    path = os.fspath(path)
    text = read_text(path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise FormatError(f"not JSON: {e.msg} (column {e.colno})", path=path, line=e.lineno) from None
    except RecursionError:
        raise FormatError("not JSON: nested too deeply", path=path) from None
    if not isinstance(doc, dict) or doc.get("format") != MAPPING_FORMAT:
        raise FormatError(f"not a saved mapping (expected \"format\": \"{MAPPING_FORMAT}\"; write one with "
                          "'libtopomap map ... -o FILE.json')", path=path)
    if doc.get("version") != _MAPPING_VERSION:
        raise FormatError(f"unsupported mapping version {doc.get('version')!r} (this libtopomap reads "
                          f"{_MAPPING_VERSION})", path=path)
    hosts = doc.get("hosts")
    if not isinstance(hosts, list) or not all(isinstance(h, str) and h for h in hosts):
        raise FormatError("\"hosts\" must be a list of host names, one per process", path=path)
    n = doc.get("n_processes", len(hosts))
    if n != len(hosts):
        raise FormatError(f"\"n_processes\" is {n} but \"hosts\" lists {len(hosts)}", path=path)
    metrics = doc.get("metrics") or {}
    if not isinstance(metrics, dict):
        raise FormatError("\"metrics\" must be an object", path=path)
    return SavedMapping(hosts=hosts, topology=doc.get("topology"), strategy=doc.get("strategy"),
                        metrics=metrics, path=path)


def assign_new_ranks(current, chosen):
    """New rank of each process: processes whose host already hosts their own logical vertex keep it;
    the others take the remaining logical vertices of their host in rank order.

    ``current[r]`` is the vertex of (old) rank ``r``, ``chosen[k]`` the vertex of logical vertex ``k``
    (int64 arrays of the same length); returns ``new_rank_of[r]``.  Raises :class:`~libtopomap.MappingError` when
    ``chosen`` does not use the same slots as ``current``.
    """
    p = current.size
    new_rank_of = np.empty(p, dtype=np.int64)
    fixed = chosen == current
    new_rank_of[fixed] = np.flatnonzero(fixed)
    free_old = np.flatnonzero(~fixed)
    free_logical = np.flatnonzero(~fixed)
    old_sorted = free_old[np.lexsort((free_old, current[free_old]))]
    log_sorted = free_logical[np.lexsort((free_logical, chosen[free_logical]))]
    if not np.array_equal(current[old_sorted], chosen[log_sorted]):
        raise MappingError("the chosen mapping does not use the same slots as the current placement")
    new_rank_of[old_sorted] = log_sorted
    return new_rank_of
