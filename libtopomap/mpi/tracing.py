"""Measure a program's communication graph while it runs, and reorder a communicator for it.

:func:`trace` runs the code on a communicator of a subclass of ``comm``'s mpi4py type that counts, per
destination rank, the bytes and messages of every point-to-point send and neighbour collective;
:meth:`TracedComm.graph` gathers them into a :class:`~libtopomap.CommGraph` and :func:`reorder` places
the ranks for it.  What is counted, what is not, and the cost per call: docs/internals.rst, "Tracing a
program's messages".
"""

from __future__ import annotations

import collections
import contextlib
import inspect
import os
import time
import zlib

import numpy as np
from mpi4py import MPI

from ..commgraph import CommGraph
from ..errors import ArgumentError, ArgumentTypeError
from ..validation import check_graph
from .cart import check_everywhere
from ._report import attach_report
from .pipeline import check_agreement, check_options, options_to_agree, reorder_ranks
from .agreement import agree_arguments

__all__ = ["trace", "reorder", "TracedComm", "WEIGHTS"]

#: What :meth:`TracedComm.graph` can weigh the edges with.
WEIGHTS = ("bytes", "messages")

_ndarray = np.ndarray
_dumps = MPI.pickle.dumps
_loads = MPI.pickle.loads
_BYTE = MPI.BYTE
_neighbor_allgather = MPI.Topocomm.neighbor_allgather
_neighbor_alltoall = MPI.Topocomm.neighbor_alltoall


# ----------------------------------------------------------------------------------- buffer specs
def _data_bytes(data):
    """Bytes of a buffer object (numpy and other arrays with ``nbytes``, anything with the buffer protocol)."""
    n = getattr(data, "nbytes", None)
    if n is not None:
        return int(n)
    if data is None or data is MPI.BOTTOM or data is MPI.IN_PLACE:
        return 0
    try:
        return memoryview(data).nbytes
    except TypeError:
        raise ArgumentTypeError(f"trace cannot count the bytes of a {type(data).__name__} send buffer "
                                "(no nbytes, no buffer protocol); give its count and datatype") from None


def _itemsize(data):
    """Size of one element of ``data`` (the type mpi4py infers when a spec names none)."""
    n = getattr(data, "itemsize", None)
    if n is not None:
        return int(n)
    try:
        return memoryview(data).itemsize
    except TypeError:
        raise ArgumentTypeError(f"trace cannot find the element size of a {type(data).__name__} send buffer; "
                                "give its datatype") from None


_TYPES = {}
#: Predefined datatypes by ``id``: ``(size, extent)``.  They live as long as the module, so no other
#: object can share their ``id``; any other datatype (derived, or a copy) takes the general path.
_PREDEFINED = {id(t): (t.Get_size(), t.Get_extent()[1]) for t in vars(MPI).values()
               if type(t) is MPI.Datatype and t != MPI.DATATYPE_NULL and t.is_predefined and t.Get_size() > 0}


def _type_size(datatype, data):
    """``(size, extent)`` in bytes of ``datatype`` (a Datatype, a typecode such as ``"d"``, or None: from
    ``data``)."""
    got = _PREDEFINED.get(id(datatype))
    if got is not None:
        return got
    if datatype is None:
        n = _itemsize(data)
        return n, n
    if isinstance(datatype, str):
        got = _TYPES.get(datatype)
        if got is None:
            t = MPI.Datatype.fromcode(datatype)
            got = _TYPES[datatype] = (t.Get_size(), t.Get_extent()[1])
        return got
    return datatype.Get_size(), datatype.Get_extent()[1]


def _is_type(x):
    return isinstance(x, (MPI.Datatype, str))


def _simple(spec):
    """``(data, count, datatype)`` of a simple buffer spec (count None when the spec gives none)."""
    if type(spec) is not list and type(spec) is not tuple:
        return spec, None, None
    n = len(spec)
    if n == 2:
        data, x = spec
        return (data, None, x) if _is_type(x) else (data, x, None)
    if n == 3:
        return spec[0], spec[1], spec[2]
    if n == 4:
        return spec[0], spec[1], spec[3]
    raise ArgumentTypeError(f"cannot read a buffer spec of {n} items")


def _count_of(count):
    if isinstance(count, (list, tuple)):  # (count, displacement)
        count = count[0]
    return int(count)


def _spec_bytes(spec, blocks=1):
    """Bytes that a simple buffer spec sends (to each of ``blocks`` peers for an alltoall-style spec)."""
    kind = type(spec)
    if kind is _ndarray:
        return (spec.size // blocks) * spec.itemsize
    if kind is list or kind is tuple:  # fast paths: [array, predefined type], [array, int count, predefined type]
        n = len(spec)
        if n == 2 or n == 3:
            got = _PREDEFINED.get(id(spec[-1]))
            if got is not None:
                if n == 3 and type(spec[1]) is int:
                    return spec[1] * got[0]
                if n == 2 and type(spec[0]) is _ndarray:
                    return spec[0].nbytes // got[1] // blocks * got[0]
    data, count, datatype = _simple(spec)
    size, extent = _type_size(datatype, data)
    if count is None:
        count = (_data_bytes(data) // extent if extent else 0) // blocks
    else:
        count = _count_of(count)
    return count * size


def _vector_bytes(spec, blocks):
    """Bytes per peer of a vector spec ``[data, (counts, displs), datatype]`` and its other forms."""
    if type(spec) is _ndarray or (type(spec) is not list and type(spec) is not tuple):
        return [_spec_bytes(spec, blocks)] * blocks
    n = len(spec)
    data, counts, datatype = spec[0], None, None
    if n == 2:
        if _is_type(spec[1]):
            datatype = spec[1]
        else:
            counts = spec[1]
    elif n == 3:
        counts, datatype = spec[1], spec[2]
    elif n == 4:
        counts, datatype = spec[1], spec[3]
    else:
        raise ArgumentTypeError(f"cannot read a vector buffer spec of {n} items")
    if isinstance(counts, tuple) and len(counts) == 2 and not np.isscalar(counts[0]):
        counts = counts[0]  # (counts, displacements)
    size, extent = _type_size(datatype, data)
    if counts is None:
        each = (_data_bytes(data) // extent if extent else 0) // blocks * size
        return [each] * blocks
    if np.isscalar(counts):
        return [int(counts) * size] * blocks
    return [int(c) * size for c in counts]


def _w_bytes(spec):
    """Bytes per peer of ``[data, counts, displs, datatypes]`` / ``[data, (counts, displs), datatypes]``."""
    if len(spec) == 4:
        counts, types = spec[1], spec[3]
    elif len(spec) == 3:
        counts, types = spec[1], spec[2]
        if isinstance(counts, tuple) and len(counts) == 2 and not np.isscalar(counts[0]):
            counts = counts[0]
    else:
        raise ArgumentTypeError(f"cannot read an alltoallw buffer spec of {len(spec)} items")
    return [int(c) * _type_size(t, None)[0] for c, t in zip(counts, types)]


# ----------------------------------------------------------------------------------- the traced types
# Per peer, one Python integer counts both: ``messages * _MESSAGE + bytes``.  A message adds its bytes
# plus ``_MESSAGE`` in one ``+=`` on a defaultdict (the cheapest update there is in Python); bytes never
# reach 2**64, so ``divmod(count, _MESSAGE)`` reads them back.  ``MPI.PROC_NULL`` (negative) is counted
# like any peer and left out when the counts are read.
_MESSAGE = 1 << 64

_recv = MPI.Comm.recv
_Isend = MPI.Comm.Isend
#: The buffer sends that :class:`TracedComm` counts (``Isendrecv*`` where the MPI library has them).
BUFFER_SENDS = tuple(name for name in ("Send", "Ssend", "Bsend", "Rsend", "Isend", "Issend", "Ibsend", "Irsend",
                                       "Sendrecv", "Sendrecv_replace", "Isendrecv", "Isendrecv_replace")
                     if hasattr(MPI.Comm, name))
#: The lower-case (pickled) sends that :class:`TracedComm` counts, besides ``sendrecv``.
PICKLED_SENDS = ("send", "ssend", "bsend", "isend", "issend", "ibsend")

# The point-to-point sends are closures over the block's counters (``live``, rebound to None when the
# block ends): reading a closure cell costs a few ns where an attribute of an mpi4py communicator
# (``self._trace_live``) costs some 50 ns, a sixth of the whole overhead of a small traced call.
# :func:`_counting_sends` builds them; it is compiled once, from one template per method with mpi4py's
# own signature (names and defaults: no ``*args``/``**kwargs`` packing, which doubles the overhead).
_BUFFER_TEMPLATE = """
    def {name}(self, {params}):
        out = _m_{name}(self, {args})
        if live is not None:
            live[dest] += ({buf}.nbytes if type({buf}) is _ndarray else _spec_bytes({buf})) + _MESSAGE
        return out
"""
_PICKLED_TEMPLATE = """
    def {name}(self, obj, dest, tag=0):
        data = _dumps(obj)
        out = _m_{name}(self, [data, _BYTE], dest, tag)
        if live is not None:
            live[dest] += len(data) + _MESSAGE
        return out
"""
_SENDRECV = """
    def sendrecv(self, sendobj, dest, sendtag=0, recvbuf=None, source=_ANY_SOURCE, recvtag=_ANY_TAG, status=None):
        data = _dumps(sendobj)
        req = _Isend(self, [data, _BYTE], dest, sendtag)
        try:
            obj = _recv(self, recvbuf, source, recvtag, status)
        finally:
            req.Wait()
        if live is not None:
            live[dest] += len(data) + _MESSAGE
        return obj
"""


def _compile_counting_sends():
    """The function ``_counting_sends(live)`` -> ``({name: method}, stop)``: every counted point-to-point
    send as a closure over the counters ``live`` (a defaultdict, or None: count nothing), and ``stop()``,
    which makes them all count nothing from then on."""
    namespace = {"_ndarray": _ndarray, "_spec_bytes": _spec_bytes, "_MESSAGE": _MESSAGE, "_dumps": _dumps,
                 "_BYTE": _BYTE, "_recv": _recv, "_Isend": _Isend, "_ANY_SOURCE": MPI.ANY_SOURCE,
                 "_ANY_TAG": MPI.ANY_TAG}
    parts = []
    for name in BUFFER_SENDS:
        method = getattr(MPI.Comm, name)
        params = list(inspect.signature(method).parameters.values())[1:]
        if len(params) < 2 or params[1].name != "dest" or any(p.kind is not p.POSITIONAL_OR_KEYWORD for p in params):
            raise ArgumentTypeError(f"cannot trace {method.__qualname__}{inspect.signature(method)}")
        namespace[f"_m_{name}"] = method
        decl = []
        for p in params:
            if p.default is p.empty:
                decl.append(p.name)
            else:
                namespace[f"_d_{name}_{p.name}"] = p.default
                decl.append(f"{p.name}=_d_{name}_{p.name}")
        parts.append(_BUFFER_TEMPLATE.format(name=name, params=", ".join(decl), buf=params[0].name,
                                             args=", ".join(p.name for p in params)))
    for name in PICKLED_SENDS:
        namespace[f"_m_{name}"] = getattr(MPI.Comm, name.capitalize())
        parts.append(_PICKLED_TEMPLATE.format(name=name))
    parts.append(_SENDRECV)
    names = BUFFER_SENDS + PICKLED_SENDS + ("sendrecv",)
    source = ("def _counting_sends(live):\n" + "".join(parts)
              + "\n    def stop():\n        nonlocal live\n        live = None\n"
              + "\n    return {" + ", ".join(f"{n!r}: {n}" for n in names) + "}, stop\n")
    exec(compile(source, "<libtopomap.mpi.trace counting sends>", "exec"), namespace)  # noqa: S102 (fixed template)
    return namespace["_counting_sends"]


_counting_sends = _compile_counting_sends()


def _sends(live):
    """The counted sends over ``live`` (see :func:`_compile_counting_sends`), with mpi4py's docstrings and
    ``TracedComm.<name>`` qualified names; and their ``stop``."""
    methods, stop = _counting_sends(live)
    for name, f in methods.items():
        f.__doc__, f.__qualname__, f.__module__ = getattr(MPI.Comm, name).__doc__, f"TracedComm.{name}", __name__
    return methods, stop


def _counts(live):
    """``{peer: (bytes, messages)}`` of the per-peer counters ``live``, sorted, without ``MPI.PROC_NULL``."""
    out = {}
    for p in sorted(live):
        if p >= 0:
            messages, nbytes = divmod(live[p], _MESSAGE)
            out[int(p)] = (nbytes, messages)
    return out


class TracedComm:
    """What :func:`trace` adds to an mpi4py communicator type: counting, :meth:`graph`, :meth:`traffic`.

    Instances are also instances of the traced communicator's mpi4py type (``isinstance(tcomm,
    MPI.Intracomm)``, ``MPI.Cartcomm``... hold), on the same MPI handle.  The counting methods
    keep mpi4py's signatures and return values.
    """

    #: The counters while tracing (the same dict as ``_trace_peers``), None after the block.
    _trace_live = None

    # the counted point-to-point sends: :func:`_sends` (these count nothing; :func:`trace` gives each
    # traced communicator its own, counting into its block's counters)

    # -- results
    def traffic(self):
        """What this rank sent so far: ``{peer rank: (bytes, messages)}`` (local, not collective)."""
        return _counts(self._trace_peers)

    def graph(self, *, weights="bytes"):
        """The measured communication graph (collective over the communicator).

        Parameters
        ----------
        weights : {"bytes", "messages"}
            Edge ``u -> v`` weighs the bytes (default) or the number of messages ``u`` sent to ``v``.

        Returns
        -------
        CommGraph
            The same on every rank, over the communicator's ranks; an edge for every pair that
            exchanged at least one byte (``"bytes"``) or message (``"messages"``).

        Raises
        ------
        ArgumentError
            On every rank, when every rank passed the same unknown ``weights``.
        CommError
            On every rank, when the ranks passed different ``weights``.

        Notes
        -----
        One ``Allgather`` of the edge counts and one ``Allgatherv`` of ``(peer, bytes, messages)``
        triples: every rank ends with the whole graph, ``O(edges)`` memory, as for the gathered graph
        of the distributed-graph calls.
        """
        def check():
            if weights not in WEIGHTS:
                raise ArgumentError(f"weights must be one of {', '.join(WEIGHTS)}, got {weights!r}")
            return WEIGHTS.index(weights)
        def local():
            col = check()
            mine = np.array([(p, b, m) for p, (b, m) in _counts(self._trace_peers).items()],
                            dtype=np.int64).reshape(-1, 3)
            return col, mine, repr(weights).encode()
        col, mine, weights_print = check_everywhere(self, local, what="gathering the traced graph")
        check_agreement(self, "options (weights)", weights_print)
        size = self.Get_size()
        counts = np.empty(size, dtype=np.int64)
        self.Allgather(np.array([mine.size], dtype=np.int64), counts)
        displs = np.zeros(size, dtype=np.int64)
        np.cumsum(counts[:-1], out=displs[1:])
        every = np.empty(int(counts.sum()), dtype=np.int64)
        self.Allgatherv(mine.reshape(-1), [every, counts, displs, MPI.INT64_T])
        every = every.reshape(-1, 3)
        src = np.repeat(np.arange(size, dtype=np.int64), counts // 3)
        return CommGraph(size, src, every[:, 0], every[:, 1 + col].astype(np.float64))


for _name, _method in _sends(None)[0].items():
    setattr(TracedComm, _name, _method)


def _traced_neighbor(method, per_peer):
    """A traced neighbour collective ``method(sendbuf, recvbuf)`` of ``MPI.Topocomm``: call it, then count one
    message per out-neighbour of ``per_peer(outdegree, sendbuf)`` bytes (a number: the same to every one; or a
    list in out-neighbour order)."""
    def wrapper(self, sendbuf, recvbuf):
        out = method(self, sendbuf, recvbuf)
        live = self._trace_live
        if live is not None:
            outs = self._trace_outs
            n = per_peer(len(outs) or 1, sendbuf)
            if type(n) is list:
                for dest, k in zip(outs, n):
                    live[dest] += k + _MESSAGE
            else:
                n += _MESSAGE
                for dest in outs:
                    live[dest] += n
        return out
    wrapper.__name__, wrapper.__qualname__ = method.__name__, f"TracedComm.{method.__name__}"
    wrapper.__doc__ = method.__doc__
    return wrapper


def _allgather_bytes(degree, spec):
    return _spec_bytes(spec)


def _loaded(blocks):
    """The objects of pickled ``blocks`` (None stays None: an ``MPI.PROC_NULL`` neighbour)."""
    return [None if b is None else _loads(b) for b in blocks]


class _NeighborCounting:
    """The neighbour collectives of a topology communicator, counted per out-neighbour.

    The pickled ``neighbor_allgather`` / ``neighbor_alltoall`` pickle each object once
    (``MPI.pickle.dumps``, as mpi4py does), count those bytes, and hand them to mpi4py's own
    collective, which moves a ``bytes`` object with a copy, not a second pickling of the object; each
    block received is unpickled.  So the bytes counted are the object's pickled bytes, what mpi4py sends
    for it untraced (the wire carries a ``bytes`` header of a few bytes more).  Every rank of a traced
    communicator runs this version, inside and after the block.
    """

    #: The out-neighbours in MPI's order (``MPI.PROC_NULL`` included), set by :func:`trace`.
    _trace_outs = ()

    def neighbor_allgather(self, sendobj):
        data = _dumps(sendobj)
        out = _neighbor_allgather(self, data)
        live = self._trace_live
        if live is not None:
            n = len(data) + _MESSAGE
            for dest in self._trace_outs:
                live[dest] += n
        return _loaded(out)

    def neighbor_alltoall(self, sendobj):
        datas = [_dumps(x) for x in sendobj]
        out = _neighbor_alltoall(self, datas)   # mpi4py checks the number of items
        live = self._trace_live
        if live is not None:
            for dest, d in zip(self._trace_outs, datas):
                live[dest] += len(d) + _MESSAGE
        return _loaded(out)


for _prefix in ("Neighbor_", "Ineighbor_"):
    for _name, _per_peer in (("allgather", _allgather_bytes), ("allgatherv", _allgather_bytes),
                             ("alltoall", lambda degree, spec: _spec_bytes(spec, degree)),
                             ("alltoallv", lambda degree, spec: _vector_bytes(spec, degree)),
                             ("alltoallw", lambda degree, spec: _w_bytes(spec))):
        setattr(_NeighborCounting, _prefix + _name, _traced_neighbor(getattr(MPI.Topocomm, _prefix + _name), _per_peer))


def _make(base, *mixins):
    name = "Traced" + base.__name__
    doc = f"A traced :class:`mpi4py.MPI.{base.__name__}` (see :func:`libtopomap.mpi.trace`)."
    return type(name, (TracedComm, *mixins, base), {"__doc__": doc, "__module__": __name__})


# The most derived mpi4py type first: the traced class of a communicator is that of the first base it has.
_TRACED = tuple((base, _make(base, _NeighborCounting) if issubclass(base, MPI.Topocomm) else _make(base))
                for base in (MPI.Distgraphcomm, MPI.Cartcomm, MPI.Graphcomm, MPI.Intracomm))


@contextlib.contextmanager
def trace(comm):
    """Count the bytes and messages every rank sends to every other in a block of code.

    ``with ltm.trace(comm) as tcomm:`` yields a communicator on ``comm``'s handle to run the
    program on (pass ``tcomm`` wherever the program used ``comm``); its point-to-point calls and
    neighbour collectives inside the block are counted at the sender (see the module
    documentation for the list).  Local: entering and leaving the block communicate nothing.

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
        Any intra-communicator, including Cartesian, graph and distributed-graph ones; ``tcomm``
        has the same mpi4py type (a subclass of it) and the same instance attributes.

    Yields
    ------
    TracedComm
        Also an instance of ``comm``'s mpi4py type.  After the block it stops counting but keeps
        its counts: call :meth:`TracedComm.graph` (collective) inside or after the block.  It
        shares ``comm``'s handle: free ``comm``, not ``tcomm``.

    Raises
    ------
    ArgumentTypeError
        ``comm`` is not an intra-communicator (an inter-communicator, ``MPI.COMM_NULL``...).

    Examples
    --------
    >>> from mpi4py import MPI
    >>> import numpy as np
    >>> import libtopomap as ltm
    >>> with ltm.trace(MPI.COMM_SELF) as tcomm:
    ...     tcomm.Sendrecv(np.zeros(4), dest=0, recvbuf=np.empty(4), source=0)
    >>> tcomm.traffic(), tcomm.graph()
    ({0: (32, 1)}, <CommGraph: 1 processes, 1 edges, volume 32>)
    """
    if not isinstance(comm, MPI.Intracomm) or comm == MPI.COMM_NULL:
        what = "MPI.COMM_NULL" if isinstance(comm, MPI.Comm) and comm == MPI.COMM_NULL else type(comm).__name__
        raise ArgumentTypeError(f"trace needs an MPI intra-communicator, got {what}")
    cls = next(traced for base, traced in _TRACED if isinstance(comm, base))
    live = collections.defaultdict(int)
    sends, stop = _sends(live)
    # a class of its own for this block: its sends count into ``live`` through a closure (about 50 us to make)
    tcomm = type(cls.__name__, (cls,), {**sends, "__doc__": cls.__doc__, "__module__": __name__})(comm)
    extra = getattr(comm, "__dict__", None)
    if extra:
        tcomm.__dict__.update(extra)  # e.g. the report of a reordered communicator
    if isinstance(comm, MPI.Topocomm):
        tcomm._trace_outs = tuple(comm.outedges)
    tcomm._trace_peers = tcomm._trace_live = live
    try:
        yield tcomm
    finally:
        tcomm._trace_live = None
        stop()


def _graph_fingerprint(g):
    h = zlib.crc32(np.array([g.n], dtype=np.int64).tobytes())
    for a in (g.indptr, g.indices, g.weights):
        h = zlib.crc32(np.ascontiguousarray(a).tobytes(), h)
    return h.to_bytes(4, "little")


def reorder(comm, graph, *, topology, strategies=None, objective="congestion", seed=None, time_budget=None,
            iterations=None, refine=None, fake_names=None, placement=None, max_memory=None, total_budget=None):
    """A communicator whose rank ``k`` plays vertex ``k`` of ``graph``, placed well on ``topology``.

    Collective: every process of ``comm`` calls it with the same graph and options.  The graph
    usually comes from :meth:`TracedComm.graph` of a traced run, or from a file
    (:func:`libtopomap.load_graph`: Open MPI monitoring output, edge lists, matrices).

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
    graph : CommGraph, path or spec
        Over ``comm.Get_size()`` processes (vertex ``r`` is rank ``r`` of ``comm``); a path or a
        pattern spec is loaded with :func:`libtopomap.load_graph` on every rank; other inputs of
        :func:`libtopomap.as_commgraph` are converted.  Weights are message volumes.
    topology : Topology or path
        The physical network (a path is loaded on every rank).
    strategies, objective, seed, time_budget, iterations, refine, fake_names, placement, max_memory
        As for :func:`libtopomap.Create_dist_graph_adjacent`.
    total_budget : float, optional
        Seconds for the whole portfolio on each mapping rank, as for
        :func:`libtopomap.Create_dist_graph_adjacent`: checked and agreed on by every rank with the
        other options before any collective data (different budgets are a :class:`CommError`).

    Returns
    -------
    mpi4py.MPI.Intracomm
        ``comm.Split(0, key=new_rank)``, the plain mpi4py type: new rank ``k`` plays vertex ``k``
        and sits on the vertex the mapping chose for it (the current placement competes and wins
        ties, so the result is never worse on the objective).
        :func:`libtopomap.mpi.last_report` returns its :class:`~libtopomap.mpi.TopomapReport`.

    Raises
    ------
    ArgumentError
        On every rank, when every rank passed a graph over another number of processes, or the same
        bad option (``seed``, ``time_budget``, ``total_budget``...).
    CommError
        On every rank, when the ranks passed different graphs or options, or any rank failed
        (unreadable graph, bad topology, a host missing from it...), naming the rank(s) and cause.

    Notes
    -----
    The graph is not gathered (every rank holds it, which one CRC-32 agreement checks); then the
    steps of :func:`libtopomap.Create_dist_graph_adjacent`: locate, the portfolio of candidates
    raced over the ranks, a lexicographic selection, and ``Split``.

    References
    ----------
    The parallel portfolio of T. Hoefler and M. Snir, "Generic Topology Mapping Strategies for
    Large-scale Parallel Architectures", ICS'11, section 4.2 and Figure 4.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> import libtopomap as ltm
    >>> c = ltm.reorder(MPI.COMM_SELF, ltm.CommGraph(1, [], []), topology=ltm.torus("2"), placement=[0])
    >>> c.Get_size(), type(c) is MPI.Intracomm
    (1, True)
    >>> c.Free()
    """
    t_start = time.perf_counter()
    size = comm.Get_size()
    opts = dict(strategies=strategies, objective=objective, seed=seed, time_budget=time_budget,
                iterations=iterations, refine=refine, max_memory=max_memory, total_budget=total_budget)
    # the options are checked and agreed on first, as by the distributed-graph calls
    agree_arguments(comm, check_options, what="checking the arguments of reorder",
                    options=lambda: options_to_agree(True, topology, **opts), **opts)

    def load():
        if isinstance(graph, (str, os.PathLike)):
            from ..patterns import load_graph

            g = load_graph(graph)
        else:
            g = check_graph(graph)  # the door of every graph argument (libtopomap.validation)
        if g.n != size:
            raise ArgumentError(f"the communication graph has {g.n} processes but the communicator has {size} ranks")
        return g, _graph_fingerprint(g)
    g, graph_print = check_everywhere(comm, load, what="reading the communication graph")
    check_agreement(comm, "communication graph", graph_print)
    report, _ = reorder_ranks(comm, topology, g, fake_names=fake_names, placement=placement, **opts)
    t = time.perf_counter()
    newcomm = comm.Split(0, key=report.new_rank)
    report.timings["build"] = time.perf_counter() - t
    report.timings["total"] = time.perf_counter() - t_start
    attach_report(newcomm, report)
    return newcomm
